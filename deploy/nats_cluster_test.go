package deploy_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testenv"
)

var threeServers = map[string]any{"cluster": map[string]any{"replicas": 3}}

// TestNATSClusterConfig renders the nats chart with cluster.replicas 3 and
// loads each pod's configuration into nats-server: the server is named
// after its pod, the cluster after the release, and it routes to every
// pod through the headless Service. The StatefulSet runs three pods and
// both Services expose what routes need.
func TestNATSClusterConfig(t *testing.T) {
	t.Setenv("SERVER_NAME", "nats-1")
	t.Setenv("NATS_TOKEN", "tkEXAMPLE234567TOKEN")
	opts, err := server.ProcessConfigFile(natsConf(t, threeServers))
	if err != nil {
		t.Fatalf("nats-server rejects the cluster config: %v", err)
	}
	if opts.ServerName != "nats-1" || opts.Cluster.Name != "nats" || opts.Cluster.Port != 6222 || !opts.JetStream {
		t.Errorf("server %q, cluster %q on port %d, jetstream %t: want nats-1, nats, 6222, true",
			opts.ServerName, opts.Cluster.Name, opts.Cluster.Port, opts.JetStream)
	}
	var routes []string
	for _, r := range opts.Routes {
		routes = append(routes, r.Host)
	}
	want := []string{"nats-0.nats-headless.tinyctl-system.svc:6222", "nats-1.nats-headless.tinyctl-system.svc:6222",
		"nats-2.nats-headless.tinyctl-system.svc:6222"}
	if strings.Join(routes, " ") != strings.Join(want, " ") {
		t.Errorf("routes %v, want %v", routes, want)
	}
	if opts.Authorization == "" {
		t.Error("the token no longer guards clients in a cluster")
	}

	out, err := render(t, "nats", threeServers)
	testenv.Must(t, err)
	for _, want := range []string{"replicas: 3", "name: cluster\n              containerPort: 6222"} {
		if !strings.Contains(out["nats/templates/statefulset.yaml"], want) {
			t.Errorf("StatefulSet lacks %q", want)
		}
	}
	if !strings.Contains(out["nats/templates/service.yaml"], "name: cluster\n      port: 6222") {
		t.Error("the headless Service does not expose the route port")
	}

	single, err := server.ProcessConfigFile(natsConf(t, nil))
	testenv.Must(t, err)
	if single.Cluster.Port != 0 || len(single.Routes) != 0 {
		t.Errorf("one server: cluster port %d, routes %v, want none", single.Cluster.Port, single.Routes)
	}
}

// TestNATSClusterReplicasMustBeOdd: the chart refuses an even number of
// servers, which buys no more failures survived than one fewer.
func TestNATSClusterReplicasMustBeOdd(t *testing.T) {
	for _, n := range []int{0, 2, 4} {
		if _, err := render(t, "nats", map[string]any{"cluster": map[string]any{"replicas": n}}); err == nil {
			t.Errorf("cluster.replicas %d rendered", n)
		}
	}
}

// TestNATSClusterRunsInJWTMode runs three servers from the chart's jwt-mode
// cluster configuration, with the trust configuration `tinyctl install`
// writes, their routes pointed at loopback instead of the pods' DNS names:
// the routes form a JetStream cluster without credentials of their own (a
// route is not a client: operator mode does not apply to it), and a
// controller minted by the account creates its lease bucket with three
// replicas.
func TestNATSClusterRunsInJWTMode(t *testing.T) {
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	conf, err := keys.ServerConfig(filepath.Join(t.TempDir(), "jwt"))
	testenv.Must(t, err)
	path := natsConf(t, map[string]any{"auth": map[string]any{"mode": "jwt"}, "cluster": map[string]any{"replicas": 3}})
	testenv.Must(t, os.WriteFile(filepath.Join(filepath.Dir(path), "auth.conf"), conf, 0o600))

	routes := make([]*url.URL, 3)
	ports := make([]int, 3)
	for i := range routes {
		host, port, _ := net.SplitHostPort(testenv.FreeAddr(t))
		ports[i], _ = strconv.Atoi(port)
		routes[i] = &url.URL{Scheme: "nats", Host: net.JoinHostPort(host, port)}
	}
	var urls []string
	for i := range routes {
		t.Setenv("SERVER_NAME", fmt.Sprintf("nats-%d", i))
		opts, err := server.ProcessConfigFile(path)
		testenv.Must(t, err)
		opts.Cluster.Host, opts.Cluster.Port, opts.Routes = "127.0.0.1", ports[i], routes
		urls = append(urls, startClustered(t, opts))
	}

	pub, err := keys.Signer().Mint("controller", identity.Controller(identity.DefaultBuckets()), time.Now(), time.Hour)
	testenv.Must(t, err)
	nc, err := nats.Connect(strings.Join(urls, ","), nats.UserCredentials(writeCreds(t, pub)))
	testenv.Must(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	testenv.Must(t, err)
	testenv.Eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "tinyctl-leases", Replicas: 3})
		return err
	})
}

// startClustered runs nats-server from opts on free client ports, without
// waiting for JetStream (it needs the other servers), and returns its
// client URL.
func startClustered(t *testing.T, opts *server.Options) string {
	t.Helper()
	opts.Port, opts.HTTPPort, opts.LeafNode.Port = -1, -1, -1
	opts.Host, opts.StoreDir = "127.0.0.1", t.TempDir()
	s, err := server.NewServer(opts)
	testenv.Must(t, err)
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	return s.ClientURL()
}
