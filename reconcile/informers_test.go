package reconcile_test

import (
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/reconcile"
)

// TestTheDeploymentsAreListedOnce: the children cache reads the
// Deployments from the workload watcher's informer, so the controller
// lists and watches them once, whole, and never again for their metadata
// alone; the NetworkPolicies, which only the children cache reads, are
// listed for their metadata. Every list the controller made is counted,
// and a component still converges through the shared cache.
func TestTheDeploymentsAreListedOnce(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	lists := &listCounter{seen: map[string]int{}}
	e.kubeConfig = rest.CopyConfig(kube.Config)
	e.kubeConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper { lists.next = rt; return lists })
	e.start()
	rev := e.publish(e.component("thumbs"))
	e.waitStatus("thumbs", api.ConditionApplied, "True", rev)

	got := lists.counts()
	if got["full deployments"] == 0 || got["metadata networkpolicies"] == 0 {
		t.Fatalf("lists and watches seen: %v; want Deployments listed whole and NetworkPolicies for their metadata", got)
	}
	if n := got["metadata deployments"]; n != 0 {
		t.Errorf("Deployments listed or watched %d times for their metadata alone, beside %d whole (all: %v); want only the whole ones",
			n, got["full deployments"], got)
	}
}

// listCounter counts the list and watch requests that pass through it by
// what they ask for: "metadata deployments", "full networkpolicies", ...
type listCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string]int
}

func (l *listCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := parts[len(parts)-1]
	// A collection is read at .../<resource> (a single object at
	// .../<resource>/<name>): namespaced or cluster-wide.
	if r.Method == http.MethodGet && (resource == "deployments" || resource == "networkpolicies") {
		what := "full "
		if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata") {
			what = "metadata "
		}
		l.mu.Lock()
		l.seen[what+resource]++
		l.mu.Unlock()
	}
	return l.next.RoundTrip(r)
}

func (l *listCounter) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.seen)
}
