package serve

import (
	"os"
	"path/filepath"
	"testing"
)

// TestClientLimits: by default the client has no token bucket (client-go
// needs a negative QPS for that; zero would be its own 5 QPS), and a
// limit without a burst gets twice the limit.
func TestClientLimits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		qps       float32
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		{"zero config is unlimited", 0, 0, -1, 0},
		{"default is unlimited", DefaultKubeQPS, 0, -1, 0},
		{"burst ignored without a limit", -1, 100, -1, 0},
		{"limit and burst", 50, 100, 50, 100},
		{"limit without burst doubles", 50, 0, 50, 100},
		{"tiny limit still lets one through", 0.2, 0, 0.2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qps, burst := clientLimits(tc.qps, tc.burst)
			if qps != tc.wantQPS || burst != tc.wantBurst {
				t.Errorf("clientLimits(%v, %d) = %v, %d; want %v, %d", tc.qps, tc.burst, qps, burst, tc.wantQPS, tc.wantBurst)
			}
		})
	}
}

// TestABurstWithoutALimitIsRefused: a burst is meaningless without a rate
// and says so instead of being ignored.
func TestABurstWithoutALimitIsRefused(t *testing.T) {
	for _, qps := range []float32{0, DefaultKubeQPS} {
		err := Config{KubeQPS: qps, KubeBurst: 100}.checkKubeLimits()
		if err == nil || err.Error() != "kube-burst 100 needs kube-qps above 0: without it there is no client-side limit to burst above" {
			t.Errorf("qps %v, burst 100: %v", qps, err)
		}
	}
	for _, c := range []Config{{KubeQPS: 50, KubeBurst: 100}, {KubeQPS: 50}, {KubeQPS: -1}} {
		if err := c.checkKubeLimits(); err != nil {
			t.Errorf("qps %v, burst %d refused: %v", c.KubeQPS, c.KubeBurst, err)
		}
	}
}

// TestKubeConfigTakesTheFlagsLimits: the limits reach the rest.Config
// every client of the process is built from.
func TestKubeConfigTakesTheFlagsLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const kc = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, err := kubeConfig(Config{Kubeconfig: path, Holder: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if rc.QPS != -1 || rc.RateLimiter != nil {
		t.Errorf("default config: QPS %v, rate limiter %v; want -1 and none", rc.QPS, rc.RateLimiter)
	}
	rc, err = kubeConfig(Config{Kubeconfig: path, Holder: "h", KubeQPS: 50, KubeBurst: 100})
	if err != nil {
		t.Fatal(err)
	}
	if rc.QPS != 50 || rc.Burst != 100 || rc.UserAgent != "tinyctl-serve/h" {
		t.Errorf("QPS %v, burst %d, user agent %q; want 50, 100, tinyctl-serve/h", rc.QPS, rc.Burst, rc.UserAgent)
	}
}
