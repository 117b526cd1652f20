package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/tinyctl/tinyctl/bus/lease"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var fastLease = lease.Options{TTL: 2 * time.Second, RenewInterval: 500 * time.Millisecond}

func openLeases(t *testing.T, s *natstest.Server) *lease.Store {
	t.Helper()
	store, err := lease.Open(testenv.Ctx(t, 10*time.Second), natstest.BusConnect(t, s.BusConfig(), nil), lease.Config{})
	testenv.Must(t, err)
	return store
}

func TestLeaseOneContenderWinsAndTheOtherTakesOverWhenRenewalsStop(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
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
	// How long the takeover took is the server's TTL plus a campaign
	// interval, measured here only for the log: TestLeaseTimesAreTheClocks
	// checks the bounds on an injected clock.
	t.Logf("takeover %s after the last renewal, %s after renewals stopped", acquiredAt.Sub(lastRenewal), acquiredAt.Sub(stopped))
	if !lostAt.Before(acquiredAt) || holder.Valid() {
		t.Fatal("the old holder did not consider its lease lost before the takeover")
	}
	// The newer tenure's fencing token is the greater, as strings too.
	if !(taken.Token() > holder.Token()) || len(taken.Token()) != len(lease.TokenLayout) {
		t.Errorf("the new tenure's token %q is not after the old one's %q", taken.Token(), holder.Token())
	}
	testenv.Must(t, taken.Release(ctx))
}

// TestATokenOutlivesTheLeaseBucket: the lease bucket made again restarts
// its revisions, and a tenure that follows still has a later token.
func TestATokenOutlivesTheLeaseBucket(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	first, err := openLeases(t, s).Acquire(ctx, "east", "a", fastLease)
	testenv.Must(t, err)
	if want := renewalTime(t, s, "east", first.Revision()).UTC().Format(lease.TokenLayout); first.Token() != want {
		t.Errorf("token %s, want the server's time of the acquiring write, %s", first.Token(), want)
	}
	for range 3 { // revisions the new bucket will not reach
		rev := first.Revision()
		testenv.Eventually(t, 5*time.Second, func() error {
			if first.Revision() == rev {
				return fmt.Errorf("not renewed past revision %d", rev)
			}
			return nil
		})
	}
	testenv.Must(t, first.Release(ctx))
	js, err := jetstream.New(s.Connect(t))
	testenv.Must(t, err)
	testenv.Must(t, js.DeleteKeyValue(ctx, lease.DefaultBucket))

	second, err := openLeases(t, s).Acquire(ctx, "east", "b", fastLease)
	testenv.Must(t, err)
	defer second.Release(ctx)
	if second.Revision() >= first.Revision() {
		t.Fatalf("the new bucket's revision %d is not below the old one's %d: the test proves nothing", second.Revision(), first.Revision())
	}
	if !(second.Token() > first.Token()) {
		t.Errorf("token after the bucket was made again %q, not after %q", second.Token(), first.Token())
	}
}

// renewalTime is the server's timestamp of a lease revision.
func renewalTime(t *testing.T, s *natstest.Server, name string, rev uint64) time.Time {
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
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	clk := testingclock.NewFakeClock(time.Now())
	store, err := lease.Open(ctx, natstest.BusConnect(t, s.BusConfig(), nil), lease.Config{Clock: clk})
	testenv.Must(t, err)
	l, err := store.Acquire(ctx, "east", "a", fastLease)
	testenv.Must(t, err)
	margin := fastLease.TTL / 5 // the default fencing margin
	deadline := clk.Now().Add(fastLease.TTL - margin)
	if !l.ValidUntil().Equal(deadline) {
		t.Fatalf("fencing deadline %s, want ttl - margin after the write: %s", l.ValidUntil(), deadline)
	}

	s.Shutdown() // renewals fail from now on
	clk.SetTime(deadline.Add(-time.Millisecond))
	if !l.Valid() {
		t.Fatal("lease invalid before its fencing deadline")
	}
	if _, _, err := l.Fence().Check(ctx); err != nil {
		t.Fatalf("fence refused a write before the deadline: %v", err)
	}
	clk.SetTime(deadline)
	if l.Valid() {
		t.Fatal("lease still valid at its fencing deadline, which is before the server expires it")
	}
	if _, _, err := l.Fence().Check(ctx); !errors.Is(err, lease.ErrNotLeader) {
		t.Fatalf("fence at the deadline: %v, want ErrNotLeader", err)
	}
	select {
	case <-l.Lost():
	case <-ctx.Done():
		t.Fatal("lease never reported lost after its fencing deadline")
	}
	if err := l.Err(); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("lease error %v, want ErrLost", err)
	}
}

