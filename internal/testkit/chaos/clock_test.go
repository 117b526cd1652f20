package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// clockSkews are how far the skewed contenders' and readers' wall clocks
// are from the server's.
var clockSkews = []time.Duration{time.Hour, -time.Hour}

// TestChaosClockSkew runs lease contenders and status readers whose wall
// clocks are an hour ahead of and behind the server's beside the leading
// controller while the driver writes: no contender may take the live
// lease, and no reader may see the live cluster stale. Positive controls:
// once the leader is SIGKILLed, the contender an hour ahead takes the
// lease and the readers see the cluster stale, so the checks could fail.
func TestChaosClockSkew(t *testing.T) {
	r := newRig(t, "lease contenders and status readers with skewed clocks", rigOptions{})
	leaseName := "controller." + cluster
	contenders, readers := map[time.Duration]*lease.Store{}, map[time.Duration]*status.Store{}
	for _, skew := range clockSkews {
		clk := testingclock.NewFakeClock(time.Now().Add(skew))
		var err error
		contenders[skew], err = lease.Open(testenv.Ctx(t, 10*time.Second), r.conn, lease.Config{Clock: clk})
		testenv.Must(t, err)
		readers[skew], err = status.Open(testenv.Ctx(t, 10*time.Second), r.conn, status.Config{Now: clk.Now}, kv.Existing)
		testenv.Must(t, err)
	}
	attempts, compared := 0, 0
	var takeovers []float64
	r.cycles(cycleCount(1, 3), func(r *rig, _ int) {
		deadline := time.Now().Add(3 * time.Second)
		for time.Now().Before(deadline) && r.ctx.Err() == nil {
			for _, skew := range clockSkews {
				attempts++
				if err := tryLease(r.ctx, contenders[skew], leaseName); err != nil {
					t.Errorf("contender %s off: %v", skew, err)
				}
				n, err := liveRows(r.ctx, readers[skew])
				if err != nil {
					t.Errorf("reader %s off: %v", skew, err)
				}
				compared += n
			}
			r.hold(100 * time.Millisecond)
		}
		killed := time.Now()
		r.kill(r.leader)
		ahead := contenders[time.Hour]
		testenv.Eventually(t, leaseTTL+10*time.Second, func() error {
			l, err := ahead.Acquire(r.ctx, leaseName, "skewed-ahead", lease.Options{TTL: leaseTTL})
			if err != nil {
				return err
			}
			return l.Release(r.ctx)
		})
		takeovers = append(takeovers, time.Since(killed).Round(10*time.Millisecond).Seconds())
		for _, skew := range clockSkews {
			testenv.Eventually(t, 10*time.Second, func() error {
				if n, _ := liveRows(r.ctx, readers[skew]); n > 0 {
					return fmt.Errorf("reader %s off still sees %d live rows of a cluster whose controller was killed", skew, n)
				}
				return nil
			})
		}
		r.leader = r.startServe()
		r.leader.WaitReady(t, "leader", 30*time.Second)
	})
	if attempts == 0 || compared == 0 {
		t.Errorf("the skewed contenders tried %d times and the readers compared %d rows: the check proved nothing", attempts, compared)
	}
	r.fig.note("skewSeconds", []float64{time.Hour.Seconds(), -time.Hour.Seconds()})
	r.fig.note("skewedLeaseAttempts", attempts)
	r.fig.note("skewedRowsCompared", compared)
	r.fig.note("skewedTakeoverAfterKillSeconds", takeovers)
	r.finish()
}

// tryLease fails when a skewed contender takes the live lease (it gives
// it back at once). ErrHeld is right; a failed request takes nothing.
func tryLease(ctx context.Context, s *lease.Store, name string) error {
	l, err := s.Acquire(ctx, name, "skewed", lease.Options{TTL: leaseTTL})
	if err != nil {
		return nil
	}
	_ = l.Release(ctx)
	return errors.New("took the lease the leader holds: two leaders")
}

// liveRows returns how many of the cluster's status rows a reader sees
// live, failing when it sees one stale.
func liveRows(ctx context.Context, s *status.Store) (int, error) {
	rows, err := s.List(ctx)
	if err != nil {
		return 0, nil // a read that failed compared nothing
	}
	live := 0
	for _, row := range rows {
		if row.Cluster != cluster {
			continue
		}
		if row.Stale {
			return live, fmt.Errorf("sees %s stale while its controller beats", row.Component)
		}
		live++
	}
	return live, nil
}
