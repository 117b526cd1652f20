package deploy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/fleet"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestNATSConfigFleetMemberInJWTMode runs a fleet member's broker from the
// chart's configuration in jwt mode (what `tinyctl install --hub-url`
// renders, with the values install sets) under a hub: the controller, in
// the control account, mirrors the hub's spec bucket through the leafnode,
// and the hub gathers the status it writes there, so the leafnode is bound
// to the control account (without it, the server refuses to start:
// operator mode requires an account on every remote).
func TestNATSConfigFleetMemberInJWTMode(t *testing.T) {
	hubOpts := &server.Options{ServerName: "hub", Host: "127.0.0.1", Port: -1, JetStream: true, JetStreamDomain: "hub",
		StoreDir: t.TempDir(), NoSigs: true, NoLog: true}
	hubOpts.LeafNode.Host, hubOpts.LeafNode.Port = "127.0.0.1", -1
	hub := startServer(t, hubOpts)
	hc, err := nats.Connect(hub.ClientURL())
	testenv.Must(t, err)
	defer hc.Close()
	hjs, err := jetstream.New(hc)
	testenv.Must(t, err)
	ctx := testenv.Ctx(t, time.Minute)
	bucket, err := hjs.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: specs.DefaultBucket, History: 10})
	testenv.Must(t, err)
	rev, err := bucket.Put(ctx, "media.thumbnailer", []byte("v1"))
	testenv.Must(t, err)

	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	conf, err := keys.ServerConfig(filepath.Join(t.TempDir(), "jwt"))
	testenv.Must(t, err)
	t.Setenv("SERVER_NAME", "nats-0")
	path := natsConf(t, map[string]any{
		"auth":      map[string]any{"mode": "jwt"},
		"jetstream": map[string]any{"domain": "eu-1"},
		"fleet": map[string]any{"hubURLs": []any{fmt.Sprintf("nats-leaf://127.0.0.1:%d", hubOpts.LeafNode.Port)},
			"localAccount": keys.AccountPublicKey()},
	})
	testenv.Must(t, os.WriteFile(filepath.Join(filepath.Dir(path), "auth.conf"), conf, 0o600))
	opts, err := server.ProcessConfigFile(path)
	testenv.Must(t, err)
	member := startServer(t, opts)

	c, err := keys.Signer().Mint("controller", identity.Controller(identity.DefaultBuckets(), "hub"), time.Now(), time.Hour)
	testenv.Must(t, err)
	creds := filepath.Join(t.TempDir(), "controller.creds")
	testenv.Must(t, os.WriteFile(creds, c.File, 0o600))
	conn, err := bus.Connect(ctx, bus.Config{URLs: []string{member.ClientURL()}, CredsFile: creds, Name: "controller"}, nil)
	testenv.Must(t, err)
	defer conn.Close()
	var mirror *specs.Store
	testenv.Eventually(t, 20*time.Second, func() (err error) {
		mirror, err = specs.Open(ctx, conn, specs.Config{HubDomain: "hub"}, kv.Ensure)
		return err
	})
	testenv.Eventually(t, 20*time.Second, func() error {
		e, err := mirror.Get(ctx, "media.thumbnailer")
		if err != nil || e.Revision != rev {
			return fmt.Errorf("the member's mirror: %+v, %v; want the hub's revision %d", e, err, rev)
		}
		return nil
	})

	// The controller may compare its mirror with the hub's bucket and
	// rebuild it (what it does when the hub's bucket was created again).
	origin, err := mirror.Origin(ctx, true)
	testenv.Must(t, err)
	if !origin.Keys["media.thumbnailer"] || origin.LastMessage != rev {
		t.Fatalf("the hub's bucket as the member's controller reads it: %+v, want media.thumbnailer at %d", origin, rev)
	}
	testenv.Must(t, mirror.Rebuild(ctx, origin))
	testenv.Must(t, mirror.WaitMirror(ctx, rev))
	if m, err := mirror.Mirror(ctx); err != nil || m.Origin != origin.Incarnation {
		t.Fatalf("the rebuilt mirror records %+v (%v), want origin %s", m, err, origin.Incarnation)
	}

	// The other way: the hub gathers the status the controller writes.
	local, err := status.Open(ctx, conn, status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	_, err = local.Put(ctx, api.Status{Component: "media.thumbnailer", Cluster: "eu-1", ObservedRevision: rev})
	testenv.Must(t, err)
	hubConn, err := bus.Connect(ctx, bus.Config{URLs: []string{hub.ClientURL()}, Name: "hub"}, nil)
	testenv.Must(t, err)
	defer hubConn.Close()
	hubStatus, err := status.Open(ctx, hubConn, status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	testenv.Must(t, fleet.Join(ctx, hubConn, fleet.Buckets{}, "eu-1", ""))
	testenv.Eventually(t, 20*time.Second, func() error {
		r, err := hubStatus.Get(ctx, "media.thumbnailer", "eu-1")
		if err != nil || r.ObservedRevision != rev {
			return fmt.Errorf("eu-1's status at the hub: %+v, %v", r, err)
		}
		return nil
	})
}
