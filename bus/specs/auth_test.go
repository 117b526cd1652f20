package specs_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"

	"github.com/nats-io/nkeys"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testenv"
)

func TestSpecStoreWorksInEveryAuthMode(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		opts  []testenv.NATSOption
		wrong func(t *testing.T, cfg bus.Config) bus.Config
	}{
		"no auth": {},
		"token": {opts: []testenv.NATSOption{testenv.WithToken()},
			wrong: func(_ *testing.T, cfg bus.Config) bus.Config { cfg.Token = "guess"; return cfg }},
		"user and password": {opts: []testenv.NATSOption{testenv.WithUserPassword()},
			wrong: func(_ *testing.T, cfg bus.Config) bus.Config { cfg.Password = "guess"; return cfg }},
		"nkey": {opts: []testenv.NATSOption{testenv.WithNKey()},
			wrong: func(t *testing.T, cfg bus.Config) bus.Config {
				cfg.NKeySeedFile, _ = testenv.NewNKeySeedFile(t, t.TempDir())
				return cfg
			}},
		"jwt": {opts: []testenv.NATSOption{testenv.WithJWT()},
			wrong: func(t *testing.T, cfg bus.Config) bus.Config {
				foreign, err := nkeys.CreateAccount()
				testenv.Must(t, err)
				cfg.CredsFile = testenv.WriteUserCreds(t, t.TempDir(), "intruder", foreign)
				return cfg
			}},
		"tls with token": {opts: []testenv.NATSOption{testenv.WithTLS(), testenv.WithToken()},
			wrong: func(t *testing.T, cfg bus.Config) bus.Config { cfg.TLSCAFile = testenv.WriteTLSFiles(t).CA; return cfg }},
		"mutual tls": {opts: []testenv.NATSOption{testenv.WithMutualTLS()},
			wrong: func(t *testing.T, cfg bus.Config) bus.Config {
				other := testenv.WriteTLSFiles(t)
				cfg.TLSCertFile, cfg.TLSKeyFile = other.ClientCert, other.ClientKey
				return cfg
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := testenv.NATS(t, tc.opts...)
			ctx := testenv.Ctx(t, 15*time.Second)
			cfg := s.BusConfig()
			specs := testenv.OpenSpecs(t, testenv.BusConnect(t, cfg, nil))
			rev, err := specs.Create(ctx, "workers.extractor", []byte("v1"))
			testenv.Must(t, err)
			_, err = specs.Update(ctx, "workers.extractor", []byte("v2"), rev)
			testenv.Must(t, err)
			assertKeys(t, specs, "workers.extractor")
			if tc.wrong == nil {
				return
			}
			if _, err := bus.Connect(ctx, tc.wrong(t, cfg), nil); !errors.Is(err, bus.ErrAuthentication) {
				t.Fatalf("wrong credentials: got %v, want ErrAuthentication", err)
			}
		})
	}
}

const specWrites = "$KV." + specs.DefaultBucket + ".>"

func TestUserWithoutSpecBucketPermissionGetsAClearError(t *testing.T) {
	t.Parallel()
	outsider := testenv.NATSUser{Name: "outsider", Password: "pw", Permissions: testenv.NATSPermissions{
		PublishDeny: []string{specWrites, "$JS.API.*.*.KV_" + specs.DefaultBucket, "$JS.API.*.*.KV_" + specs.DefaultBucket + ".>"},
	}}
	writerless := testenv.NATSUser{Name: "writerless", Password: "pw", Permissions: testenv.NATSPermissions{
		PublishDeny: []string{specWrites},
	}}
	s := testenv.NATS(t, testenv.WithUsers(outsider, writerless))
	ctx := testenv.Ctx(t, 15*time.Second)
	testenv.OpenSpecs(t, testenv.BusConnect(t, s.BusConfig(), nil)) // the admin creates the bucket

	cfg := s.BusConfig()
	cfg.User, cfg.Password = outsider.Name, outsider.Password
	started := time.Now()
	if _, err := specs.Open(ctx, testenv.BusConnect(t, cfg, nil), specs.Config{}, kv.Ensure); !errors.Is(err, bus.ErrPermissionDenied) {
		t.Fatalf("outsider opening the spec bucket: got %v, want ErrPermissionDenied", err)
	}
	cfg.User, cfg.Password = writerless.Name, writerless.Password
	specs := testenv.OpenSpecs(t, testenv.BusConnect(t, cfg, nil))
	_, err := specs.Put(ctx, "workers.extractor", []byte("v1"))
	if !errors.Is(err, bus.ErrPermissionDenied) || bus.IsTransient(err) || !strings.Contains(err.Error(), "workers.extractor") {
		t.Fatalf("put without permission: got %v, want a permanent ErrPermissionDenied naming the key", err)
	}
	if took := time.Since(started); took > 2*time.Second {
		t.Fatalf("permission errors took %s; they must not wait for a timeout", took)
	}
}

func TestReadOnlyControllerIdentityCannotWriteSpecs(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t, testenv.WithJWT())
	ctx := testenv.Ctx(t, 15*time.Second)
	admin := testenv.OpenSpecs(t, testenv.BusConnect(t, s.BusConfig(), nil))
	rev, err := admin.Put(ctx, "workers.extractor", []byte("v1"))
	testenv.Must(t, err)

	cfg := s.BusConfig()
	cfg.CredsFile = s.IssueUserCreds(t, "controller", testenv.NATSPermissions{PublishDeny: []string{specWrites}})
	ro := testenv.OpenSpecs(t, testenv.BusConnect(t, cfg, nil))
	assertValue(t, ro, "workers.extractor", "v1", rev)
	w, err := ro.Watch(ctx, kv.WatchOptions{})
	testenv.Must(t, err)
	defer w.Stop()
	testenv.RecordWatch(w).WaitFor(t, 5*time.Second, "put workers.extractor=v1", "initial-done")

	writes := map[string]func() error{
		"put":      func() error { _, err := ro.Put(ctx, "workers.extractor", []byte("x")); return err },
		"create":   func() error { _, err := ro.Create(ctx, "workers.new", []byte("x")); return err },
		"update":   func() error { _, err := ro.Update(ctx, "workers.extractor", []byte("x"), rev); return err },
		"delete":   func() error { return ro.Delete(ctx, "workers.extractor", 0) },
		"rollback": func() error { _, err := ro.Rollback(ctx, "workers.extractor", rev); return err },
	}
	for name, write := range writes {
		if err := write(); !errors.Is(err, bus.ErrPermissionDenied) {
			t.Errorf("%s by the read-only controller: got %v, want ErrPermissionDenied", name, err)
		}
	}
	assertValue(t, admin, "workers.extractor", "v1", rev)
}
