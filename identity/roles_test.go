package identity_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// party is a client connected with minted credentials, recording the
// permission violations the server reports to it.
type party struct {
	nc *nats.Conn
	js jetstream.JetStream

	mu         sync.Mutex
	violations []string
}

func connectAs(t *testing.T, s *natstest.Server, c identity.Creds, perms identity.Permissions) *party {
	t.Helper()
	path := filepath.Join(t.TempDir(), "user.creds")
	testenv.Must(t, os.WriteFile(path, c.File, 0o600))
	p := &party{}
	opts := []nats.Option{nats.UserCredentials(path), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.violations = append(p.violations, err.Error())
	})}
	if perms.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(perms.InboxPrefix))
	}
	nc, err := nats.Connect(s.URL(), opts...)
	testenv.Must(t, err)
	t.Cleanup(nc.Close)
	p.nc = nc
	p.js, err = jetstream.New(nc)
	testenv.Must(t, err)
	return p
}

// refused runs act and waits until the server reports a permission
// violation naming subject.
func (p *party) refused(t *testing.T, what, subject string, act func()) {
	t.Helper()
	act()
	testenv.Eventually(t, 5*time.Second, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, v := range p.violations {
			if strings.Contains(v, `"`+subject+`"`) {
				return nil
			}
		}
		return fmt.Errorf("%s: no permission violation for %s (seen %v)", what, subject, p.violations)
	})
}

func mint(t *testing.T, s *natstest.Server, name string, perms identity.Permissions, ttl time.Duration) identity.Creds {
	t.Helper()
	c, err := s.Keys(t).Signer().Mint(name, perms, time.Now(), ttl)
	testenv.Must(t, err)
	return c
}

// workQueue makes stream and consumer for a component as the controller
// would, with the controller's credentials.
func workQueue(t *testing.T, ctl *party, stream, consumer, subject string) {
	t.Helper()
	ctx := testenv.Ctx(t, 10*time.Second)
	st, err := ctl.js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subject}, Retention: jetstream.WorkQueuePolicy})
	testenv.Must(t, err)
	_, err = st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: consumer, AckPolicy: jetstream.AckExplicitPolicy})
	testenv.Must(t, err)
}

