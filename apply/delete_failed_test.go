package apply_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
)

// TestADeleteThatCouldNotBeMadeSaysFailed: with the API server out of
// reach (found by the chaos tests: a kube-apiserver restart), a delete
// reports Failed, not Deleted, so the controller neither logs "applied
// deleted" nor counts a deletion that did not happen.
func TestADeleteThatCouldNotBeMadeSaysFailed(t *testing.T) {
	cfg := rest.CopyConfig(kube.Config)
	cfg.Host = "https://127.0.0.1:1" // nothing listens there
	cfg.Timeout = 2 * time.Second
	m, err := apply.New(cfg, "tinyctl.io/content-hash")
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Delete(context.Background(), configMapKind, "default", "gone", apply.Owned(owner, "x"))
	if err == nil {
		t.Fatal("delete with the API server out of reach: no error")
	}
	if res.Action != action.Failed {
		t.Errorf("action = %q, want %q (%v)", res.Action, action.Failed, err)
	}
}
