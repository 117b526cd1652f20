package deploy_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision/keyring"
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
	opts, err := server.ProcessConfigFile(withRoutesCertificate(t, natsConf(t, threeServers), routesCertificate(t)))
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
	if tc := opts.Cluster.TLSConfig; tc == nil || tc.ClientAuth != tls.RequireAndVerifyClientCert || len(tc.Certificates) != 1 {
		t.Errorf("routes TLS %+v: want a certificate, and one required from every route", tc)
	}
	if _, err := render(t, "nats", map[string]any{"cluster": map[string]any{"replicas": 3, "tls": map[string]any{"secretName": ""}}}); err == nil ||
		!strings.Contains(err.Error(), "needs cluster.tls.secretName") {
		t.Errorf("three servers without a routes certificate: %v, want refused", err)
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
// the routes form a JetStream cluster, authenticated by the routes
// certificate (a route is not a client: operator mode does not apply to
// it), and a
// controller minted by the account creates its lease bucket with three
// replicas.
func TestNATSClusterRunsInJWTMode(t *testing.T) {
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	conf, err := keys.ServerConfig(filepath.Join(t.TempDir(), "jwt"))
	testenv.Must(t, err)
	path := withRoutesCertificate(t, natsConf(t, map[string]any{"auth": map[string]any{"mode": "jwt"}, "cluster": map[string]any{"replicas": 3}}),
		routesCertificate(t))
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
		urls = append(urls, startServer(t, opts).ClientURL())
	}

	pub, err := keys.Signer().Mint("controller", identity.Controller(identity.DefaultBuckets(), ""), time.Now(), time.Hour)
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

// TestNATSClusterRoutesNeedTheRoutesCertificate runs two servers from the
// chart's cluster configuration with a routes certificate, and a third
// server anyone could run that dials their route ports: without TLS, and
// with a certificate of another CA, the servers refuse it (each refusal
// seen in their log) and it never becomes a route; given the routes
// certificate, the same server joins, so the check can see a join.
func TestNATSClusterRoutesNeedTheRoutesCertificate(t *testing.T) {
	certs := routesCertificate(t)
	path := withRoutesCertificate(t, natsConf(t, map[string]any{"auth": map[string]any{"mode": "none"}, "cluster": map[string]any{"replicas": 3}}), certs)
	addrs := []string{testenv.FreeAddr(t), testenv.FreeAddr(t)}
	var routes []*url.URL
	for _, a := range addrs {
		routes = append(routes, &url.URL{Scheme: "nats", Host: a})
	}
	var servers []*server.Server
	refusals := &refusalLog{}
	for i, a := range addrs {
		t.Setenv("SERVER_NAME", fmt.Sprintf("nats-%d", i))
		opts, err := server.ProcessConfigFile(path)
		testenv.Must(t, err)
		host, port, _ := net.SplitHostPort(a)
		opts.Cluster.Host, opts.Routes = host, routes
		opts.Cluster.Port, _ = strconv.Atoi(port)
		opts.JetStream = false
		s := startServer(t, opts)
		s.SetLoggerV2(refusals, false, false, false)
		servers = append(servers, s)
	}
	testenv.Eventually(t, 20*time.Second, func() error { return routedTo(servers[0], "nats-1") })

	intruder := func(t *testing.T, tlsFiles map[string][]byte) *server.Server {
		opts := &server.Options{ServerName: "intruder", Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true}
		opts.Cluster.Name, opts.Cluster.Host, opts.Cluster.Port = "nats", "127.0.0.1", -1
		opts.Routes = routes
		if tlsFiles != nil {
			dir := t.TempDir()
			for k, v := range tlsFiles {
				testenv.Must(t, os.WriteFile(filepath.Join(dir, k), v, 0o600))
			}
			tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
				CaFile: filepath.Join(dir, "ca.crt"), Verify: true})
			testenv.Must(t, err)
			tc.RootCAs = tc.ClientCAs // it dials, as the chart's servers do
			opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = tc, 5
		}
		s := startServer(t, opts)
		t.Cleanup(s.Shutdown)
		return s
	}
	for _, c := range []struct {
		name  string
		files map[string][]byte
	}{{"no TLS", nil}, {"another CA's certificate", routesCertificate(t)}} {
		t.Run(c.name, func(t *testing.T) {
			before := refusals.count()
			in := intruder(t, c.files)
			testenv.Eventually(t, 20*time.Second, func() error {
				if n := refusals.count() - before; n < 2 {
					return fmt.Errorf("%d refusals logged, want 2 (one per server)", n)
				}
				return nil
			})
			for _, s := range append(servers, in) {
				if z, _ := s.Routez(nil); slices.ContainsFunc(z.Routes, func(r *server.RouteInfo) bool { return r.RemoteName == "intruder" || s == in }) {
					t.Fatalf("%s has a route with the intruder: %+v", s.Name(), z.Routes)
				}
			}
			in.Shutdown()
		})
	}
	t.Run("the routes certificate", func(t *testing.T) {
		in := intruder(t, certs)
		testenv.Eventually(t, 20*time.Second, func() error { return routedTo(servers[0], "intruder") })
		in.Shutdown()
	})
}

