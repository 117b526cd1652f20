package localrun_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/api/workerenv"
	"github.com/tinyctl/tinyctl/internal/localrun"
	"github.com/tinyctl/tinyctl/render"
)

func rendered(t *testing.T, cl render.Cluster) render.Objects {
	t.Helper()
	c, err := validate.Normalize(api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: "thumbs", Namespace: "media"},
		Spec: api.Spec{Image: "example.com/thumbs:1", Jobs: api.Jobs{Subjects: []string{"media.thumbs"}},
			Env: []api.EnvVar{{Name: "SIZES", Value: "64"}}, Probes: &api.Probes{Worker: true}}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := render.Render(c, 1, cl)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestEnvIsTheContainersWithMountsMovedToLocalDirs: the container's
// variables but the health address (its Deployment has one: no kubelet
// probes a local worker, and two would want the same port).
func TestEnvIsTheContainersWithMountsMovedToLocalDirs(t *testing.T) {
	o := rendered(t, render.Cluster{NATS: render.NATS{URL: "nats://127.0.0.1:4222", CredentialsSecret: render.PerComponent},
		Collector: render.Collector{Endpoint: "-"}})
	if !slices.ContainsFunc(o.Deployment.Spec.Template.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == workerenv.HealthAddr }) {
		t.Fatalf("the Deployment sets no %s: this test would not show it is left out", workerenv.HealthAddr)
	}
	got, err := localrun.Env(o.Deployment, map[string]string{render.CredentialsDir: "/tmp/x"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"NATS_URL=nats://127.0.0.1:4222", "TINYCTL_STREAM=tinyctl_media_thumbs",
		"TINYCTL_CONSUMER=tinyctl_media_thumbs_worker", "NATS_CREDS=/tmp/x/nats.creds",
		"TINYCTL_INBOX_PREFIX=_INBOX_tinyctl_media_thumbs_worker", "SIZES=64"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestEnvRefusesAMountTheContainerDoesNotHave(t *testing.T) {
	o := rendered(t, render.Cluster{}) // no credentials: nothing mounted there
	_, err := localrun.Env(o.Deployment, map[string]string{render.CredentialsDir: "/tmp/x"})
	if err == nil || !strings.Contains(err.Error(), "mounts nothing at "+render.CredentialsDir) {
		t.Fatalf("got %v, want an error naming the mount path", err)
	}
}
