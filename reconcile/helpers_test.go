package reconcile_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
)

// subset reports the first place where want is not contained in got: every
// map key of want must be in got with a value that contains want's value;
// lists must have the same length. The API server adds defaults, so a live
// object contains its rendered form rather than equalling it.
func subset(path string, want, got any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %T", path, got)
		}
		for k, v := range w {
			if err := subset(path+"."+k, v, g[k]); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: want %d items, got %v", path, len(w), got)
		}
		for i := range w {
			if err := subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); err != nil {
				return err
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Errorf("%s: want %v, got %v", path, want, got)
		}
	}
	return nil
}

// contains checks that live holds every field of the rendered object.
func contains(rendered runtime.Object, live *unstructured.Unstructured) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rendered)
	if err != nil {
		return err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return subset("", m, live.Object)
}

// counter is an Observer that counts reconciles per key and rechecks.
type counter struct {
	mu         sync.Mutex
	reconciles map[string]int
	rechecks   int
	full       int
	// found sums what the full rechecks found, by finding.
	found map[string]int
	// dead sums the jobs moved to dead-letter streams, by component.
	dead map[string]int
	// failed are the errors of failed reconciles, in order.
	failed []string
	// steps counts the round trips observed, by step.
	steps map[reconcile.Step]int
}

func newCounter() *counter {
	return &counter{reconciles: map[string]int{}, found: map[string]int{}, dead: map[string]int{}, steps: map[reconcile.Step]int{}}
}

func (c *counter) Reconciled(key string, _ time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reconciles[key]++
	if err != nil {
		c.failed = append(c.failed, key+": "+err.Error())
	}
}

// failures are the errors of the failed reconciles so far.
func (c *counter) failures() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.failed)
}
func (c *counter) Applied(apply.Result)    {}
func (c *counter) Retried(reconcile.Class) {}

func (c *counter) Stepped(s reconcile.Step, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps[s]++
}

// stepsSeen returns the round trips observed so far, by step.
func (c *counter) stepsSeen() map[reconcile.Step]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.steps)
}

func (c *counter) DeadLettered(key string, jobs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dead[key] += jobs
}

func (c *counter) Rechecked(r reconcile.Recheck) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rechecks++
	if r.Full {
		c.full++
		for f, n := range r.Found {
			c.found[f] += n
		}
	}
}

// findings returns a copy of what the full rechecks found so far.
func (c *counter) findings() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.found)
}

// total returns how many reconciles have run, of every key.
func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.reconciles {
		n += v
	}
	return n
}

// fullRechecks returns how many full rechecks have run.
func (c *counter) fullRechecks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.full
}

func (c *counter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciles[key]
}

// kubeWrites counts persisted writes in namespace ns since mark, by
// resource.
func kubeWrites(t *testing.T, mark int64, ns string) map[string]int {
	out := map[string]int{}
	for _, e := range kube.Writes(t, mark, func(e testenv.AuditEvent) bool {
		return e.ObjectRef.Namespace == ns && e.ResponseStatus.Code < 300
	}) {
		out[e.ObjectRef.Resource]++
	}
	return out
}

// jsWrites counts JetStream API calls that change streams or consumers, by
// subscribing to the server's API audit advisories.
type jsWrites struct {
	mu    sync.Mutex
	calls []string
}

func watchJetStreamWrites(t *testing.T, nc *nats.Conn) *jsWrites {
	return watchJetStreamAPI(t, nc, func(s string) bool {
		if strings.Contains(s, ".KV_") {
			return false // KV watches and listings create ephemeral read consumers
		}
		for _, verb := range []string{".CREATE.", ".UPDATE.", ".DELETE.", ".PURGE."} {
			if strings.Contains(s, verb) {
				return true
			}
		}
		return false
	})
}

// watchJetStreamAPI counts the JetStream API calls whose subject match
// accepts, from the server's API audit advisories.
func watchJetStreamAPI(t *testing.T, nc *nats.Conn, match func(subject string) bool) *jsWrites {
	w := &jsWrites{}
	sub, err := nc.Subscribe("$JS.EVENT.ADVISORY.API", func(m *nats.Msg) {
		var audit struct {
			Subject string `json:"subject"`
		}
		_ = json.Unmarshal(m.Data, &audit)
		if match(audit.Subject) {
			w.mu.Lock()
			w.calls = append(w.calls, audit.Subject)
			w.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// seen returns a copy of the calls counted so far.
func (w *jsWrites) seen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.calls)
}

func (w *jsWrites) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls)
}

// waitUntil polls check for up to 30 seconds.
func waitUntil(t *testing.T, check func() error) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, check)
}
