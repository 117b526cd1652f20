package bus_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func startEmbedded(t *testing.T, cfg bus.EmbeddedConfig) *bus.Embedded {
	t.Helper()
	e, err := bus.StartEmbedded(testenv.Ctx(t, 10*time.Second), cfg)
	testenv.Must(t, err)
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

func TestEmbeddedServerKeepsSpecsAcrossACleanShutdown(t *testing.T) {
	t.Parallel()
	ctx := testenv.Ctx(t, 20*time.Second)
	cfg := bus.EmbeddedConfig{Port: -1, MonitorPort: -1, StoreDir: t.TempDir(), Token: "s3cret"}
	e := startEmbedded(t, cfg)

	conf := bus.Config{URLs: []string{e.ClientURL()}, Token: "s3cret", Reconnect: natstest.FastBackoff}
	c := natstest.BusConnect(t, conf, nil)
	_, err := natstest.OpenSpecs(t, c).Put(ctx, "workers.extractor", []byte("v1"))
	testenv.Must(t, err)
	wrong := conf
	wrong.Token = "guess"
	if _, err := bus.Connect(ctx, wrong, nil); !errors.Is(err, bus.ErrAuthentication) {
		t.Fatalf("wrong token: got %v, want ErrAuthentication", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.MonitorURL()+"/varz", nil)
	testenv.Must(t, err)
	resp, err := http.DefaultClient.Do(req)
	testenv.Must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/varz answered %d", resp.StatusCode)
	}

	testenv.Must(t, e.Shutdown(ctx))
	again := startEmbedded(t, cfg)
	conf.URLs = []string{again.ClientURL()}
	got, err := natstest.OpenSpecs(t, natstest.BusConnect(t, conf, nil)).Get(ctx, "workers.extractor")
	if err != nil || string(got.Value) != "v1" {
		t.Fatalf("spec after restart: %q, %v", got.Value, err)
	}
}

func TestEmbeddedLeafnodeReachesItsHub(t *testing.T) {
	t.Parallel()
	ctx := testenv.Ctx(t, 20*time.Second)
	hub := startEmbedded(t, bus.EmbeddedConfig{ServerName: "hub", Port: -1, LeafnodePort: -1,
		StoreDir: t.TempDir(), JetStreamDomain: "hub"})
	leaf := startEmbedded(t, bus.EmbeddedConfig{ServerName: "leaf", Port: -1, StoreDir: t.TempDir(),
		JetStreamDomain: "leaf", LeafRemotes: []bus.LeafRemote{{URLs: []string{hub.LeafnodeURL()}}}})

	hubConn := natstest.BusConnect(t, bus.Config{URLs: []string{hub.ClientURL()}}, nil).NATS()
	_, err := hubConn.Subscribe("fleet.ping", func(m *nats.Msg) { _ = m.Respond([]byte("pong from hub")) })
	testenv.Must(t, err)
	testenv.Must(t, hubConn.Flush())
	leafConn := natstest.BusConnect(t, bus.Config{URLs: []string{leaf.ClientURL()}}, nil).NATS()
	testenv.Eventually(t, 10*time.Second, func() error {
		reply, err := leafConn.RequestWithContext(ctx, "fleet.ping", nil)
		if err != nil {
			return err
		}
		if string(reply.Data) != "pong from hub" {
			return fmt.Errorf("reply %q", reply.Data)
		}
		return nil
	})
}

func TestEmbeddedConfigIsChecked(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]bus.EmbeddedConfig{
		"no store dir":         {Port: -1},
		"token and users":      {Port: -1, StoreDir: t.TempDir(), Token: "t", Users: []bus.EmbeddedUser{{Name: "u", Password: "p"}}},
		"unparseable leaf hub": {Port: -1, StoreDir: t.TempDir(), LeafRemotes: []bus.LeafRemote{{URLs: []string{"::bad"}}}},
	} {
		if _, err := bus.StartEmbedded(testenv.Ctx(t, 5*time.Second), cfg); err == nil {
			t.Errorf("%s: started", name)
		}
	}
}
