package tenants_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus/tenants"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// broker runs a nats-server in operator mode from the trust configuration
// install writes (a full resolver), with maxPayload ("" for the server's
// default), and returns a Manager pushing through its system account.
func broker(tb testing.TB, maxPayload string) (*tenants.Manager, *nats.Conn, identity.Keys) {
	tb.Helper()
	keys, err := identity.NewKeys()
	testenv.Must(tb, err)
	dir := tb.TempDir()
	conf, err := keys.ServerConfig(filepath.Join(dir, "jwt"))
	testenv.Must(tb, err)
	testenv.Must(tb, os.WriteFile(filepath.Join(dir, "auth.conf"), conf, 0o600))
	main := fmt.Sprintf("jetstream {store_dir: %q}\ninclude ./auth.conf\n", filepath.Join(dir, "js"))
	if maxPayload != "" {
		main += "max_payload: " + maxPayload + "\n"
	}
	testenv.Must(tb, os.WriteFile(filepath.Join(dir, "nats.conf"), []byte(main), 0o600))
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
	testenv.Must(tb, err)
	opts.Host, opts.Port, opts.NoLog = "127.0.0.1", -1, true
	s, err := server.NewServer(opts)
	testenv.Must(tb, err)
	go s.Start()
	tb.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		tb.Fatal("server not ready")
	}
	c, err := keys.SystemSigner().Mint("claims", identity.Claims(), time.Now(), time.Hour)
	testenv.Must(tb, err)
	path := filepath.Join(tb.TempDir(), "claims.creds")
	testenv.Must(tb, os.WriteFile(path, c.File, 0o600))
	nc, err := nats.Connect(s.ClientURL(), nats.UserCredentials(path))
	testenv.Must(tb, err)
	tb.Cleanup(nc.Close)
	return manager(keys, nc), nc, keys
}

// manager is the Manager the tests' controller runs: a 1 MiB quota, each
// namespace's subjects under its name. Another one on the same keys is a
// restarted controller.
func manager(keys identity.Keys, claims *nats.Conn) *tenants.Manager {
	return tenants.New(keys.Issuer(identity.DefaultBuckets()), claims, tenants.Options{
		Quota:    identity.JetStreamQuota{FileBytes: 1 << 20},
		Patterns: func(ns string) []string { return []string{ns + ".>"} },
	})
}

// TestTooManyNamespacesSaysWhy: the control account imports every
// namespace's JetStream API, so its JWT grows with each; on a broker whose
// max_payload it outgrows (64 KB here, 1 MB by default), the namespace
// that does not fit is refused with an error that says why and what to
// change, and the namespaces before it keep their accounts.
func TestTooManyNamespacesSaysWhy(t *testing.T) {
	m, nc, keys := broker(t, "64KB")
	ctx := testenv.Ctx(t, time.Minute)
	var err error
	fit := 0
	for ; fit < 100; fit++ {
		if _, err = m.Ensure(ctx, fmt.Sprintf("team-%02d", fit)); err != nil {
			break
		}
	}
	t.Logf("%d namespaces fit in a 64 KB max_payload; then: %v", fit, err)
	if !errors.Is(err, identity.ErrAccountTooLarge) || !strings.Contains(err.Error(), "raise the broker's max_payload") {
		t.Fatalf("after %d namespaces: %v, want ErrAccountTooLarge saying what to change", fit, err)
	}
	if fit < 10 {
		t.Fatalf("only %d namespaces fit in 64 KB", fit)
	}
	stored, err := identity.LookupAccount(ctx, nc, keys.AccountPublicKey())
	testenv.Must(t, err)
	if got := identity.ImportedNamespaces(stored); len(got) != fit {
		t.Errorf("the control account imports %d namespaces, want the %d that fit", len(got), fit)
	}
}

// BenchmarkEnsureNamespace adds namespaces one after another, as a
// controller does when each namespace's first component arrives, on a
// broker with the default max_payload: each op signs and pushes the
// namespace's three accounts and the control account with one more
// import. It reports the control account's JWT size per namespace and
// stops (reporting how many fit) when the broker's max_payload is reached;
// ns/op divides by b.N, so read ms/namespace (the mean over those that
// fit) and ms-last-namespace instead.
func BenchmarkEnsureNamespace(b *testing.B) {
	m, nc, keys := broker(b, "")
	ctx := context.Background()
	fit, start := 0, time.Now()
	var last time.Duration
	for i := range b.N {
		t0 := time.Now()
		if _, err := m.Ensure(ctx, fmt.Sprintf("team-%05d", i)); err != nil {
			if !errors.Is(err, identity.ErrAccountTooLarge) {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fit), "namespaces-fit")
			break
		}
		last = time.Since(t0)
		fit++
	}
	b.StopTimer()
	if fit > 0 {
		b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(fit), "ms/namespace")
		b.ReportMetric(float64(last.Milliseconds()), "ms-last-namespace")
	}
	if stored, err := identity.LookupAccount(ctx, nc, keys.AccountPublicKey()); err == nil && stored != nil && fit > 0 {
		token, _ := keys.Issuer(identity.DefaultBuckets()).Sign(stored)
		b.ReportMetric(float64(len(token))/float64(fit), "control-JWT-bytes/namespace")
	}
}

// BenchmarkJetStreamAPI measures what the account split costs each
// JetStream request of the controller: the same stream, consumer and
// consumer-info requests in the control account's own JetStream (how a
// single-account install kept every stream) and in a namespace's jobs
// account, through the control account's import. Run both in one process
// and compare their ns/op.
func BenchmarkJetStreamAPI(b *testing.B) {
	m, claims, keys := broker(b, "")
	ctx := context.Background()
	if _, err := m.Ensure(ctx, "media"); err != nil {
		b.Fatal(err)
	}
	c, err := keys.Signer().Mint("controller", identity.Controller(identity.DefaultBuckets(), ""), time.Now(), time.Hour)
	testenv.Must(b, err)
	path := filepath.Join(b.TempDir(), "controller.creds")
	testenv.Must(b, os.WriteFile(path, c.File, 0o600))
	nc, err := nats.Connect(claims.ConnectedUrl(), nats.UserCredentials(path))
	testenv.Must(b, err)
	b.Cleanup(nc.Close)
	own, err := jetstream.New(nc)
	testenv.Must(b, err)
	imported, err := jetstream.NewWithAPIPrefix(nc, identity.NamespaceAPIPrefix("media"))
	testenv.Must(b, err)
	for _, api := range []struct {
		name string
		js   jetstream.JetStream
	}{{"control-account", own}, {"namespace-account-import", imported}} {
		b.Run(api.name+"/stream+consumer", func(b *testing.B) {
			for i := range b.N {
				name := fmt.Sprintf("s_%s_%d", strings.ReplaceAll(api.name, "-", "_"), i)
				_, err := api.js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"media." + name + ".>"},
					Retention: jetstream.WorkQueuePolicy, MaxBytes: 1 << 10})
				testenv.Must(b, err)
				_, err = api.js.CreateOrUpdateConsumer(ctx, name, jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
				testenv.Must(b, err)
			}
		})
		b.Run(api.name+"/consumer-info", func(b *testing.B) {
			name := "s_info_" + strings.ReplaceAll(api.name, "-", "_")
			_, err := api.js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"media." + name + ".>"}, MaxBytes: 1 << 10})
			testenv.Must(b, err)
			cons, err := api.js.CreateOrUpdateConsumer(ctx, name, jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
			testenv.Must(b, err)
			b.ResetTimer()
			for range b.N {
				_, err := cons.Info(ctx)
				testenv.Must(b, err)
			}
		})
	}
}
