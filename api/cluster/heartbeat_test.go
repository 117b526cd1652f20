package cluster_test

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/validate"
)

var update = flag.Bool("update", false, "rewrite testdata/heartbeat.json")

// full sets every field of a heartbeat.
func full() cluster.Heartbeat {
	return cluster.Heartbeat{
		Version: cluster.HeartbeatVersion, Cluster: "east", Labels: map[string]string{"env": "prod"},
		Controller: "tinyctl-7d9f-abc", TTLSeconds: 15, SentAt: time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC),
		Settings: &cluster.Settings{
			Name: "east",
			NATS: cluster.NATS{URL: "nats://nats.tinyctl-system.svc:4222", Namespace: "tinyctl-system",
				PodLabels: map[string]string{"app.kubernetes.io/name": "nats"}, ClientPort: 4222,
				MonitoringEndpoint: "nats.tinyctl-system.svc:8222", Account: "$G", Accounts: map[string]string{"media": "AB"},
				JSAPIPrefix: "tinyctl.jobs.API", CredentialsSecret: "*", CredentialsKey: "nats.creds",
				WorkerTLS: cluster.WorkerTLS{CA: true, ClientCert: true}},
			DNS:       cluster.DNS{Namespace: "kube-system", PodLabels: map[string]string{"k8s-app": "kube-dns"}, NodeLocalIP: "169.254.20.10"},
			Collector: cluster.Collector{Endpoint: "http://collector:4317", Namespace: "tinyctl-system", PodLabels: map[string]string{"app": "collector"}, Ports: []int32{4317}},
			Network:   cluster.Network{PodCIDRs: []string{"10.88.0.0/16"}, ServiceCIDRs: []string{"10.0.0.0/24"}},
			RunAsUser: 65532,
			Streams:   cluster.StreamLimits{MaxBytes: 64 << 20, MaxMemoryBytes: 8 << 20, MaxMsgs: 1_000_000, Replicas: 1},
		},
		Tenancy:   &validate.Tenancy{Prefixes: map[string][]string{"media": {"jobs.media.>"}}},
		KEDA:      cluster.KEDARunning,
		ClusterID: "0123456789ab",
		Conflict:  "",
	}
}

// TestTheHeartbeatsWireNamesArePinned: the heartbeat as it goes on the
// wire, every field set, against testdata/heartbeat.json (regenerate with
// -update after a deliberate change, and bump HeartbeatVersion when
// readers of the old names would mis-read it). docs/status.md lists the
// same names.
func TestTheHeartbeatsWireNamesArePinned(t *testing.T) {
	got, err := json.MarshalIndent(full(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/heartbeat.json", append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/heartbeat.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)+"\n"); diff != "" {
		t.Errorf("the heartbeat's wire form changed (-testdata +now):\n%s", diff)
	}
}

// TestAHeartbeatFromBeforeVersionsDecodes: controllers wrote the settings
// under Go's field names, untagged, and no version; such a heartbeat
// decodes into today's type, field for field.
func TestAHeartbeatFromBeforeVersionsDecodes(t *testing.T) {
	legacy := `{"cluster":"east","labels":{"env":"prod"},"controller":"tinyctl-7d9f-abc","ttlSeconds":15,
	"sentAt":"2026-12-03T06:00:00Z","settings":{"Name":"east","NATS":{"URL":"nats://nats.tinyctl-system.svc:4222",
	"Namespace":"tinyctl-system","PodLabels":{"app.kubernetes.io/name":"nats"},"ClientPort":4222,
	"MonitoringEndpoint":"nats.tinyctl-system.svc:8222","Account":"$G","Accounts":{"media":"AB"},
	"JSAPIPrefix":"tinyctl.jobs.API","CredentialsSecret":"*","CredentialsKey":"nats.creds",
	"WorkerTLS":{"CA":true,"ClientCert":true}},"DNS":{"Namespace":"kube-system","PodLabels":{"k8s-app":"kube-dns"},
	"NodeLocalIP":"169.254.20.10"},"Collector":{"Endpoint":"http://collector:4317","Namespace":"tinyctl-system",
	"PodLabels":{"app":"collector"},"Ports":[4317]},"Network":{"PodCIDRs":["10.88.0.0/16"],"ServiceCIDRs":["10.0.0.0/24"]},
	"RunAsUser":65532,"Streams":{"MaxBytes":67108864,"MaxMemoryBytes":8388608,"MaxMsgs":1000000,"Replicas":1}},
	"tenancy":{"prefixes":{"media":["jobs.media.>"]}},"keda":"running","clusterID":"0123456789ab"}`
	var got cluster.Heartbeat
	if err := json.Unmarshal([]byte(legacy), &got); err != nil {
		t.Fatal(err)
	}
	want := full()
	want.Version = 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a heartbeat from before versions decodes otherwise (-want +got):\n%s", diff)
	}
}

// TestPlacementAndOverridesSelectByIdentity: a placement selects by name
// and labels, both when both are given; an override selects by what it
// names, and one naming nothing selects nowhere.
func TestPlacementAndOverridesSelectByIdentity(t *testing.T) {
	east := cluster.Identity{Name: "east", Labels: map[string]string{"env": "prod"}}
	placed := func(p *api.Placement) bool { return east.Places(api.Component{Spec: api.Spec{Placement: p}}) }
	sel := func(l map[string]string) *metav1.LabelSelector { return &metav1.LabelSelector{MatchLabels: l} }
	byName, byLabel := []string{"east"}, sel(map[string]string{"env": "prod"})
	for _, tt := range []struct {
		name string
		got  bool
		want bool
	}{
		{"no placement", placed(nil), true},
		{"by name", placed(&api.Placement{Clusters: byName}), true},
		{"by another name", placed(&api.Placement{Clusters: []string{"west"}}), false},
		{"by label", placed(&api.Placement{ClusterSelector: byLabel}), true},
		{"by name and another label", placed(&api.Placement{Clusters: byName, ClusterSelector: sel(map[string]string{"env": "dev"})}), false},
		{"an override naming it", east.SelectedBy(api.Override{Clusters: byName}), true},
		{"an override by label", east.SelectedBy(api.Override{ClusterSelector: byLabel}), true},
		{"an override naming nothing", east.SelectedBy(api.Override{}), false},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
