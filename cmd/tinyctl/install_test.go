//go:build !noinstall

package main

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestInstallAndUninstall runs `tinyctl install` twice and `tinyctl
// uninstall` against the test API server, as a user would.
func TestInstallAndUninstall(t *testing.T) {
	u := &user{t: t, home: t.TempDir()}
	ns := "rt-" + strings.ToLower(rand.Text()[:8])
	kubeArgs := []string{"--kubeconfig", kube.Kubeconfig, "--runtime-namespace", ns}
	values := u.file("controller.yaml", "workers: 2\n")
	media, billing := kube.Namespace(t, nil), kube.Namespace(t, nil)

	r := u.run(append([]string{"install", "--namespaces", media + ",nowhere"}, kubeArgs...)...)
	expect(t, r, exitError, nil, []string{"namespace to manage does not exist: nowhere; create it first (kubectl create namespace nowhere)"})

	r = u.must(append([]string{"install", "--cluster-name", "eu-1", "--controller-values", values, "--namespaces", media + "," + billing}, kubeArgs...)...)
	expect(t, r, 0, []string{
		"Installing the tinyctl runtime in namespace " + ns,
		"Namespace/" + ns + " created",
		"Secret/" + ns + "/tinyctl-nats-keys created",
		"Secret/" + ns + "/tinyctl-account-signer created",
		"Secret/" + ns + "/tinyctl-publisher created",
		"Release/" + ns + "/nats created (nats-0.1.0, revision 1)",
		"Release/" + ns + "/collector created",
		"Release/" + ns + "/tinyctl created",
		"Broker: nats://nats." + ns + ".svc:4222 (an identity per party; publisher credentials in Secret " + ns + "/tinyctl-publisher, key \"publisher.creds\")",
		"kubectl -n " + ns + " get secret tinyctl-publisher -o jsonpath='{.data.publisher\\.creds}' | base64 -d > publisher.creds",
	}, nil)
	testenv.NoSecrets(t, "install", r.stdout+r.stderr)
	dep, err := kube.Clientset(t).AppsV1().Deployments(ns).Get(context.Background(), "tinyctl", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	args := dep.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--cluster-name=eu-1", "--workers=2", "--namespaces=" + media + "," + billing} {
		if !slices.Contains(args, want) {
			t.Errorf("controller args %v lack %s", args, want)
		}
	}

	// The cluster's name and namespaces are kept when not given again.
	r = u.must(append([]string{"install", "--controller-values", values}, kubeArgs...)...)
	expect(t, r, 0, []string{"Release/" + ns + "/tinyctl unchanged (tinyctl-0.1.0, revision 1)"}, nil)
	if !strings.Contains(r.stdout, "Done: ") || strings.Contains(r.stdout, "created") || strings.Contains(r.stdout, "upgraded") {
		t.Errorf("second install changed something:\n%s", r)
	}

	r = u.must(append([]string{"uninstall"}, kubeArgs...)...)
	expect(t, r, 0, []string{
		"Release/" + ns + "/tinyctl deleted", "Release/" + ns + "/nats deleted",
		"Secret/" + ns + "/tinyctl-nats-keys deleted", "Namespace/" + ns + " deleted",
	}, nil)
}

// TestInstallWithTokenAuth: --broker-auth token shares one token, which
// install never prints.
func TestInstallWithTokenAuth(t *testing.T) {
	u := &user{t: t, home: t.TempDir()}
	ns := "rt-" + strings.ToLower(rand.Text()[:8])
	kubeArgs := []string{"--kubeconfig", kube.Kubeconfig, "--runtime-namespace", ns}
	r := u.must(append([]string{"install", "--broker-auth", "token", "--without-collector", "--skip-crds"}, kubeArgs...)...)
	expect(t, r, 0, []string{
		"Secret/" + ns + "/nats-auth created",
		"Broker: nats://nats." + ns + ".svc:4222 (token in Secret " + ns + "/nats-auth",
	}, nil)
	if strings.Contains(r.stdout, "nats://tk") {
		t.Errorf("install printed the broker token:\n%s", r)
	}
	u.must(append([]string{"uninstall"}, kubeArgs...)...)
}

// TestInstallUsageErrors checks flag mistakes exit 2 before touching a
// cluster.
func TestInstallUsageErrors(t *testing.T) {
	u := &user{t: t, home: t.TempDir()}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"chart without repo", []string{"install", "--chart", "keda"}, "--chart, --version, --release and --chart-values need --repo"},
		{"repo without chart", []string{"install", "--repo", "https://example.com/charts"}, "--repo needs --chart"},
		{"missing values file", []string{"install", "--broker-values", "/nonexistent.yaml"}, "values file:"},
		{"unknown auth mode", []string{"install", "--broker-auth", "password"}, `--broker-auth "password": want jwt, token or none`},
		{"even broker replicas", []string{"install", "--broker-replicas", "2"}, "--broker-replicas 2: want 1, 3 or 5"},
		{"both namespace scopes", []string{"install", "--namespaces", "a", "--all-namespaces"}, "--namespaces and --all-namespaces exclude each other"},
		{"argument", []string{"uninstall", "now"}, "Run 'tinyctl uninstall --help' for usage."},
		{"hub credentials without a hub", []string{"install", "--hub-credentials-secret", "hub-creds"}, "--hub-credentials-secret needs --hub-url"},
		{"hub address without a scheme", []string{"install", "--hub-url", "hub:7422"}, `--hub-url "hub:7422": want a leafnode URL`},
		{"cluster named like the hub", []string{"install", "--hub-url", "nats-leaf://hub:7422", "--cluster-name", "hub"}, "is the hub's JetStream domain"},
		{"fleet member in one account", []string{"install", "--hub-url", "nats-leaf://hub:7422", "--broker-auth", "token"}, "a fleet member needs --broker-auth jwt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := u.run(append(tt.args, "--kubeconfig", kube.Kubeconfig)...)
			expect(t, r, exitUsage, nil, []string{tt.want})
		})
	}
}