// routesCertificate is a routes Secret's data as install makes it, valid
// for loopback (the test's routes dial 127.0.0.1).
func routesCertificate(t *testing.T) map[string][]byte {
	t.Helper()
	data, err := keyring.NewRoutesCertificate(append(keyring.RouteNames("nats", "tinyctl-system"), "127.0.0.1"), time.Now())
	testenv.Must(t, err)
	return data
}

// withRoutesCertificate writes data's files beside the configuration at
// path and points the configuration's routes TLS block at them, as the
// pod's mount of the routes Secret does.
func withRoutesCertificate(t *testing.T, path string, data map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(path), "routes")
	testenv.Must(t, os.MkdirAll(dir, 0o700))
	for k, v := range data {
		testenv.Must(t, os.WriteFile(filepath.Join(dir, k), v, 0o600))
	}
	conf, err := os.ReadFile(path)
	testenv.Must(t, err)
	if !strings.Contains(string(conf), "/etc/nats-routes/") {
		t.Fatalf("the configuration reads no routes certificate:\n%s", conf)
	}
	testenv.Must(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(conf), "/etc/nats-routes/", dir+"/")), 0o600))
	return path
}

// startServer runs nats-server from opts with a free client port.
func startServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.Port, opts.HTTPPort, opts.LeafNode.Port = -1, -1, -1
	opts.Host, opts.StoreDir = "127.0.0.1", t.TempDir()
	s, err := server.NewServer(opts)
	testenv.Must(t, err)
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(30 * time.Second) { // a loaded 2-core machine
		t.Fatal("server not ready")
	}
	return s
}

// routedTo says whether s has a route to the server named name.
func routedTo(s *server.Server, name string) error {
	z, err := s.Routez(nil)
	if err != nil {
		return err
	}
	for _, r := range z.Routes {
		if r.RemoteName == name {
			return nil
		}
	}
	return fmt.Errorf("%s has no route to %s (%d routes)", s.Name(), name, len(z.Routes))
}

// refusalLog counts the routes a server refused in TLS (its log's TLS
// route handshake errors).
type refusalLog struct {
	mu sync.Mutex
	n  int
}

func (l *refusalLog) count() int { l.mu.Lock(); defer l.mu.Unlock(); return l.n }

func (l *refusalLog) Errorf(format string, v ...any) {
	if strings.Contains(fmt.Sprintf(format, v...), "TLS route handshake error") {
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
	}
}
func (*refusalLog) Noticef(string, ...any) {}
func (*refusalLog) Warnf(string, ...any)   {}
func (*refusalLog) Fatalf(string, ...any)  {}
func (*refusalLog) Debugf(string, ...any)  {}
func (*refusalLog) Tracef(string, ...any)  {}
