package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/fleet"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func start(t *testing.T, cfg bus.EmbeddedConfig) *bus.Embedded {
	t.Helper()
	cfg.Port, cfg.StoreDir = -1, t.TempDir()
	e, err := bus.StartEmbedded(testenv.Ctx(t, 10*time.Second), cfg)
	testenv.Must(t, err)
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

func connect(t *testing.T, e *bus.Embedded) *bus.Conn {
	return natstest.BusConnect(t, bus.Config{URLs: []string{e.ClientURL()}, Reconnect: natstest.FastBackoff}, nil)
}

// leaf is one cluster's NATS and the stores its controller opens.
type leaf struct {
	specs  *specs.Store
	status *status.Store
}

func startLeaf(t *testing.T, hub *bus.Embedded, name string) leaf {
	t.Helper()
	ctx := testenv.Ctx(t, 20*time.Second)
	e := start(t, bus.EmbeddedConfig{ServerName: name, JetStreamDomain: name,
		LeafRemotes: []bus.LeafRemote{{URLs: []string{hub.LeafnodeURL()}, LocalOnly: fleet.LocalOnly(fleet.Buckets{})}}})
	c := connect(t, e)
	var l leaf
	testenv.Eventually(t, 10*time.Second, func() (err error) { // the leafnode connects
		l.specs, err = specs.Open(ctx, c, specs.Config{HubDomain: "hub"}, kv.Ensure)
		return err
	})
	var err error
	l.status, err = status.Open(ctx, c, status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	return l
}

func TestClustersMirrorTheHubsSpecsAndTheHubGathersOnlyEachClustersOwnStatus(t *testing.T) {
	ctx := testenv.Ctx(t, 60*time.Second)
	hub := start(t, bus.EmbeddedConfig{ServerName: "hub", JetStreamDomain: "hub", LeafnodePort: -1})
	hc := connect(t, hub)
	hubSpecs, err := specs.Open(ctx, hc, specs.Config{}, kv.Ensure)
	testenv.Must(t, err)
	hubStatus, err := status.Open(ctx, hc, status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	eu, us := startLeaf(t, hub, "eu-1"), startLeaf(t, hub, "us-1")
	testenv.Must(t, fleet.Join(ctx, hc, fleet.Buckets{}, "eu-1", ""))
	testenv.Must(t, fleet.Join(ctx, hc, fleet.Buckets{}, "us-1", "us-1"))

	rev, err := hubSpecs.Put(ctx, "media.thumbnailer", []byte("v1"))
	testenv.Must(t, err)
	for name, l := range map[string]leaf{"eu-1": eu, "us-1": us} {
		testenv.Eventually(t, 10*time.Second, func() error {
			e, err := l.specs.Get(ctx, "media.thumbnailer")
			if err != nil || e.Revision != rev || string(e.Value) != "v1" {
				return fmt.Errorf("%s mirror: %q at %d (%v), want v1 at %d", name, e.Value, e.Revision, err, rev)
			}
			return nil
		})
	}

	// us-1 reports its status. eu-1's broker, in an attacker's hands,
	// holds rows and a heartbeat claiming to be us-1's, then eu-1's own:
	// the hub sources everything it sends, and files all of it under eu-1.
	_, err = us.status.Put(ctx, api.Status{Component: "media.thumbnailer", Cluster: "us-1", ObservedRevision: rev})
	testenv.Must(t, err)
	testenv.Eventually(t, 10*time.Second, func() error {
		_, err := hubStatus.Get(ctx, "media.thumbnailer", "us-1")
		return err
	})
	_, err = eu.status.Put(ctx, api.Status{Component: "media.thumbnailer", Cluster: "us-1", ObservedRevision: 99})
	testenv.Must(t, err)
	_, err = eu.status.Beat(ctx, cluster.Heartbeat{Cluster: "us-1", Controller: "forged"}, 30*time.Second)
	testenv.Must(t, err)
	_, err = eu.status.Put(ctx, api.Status{Component: "media.thumbnailer", Cluster: "eu-1", ObservedRevision: rev})
	testenv.Must(t, err)
	_, err = eu.status.Beat(ctx, cluster.Heartbeat{Cluster: "eu-1"}, 30*time.Second)
	testenv.Must(t, err)
	testenv.Eventually(t, 10*time.Second, func() error {
		r, err := hubStatus.Get(ctx, "media.thumbnailer", "eu-1")
		if err != nil || r.ObservedRevision != rev || r.Stale {
			return fmt.Errorf("eu-1 at the hub: %+v, %v", r, err)
		}
		if n := hubMessages(t, hc); n != 2 {
			return fmt.Errorf("hub status bucket holds %d messages, want 2 (us-1's row, and eu-1's: its forged one replaced by its own)", n)
		}
		return nil
	})
	if r, err := hubStatus.Get(ctx, "media.thumbnailer", "us-1"); err != nil || r.ObservedRevision != rev {
		t.Fatalf("us-1's status at the hub after eu-1 forged it: %+v, %v; want us-1's own, at %d", r, err, rev)
	}
	if hb, err := hubStatus.Heartbeat(ctx, "us-1"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("eu-1 wrote us-1's heartbeat at the hub: %+v, %v", hb, err)
	}
	members, err := fleet.Members(ctx, hc, fleet.Buckets{})
	testenv.Must(t, err)
	if len(members) != 2 || members[0].Cluster != "eu-1" || members[0].Domain != "eu-1" || members[1].Cluster != "us-1" {
		t.Fatalf("members: %+v", members)
	}
	testenv.Must(t, fleet.Leave(ctx, hc, fleet.Buckets{}, "eu-1"))
	if err := fleet.Leave(ctx, hc, fleet.Buckets{}, "eu-1"); !errors.Is(err, fleet.ErrNotMember) {
		t.Fatalf("second leave: %v, want ErrNotMember", err)
	}
	members, err = fleet.Members(ctx, hc, fleet.Buckets{})
	testenv.Must(t, err)
	if len(members) != 1 || members[0].Cluster != "us-1" {
		t.Fatalf("members after eu-1 left: %+v", members)
	}
	if err := fleet.Join(ctx, hc, fleet.Buckets{}, "a.b", ""); err == nil {
		t.Fatal("joined a cluster named a.b")
	}

	// A second cluster named us-1 (another broker, another domain), or a
	// second name for us-1's domain, would merge or duplicate rows.
	testenv.Must(t, fleet.Join(ctx, hc, fleet.Buckets{}, "us-1", "us-1")) // again: a no-op
	for _, join := range [][2]string{{"us-1", "us-2"}, {"other", "us-1"}} {
		err := fleet.Join(ctx, hc, fleet.Buckets{}, join[0], join[1])
		if !errors.Is(err, fleet.ErrTaken) || !strings.Contains(err.Error(), "us-1") {
			t.Errorf("join %s from domain %s: %v, want ErrTaken naming us-1", join[0], join[1], err)
		}
	}
	members, err = fleet.Members(ctx, hc, fleet.Buckets{})
	testenv.Must(t, err)
	if len(members) != 1 || members[0].Cluster != "us-1" || members[0].Domain != "us-1" {
		t.Fatalf("members after the refused joins: %+v", members)
	}
}

func hubMessages(t *testing.T, c *bus.Conn) uint64 {
	s, err := c.JetStream().Stream(testenv.Ctx(t, 5*time.Second), "KV_"+status.DefaultBucket)
	testenv.Must(t, err)
	return s.CachedInfo().State.Msgs
}

// TestConcurrentJoinsKeepEveryMember: twelve clusters joining at once all
// end up members (each join reads the stream's sources, adds its own and
// writes them back, holding the membership lock; without it the last
// writer dropped the others).
func TestConcurrentJoinsKeepEveryMember(t *testing.T) {
	ctx := testenv.Ctx(t, 60*time.Second)
	hub := start(t, bus.EmbeddedConfig{ServerName: "hub", JetStreamDomain: "hub", LeafnodePort: -1})
	hc := connect(t, hub)
	_, err := status.Open(ctx, hc, status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	const n = 12
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- fleet.Join(ctx, hc, fleet.Buckets{}, fmt.Sprintf("c-%02d", i), "") }()
	}
	for range n {
		testenv.Must(t, <-errs)
	}
	members, err := fleet.Members(ctx, hc, fleet.Buckets{})
	testenv.Must(t, err)
	if len(members) != n {
		t.Fatalf("%d members after %d joins at once: %+v", len(members), n, members)
	}
}

// TestAJoinWaitsForTheMembershipLock: while another process holds the
// membership lock, a join changes nothing and gives up when its context
// ends; once the lock is released it goes through.
func TestAJoinWaitsForTheMembershipLock(t *testing.T) {
	ctx := testenv.Ctx(t, 30*time.Second)
	hub := start(t, bus.EmbeddedConfig{ServerName: "hub", JetStreamDomain: "hub", LeafnodePort: -1})
	hc := connect(t, hub)
	_, err := status.Open(ctx, hc, status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	leases, err := lease.Open(ctx, hc, lease.Config{})
	testenv.Must(t, err)
	held, err := leases.Acquire(ctx, "fleet."+status.DefaultBucket, "another-join", lease.Options{TTL: 10 * time.Second})
	testenv.Must(t, err)

	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := fleet.Join(short, hc, fleet.Buckets{}, "east", ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("join while the lock is held: %v, want it to wait until its context ends", err)
	}
	if members, err := fleet.Members(ctx, hc, fleet.Buckets{}); err != nil || len(members) != 0 {
		t.Fatalf("members after a join that waited for the lock: %+v (%v), want none", members, err)
	}
	testenv.Must(t, held.Release(ctx))
	testenv.Must(t, fleet.Join(ctx, hc, fleet.Buckets{}, "east", ""))
	if members, err := fleet.Members(ctx, hc, fleet.Buckets{}); err != nil || len(members) != 1 {
		t.Fatalf("members after the lock was released: %+v (%v), want east", members, err)
	}
}
