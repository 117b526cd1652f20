package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestThreeBrokersRouteOnlyToEachOther installs a runtime with
// --broker-replicas 3: the three broker pods route to each other over
// their pod DNS names with the certificate install made (each lists the
// other two), and a server run by anyone who reaches the pods' route
// port, as any pod could, is refused by every broker (seen in their logs)
// and never becomes a route.
func TestThreeBrokersRouteOnlyToEachOther(t *testing.T) {
	u := newUser(t)
	const ns = "routes-e2e"
	u.ok(5*time.Minute, "install", "--runtime-namespace", ns, "--broker-replicas", "3", "--without-collector", "--skip-crds",
		"--wait", "--timeout", "3m")
	t.Cleanup(func() { u.run(3*time.Minute, "uninstall", "--runtime-namespace", ns) })
	brokers := podsReady(t, ns, "app.kubernetes.io/name=nats", 3, 2*time.Minute)

	var names []string
	for _, p := range brokers {
		names = append(names, p.Name)
	}
	for _, p := range brokers {
		want := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == p.Name })
		testenv.Eventually(t, time.Minute, func() error {
			got, err := routeNames(p)
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("%s routes to %v, want %v", p.Name, got, want)
			}
			return nil
		})
	}

	// An intruder dials every broker's route port, without a certificate.
	before := handshakeRefusals(t, ns, brokers)
	opts := &server.Options{ServerName: "intruder", Host: "127.0.0.1", Port: -1, HTTPPort: -1, NoSigs: true, NoLog: true}
	opts.Cluster.Name, opts.Cluster.Host, opts.Cluster.Port = "nats", "0.0.0.0", -1
	for _, p := range brokers {
		opts.Routes = append(opts.Routes, &url.URL{Scheme: "nats", Host: p.Status.PodIP + ":6222"})
	}
	intruder, err := server.NewServer(opts)
	testenv.Must(t, err)
	go intruder.Start()
	t.Cleanup(intruder.Shutdown)
	testenv.Eventually(t, time.Minute, func() error {
		after := handshakeRefusals(t, ns, brokers)
		for _, p := range brokers {
			if after[p.Name] <= before[p.Name] {
				return fmt.Errorf("%s has refused no route since the intruder started (%d refusals)", p.Name, after[p.Name])
			}
		}
		return nil
	})
	for _, p := range brokers {
		got, err := routeNames(p)
		testenv.Must(t, err)
		if slices.Contains(got, "intruder") {
			t.Errorf("%s routes to the intruder: %v", p.Name, got)
		}
	}
	if z, _ := intruder.Routez(nil); len(z.Routes) > 0 {
		t.Errorf("the intruder has %d routes", len(z.Routes))
	}
}

// routeNames are the server names pod's broker has routes to, sorted,
// each once (nats-server pools several connections per route), from its
// monitoring port.
func routeNames(pod corev1.Pod) ([]string, error) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + pod.Status.PodIP + ":8222/routez")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var z struct {
		Routes []struct {
			RemoteName string `json:"remote_name"`
		} `json:"routes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&z); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range z.Routes {
		out = append(out, r.RemoteName)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// handshakeRefusals counts, per broker pod, the routes its log says it
// refused in the TLS handshake.
func handshakeRefusals(t *testing.T, ns string, pods []corev1.Pod) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, p := range pods {
		b, err := clientset(t).CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
		testenv.Must(t, err)
		out[p.Name] = strings.Count(string(b), "TLS route handshake error")
	}
	return out
}
