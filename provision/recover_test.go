package provision_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/provision"
)

// crash leaves release name the way a crashed helm leaves it: its newest
// revision in status, started at the given time. With newRevision it adds a
// revision on top of the deployed one (an interrupted upgrade); otherwise
// it rewrites the only revision (an interrupted install).
func (r *runtime) crash(name string, status release.Status, at time.Time, newRevision bool) {
	r.t.Helper()
	st := r.storage()
	rel, err := st.Last(name)
	if err != nil {
		r.t.Fatal(err)
	}
	rel.Info.Status = status
	rel.Info.Description = "interrupted by the test"
	rel.Info.LastDeployed = helmtime.Time{Time: at}
	if newRevision {
		rel.Version++
		err = st.Create(rel)
	} else {
		err = st.Update(rel)
	}
	if err != nil {
		r.t.Fatal(err)
	}
}

// history returns "revision:status" of every revision of release name.
func (r *runtime) history(name string) []string {
	r.t.Helper()
	revs, err := r.storage().History(name)
	if err != nil {
		r.t.Fatal(err)
	}
	out := make([]string, len(revs))
	for _, rel := range revs {
		out[rel.Version-1] = string(rel.Info.Status)
	}
	return out
}

// TestRecoverPending checks a release left pending by a crash is detected,
// marked failed and retried, while a recent pending operation is left
// alone with a clear error.
func TestRecoverPending(t *testing.T) {
	tests := []struct {
		name        string
		status      release.Status
		newRevision bool
		wantDetail  string
		wantHistory []string
	}{
		{"interrupted upgrade", release.StatusPendingUpgrade, true,
			"revision 2 was stuck in pending-upgrade for 1h0m0s (an interrupted operation); marked it failed and retried it from deployed revision 1",
			[]string{"superseded", "failed", "deployed"}},
		{"interrupted install", release.StatusPendingInstall, false,
			"revision 1 was stuck in pending-install for 1h0m0s (an interrupted operation); marked it failed and retried the install",
			[]string{"superseded", "deployed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now()
			clock := func() time.Time { return now }
			r := newRuntime(t, provision.Options{StuckAfter: 10 * time.Minute, Now: clock})
			ctx := context.Background()
			if _, err := r.p.EnsureNamespace(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := r.p.InstallCollector(ctx, nil); err != nil {
				t.Fatal(err)
			}
			r.crash("collector", tt.status, now.Add(-5*time.Second), tt.newRevision)
			_, err := r.p.InstallCollector(ctx, nil)
			if !errors.Is(err, provision.ErrReleaseBusy) || !strings.Contains(err.Error(), "is "+string(tt.status)+" since 5s ago") {
				t.Errorf("install over a recent %s = %v, want ErrReleaseBusy saying so", tt.status, err)
			}

			r.crash("collector", tt.status, now.Add(-time.Hour), false)
			res, err := r.p.InstallCollector(ctx, nil)
			if err != nil {
				t.Fatalf("install over a stuck release: %v", err)
			}
			if res.Action != action.Upgraded || res.Detail != tt.wantDetail {
				t.Errorf("result = %s\nwant upgraded: %s", res, tt.wantDetail)
			}
			if got := r.history("collector"); strings.Join(got, ",") != strings.Join(tt.wantHistory, ",") {
				t.Errorf("history = %v, want %v", got, tt.wantHistory)
			}
		})
	}
}
