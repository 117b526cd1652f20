package reconcile_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// A full recheck reconciles only the components it finds changed: with
// nothing changed it reconciles nothing and writes nothing; a consumer
// deleted and a stream edited behind tinyctl's back are found and put
// right, and nothing else is reconciled.
func TestAFullRecheckReconcilesOnlyWhatChanged(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	rechecks := newCounter()
	e.obs = rechecks
	e.start()
	names := []string{"alpha", "beta", "gamma"}
	for _, name := range names {
		e.waitStatus(name, api.ConditionApplied, "True", e.publish(e.component(name)))
	}
	fullRechecksPass := func(n int) {
		t.Helper()
		want := rechecks.fullRechecks() + n
		testenv.Eventually(t, 30*time.Second, func() error {
			if got := rechecks.fullRechecks(); got < want {
				return fmt.Errorf("%d full rechecks, waiting for %d", got, want)
			}
			return nil
		})
	}
	fullRechecksPass(1) // the first one after convergence compares every stream with its spec

	// Nothing changed: full rechecks reconcile nothing and write nothing.
	mark, js := kube.AuditMark(t), watchJetStreamWrites(t, e.conn.NATS())
	before, found := rechecks.total(), rechecks.findings()
	fullRechecksPass(2)
	if n := rechecks.total() - before; n != 0 {
		t.Errorf("%d reconciles in two full rechecks with nothing changed, want 0", n)
	}
	if f := rechecks.findings(); !maps.Equal(f, found) {
		t.Errorf("full rechecks with nothing changed found %v (before: %v)", f, found)
	}
	if w := kubeWrites(t, mark, e.ns); len(w) != 0 {
		t.Errorf("full rechecks wrote to the API server: %v", w)
	}
	if n := js.count(); n != 0 {
		t.Errorf("full rechecks made %d JetStream writes: %v", n, js.calls)
	}

	// A consumer deleted and a stream edited out of band are found.
	ctx := context.Background()
	counts := map[string]int{}
	for _, name := range names {
		counts[name] = rechecks.count(api.KeyOf(e.component(name)))
	}
	beta := render.StreamName(e.ns, "beta")
	testenv.Must(t, e.js.DeleteConsumer(ctx, beta, render.ConsumerName(e.ns, "beta")))
	gamma := e.stream("gamma").Config
	wantAge := gamma.MaxAge
	gamma.MaxAge = wantAge + 1e9
	if _, err := e.js.UpdateStream(ctx, gamma); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if _, err := e.js.Consumer(ctx, beta, render.ConsumerName(e.ns, "beta")); err != nil {
			return fmt.Errorf("beta's consumer: %w", err)
		}
		if got := e.stream("gamma").Config.MaxAge; got != wantAge {
			return fmt.Errorf("gamma's stream maxAge %s, want %s back", got, wantAge)
		}
		return nil
	})
	// The observer hears of a reconcile when it ends and of a recheck's
	// findings when the recheck ends, both possibly after the repair.
	testenv.Eventually(t, 30*time.Second, func() error {
		f := rechecks.findings()
		if f[reconcile.FoundNoConsumer] <= found[reconcile.FoundNoConsumer] || f[reconcile.FoundStreamDrift] <= found[reconcile.FoundStreamDrift] {
			return fmt.Errorf("findings went from %v to %v: want one more %s and %s", found, f, reconcile.FoundNoConsumer, reconcile.FoundStreamDrift)
		}
		for _, name := range []string{"beta", "gamma"} {
			if rechecks.count(api.KeyOf(e.component(name))) == counts[name] {
				return fmt.Errorf("%s was put right without a reconcile the counter saw", name)
			}
		}
		return nil
	})
	if n := rechecks.count(api.KeyOf(e.component("alpha"))) - counts["alpha"]; n != 0 {
		t.Errorf("alpha, unchanged, was reconciled %d times", n)
	}
}
