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
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func TestSpecStoreWorksInEveryAuthMode(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		opts  []natstest.Option
		wrong func(t *testing.T, cfg bus.Config) bus.Config
	}{
		"no auth": {},
		"token": {opts: []natstest.Option{natstest.WithToken()},
			wrong: func(_ *testing.T, cfg bus.Config) bus.Config { cfg.Token = "guess"; return cfg }},
		"user and password": {opts: []natstest.Option{natstest.WithUserPassword()},
			wrong: func(_ *testing.T, cfg bus.Config) bus.Config { cfg.Password = "guess"; return cfg }},
		"nkey": {opts: []natstest.Option{natstest.WithNKey()},
			wrong: func(t *testing.T, cfg bus.Config) bus.Config {
				cfg.NKeySeedFile, _ = natstest.NewNKeySeedFile(t, t.TempDir())
				return cfg
			}},
		"jwt": {opts: []natstest.Option{natstest.WithJWT()},
			wrong: func(t *testing.T, cfg bus.Config) bus.Config {
				foreign, err := nkeys.CreateAccount()
				testenv.Must(t, err)
				cfg.CredsFile = natstest.WriteUserCreds(t, t.TempDir(), "intruder", foreign)
				return cfg
			}},
		"tls with token": {opts: []natstest.Option{natstest.WithTLS(), natstest.WithToken()},
			wrong: func(t *testing.T, cfg bus.Config) bus.Config {
				cfg.TLSCAFile = natstest.WriteTLSFiles(t).CA
				return cfg
			}},
		"mutual tls": {opts: []natstest.Option{natstest.WithMutualTLS()},
			wrong: func(t *testing.T, cfg bus.Config) bus.Config {
				other := natstest.WriteTLSFiles(t)
				cfg.TLSCertFile, cfg.TLSKeyFile = other.ClientCert, other.ClientKey
				return cfg
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := natstest.Start(t, tc.opts...)
			ctx := testenv.Ctx(t, 15*time.Second)
			cfg := s.BusConfig()
			specs := natstest.OpenSpecs(t, natstest.BusConnect(t, cfg, nil))
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
	outsider := natstest.User{Name: "outsider", Password: "pw", Permissions: natstest.Permissions{
		PublishDeny: []string{specWrites, "$JS.API.*.*.KV_" + specs.DefaultBucket, "$JS.API.*.*.KV_" + specs.DefaultBucket + ".>"},
	}}
	writerless := natstest.User{Name: "writerless", Password: "pw", Permissions: natstest.Permissions{
		PublishDeny: []string{specWrites},
	}}
	s := natstest.Start(t, natstest.WithUsers(outsider, writerless))
	ctx := testenv.Ctx(t, 15*time.Second)
	natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil)) // the admin creates the bucket

	cfg := s.BusConfig()
	cfg.User, cfg.Password = outsider.Name, outsider.Password
	started := time.Now()
	if _, err := specs.Open(ctx, natstest.BusConnect(t, cfg, nil), specs.Config{}, kv.Ensure); !errors.Is(err, bus.ErrPermissionDenied) {
		t.Fatalf("outsider opening the spec bucket: got %v, want ErrPermissionDenied", err)
	}
	cfg.User, cfg.Password = writerless.Name, writerless.Password
	specs := natstest.OpenSpecs(t, natstest.BusConnect(t, cfg, nil))
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
	s := natstest.Start(t, natstest.WithJWT())
	ctx := testenv.Ctx(t, 15*time.Second)
	admin := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
	rev, err := admin.Put(ctx, "workers.extractor", []byte("v1"))
	testenv.Must(t, err)

	cfg := s.BusConfig()
	cfg.CredsFile = s.IssueUserCreds(t, "controller", natstest.Permissions{PublishDeny: []string{specWrites}})
	ro := natstest.OpenSpecs(t, natstest.BusConnect(t, cfg, nil))
	assertValue(t, ro, "workers.extractor", "v1", rev)
	w, err := ro.Watch(ctx, kv.WatchOptions{})
	testenv.Must(t, err)
	defer w.Stop()
	natstest.RecordWatch(w).WaitFor(t, 5*time.Second, "put workers.extractor=v1", "initial-done")

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
