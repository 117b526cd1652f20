package identity_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func TestNamespaceAccountsAreDerivedFromTheSigningKey(t *testing.T) {
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	i, j := keys.Issuer(identity.DefaultBuckets()), keys.Issuer(identity.DefaultBuckets())
	a, again, b := i.Namespace("media"), j.Namespace("media"), i.Namespace("billing")
	if a.JobsAccount() != again.JobsAccount() || a.TenantAccount() != again.TenantAccount() || a.PublisherAccount() != again.PublisherAccount() {
		t.Error("the same key derives other accounts for the same namespace")
	}
	seen := map[string]bool{}
	for _, acc := range []string{a.JobsAccount(), a.TenantAccount(), a.PublisherAccount(), b.JobsAccount(), b.TenantAccount(), b.PublisherAccount(), keys.AccountPublicKey()} {
		if seen[acc] {
			t.Errorf("account %s derived twice", acc)
		}
		seen[acc] = true
	}
	other, err := identity.NewKeys()
	testenv.Must(t, err)
	if other.Issuer(identity.DefaultBuckets()).Namespace("media").JobsAccount() == a.JobsAccount() {
		t.Error("another operator signing key derives the same account")
	}
}

// broker runs a server from the trust configuration install writes (a
// full resolver in dir), on a free port; restart it with the same dir.
type broker struct {
	t    *testing.T
	dir  string
	port int
	s    *server.Server
}

func startBroker(t *testing.T, keys identity.Keys) *broker {
	b := &broker{t: t, dir: t.TempDir(), port: -1}
	conf, err := keys.ServerConfig(filepath.Join(b.dir, "jwt"))
	testenv.Must(t, err)
	testenv.Must(t, os.WriteFile(filepath.Join(b.dir, "auth.conf"), conf, 0o600))
	main := fmt.Sprintf("jetstream {store_dir: %q}\ninclude ./auth.conf\n", filepath.Join(b.dir, "js"))
	testenv.Must(t, os.WriteFile(filepath.Join(b.dir, "nats.conf"), []byte(main), 0o600))
	b.start()
	t.Cleanup(func() { b.s.Shutdown() })
	return b
}

func (b *broker) start() {
	opts, err := server.ProcessConfigFile(filepath.Join(b.dir, "nats.conf"))
	testenv.Must(b.t, err)
	opts.Host, opts.Port = "127.0.0.1", b.port
	b.s, err = server.NewServer(opts)
	testenv.Must(b.t, err)
	go b.s.Start()
	if !b.s.ReadyForConnections(10 * time.Second) {
		b.t.Fatal("server not ready")
	}
	b.port = b.s.Addr().(*net.TCPAddr).Port
}

func (b *broker) restart() {
	b.s.Shutdown()
	b.s.WaitForShutdown()
	b.start()
}

