package tenants_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// storedIDs returns the ID (jti) of the account JWT the broker holds for
// each of ns's accounts and the control account: a push, even of the same
// claims, gives it a new one.
func storedIDs(t *testing.T, claims *nats.Conn, keys identity.Keys, n identity.Namespace) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, acc := range []string{n.JobsAccount(), n.TenantAccount(), n.PublisherAccount(), keys.AccountPublicKey()} {
		c, err := identity.LookupAccount(context.Background(), claims, acc)
		testenv.Must(t, err)
		if c == nil {
			t.Fatalf("the broker holds no account %s", acc)
		}
		out[c.Name] = c.ID
	}
	return out
}

// TestAccountChecksPushNothingWhenNothingChanged: the leader's check every
// 30 s that the broker still holds a namespace's accounts writes nothing
// when it does, and neither does a restarted controller making sure of
// them. (Both used to push all four every time: the claims they built
// were compared with the stored ones before signing sorts their imports.)
func TestAccountChecksPushNothingWhenNothingChanged(t *testing.T) {
	m, claims, keys := broker(t, "")
	ctx := context.Background()
	n, err := m.Ensure(ctx, "media")
	testenv.Must(t, err)
	before := storedIDs(t, claims, keys, n)
	restarted := manager(keys, claims)
	testenv.Must(t, restarted.Load(ctx, keys.AccountPublicKey()))
	// A JWT's ID hashes its issue time, in seconds, and the broker ignores
	// the same JWT pushed again: check for longer than a second.
	for start, checks := time.Now(), 0; checks < 3 || time.Since(start) < 1200*time.Millisecond; checks++ {
		testenv.Must(t, m.Verify(ctx))
		_, err := restarted.Ensure(ctx, "media")
		testenv.Must(t, err)
	}
	after := storedIDs(t, claims, keys, n)
	if len(before) != 4 {
		t.Fatalf("compared %d accounts, want 4", len(before))
	}
	for name, id := range before {
		if after[name] != id {
			t.Errorf("account %s was pushed again by a check with nothing changed (jti %s, now %s)", name, id, after[name])
		}
	}
}

// TestAccountChecksLoseNoJobs is what the pushes cost: nats-server drops
// the pull deliveries in flight when a jobs account's JWT is applied
// again, so a job delivered then waits out its ack wait, and with the
// default ack wait of 30 s, as long as the check's period, it met the next
// check on every redelivery until its maxDeliver was used up (the
// real-node tests lost 4 of 51 jobs that way now and then). Two workers of
// the namespace take bursts of jobs while the checks run back to back:
// every job is acknowledged within 3 s.
func TestAccountChecksLoseNoJobs(t *testing.T) {
	m, claims, keys := broker(t, "")
	ctx := context.Background()
	n, err := m.Ensure(ctx, "media")
	testenv.Must(t, err)
	url := claims.ConnectedUrl()
	controller := userConn(t, url, keys.Signer(), "controller", identity.Controller(identity.DefaultBuckets(), ""))
	js, err := jetstream.NewWithAPIPrefix(controller, identity.NamespaceAPIPrefix("media"))
	testenv.Must(t, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "jobs", Subjects: []string{"media.jobs.>"}, Retention: jetstream.WorkQueuePolicy})
	testenv.Must(t, err)
	_, err = js.CreateOrUpdateConsumer(ctx, "jobs", jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second})
	testenv.Must(t, err)

	tenant := n.TenantSigner()
	var acked atomic.Int64
	for i := range 2 {
		w := userConn(t, url, tenant, fmt.Sprintf("worker-%d", i), identity.Worker(identity.JobsAPIPrefix, "jobs", "w", fmt.Sprintf("_INBOX_media_w%d", i), nil))
		go fetchAndAck(ctx, t, w, &acked)
	}
	producer := userConn(t, url, tenant, "producer", identity.Producer([]string{"media.jobs.>"}, identity.ProducerInbox("media", "p")))
	pjs, err := jetstream.New(producer)
	testenv.Must(t, err)

	stop, checks := make(chan struct{}), atomic.Int64{}
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if m.Verify(ctx) == nil {
				checks.Add(1)
			}
		}
	}()
	// Rounds over more than two seconds: a push in the second of the
	// previous one is the same JWT, which the broker ignores.
	sent, start := 0, time.Now()
	for round := 0; round < 10 || time.Since(start) < 2500*time.Millisecond; round++ {
		for range 12 {
			_, err := pjs.Publish(ctx, "media.jobs.x", []byte("job"))
			testenv.Must(t, err)
			sent++
		}
		testenv.Eventually(t, 3*time.Second, func() error {
			if got := acked.Load(); got < int64(sent) {
				return fmt.Errorf("round %d: %d of %d jobs acknowledged, %d account checks so far", round, got, sent, checks.Load())
			}
			return nil
		})
	}
	if checks.Load() == 0 {
		t.Fatal("no account check completed while the jobs ran")
	}
	t.Logf("%d jobs acknowledged during %d account checks", sent, checks.Load())
}

// fetchAndAck pulls four jobs at a time, as the worker library does, and
// acknowledges each, until nc closes.
func fetchAndAck(ctx context.Context, t *testing.T, nc *nats.Conn, acked *atomic.Int64) {
	wjs, err := jetstream.NewWithAPIPrefix(nc, identity.JobsAPIPrefix)
	if err != nil {
		t.Error(err)
		return
	}
	cons, err := wjs.Consumer(ctx, "jobs", "w")
	if err != nil {
		t.Error(err)
		return
	}
	for !nc.IsClosed() {
		batch, err := cons.Fetch(4, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			continue
		}
		for msg := range batch.Messages() {
			if msg.DoubleAck(ctx) == nil {
				acked.Add(1)
			}
		}
	}
}

// userConn connects as a user the signer mints with p.
func userConn(t *testing.T, url string, s *identity.Signer, name string, p identity.Permissions) *nats.Conn {
	t.Helper()
	c, err := s.Mint(name, p, time.Now(), time.Hour)
	testenv.Must(t, err)
	path := filepath.Join(t.TempDir(), name+".creds")
	testenv.Must(t, os.WriteFile(path, c.File, 0o600))
	opts := []nats.Option{nats.UserCredentials(path)}
	if p.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(p.InboxPrefix))
	}
	nc, err := nats.Connect(url, opts...)
	testenv.Must(t, err)
	t.Cleanup(nc.Close)
	return nc
}
