package provision_test

import (
	"context"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/provision"
)

// TestBrokerStorageIsDecidedAndKept checks where a first install puts the
// broker's store with nothing said — an emptyDir flagged as a fallback on
// a cluster without a default StorageClass, a claim when it has one — that
// a later install keeps the installed broker's storage, and that a change
// the StatefulSet cannot make in place is refused before anything is
// written, naming both storages.
func TestBrokerStorageIsDecidedAndKept(t *testing.T) {
	r := newRuntime(t, provision.Options{})
	ctx := context.Background()

	s, err := r.p.ResolveBrokerStorage(ctx, provision.BrokerStorage{}, nil)
	if err != nil || s.Type != provision.StorageEmptyDir || !s.Fallback || !strings.Contains(s.Why, "no default StorageClass") {
		t.Fatalf("no default class: storage %+v, %v; want an emptyDir fallback saying why", s, err)
	}
	if s, err = r.p.ResolveBrokerStorage(ctx, provision.BrokerStorage{}, map[string]any{"storage": map[string]any{"type": "pvc", "storageClassName": "fast"}}); err != nil || s.Type != provision.StoragePVC || s.Class != "fast" || s.Fallback {
		t.Fatalf("values file pvc:fast: storage %+v, %v", s, err)
	}

	withDefaultClass(t, "local-disk", func() {
		s, err := r.p.ResolveBrokerStorage(ctx, provision.BrokerStorage{}, nil)
		if err != nil || s.Type != provision.StoragePVC || s.Class != "" || s.Fallback || !strings.Contains(s.Why, "local-disk") {
			t.Errorf("default class local-disk: storage %+v, %v; want a claim from the default class", s, err)
		}
	})

	if _, err := r.p.Install(ctx, provision.Plan{SkipCRDs: true, SkipCollector: true, BrokerAuth: provision.AuthToken,
		BrokerStorage: provision.BrokerStorage{Type: provision.StorageEmptyDir}}, nil); err != nil {
		t.Fatal(err)
	}
	withDefaultClass(t, "local-disk", func() {
		s, err := r.p.ResolveBrokerStorage(ctx, provision.BrokerStorage{}, nil)
		if err != nil || s.Type != provision.StorageEmptyDir || s.Fallback {
			t.Errorf("installed emptyDir, default class present: storage %+v, %v; want the installed emptyDir kept", s, err)
		}
	})
	_, err = r.p.ResolveBrokerStorage(ctx, provision.BrokerStorage{Type: provision.StoragePVC}, nil)
	if err == nil || !strings.Contains(err.Error(), "keeps its store in emptyDir") || !strings.Contains(err.Error(), "--broker-storage emptyDir") {
		t.Errorf("pvc over an installed emptyDir: %v; want it refused, naming both", err)
	}
	if _, err := r.p.ResolveBrokerStorage(ctx, provision.BrokerStorage{Type: provision.StorageExisting, Claim: "store"}, nil); err != nil {
		t.Errorf("existing claim over an installed emptyDir (only the pod template changes): %v", err)
	}
}

// withDefaultClass runs f while a default StorageClass named name exists.
func withDefaultClass(t *testing.T, name string, f func()) {
	t.Helper()
	sc := kube.Clientset(t).StorageV1().StorageClasses()
	_, err := sc.Create(context.Background(), &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "example.com/local",
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sc.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}()
	f()
}

func TestParseBrokerStorage(t *testing.T) {
	for in, want := range map[string]provision.BrokerStorage{
		"":               {},
		"emptyDir":       {Type: provision.StorageEmptyDir},
		"pvc":            {Type: provision.StoragePVC},
		"pvc:fast":       {Type: provision.StoragePVC, Class: "fast"},
		"existing:store": {Type: provision.StorageExisting, Claim: "store"},
	} {
		if got, err := provision.ParseBrokerStorage(in); err != nil || got != want {
			t.Errorf("ParseBrokerStorage(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"emptydir", "pvc:", "existing", "existing:", "emptyDir:x", "hostPath"} {
		if _, err := provision.ParseBrokerStorage(bad); err == nil || !strings.Contains(err.Error(), "want emptyDir, pvc, pvc:CLASS or existing:CLAIM") {
			t.Errorf("ParseBrokerStorage(%q) = %v, want a usage error", bad, err)
		}
	}
}
