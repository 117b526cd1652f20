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
// lists and watches tinyctl's once, whole, and never again for their
// metadata alone; the NetworkPolicies, which only the children cache
// reads, are listed for their metadata; the others' objects of both kinds
// (others.go) for their metadata. Every list the controller made is
// counted, and a component still converges through the shared cache.
func TestTheDeploymentsAreListedOnce(t *testing.T) {
	got, _ := convergeCounting(t, false)
	if got["full deployments"] == 0 || got["metadata networkpolicies"] == 0 ||
		got["others' metadata deployments"] == 0 || got["others' metadata networkpolicies"] == 0 {
		t.Fatalf("lists and watches seen: %v; want tinyctl's Deployments listed whole, its NetworkPolicies and the others' objects of both for their metadata", got)
	}
	if n := got["others' full deployments"]; n != 0 {
		t.Errorf("others' Deployments listed or watched whole %d times (all: %v); want their metadata only", n, got)
	}
	if n := got["metadata deployments"]; n != 0 {
		t.Errorf("Deployments listed or watched %d times for their metadata alone, beside %d whole (all: %v); want only the whole ones",
			n, got["full deployments"], got)
	}
}

// convergeCounting converges a component "thumbs" on a controller whose
// requests pass through a listCounter (single: counting the reads of one
// object) and returns what it counted.
func convergeCounting(t *testing.T, single bool) (map[string]int, *env) {
	e := newEnv(t, reconcile.Config{})
	lists := &listCounter{seen: map[string]int{}, single: single}
	e.kubeConfig = rest.CopyConfig(kube.Config)
	e.kubeConfig.Wrap(func(rt http.RoundTripper) http.RoundTripper { lists.next = rt; return lists })
	e.start()
	rev := e.publish(e.component("thumbs"))
	e.waitStatus("thumbs", api.ConditionApplied, "True", rev)
	return lists.counts(), e
}

// listCounter counts the list and watch requests that pass through it by
// what they ask for: "metadata deployments", "full networkpolicies", ...;
// with single, the reads of one object instead ("metadata deployments/thumbs").
type listCounter struct {
	next   http.RoundTripper
	single bool
	mu     sync.Mutex
	seen   map[string]int
}

func (l *listCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := parts[len(parts)-1]
	if l.single && len(parts) > 1 {
		resource = parts[len(parts)-2] // .../<resource>/<name>
	}
	// A collection is read at .../<resource> (a single object at
	// .../<resource>/<name>): namespaced or cluster-wide.
	if r.Method == http.MethodGet && (resource == "deployments" || resource == "networkpolicies") {
		what := "full "
		if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata") {
			what = "metadata "
		}
		if strings.Contains(r.URL.Query().Get("labelSelector"), "!=") {
			what = "others' " + what // the objects without tinyctl's label
		}
		l.mu.Lock()
		if l.single {
			what += resource + "/" + parts[len(parts)-1]
		} else {
			what += resource
		}
		l.seen[what]++
		l.mu.Unlock()
	}
	return l.next.RoundTrip(r)
}

func (l *listCounter) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.seen)
}

// TestANewComponentsChildrenAreCreatedWithoutARead: the children's
// caches and the cache of others' objects together know that a new
// component's Deployment and NetworkPolicy do not exist, so they are
// created without a read of either first (an admin's objects of the same
// name are still refused: TestObjectsTinyctlDidNotCreateAreNeverTouched).
// Every read of a single Deployment or NetworkPolicy is counted.
func TestANewComponentsChildrenAreCreatedWithoutARead(t *testing.T) {
	got, e := convergeCounting(t, true)
	if e.get(deployments, "thumbs") == nil || e.get(networkPolicies, "thumbs") == nil {
		t.Fatal("the component converged without its Deployment and NetworkPolicy")
	}
	if len(got) != 0 {
		t.Errorf("reads of single objects before they were created: %v; want none", got)
	}
}
