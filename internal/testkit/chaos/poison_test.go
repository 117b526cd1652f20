package chaos_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// missingNamespace is allowed to the controller but never created, so a
// component in it waits (NamespaceMissing) and is checked again and again.
const missingNamespace = "chaos-missing"

// TestChaosPoisonSpecs measures invariant I6: how much a handful of bad
// specs (one that does not parse, one that does not validate, one whose
// subjects its namespace may not use, one in a namespace that does not
// exist) slow the convergence of the 50 good keys. Rounds alternate
// without and with the bad specs; the ratio of the medians is reported,
// and only a generous bound is asserted.
func TestChaosPoisonSpecs(t *testing.T) {
	r := newRig(t, "bad specs beside good ones", rigOptions{serveArgs: []string{"--namespaces", missingNamespace}})
	rounds := cycleCount(2, 5)
	var clean, poisoned []float64
	for i := range rounds {
		if i > 1 && outOfTime(r.begin) {
			break
		}
		r.drv.PutAll(r.ctx)
		clean = append(clean, r.waitConverged().Seconds())
		r.poison(true)
		r.drv.PutAll(r.ctx)
		poisoned = append(poisoned, r.waitConverged().Seconds())
		if i == 0 {
			r.logPoisonStatus()
		}
		r.poison(false)
		t.Logf("round %d: 50 puts converged in %.2fs clean, %.2fs beside bad specs", i, clean[i], poisoned[i])
	}
	ratio := median(poisoned) / median(clean)
	r.fig.note("cleanSeconds", clean)
	r.fig.note("poisonedSeconds", poisoned)
	r.fig.note("slowdown", ratio)
	t.Logf("I6: median %.2fs clean, %.2fs with bad specs: x%.2f", median(clean), median(poisoned), ratio)
	if median(poisoned) > 3*median(clean)+5 {
		t.Errorf("I6: bad specs slowed the others from %.2fs to %.2fs", median(clean), median(poisoned))
	}
	r.finish()
}

// poison puts (or deletes) the bad specs.
func (r *rig) poison(put bool) {
	r.t.Helper()
	bad := map[string][]byte{
		api.Key(r.ns, "bad-json"):      []byte(`{"apiVersion": "tinyctl.io/v1alpha1", "kind": `),
		api.Key(r.ns, "bad-spec"):      []byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"bad-spec","namespace":"` + r.ns + `"},"spec":{"image":"","jobs":{"subjects":[]}}}`),
		api.Key(r.ns, "bad-subjects"):  []byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"bad-subjects","namespace":"` + r.ns + `"},"spec":{"image":"registry.example.com/x:1","jobs":{"subjects":["someone-else.jobs"]}}}`),
		api.Key(missingNamespace, "w"): []byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"w","namespace":"` + missingNamespace + `"},"spec":{"image":"registry.example.com/x:1","jobs":{"subjects":["` + missingNamespace + `.w"]}}}`),
	}
	for key, value := range bad {
		var err error
		if put {
			_, err = r.specs.Put(testenv.Ctx(r.t, 5*time.Second), key, value)
		} else {
			err = r.specs.Delete(testenv.Ctx(r.t, 5*time.Second), key, 0)
		}
		testenv.Must(r.t, err)
	}
}

// logPoisonStatus logs what the controller reports for each bad spec.
func (r *rig) logPoisonStatus() {
	recs, err := r.status.ListCluster(r.ctx, cluster)
	testenv.Must(r.t, err)
	for _, rec := range recs {
		if rec.Component == api.Key(missingNamespace, "w") || strings.Contains(rec.Component, ".bad-") {
			for _, c := range rec.Conditions {
				r.t.Logf("bad spec %s: %s=%s %s", rec.Component, c.Type, c.Status, c.Reason)
			}
		}
	}
}
