package provision_test

import (
	"context"
	"slices"
	"testing"

	helmclient "github.com/mittwald/go-helm-client"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/provision"
)

// TestReleaseRecordsAreHelms checks releases are stored as the helm
// command stores them: Secrets of type helm.sh/release.v1 in the release
// namespace, labelled owner=helm, which Helm's own list action (`helm
// list`) reads back.
func TestReleaseRecordsAreHelms(t *testing.T) {
	r := newRuntime(t, provision.Options{})
	ctx := context.Background()
	if _, err := r.p.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.p.InstallCollector(ctx, nil); err != nil {
		t.Fatal(err)
	}

	s, err := kube.Clientset(t).CoreV1().Secrets(r.ns).Get(ctx, "sh.helm.release.v1.collector.v1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("release record: %v", err)
	}
	if s.Type != "helm.sh/release.v1" || s.Labels["owner"] != "helm" || s.Labels["status"] != "deployed" {
		t.Errorf("record type %q labels %v, want helm.sh/release.v1, owner=helm, status=deployed", s.Type, s.Labels)
	}

	cfg := new(action.Configuration)
	getter := helmclient.NewRESTClientGetter(r.ns, nil, kube.Config)
	if err := cfg.Init(getter, r.ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	list := action.NewList(cfg)
	list.StateMask = action.ListAll
	rels, err := list.Run()
	if err != nil {
		t.Fatalf("helm list: %v", err)
	}
	var names []string
	for _, rel := range rels {
		names = append(names, rel.Name)
		if rel.Info.Status != release.StatusDeployed || rel.Namespace != r.ns {
			t.Errorf("release %s is %s in %s, want deployed in %s", rel.Name, rel.Info.Status, rel.Namespace, r.ns)
		}
	}
	if !slices.Equal(names, []string{"collector"}) {
		t.Errorf("helm list = %v, want [collector]", names)
	}
}