// A contender judges a lease's age on the server's clock, which stamped
// the write: one whose wall clock runs an hour ahead cannot take a lease
// its holder still renews, one an hour behind takes an abandoned lease as
// soon as its TTL has passed on the server (not when its own clock says
// so, nor only after the server's expiry pass).
func TestLeaseAgeIsTheServersClockNotTheContenders(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	holderCtx, crash := context.WithCancel(ctx)
	defer crash()
	l, err := openLeases(t, s).Acquire(holderCtx, "east", "a", fastLease)
	testenv.Must(t, err)

	contender := func(skew time.Duration) *lease.Store {
		clk := testingclock.NewFakeClock(time.Now().Add(skew))
		store, err := lease.Open(ctx, natstest.BusConnect(t, s.BusConfig(), nil), lease.Config{Clock: clk})
		testenv.Must(t, err)
		return store
	}
	ahead, behind := contender(time.Hour), contender(-time.Hour)
	if _, err := ahead.Acquire(ctx, "east", "b", fastLease); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("a contender an hour ahead took a lease its holder renews every %s: %v, want ErrHeld", fastLease.RenewInterval, err)
	}
	if !l.Valid() {
		t.Fatal("the holder lost its lease while renewing it")
	}

	crash() // renewals stop, nothing is released
	<-l.Lost()
	written := renewalTime(t, s, "east", l.Revision())
	var taken *lease.Lease
	testenv.Eventually(t, 5*time.Second, func() error {
		taken, err = behind.Acquire(ctx, "east", "b", fastLease)
		return err
	})
	if age := time.Since(written); age <= fastLease.TTL {
		t.Fatalf("lease taken %s after its last write, within its TTL of %s", age, fastLease.TTL)
	}
	testenv.Must(t, taken.Release(ctx))
}

func TestLeaseReleaseFreesItAtOnce(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
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
	s := natstest.Start(t)
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

func TestLeaseIsNotSharedByTwoProcessesWithTheSameHolderName(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 10*time.Second)
	first, err := openLeases(t, s).Acquire(ctx, "east", "same-name", fastLease)
	testenv.Must(t, err)
	if _, err := openLeases(t, s).Acquire(ctx, "east", "same-name", fastLease); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("a second process named like the holder: %v, want ErrHeld", err)
	}
	testenv.Must(t, first.Release(ctx))
}

// TestATokenIsLaterThanTheLastIssuedWhateverTheClock: the last token
// issued for a lease is an hour ahead of the server's clock (a clock
// stepped back since, or a stream leader whose clock is behind); the next
// tenure's token still comes after it, and is recorded as the last.
func TestATokenIsLaterThanTheLastIssuedWhateverTheClock(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	store := openLeases(t, s)
	ahead := time.Now().Add(time.Hour).UTC().Format(lease.TokenLayout)
	js, err := jetstream.New(s.Connect(t))
	testenv.Must(t, err)
	kv, err := js.KeyValue(ctx, lease.DefaultBucket)
	testenv.Must(t, err)
	_, err = kv.Put(ctx, lease.TokenKey("east"), []byte(ahead))
	testenv.Must(t, err)

	l, err := store.Acquire(ctx, "east", "a", fastLease)
	testenv.Must(t, err)
	defer l.Release(ctx)
	if !(l.Token() > ahead) {
		t.Fatalf("token %s after a last token of %s: a newer tenure would be fenced out by an older one", l.Token(), ahead)
	}
	last, err := kv.Get(ctx, lease.TokenKey("east"))
	testenv.Must(t, err)
	if string(last.Value()) != l.Token() {
		t.Errorf("the last token recorded is %s, want this tenure's %s", last.Value(), l.Token())
	}
}
