package reconcile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/api/validate"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// spec is a valid component in ns, edited by mutate, as the bucket holds it.
func spec(t *testing.T, ns, name string, mutate ...func(*api.Component)) []byte {
	t.Helper()
	c := api.Component{
		APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: name, Namespace: ns},
		Spec: api.Spec{Image: "registry.example.com/acme/" + name + ":1.0.0",
			Jobs: api.Jobs{Subjects: []string{ns + "." + name + ".>"}}},
	}
	for _, m := range mutate {
		m(&c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scaled(c *api.Component) {
	c.Spec.Scaling = &api.Scaling{MinReplicas: 0, MaxReplicas: 3}
}

func placedOn(clusters ...string) func(*api.Component) {
	return func(c *api.Component) { c.Spec.Placement = &api.Placement{Clusters: clusters} }
}

func selecting(labels map[string]string) func(*api.Component) {
	return func(c *api.Component) {
		c.Spec.Placement = &api.Placement{ClusterSelector: &metav1.LabelSelector{MatchLabels: labels}}
	}
}

func deleteStream(c *api.Component) { c.Spec.Deletion.Stream = api.Delete }

func liveChild(kind int, ns, name string) child {
	return child{kind: childKinds[kind], namespace: ns, name: name, component: render.ComponentLabelValue(ns, name)}
}

const (
	scaledObjectKind = iota
	budgetKind
	deploymentKind
	networkPolicyKind
)

func TestDecide(t *testing.T) {
	east := cluster.Identity{Name: "east", Labels: map[string]string{"env": "prod"}}
	all := namespacePolicy{}
	dep, np, so := liveChild(deploymentKind, "media", "resizer"), liveChild(networkPolicyKind, "media", "resizer"),
		liveChild(scaledObjectKind, "media", "resizer")
	pdb := liveChild(budgetKind, "media", "resizer")
	tests := []struct {
		name        string
		entry       specEntry
		policy      namespacePolicy
		live        []child
		prev        *api.Status // this cluster's last status record
		accept      bool        // --accept-unplace
		wantKind    planKind
		wantDesired []string // kinds in apply order
		wantPrune   []child
		wantStream  string // stream to delete
		wantReason  string // reason of a planInvalid error
	}{
		{name: "new component applies its children",
			entry: specEntry{rev: 3, value: spec(t, "media", "resizer")}, policy: all,
			wantKind: planApply, wantDesired: []string{"NetworkPolicy", "Deployment"}},
		{name: "a scaled component adds its ScaledObject",
			entry: specEntry{rev: 3, value: spec(t, "media", "resizer", scaled)}, policy: all,
			wantKind: planApply, wantDesired: []string{"NetworkPolicy", "Deployment", "PodDisruptionBudget", "ScaledObject"}},
		{name: "scaling removed prunes the ScaledObject and the disruption budget only",
			entry: specEntry{rev: 4, value: spec(t, "media", "resizer")}, policy: all, live: []child{dep, np, pdb, so},
			wantKind: planApply, wantDesired: []string{"NetworkPolicy", "Deployment"}, wantPrune: []child{pdb, so}},
		{name: "placed by name on this cluster",
			entry: specEntry{rev: 1, value: spec(t, "media", "resizer", placedOn("east", "west"))}, policy: all,
			wantKind: planApply, wantDesired: []string{"NetworkPolicy", "Deployment"}},
		{name: "placed by label on this cluster",
			entry: specEntry{rev: 1, value: spec(t, "media", "resizer", selecting(map[string]string{"env": "prod"}))}, policy: all,
			wantKind: planApply, wantDesired: []string{"NetworkPolicy", "Deployment"}},
		{name: "a new revision placed elsewhere by name unplaces, keeping the stream",
			entry: specEntry{rev: 5, value: spec(t, "media", "resizer", placedOn("west"), deleteStream)}, policy: all,
			live: []child{dep, np}, prev: applied(4, prodLabels), wantKind: planUnplace, wantPrune: []child{dep, np}},
		{name: "a new revision whose selector does not match unplaces",
			entry: specEntry{rev: 5, value: spec(t, "media", "resizer", selecting(map[string]string{"env": "dev"}))}, policy: all,
			live: []child{dep}, prev: applied(4, prodLabels), wantKind: planUnplace, wantPrune: []child{dep}},
		{name: "a component never applied here and not placed here does nothing",
			entry: specEntry{rev: 5, value: spec(t, "media", "resizer", placedOn("west"))}, policy: all,
			wantKind: planUnplace},
		{name: "the applied revision no longer selecting (the cluster's labels changed) holds",
			entry: specEntry{rev: 4, value: spec(t, "media", "resizer", selecting(map[string]string{"env": "dev"}))}, policy: all,
			live: []child{dep, np}, prev: applied(4, map[string]string{"env": "dev"}), wantKind: planHold, wantReason: reasons.UnplaceHeld},
		{name: "a new revision that still selects the cluster's old labels holds",
			entry: specEntry{rev: 6, value: spec(t, "media", "resizer", selecting(map[string]string{"env": "dev"}))}, policy: all,
			live: []child{dep}, prev: applied(4, map[string]string{"env": "dev"}), wantKind: planHold, wantReason: reasons.UnplaceHeld},
		{name: "children without a status record here (a renamed cluster) hold",
			entry: specEntry{rev: 4, value: spec(t, "media", "resizer", placedOn("east-old"))}, policy: all,
			live: []child{dep, np}, wantKind: planHold, wantReason: reasons.UnplaceHeld},
		{name: "a record from before labels were kept holds at the applied revision",
			entry: specEntry{rev: 4, value: spec(t, "media", "resizer", selecting(map[string]string{"env": "dev"}))}, policy: all,
			live: []child{dep}, prev: applied(4, nil), wantKind: planHold, wantReason: reasons.UnplaceHeld},
		{name: "--accept-unplace removes what a changed identity no longer selects",
			entry: specEntry{rev: 4, value: spec(t, "media", "resizer", selecting(map[string]string{"env": "dev"}))}, policy: all,
			live: []child{dep, np}, prev: applied(4, map[string]string{"env": "dev"}), accept: true,
			wantKind: planUnplace, wantPrune: []child{dep, np}},
		{name: "a delete marker removes the children and keeps the stream",
			entry: specEntry{rev: 6, deleted: true}, policy: all, live: []child{dep, np},
			wantKind: planRemove, wantPrune: []child{dep, np}},
		{name: "a delete marker after deletion.stream Delete removes the stream too",
			entry: specEntry{rev: 6, deleted: true, deleteStream: true, policyKnown: true}, policy: all,
			wantKind: planRemove, wantStream: "tinyctl_media_resizer"},
		{name: "a namespace outside the allow-list stalls",
			entry: specEntry{rev: 1, value: spec(t, "media", "resizer")}, policy: namespacePolicy{allowed: []string{"jobs"}},
			live: []child{dep}, wantKind: planInvalid, wantReason: reasons.NamespaceNotAllowed},
		{name: "a component placed elsewhere is not judged by this cluster's namespaces",
			entry: specEntry{rev: 1, value: spec(t, "media", "resizer", placedOn("west"))}, policy: namespacePolicy{allowed: []string{"jobs"}},
			wantKind: planUnplace},
		{name: "a namespace on the allow-list applies",
			entry: specEntry{rev: 1, value: spec(t, "media", "resizer")}, policy: namespacePolicy{allowed: []string{"jobs", "media"}},
			wantKind: planApply, wantDesired: []string{"NetworkPolicy", "Deployment"}},
		{name: "a denied namespace stalls when every namespace is managed",
			entry: specEntry{rev: 1, value: spec(t, "media", "resizer")}, policy: namespacePolicy{denied: []string{"kube-system", "media"}},
			wantKind: planInvalid, wantReason: reasons.NamespaceNotAllowed},
		{name: "a denied namespace named on the allow-list applies",
			entry: specEntry{rev: 1, value: spec(t, "media", "resizer")}, policy: namespacePolicy{allowed: []string{"media"}, denied: []string{"media"}},
			wantKind: planApply, wantDesired: []string{"NetworkPolicy", "Deployment"}},
		{name: "an invalid spec stalls and touches nothing",
			entry:  specEntry{rev: 2, value: []byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"resizer","namespace":"media"},"spec":{"image":"x"}}`)},
			policy: all, live: []child{dep}, wantKind: planInvalid, wantReason: reasons.InvalidSpec},
		{name: "a value stored under another component's key stalls",
			entry: specEntry{rev: 2, value: spec(t, "media", "thumbnailer")}, policy: all,
			wantKind: planInvalid, wantReason: reasons.InvalidSpec},
		{name: "a value that is not a component stalls",
			entry: specEntry{rev: 2, value: []byte("{not json")}, policy: all,
			wantKind: planInvalid, wantReason: reasons.InvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decide(input{key: "media.resizer", entry: tt.entry, cluster: east, policy: tt.policy,
				settings: render.Cluster{Name: "east"}, live: tt.live, prev: tt.prev, acceptUnplace: tt.accept})
			if p.kind != tt.wantKind {
				t.Fatalf("plan %s (err %v), want %s", p.kind, p.err, tt.wantKind)
			}
			if p.rev != tt.entry.rev || p.key != "media.resizer" {
				t.Errorf("plan for %s at %d, want media.resizer at %d", p.key, p.rev, tt.entry.rev)
			}
			var kinds []string
			for _, o := range p.desired {
				kinds = append(kinds, o.GetKind())
			}
			if strings.Join(kinds, ",") != strings.Join(tt.wantDesired, ",") {
				t.Errorf("desired %v, want %v", kinds, tt.wantDesired)
			}
			if !sameChildren(p.prune, tt.wantPrune) {
				t.Errorf("prune %v, want %v", p.prune, tt.wantPrune)
			}
			if p.deleteStream != tt.wantStream {
				t.Errorf("delete stream %q, want %q", p.deleteStream, tt.wantStream)
			}
			if tt.wantReason != "" {
				if class, reason := Classify(p.err); class != Permanent || reason != tt.wantReason {
					t.Errorf("error %v classifies as %s %s, want permanent %s", p.err, class, reason, tt.wantReason)
				}
			} else if p.err != nil {
				t.Errorf("unexpected error %v", p.err)
			}
		})
	}
}

func TestDecideResolvesOverridesForThisCluster(t *testing.T) {
	const base, euImage, canary = "registry.example.com/acme/resizer:1.0.0", "registry.example.com/acme/resizer:1.0.0-eu",
		"registry.example.com/acme/resizer:1.1.0-rc1"
	forEU := func(c *api.Component) {
		c.Spec.Overrides = []api.Override{{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}},
			Image:           euImage,
		}}
	}
	canaryOnEU1 := func(c *api.Component) {
		c.Spec.Overrides = append(c.Spec.Overrides, api.Override{Clusters: []string{"eu-1"}, Image: canary})
	}
	eu1 := cluster.Identity{Name: "eu-1", Labels: map[string]string{"region": "eu"}}
	eu2 := cluster.Identity{Name: "eu-2", Labels: map[string]string{"region": "eu"}}
	us1 := cluster.Identity{Name: "us-1", Labels: map[string]string{"region": "us"}}
	tests := []struct {
		name      string
		value     []byte
		cluster   cluster.Identity
		wantImage string // "": the plan stalls with InvalidOverride
	}{
		{"an eu override on an eu cluster", spec(t, "media", "resizer", forEU), eu1, euImage},
		{"an eu override elsewhere", spec(t, "media", "resizer", forEU), us1, base},
		{"conflicting overrides on the cluster both select", spec(t, "media", "resizer", forEU, canaryOnEU1), eu1, ""},
		{"the same overrides on a cluster only one selects", spec(t, "media", "resizer", forEU, canaryOnEU1), eu2, euImage},
		{"the same overrides on a cluster neither selects", spec(t, "media", "resizer", forEU, canaryOnEU1), us1, base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decide(input{key: "media.resizer", entry: specEntry{rev: 2, value: tt.value}, cluster: tt.cluster,
				settings: render.Cluster{Name: tt.cluster.Name}})
			if tt.wantImage == "" {
				class, reason := Classify(p.err)
				if p.kind != planInvalid || class != Permanent || reason != reasons.InvalidOverride {
					t.Fatalf("plan %s, error %v (%s %s), want invalid, permanent %s", p.kind, p.err, class, reason, reasons.InvalidOverride)
				}
				if want := "spec.overrides[1].image"; !strings.Contains(p.err.Error(), want) || !strings.Contains(p.err.Error(), "spec.overrides[0].image") {
					t.Errorf("error %q does not name both overrides' image", p.err)
				}
				return
			}
			if p.kind != planApply {
				t.Fatalf("plan %s (err %v), want apply", p.kind, p.err)
			}
			if got := p.objs.Deployment.Spec.Template.Spec.Containers[0].Image; got != tt.wantImage {
				t.Errorf("Deployment image %q, want %q", got, tt.wantImage)
			}
		})
	}
}

func sameChildren(a, b []child) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDeleteMarkerLearnsTheStreamPolicyFromTheValueBeforeIt(t *testing.T) {
	c := newSpecCache()
	c.observe(Entry{Key: "media.resizer", Revision: 1, Value: spec(t, "media", "resizer", deleteStream)})
	c.observe(Entry{Key: "media.resizer", Revision: 2, Deleted: true})
	e, _ := c.get("media.resizer")
	if !e.deleted || !e.deleteStream || !e.policyKnown || e.value != nil {
		t.Fatalf("marker entry %+v, want deleted, stream deleted, value dropped", e)
	}
	c.observe(Entry{Key: "media.purged", Revision: 3, Value: spec(t, "media", "purged", deleteStream)})
	c.observe(Entry{Key: "media.purged", Revision: 4, Deleted: true, Purged: true})
	if e, _ := c.get("media.purged"); !e.policyKnown || e.deleteStream {
		t.Fatalf("purge marker entry %+v: want the stream kept, as after a restart (the history is gone)", e)
	}
	c.observe(Entry{Key: "media.other", Revision: 5, Deleted: true}) // never seen a value
	if e, _ := c.get("media.other"); e.policyKnown || e.deleteStream {
		t.Fatalf("marker without a known value %+v: the policy must be read from history", e)
	}
	hist := []Entry{{Revision: 1, Value: spec(t, "media", "other", deleteStream)}, {Revision: 2, Deleted: true}}
	if !lastPutDeletesStream(hist) {
		t.Fatal("history says deletion.stream Delete, read as Retain")
	}
	if lastPutDeletesStream([]Entry{{Revision: 1, Value: []byte("garbage")}}) {
		t.Fatal("an unreadable value must keep the stream")
	}
}

func TestClassifyJoinedErrors(t *testing.T) {
	invalid := &validate.InvalidError{}
	transient := errors.New("nats: timeout")
	waiting := withClass(Waiting, reasons.Conflict, errors.New("conflict"))
	tests := []struct {
		name       string
		err        error
		wantClass  Class
		wantReason string
	}{
		{"invalid spec and a status write that timed out: retried", errors.Join(invalid, transient), Transient, reasons.Retrying},
		{"invalid spec and a conflict: waits", errors.Join(invalid, waiting), Waiting, reasons.Conflict},
		{"invalid spec alone: stalls", errors.Join(invalid), Permanent, reasons.InvalidSpec},
		{"two permanent errors keep the first reason", errors.Join(withClass(Permanent, reasons.NamespaceNotAllowed, errors.New("ns")), invalid),
			Permanent, reasons.NamespaceNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if class, reason := Classify(tt.err); class != tt.wantClass || reason != tt.wantReason {
				t.Errorf("Classify = %s %s, want %s %s", class, reason, tt.wantClass, tt.wantReason)
			}
		})
	}
}

var prodLabels = map[string]string{"env": "prod"}

// applied is the status record of a revision this cluster applied with
// labels.
func applied(rev uint64, labels map[string]string) *api.Status {
	return &api.Status{Component: "media.resizer", Cluster: "east", ObservedRevision: rev, ClusterLabels: labels,
		Children: []api.Child{{Kind: "Deployment", Namespace: "media", Name: "resizer"}}}
}

// TestAHeldUnplaceOutlivesLaterRevisions follows one component through the
// records a cluster writes: a hold is not undone by the revisions after it
// (a routine image bump, an invalid revision), only by a placement that
// selects the cluster or --accept-unplace.
func TestAHeldUnplaceOutlivesLaterRevisions(t *testing.T) {
	east := cluster.Identity{Name: "east", Labels: map[string]string{"env": "prod"}}
	dep, np := liveChild(deploymentKind, "media", "resizer"), liveChild(networkPolicyKind, "media", "resizer")
	bump := func(v string) func(*api.Component) {
		return func(c *api.Component) { c.Spec.Image = "registry.example.com/acme/resizer:" + v }
	}
	invalid := func(c *api.Component) { c.Spec.Image = "" }
	type step struct {
		name   string
		value  []byte
		accept bool
		want   planKind
	}
	run := func(t *testing.T, prev *api.Status, steps []step) {
		t.Helper()
		for i, s := range steps {
			in := input{key: "media.resizer", entry: specEntry{rev: uint64(10 + i), value: s.value}, cluster: east,
				settings: render.Cluster{Name: "east"}, live: []child{dep, np}, prev: prev, acceptUnplace: s.accept}
			p := decide(in)
			if p.kind != s.want {
				t.Fatalf("revision %d (%s): plan %s (%v), want %s", in.entry.rev, s.name, p.kind, p.err, s.want)
			}
			var st api.Status
			switch p.kind {
			case planHold:
				st = heldStatus(in, p)
			case planInvalid, planApply:
				st = recordOf(in, p, nil, p.err, nil)
			default:
				return
			}
			prev = &st
		}
	}
	t.Run("a renamed cluster", func(t *testing.T) {
		run(t, nil, []step{
			{"first reconcile after the rename", spec(t, "media", "resizer", placedOn("east-old")), false, planHold},
			{"an image bump, still placed on the old name", spec(t, "media", "resizer", placedOn("east-old"), bump("1.0.1")), false, planHold},
			{"an invalid revision", spec(t, "media", "resizer", placedOn("east-old"), invalid), false, planInvalid},
			{"the corrected revision", spec(t, "media", "resizer", placedOn("east-old"), bump("1.0.2")), false, planHold},
			{"the operator confirms", spec(t, "media", "resizer", placedOn("east-old"), bump("1.0.3")), true, planUnplace},
		})
	})
	t.Run("relabelled cluster", func(t *testing.T) {
		dev := map[string]string{"env": "dev"}
		run(t, applied(9, dev), []step{
			{"an invalid revision", spec(t, "media", "resizer", selecting(dev), invalid), false, planInvalid},
			{"the corrected revision, selecting the old labels", spec(t, "media", "resizer", selecting(dev), bump("1.0.1")), false, planHold},
			{"an image bump", spec(t, "media", "resizer", selecting(dev), bump("1.0.2")), false, planHold},
		})
	})
	// Found by the fleet chaos test: the renamed cluster's first revision
	// is invalid, so no hold was recorded before it.
	t.Run("a renamed cluster whose first revision is invalid", func(t *testing.T) {
		run(t, nil, []step{
			{"an invalid revision, the first after the rename", spec(t, "media", "resizer", placedOn("east-old"), invalid), false, planInvalid},
			{"the corrected revision, still placed on the old name", spec(t, "media", "resizer", placedOn("east-old"), bump("1.0.1")), false, planHold},
			{"an image bump", spec(t, "media", "resizer", placedOn("east-old"), bump("1.0.2")), false, planHold},
		})
	})
	t.Run("a renamed cluster that the placement selects again", func(t *testing.T) {
		run(t, nil, []step{
			{"first reconcile after the rename", spec(t, "media", "resizer", placedOn("east-old")), false, planHold},
			{"placed on the new name", spec(t, "media", "resizer", placedOn("east-old", "east")), false, planApply},
			{"moved away by the spec", spec(t, "media", "resizer", placedOn("west")), false, planUnplace},
		})
	})
}