func TestEachPartyMayDoItsJobAndNothingElse(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.WithJWT())
	ctx := testenv.Ctx(t, 30*time.Second)
	b := identity.DefaultBuckets()
	ctl := connectAs(t, s, mint(t, s, "controller", identity.Controller(b, ""), time.Hour), identity.Controller(b, ""))
	workQueue(t, ctl, "tinyctl_a_resizer", "tinyctl_a_resizer_worker", "a.resize.>")
	workQueue(t, ctl, "tinyctl_b_billing", "tinyctl_b_billing_worker", "b.bill.>")
	specs, err := ctl.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: b.Specs})
	testenv.Must(t, err)
	_, err = ctl.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: b.Leases})
	testenv.Must(t, err)
	ctl.refused(t, "controller writing a spec", "$KV."+b.Specs+".a.resizer", func() { _, _ = specs.Put(brief(t), "a.resizer", []byte("{}")) })

	admin := s.Connect(t)
	for _, subject := range []string{"a.resize.one", "b.bill.one"} {
		testenv.Must(t, admin.Publish(subject, []byte("job")))
	}
	testenv.Must(t, admin.Flush())

	perms := identity.Worker(identity.DefaultAPIPrefix, "tinyctl_a_resizer", "tinyctl_a_resizer_worker", "_INBOX_a_resizer", []string{"a.thumbs.>"})
	worker := connectAs(t, s, mint(t, s, "worker.a.resizer", perms, time.Hour), perms)
	own, err := worker.js.Consumer(ctx, "tinyctl_a_resizer", "tinyctl_a_resizer_worker")
	testenv.Must(t, err)
	if got, err := natstest.FetchAndAck(t, ctx, own, 1); got != 1 {
		t.Fatalf("worker fetched %d jobs from its own consumer (%v), want 1", got, err)
	}
	testenv.Must(t, worker.nc.Publish("a.thumbs.made", []byte("declared")))

	worker.refused(t, "another component's consumer", "$JS.API.CONSUMER.MSG.NEXT.tinyctl_b_billing.tinyctl_b_billing_worker", func() {
		_ = worker.nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.tinyctl_b_billing.tinyctl_b_billing_worker", worker.nc.NewRespInbox(), []byte("1"))
	})
	worker.refused(t, "a put to the spec bucket", "$KV."+b.Specs+".a.resizer", func() { _ = worker.nc.Publish("$KV."+b.Specs+".a.resizer", []byte("{}")) })
	worker.refused(t, "the controller's lease", "$KV."+b.Leases+".controller.east", func() { _ = worker.nc.Publish("$KV."+b.Leases+".controller.east", []byte("{}")) })
	worker.refused(t, "deleting its stream", "$JS.API.STREAM.DELETE.tinyctl_a_resizer", func() { _ = worker.js.DeleteStream(brief(t), "tinyctl_a_resizer") })
	worker.refused(t, "an undeclared subject", "b.bill.forged", func() { _ = worker.nc.Publish("b.bill.forged", []byte("x")) })
	if _, err := ctl.js.Stream(ctx, "tinyctl_a_resizer"); err != nil {
		t.Fatalf("the worker's refused delete removed its stream: %v", err)
	}
	worker.refused(t, "other parties' inboxes", "_INBOX.>", func() { _, _ = worker.nc.SubscribeSync("_INBOX.>") })

	pub := connectAs(t, s, mint(t, s, "publisher", identity.Publisher(b), 0), identity.Publisher(b))
	pubSpecs, err := pub.js.KeyValue(ctx, b.Specs)
	testenv.Must(t, err)
	rev, err := pubSpecs.Put(ctx, "a.resizer", []byte(`{"v":1}`))
	testenv.Must(t, err)
	if e, err := pubSpecs.Get(ctx, "a.resizer"); err != nil || e.Revision() != rev {
		t.Fatalf("publisher reads back %v %v", e, err)
	}
	pub.refused(t, "a publisher fetching jobs", "$JS.API.CONSUMER.MSG.NEXT.tinyctl_a_resizer.tinyctl_a_resizer_worker", func() {
		_ = pub.nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.tinyctl_a_resizer.tinyctl_a_resizer_worker", pub.nc.NewRespInbox(), []byte("1"))
	})
	pub.refused(t, "a publisher deleting a stream", "$JS.API.STREAM.DELETE.tinyctl_a_resizer", func() { _ = pub.js.DeleteStream(brief(t), "tinyctl_a_resizer") })
	pub.refused(t, "a publisher publishing a job", "a.resize.forged", func() { _ = pub.nc.Publish("a.resize.forged", []byte("x")) })

	pp := identity.Producer([]string{"a.resize.*"}, identity.ProducerInbox("a", "uploader"))
	producer := connectAs(t, s, mint(t, s, "producer.a.uploader", pp, time.Hour), pp)
	ack, err := producer.js.Publish(ctx, "a.resize.two", []byte("job"))
	if err != nil || ack.Stream != "tinyctl_a_resizer" {
		t.Fatalf("producer's job: ack %+v, %v; want it stored in tinyctl_a_resizer", ack, err)
	}
	producer.refused(t, "a producer publishing another tenant's job", "b.bill.forged", func() { _ = producer.nc.Publish("b.bill.forged", []byte("x")) })
	producer.refused(t, "a producer fetching jobs", "$JS.API.CONSUMER.MSG.NEXT.tinyctl_a_resizer.tinyctl_a_resizer_worker", func() {
		_ = producer.nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.tinyctl_a_resizer.tinyctl_a_resizer_worker", producer.nc.NewRespInbox(), []byte("1"))
	})
	producer.refused(t, "a producer writing a spec", "$KV."+b.Specs+".a.resizer", func() { _ = producer.nc.Publish("$KV."+b.Specs+".a.resizer", []byte("{}")) })
	producer.refused(t, "a producer reading other parties' inboxes", "_INBOX.>", func() { _, _ = producer.nc.SubscribeSync("_INBOX.>") })
}

// brief bounds a call the server is expected to refuse: the refusal is
// asserted from the violation, not from the call's error.
func brief(t *testing.T) context.Context { return testenv.Ctx(t, 300*time.Millisecond) }

func TestExpiredCredentialsAreRefusedAndDisconnected(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.WithJWT())
	perms := identity.Worker(identity.DefaultAPIPrefix, "tinyctl_a_resizer", "tinyctl_a_resizer_worker", "_INBOX_a_resizer", nil)
	c := mint(t, s, "worker.a.resizer", perms, 2*time.Second)
	if time.Until(c.Expires) > 2*time.Second {
		t.Fatalf("expires %s, want within 2s", c.Expires)
	}
	w := connectAs(t, s, c, perms)
	closed := make(chan struct{})
	w.nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	w.nc.SetReconnectHandler(nil)
	path := filepath.Join(t.TempDir(), "expired.creds")
	testenv.Must(t, os.WriteFile(path, c.File, 0o600))
	testenv.Eventually(t, 10*time.Second, func() error {
		nc, err := nats.Connect(s.URL(), nats.UserCredentials(path), nats.NoReconnect())
		if err == nil {
			nc.Close()
			return errors.New("expired credentials still accepted")
		}
		return nil
	})
	testenv.Eventually(t, 10*time.Second, func() error {
		if w.nc.IsConnected() {
			return errors.New("a connection with expired credentials is still up")
		}
		return nil
	})
}
