package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus/lease"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/testenv"
)

var fastLease = lease.Options{TTL: 2 * time.Second, RenewInterval: 500 * time.Millisecond}

func openLeases(t *testing.T, s *testenv.NATSServer) *lease.Store {
	t.Helper()
	store, err := lease.Open(testenv.Ctx(t, 10*time.Second), testenv.BusConnect(t, s.BusConfig(), nil), lease.Config{})
	testenv.Must(t, err)
	return store
}

func TestLeaseOneContenderWinsAndTheOtherTakesOverWhenRenewalsStop(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t)
	ctx := testenv.Ctx(t, 30*time.Second)
	stores := []*lease.Store{openLeases(t, s), openLeases(t, s)}
	holderCtx, stopRenewing := context.WithCancel(ctx)
	defer stopRenewing()

	leases := make([]*lease.Lease, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, name := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			leases[i], errs[i] = stores[i].Acquire(holderCtx, "east", name, fastLease)
		}()
	}
	wg.Wait()
	winner, loser := 0, 1
	if errs[0] != nil {
		winner, loser = 1, 0
	}
	if errs[winner] != nil || !errors.Is(errs[loser], lease.ErrHeld) {
		t.Fatalf("want exactly one winner and ErrLeaseHeld for the other, got %v / %v", errs[0], errs[1])
	}
	holder := leases[winner]

	// Renewals keep the lease past its TTL.
	first := holder.Revision()
	testenv.Eventually(t, 5*time.Second, func() error {
		if holder.Revision() < first+5 {
			return fmt.Errorf("renewed to revision %d, want %d", holder.Revision(), first+5)
		}
		return nil
	})
	if _, err := stores[loser].Acquire(ctx, "east", "other", fastLease); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("lease renewed for %s is free to others: %v", 5*fastLease.RenewInterval, err)
	}

	campaign := make(chan *lease.Lease, 1)
	go func() {
		l, err := stores[loser].Campaign(ctx, "east", "contender", fastLease)
		if err != nil {
			t.Errorf("campaign: %v", err)
		}
		campaign <- l
	}()
	stopped := time.Now()
	stopRenewing()
	<-holder.Lost()
	lostAt := time.Now()
	lastRenewal := renewalTime(t, s, "east", holder.Revision())
	taken := <-campaign
	if taken == nil {
		t.FailNow()
	}
	acquiredAt := time.Now()
	t.Logf("takeover %s after the last renewal, %s after renewals stopped", acquiredAt.Sub(lastRenewal), acquiredAt.Sub(stopped))
	// The bound is TTL plus one renew interval after the last renewal; the
	// slack covers the takeover's own two round trips to the server.
	if took, limit := acquiredAt.Sub(lastRenewal), fastLease.TTL+fastLease.RenewInterval; took > limit+100*time.Millisecond {
		t.Fatalf("takeover took %s after the last renewal, want within ttl + renew interval = %s", took, limit)
	}
	if !lostAt.Before(acquiredAt) || holder.Valid() {
		t.Fatal("the old holder did not consider its lease lost before the takeover")
	}
	testenv.Must(t, taken.Release(ctx))
}

// renewalTime is the server's timestamp of a lease revision.
func renewalTime(t *testing.T, s *testenv.NATSServer, name string, rev uint64) time.Time {
	t.Helper()
	ctx := testenv.Ctx(t, 5*time.Second)
	js, err := jetstream.New(s.Connect(t))
	testenv.Must(t, err)
	kv, err := js.KeyValue(ctx, lease.DefaultBucket)
	testenv.Must(t, err)
	e, err := kv.GetRevision(ctx, name, rev)
	testenv.Must(t, err)
	return e.Created()
}

func TestLeaseHolderFencesItselfBeforeTheServerExpiresIt(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	l, err := openLeases(t, s).Acquire(ctx, "east", "a", fastLease)
	testenv.Must(t, err)
	testenv.Eventually(t, 5*time.Second, func() error {
		if !l.Valid() {
			return errors.New("lease not valid")
		}
		return nil
	})

	cut := time.Now()
	s.Shutdown() // renewals fail from now on
	select {
	case <-l.Lost():
	case <-ctx.Done():
		t.Fatal("lease never lost while cut off")
	}
	margin := fastLease.TTL / 5 // the default fencing margin
	if lost := time.Since(cut); lost > fastLease.TTL-margin+100*time.Millisecond {
		t.Fatalf("holder noticed the loss %s after being cut off, want before ttl - margin = %s", lost, fastLease.TTL-margin)
	}
	if err := l.Err(); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("lease error %v, want ErrLeaseLost", err)
	}
}

func TestLeaseReleaseFreesItAtOnce(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t)
	ctx := testenv.Ctx(t, 10*time.Second)
	store := openLeases(t, s)
	l, err := store.Acquire(ctx, "east", "a", fastLease)
	testenv.Must(t, err)
	testenv.Must(t, l.Release(ctx))
	if l.Valid() || !errors.Is(l.Err(), lease.ErrLost) {
		t.Fatal("released lease still valid")
	}
	next, err := store.Acquire(ctx, "east", "b", fastLease)
	testenv.Must(t, err)
	testenv.Must(t, next.Release(ctx))
}

func TestLeaseOptionsMustLetRenewalsFitInTheTTL(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t)
	store := openLeases(t, s)
	for name, opts := range map[string]lease.Options{
		"ttl under a second":               {TTL: 500 * time.Millisecond},
		"renewal slower than ttl - margin": {TTL: 2 * time.Second, RenewInterval: 1800 * time.Millisecond},
	} {
		if _, err := store.Acquire(testenv.Ctx(t, 5*time.Second), "east", "a", opts); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
