package natstest

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// errAuthRefused accepts the server's authorization violation.
func errAuthRefused(err error) error {
	if errors.Is(err, nats.ErrAuthorization) {
		return nil
	}
	return fmt.Errorf("want nats.ErrAuthorization, got %v", err)
}

// errUnknownCA accepts a client refusing a server certificate from a CA it
// does not trust.
func errUnknownCA(err error) error {
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) {
		return nil
	}
	return fmt.Errorf("want x509.UnknownAuthorityError, got %v", err)
}

// errRefusedClientCert accepts a server refusing the client's certificate
// (or its absence). With TLS 1.3 the client finishes its side of the
// handshake first, so depending on timing it reads the server's TLS alert
// (a "remote error") or finds the connection closed (nats.ErrTLS).
func errRefusedClientCert(err error) error {
	var op *net.OpError
	if errors.Is(err, nats.ErrTLS) || errors.As(err, &op) && op.Op == "remote error" {
		return nil
	}
	return fmt.Errorf("want a TLS alert from the server, got %v", err)
}

func TestNATSAuthRightCredentialsConnectWrongOnesAreRefused(t *testing.T) {
	t.Parallel()
	otherPKI := func(t *testing.T) TLSFiles { return WriteTLSFiles(t) }
	cases := []struct {
		name    string
		opts    []Option
		wrong   map[string]func(t *testing.T, s *Server) []nats.Option
		refused func(error) error
	}{
		{
			name: "token", opts: []Option{WithToken()}, refused: errAuthRefused,
			wrong: map[string]func(*testing.T, *Server) []nats.Option{
				"wrong token": func(*testing.T, *Server) []nats.Option { return []nats.Option{nats.Token("wrong")} },
				"no token":    func(*testing.T, *Server) []nats.Option { return nil },
			},
		},
		{
			name: "user and password", opts: []Option{WithUserPassword()}, refused: errAuthRefused,
			wrong: map[string]func(*testing.T, *Server) []nats.Option{
				"wrong password": func(_ *testing.T, s *Server) []nats.Option {
					return []nats.Option{nats.UserInfo(s.Credentials().User, "wrong")}
				},
			},
		},
		{
			name: "nkey", opts: []Option{WithNKey()}, refused: errAuthRefused,
			wrong: map[string]func(*testing.T, *Server) []nats.Option{
				"unknown nkey": func(t *testing.T, _ *Server) []nats.Option {
					seed, _ := NewNKeySeedFile(t, t.TempDir())
					opt, err := nats.NkeyOptionFromSeed(seed)
					if err != nil {
						t.Fatal(err)
					}
					return []nats.Option{opt}
				},
			},
		},
		{
			name: "jwt", opts: []Option{WithJWT()}, refused: errAuthRefused,
			wrong: map[string]func(*testing.T, *Server) []nats.Option{
				"user of an unknown account": func(t *testing.T, _ *Server) []nats.Option {
					foreign := mustKP(t, nkeys.CreateAccount)
					return []nats.Option{nats.UserCredentials(WriteUserCreds(t, t.TempDir(), "intruder", foreign))}
				},
			},
		},
		{
			name: "tls", opts: []Option{WithTLS()}, refused: errUnknownCA,
			wrong: map[string]func(*testing.T, *Server) []nats.Option{
				"client trusts another CA": func(t *testing.T, _ *Server) []nats.Option {
					return []nats.Option{nats.RootCAs(otherPKI(t).CA)}
				},
			},
		},
		{
			name: "mutual tls", opts: []Option{WithMutualTLS()}, refused: errRefusedClientCert,
			wrong: map[string]func(*testing.T, *Server) []nats.Option{
				"no client certificate": func(_ *testing.T, s *Server) []nats.Option {
					return []nats.Option{nats.RootCAs(s.Credentials().TLS.CA)}
				},
				"client certificate from another CA": func(t *testing.T, s *Server) []nats.Option {
					other := otherPKI(t)
					return []nats.Option{nats.RootCAs(s.Credentials().TLS.CA), nats.ClientCert(other.ClientCert, other.ClientKey)}
				},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := Start(t, tc.opts...)
			assertJetStreamUsable(t, s.Connect(t))
			for name, wrong := range tc.wrong {
				t.Run(name, func(t *testing.T) {
					nc, err := nats.Connect(s.URL(), append(wrong(t, s), nats.Timeout(5*time.Second))...)
					if err == nil {
						nc.Close()
					}
					if rerr := tc.refused(err); rerr != nil {
						t.Fatal(rerr)
					}
				})
			}
		})
	}
}

// assertJetStreamUsable proves the connection's account has JetStream.
func assertJetStreamUsable(t *testing.T, nc *nats.Conn) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("jetstream account info: %v", err)
	}
}

func TestNATSUserPermissionsDenyPublishToABucket(t *testing.T) {
	t.Parallel()
	reader := User{Name: "reader", Password: "reader-pw", Permissions: Permissions{
		PublishDeny: []string{"$KV.specs.>"},
	}}
	s := Start(t, WithUsers(reader))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin := newKV(ctx, t, s.Connect(t), true)
	if _, err := admin.Put(ctx, "a.b", []byte("v1")); err != nil {
		t.Fatal(err)
	}

	asyncErrs := make(chan error, 4)
	nc := s.Connect(t, nats.UserInfo(reader.Name, reader.Password),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { asyncErrs <- err }))
	kv := newKV(ctx, t, nc, false)
	if e, err := kv.Get(ctx, "a.b"); err != nil || string(e.Value()) != "v1" {
		t.Fatalf("reader cannot read: %v", err)
	}
	putCtx, putCancel := context.WithTimeout(ctx, time.Second)
	defer putCancel()
	if _, err := kv.Put(putCtx, "a.b", []byte("v2")); err == nil {
		t.Fatal("reader's put succeeded")
	}
	select {
	case err := <-asyncErrs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("want a permissions violation, got %v", err)
		}
	case <-ctx.Done():
		t.Fatal("no permissions violation reported")
	}
}

// newKV opens (or, with create, creates) the "specs" bucket.
func newKV(ctx context.Context, t *testing.T, nc *nats.Conn, create bool) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var kv jetstream.KeyValue
	if create {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "specs", History: 8})
	} else {
		kv, err = js.KeyValue(ctx, "specs")
	}
	if err != nil {
		t.Fatalf("open bucket: %v", err)
	}
	return kv
}

func TestNATSMonitorServesJsz(t *testing.T) {
	t.Parallel()
	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	newKV(ctx, t, s.Connect(t), true)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.MonitorURL()+"/jsz", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var jsz struct {
		Streams int `json:"streams"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&jsz); err != nil {
		t.Fatalf("decode /jsz: %v", err)
	}
	if resp.StatusCode != http.StatusOK || jsz.Streams != 1 {
		t.Fatalf("/jsz: status %d, streams %d; want 200 and 1", resp.StatusCode, jsz.Streams)
	}
}