func (b *broker) connect(t *testing.T, s *identity.Signer, name string, perms identity.Permissions) *nats.Conn {
	t.Helper()
	c, err := s.Mint(name, perms, time.Now(), time.Hour)
	testenv.Must(t, err)
	path := filepath.Join(t.TempDir(), name+".creds")
	testenv.Must(t, os.WriteFile(path, c.File, 0o600))
	opts := []nats.Option{nats.UserCredentials(path), nats.MaxReconnects(-1), nats.ReconnectWait(50 * time.Millisecond)}
	if perms.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(perms.InboxPrefix))
	}
	nc, err := nats.Connect(b.s.ClientURL(), opts...)
	testenv.Must(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// TestNamespaceAccountsCarryJobsAndSurviveARestart pushes a namespace's
// accounts as the controller does, runs a stream, a worker, a producer and
// a namespace publisher through them, then restarts the broker, whose
// configuration preloads the control account as install first signed it:
// the resolver keeps the newer one, with the namespace's import.
func TestNamespaceAccountsCarryJobsAndSurviveARestart(t *testing.T) {
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	b := startBroker(t, keys)
	ctx := testenv.Ctx(t, time.Minute)
	// The resolver keeps a stored account over a preloaded one only when it
	// was issued later, to the second: in a real cluster install signs the
	// preload long before a controller starts.
	preloaded := time.Now().Unix()
	testenv.Eventually(t, 3*time.Second, func() error {
		if time.Now().Unix() <= preloaded {
			return fmt.Errorf("still the second install signed in")
		}
		return nil
	})
	buckets := identity.DefaultBuckets()
	issuer := keys.Issuer(buckets)
	claims := b.connect(t, keys.SystemSigner(), "claims", identity.Claims())
	n := issuer.Namespace("media")
	for _, c := range []string{"jobs", "tenant", "publisher", "control"} {
		var token string
		switch c {
		case "jobs":
			token, err = issuer.Sign(issuer.JobsClaims(n, []string{"media.>"}, identity.JetStreamQuota{FileBytes: 1 << 20}))
		case "tenant":
			token, err = issuer.Sign(issuer.TenantClaims(n, []string{"media.>"}))
		case "publisher":
			token, err = issuer.Sign(issuer.PublisherClaims(n))
		case "control":
			token, err = issuer.Sign(issuer.ControlClaims([]string{"media"}))
		}
		testenv.Must(t, err)
		testenv.Must(t, identity.PushAccount(ctx, claims, token))
	}

	ctl := b.connect(t, keys.Signer(), "controller", identity.Controller(buckets, ""))
	js, err := jetstream.NewWithAPIPrefix(ctl, identity.NamespaceAPIPrefix("media"))
	testenv.Must(t, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "tinyctl_media_resizer", Subjects: []string{"media.resize.*"}, Retention: jetstream.WorkQueuePolicy})
	testenv.Must(t, err)
	_, err = js.CreateConsumer(ctx, "tinyctl_media_resizer", jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
	testenv.Must(t, err)

	pp := identity.Producer([]string{"media.resize.*"}, identity.ProducerInbox("media", "p"))
	producer := b.connect(t, n.TenantSigner(), "producer", pp)
	pjs, err := jetstream.New(producer)
	testenv.Must(t, err)
	if ack, err := pjs.Publish(ctx, "media.resize.one", []byte("job")); err != nil || ack.Stream != "tinyctl_media_resizer" {
		t.Fatalf("producer's job: %+v, %v", ack, err)
	}
	wp := identity.Worker(identity.JobsAPIPrefix, "tinyctl_media_resizer", "w", "_INBOX_w", nil)
	worker := b.connect(t, n.TenantSigner(), "worker", wp)
	wjs, err := jetstream.NewWithAPIPrefix(worker, identity.JobsAPIPrefix)
	testenv.Must(t, err)
	cons, err := wjs.Consumer(ctx, "tinyctl_media_resizer", "w")
	testenv.Must(t, err)
	if got, err := natstest.FetchAndAck(t, ctx, cons, 1); got != 1 {
		t.Fatalf("worker fetched %d jobs (%v), want 1", got, err)
	}

	b.restart()
	testenv.Eventually(t, 20*time.Second, func() error {
		stored, err := identity.LookupAccount(ctx, claims, keys.AccountPublicKey())
		if err != nil {
			return err
		}
		if got := identity.ImportedNamespaces(stored); len(got) != 1 {
			return fmt.Errorf("after a restart the control account imports %v, want [media]", got)
		}
		return nil
	})
	testenv.Eventually(t, 20*time.Second, func() error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "tinyctl_media_thumbs", Subjects: []string{"media.thumbs.*"}})
		return err
	})
	stored, err := identity.LookupAccount(ctx, claims, keys.AccountPublicKey())
	testenv.Must(t, err)
	if got := identity.ImportedNamespaces(stored); len(got) != 1 || got[0] != "media" {
		t.Errorf("after a restart the control account imports %v, want [media]", got)
	}
}

// TestSameAccountComparesWhatIsStored: claims built again equal the ones
// the broker stores (signing sorts imports and exports and sets a type and
// version), and claims that say something else do not.
func TestSameAccountComparesWhatIsStored(t *testing.T) {
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	i := keys.Issuer(identity.DefaultBuckets())
	n := i.Namespace("media")
	quota := identity.JetStreamQuota{FileBytes: 1 << 30}
	build := []func() *jwt.AccountClaims{
		func() *jwt.AccountClaims { return i.JobsClaims(n, []string{"media.>"}, quota) },
		func() *jwt.AccountClaims { return i.TenantClaims(n, []string{"media.>"}) },
		func() *jwt.AccountClaims { return i.PublisherClaims(n) },
		func() *jwt.AccountClaims { return i.ControlClaims([]string{"media", "billing"}) },
	}
	for _, claims := range build {
		token, err := i.Sign(claims())
		testenv.Must(t, err)
		stored, err := jwt.DecodeAccountClaims(token)
		testenv.Must(t, err)
		if fresh := claims(); !identity.SameAccount(stored, fresh) {
			t.Errorf("%s built again differs from the signed one: every check would push it", fresh.Name)
		}
	}
	token, err := i.Sign(i.JobsClaims(n, []string{"media.>"}, quota))
	testenv.Must(t, err)
	stored, err := jwt.DecodeAccountClaims(token)
	testenv.Must(t, err)
	changed := map[string]*jwt.AccountClaims{
		"another quota":   i.JobsClaims(n, []string{"media.>"}, identity.JetStreamQuota{FileBytes: 2 << 30}),
		"another subject": i.JobsClaims(n, []string{"media.>", "shared.media.>"}, quota),
		"another account": i.JobsClaims(i.Namespace("billing"), []string{"media.>"}, quota),
	}
	for what, c := range changed {
		if identity.SameAccount(stored, c) {
			t.Errorf("claims with %s compare the same as the stored ones: the change would never be pushed", what)
		}
	}
}
