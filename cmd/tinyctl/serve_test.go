package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// e2eCluster is the cluster name the controller of these tests reports.
const e2eCluster = "e2e"

// serveFor starts `tinyctl serve` for the user's NATS server, managing
// namespace ns of the test API server, and waits until it leads.
func (u *user) serveFor(ns string) *testenv.ServeProcess {
	u.t.Helper()
	p := testenv.Serve(u.t, binary,
		"--nats-url", u.nats.URL(), "--kubeconfig", kube.Kubeconfig, "--namespaces", ns,
		"--cluster-name", e2eCluster, "--lease-ttl", "3s", "--recheck", "500ms", "--log-format", "json")
	p.WaitReady(u.t, "leader", 30*time.Second)
	return p
}

// deployment waits until Deployment ns/name exists and passes check.
func deployment(t *testing.T, ns, name string, check func(*appsv1.Deployment) error) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	testenv.Eventually(t, 30*time.Second, func() error {
		var err error
		d, err = kube.Clientset(t).AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return check(d)
	})
	return d
}

func exists(*appsv1.Deployment) error { return nil }

// runs checks that the Deployment's worker runs image.
func runs(image string) func(*appsv1.Deployment) error {
	return func(d *appsv1.Deployment) error {
		if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("deployment %s runs %s, want %s", d.Name, got, image)
		}
		return nil
	}
}

// anonymous returns the JSON of v with name replaced by NAME, so that two
// components' objects compare without their names.
func anonymous(t *testing.T, v any, name string) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), name, "NAME")
}

// waitStatus waits until `tinyctl status` of the namespace shows want (rows
// without AGE).
func (u *user) waitStatus(ns string, want ...string) {
	u.t.Helper()
	testenv.Eventually(u.t, 30*time.Second, func() error {
		got := tableRows(u.must("status", "-n", ns).stdout, statusAge)
		if strings.Join(got[1:], "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("status -n %s:\n%s\nwant rows:\n%s", ns, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		return nil
	})
}

func TestARawKVPutIsReconciledExactlyLikeAnApply(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	ns := kube.RestrictedNamespace(t)
	u.serveFor(ns)

	// A script publishes the documented JSON with plain nats.go...
	raw := strings.NewReplacer(`"name":"extractor","namespace":"workers"`, `"name":"viaraw","namespace":"`+ns+`"`,
		"workers.extract.>", ns+".viaraw.>").Replace(documentedJSON)
	js, err := jetstream.New(u.nats.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, "tinyctl-components") // the controller created it
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, ns+".viaraw", []byte(raw)); err != nil {
		t.Fatal(err)
	}
	// ...and a person applies the same component under another name.
	u.must("apply", "-f", u.file("c.yaml", component(ns, "viacli", "registry.example.com/acme/extractor:1.4.2")))

	// Both reconciled: every child applied; not Ready, as no Deployment
	// controller or kubelet runs here to start their pods.
	u.waitStatus(ns,
		ns+" viacli "+e2eCluster+" False Progressing 2/2 live",
		ns+" viaraw "+e2eCluster+" False Progressing 1/1 live")
	viaRaw := deployment(t, ns, "viaraw", exists)
	viaCLI := deployment(t, ns, "viacli", exists)
	if diff := cmp.Diff(anonymous(t, viaRaw.Spec, "viaraw"), anonymous(t, viaCLI.Spec, "viacli")); diff != "" {
		t.Errorf("Deployments differ beyond their names (-raw put +apply):\n%s", diff)
	}
	if c := viaRaw.Spec.Template.Spec.Containers[0]; c.Image != "registry.example.com/acme/extractor:1.4.2" || c.SecurityContext == nil {
		t.Errorf("raw put's worker container = %+v", c)
	}
	np := func(name string) string {
		p, err := kube.Clientset(t).NetworkingV1().NetworkPolicies(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return anonymous(t, p.Spec, name)
	}
	if diff := cmp.Diff(np("viaraw"), np("viacli")); diff != "" {
		t.Errorf("NetworkPolicies differ beyond their names (-raw put +apply):\n%s", diff)
	}
}

func TestRollbackRestoresAnEarlierSpecAndTheClusterFollows(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	ns := kube.RestrictedNamespace(t)
	u.serveFor(ns)
	f := u.file("c.yaml", component(ns, "worker", "registry.example.com/acme/worker:1"))
	u.must("apply", "-f", f) // revision 1
	deployment(t, ns, "worker", runs("registry.example.com/acme/worker:1"))
	u.file("c.yaml", component(ns, "worker", "registry.example.com/acme/worker:2"))
	u.must("apply", "-f", f) // revision 2
	deployment(t, ns, "worker", runs("registry.example.com/acme/worker:2"))
	u.waitStatus(ns, ns+" worker "+e2eCluster+" False Progressing 2/2 live")

	r := u.must("rollback", "worker", "-n", ns)
	expect(t, r, 0, []string{"component/" + ns + ".worker rolled back to revision 1 (new revision 3)\n"}, nil)
	expect(t, u.run("get", "worker", "-n", ns), 0, []string{"image: registry.example.com/acme/worker:1\n"}, nil)
	deployment(t, ns, "worker", runs("registry.example.com/acme/worker:1"))

	testenv.Eventually(t, 30*time.Second, func() error {
		var list statusList
		if err := json.Unmarshal([]byte(u.must("status", "worker", "-n", ns, "-o", "json").stdout), &list); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("status worker: %d items, want 1", len(list.Items))
		}
		it := list.Items[0]
		if it.ObservedRevision != 3 || it.LatestRevision != 3 || !it.UpToDate || it.Applied != "True" || it.Ready != "False" || it.Stale {
			return fmt.Errorf("status worker = %+v, want observed = latest = 3, Applied (not Ready: no pods run here), live", it)
		}
		return nil
	})
	u.waitStatus(ns, ns+" worker "+e2eCluster+" False Progressing 3/3 live")
}

func TestRenderAndDiffUseTheSettingsAClusterReports(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	ns := kube.RestrictedNamespace(t)
	p := testenv.Serve(u.t, binary,
		"--nats-url", u.nats.URL(), "--kubeconfig", kube.Kubeconfig, "--namespaces", ns,
		"--cluster-name", "custom", "--cluster-labels", "region=eu", "--worker-nats-url", "nats://broker.custom.svc:4222",
		"--pod-cidrs", "10.244.0.0/16", "--service-cidrs", "10.96.0.0/12,fd00:10:96::/112",
		"--dns-node-local-ip", "169.254.20.10", "--collector-endpoint", "-",
		"--lease-ttl", "3s", "--log-format", "json")
	p.WaitReady(u.t, "leader", 30*time.Second)
	f := u.file("c.yaml", component(ns, "resizer", "acme/resizer:1.0.0"))

	natsURL := func(out string) string {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "nats://") {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	if got := natsURL(u.must("render", "-f", f).stdout); !strings.Contains(got, "nats.tinyctl-system.svc") {
		t.Errorf("render without --cluster: NATS_URL line %q, want the default broker", got)
	}
	if got := natsURL(u.must("render", "-f", f, "--cluster", "custom").stdout); !strings.Contains(got, "nats://broker.custom.svc:4222") {
		t.Errorf("render --cluster custom: NATS_URL line %q, want the controller's --worker-nats-url", got)
	}
	checkEgressSettings(t, u, ns)
	checkEgressReach(t, u, ns)
	checkOverrides(t, u, ns)
	expect(t, u.run("render", "-f", f, "--cluster", "nowhere"), 1, nil,
		[]string{`Error: cluster "nowhere" has no live heartbeat: is its controller running?`})

	// Once the controller applied it, the live Deployment is what the
	// cluster's settings render: no diff with them, a NATS_URL diff with
	// the defaults.
	u.must("apply", "-f", f)
	deployment(t, ns, "resizer", exists)
	testenv.Eventually(t, 30*time.Second, func() error {
		if r := u.run("diff", "-f", f, "--cluster", "custom", "--kubeconfig", kube.Kubeconfig); r.code != 0 {
			return fmt.Errorf("diff --cluster custom: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		return nil
	})
	r := u.run("diff", "-f", f, "--kubeconfig", kube.Kubeconfig)
	if r.code != exitDiffFound || !strings.Contains(r.stdout, "-          value: nats://broker.custom.svc:4222") {
		t.Errorf("diff with the default settings: exit %d, want %d and the NATS_URL change:\n%s%s", r.code, exitDiffFound, r.stdout, r.stderr)
	}
}

// checkOverrides renders a component with overrides for the cluster
// started above (named custom, labelled region=eu) and for the default
// one: each rendering has its own cluster's overrides merged in, and a
// conflict is an error of the cluster it selects only.
func checkOverrides(t *testing.T, u *user, ns string) {
	t.Helper()
	overrides := component(ns, "regional", "acme/regional:1.0.0") + `  overrides:
  - clusterSelector: {matchLabels: {region: eu}}
    image: acme/regional:1.0.0-eu
  - clusters: [default]
    env: [{name: LOG_LEVEL, value: debug}]
`
	f := u.file("regional.yaml", overrides)
	custom, defaults := u.must("render", "-f", f, "--cluster", "custom").stdout, u.must("render", "-f", f).stdout
	if !strings.Contains(custom, "image: acme/regional:1.0.0-eu\n") || strings.Contains(custom, "LOG_LEVEL") {
		t.Errorf("render --cluster custom (region=eu): want the eu image and no LOG_LEVEL:\n%s", custom)
	}
	if !strings.Contains(defaults, "image: acme/regional:1.0.0\n") || !strings.Contains(defaults, "value: debug") {
		t.Errorf("render for the default cluster: want the base image and LOG_LEVEL debug:\n%s", defaults)
	}
	conflict := u.file("conflict.yaml", overrides+"  - clusters: [custom]\n    image: acme/regional:2.0.0-rc1\n")
	expect(t, u.run("render", "-f", conflict, "--cluster", "custom"), 1, nil, []string{`Error: component ` + ns +
		`.regional: overrides for cluster "custom": spec.overrides[2].image: Invalid value: "acme/regional:2.0.0-rc1": ` +
		`conflicts with spec.overrides[0].image ("acme/regional:1.0.0-eu")`})
	u.must("render", "-f", conflict)
}

// checkEgressSettings renders an internet-egress component with the
// settings of the controller started above: its address ranges, NodeLocal
// DNSCache and its lack of a collector reach the NetworkPolicy, which the
// default settings do not have.
func checkEgressSettings(t *testing.T, u *user, ns string) {
	t.Helper()
	f := u.file("mailer.yaml", component(ns, "mailer", "acme/mailer:1.0.0")+"  egress: internet\n")
	custom := u.must("render", "-f", f, "--cluster", "custom").stdout
	defaults := u.must("render", "-f", f).stdout
	for _, want := range []string{"- 10.244.0.0/16", "- 10.96.0.0/12", "- fd00:10:96::/112", "cidr: 169.254.20.10/32"} {
		if !strings.Contains(custom, want) {
			t.Errorf("render --cluster custom lacks %q:\n%s", want, custom)
		}
		if strings.Contains(defaults, want) {
			t.Errorf("render with the default settings has %q", want)
		}
	}
	if strings.Contains(custom, "port: 4317") || !strings.Contains(defaults, "port: 4317") {
		t.Errorf("collector rule: with --collector-endpoint - %t, by default %t; want false, true",
			strings.Contains(custom, "port: 4317"), strings.Contains(defaults, "port: 4317"))
	}
}

// checkEgressReach: an allow list that names the metadata range is refused
// by apply with its field path; one that names the pod range of the
// cluster started above (--pod-cidrs 10.244.0.0/16) is refused by apply
// --cluster custom, which reads the ranges from its heartbeat, and, put
// into the bucket by hand, by that cluster's controller, which reports it
// as an invalid spec with the same field path and applies nothing.
func checkEgressReach(t *testing.T, u *user, ns string) {
	t.Helper()
	metadata := u.file("metadata.yaml", component(ns, "borrower", "acme/borrower:1.0.0")+
		"  egress:\n    allow:\n    - cidr: 203.0.113.0/24\n    - cidr: 169.254.169.254/32\n")
	expect(t, u.run("apply", "-f", metadata), 1, nil, []string{
		"spec.egress.allow[1].cidr: Forbidden: 169.254.169.254/32 reaches 169.254.0.0/16, a link-local range",
		"nothing was published"})

	pods := component(ns, "scanner", "acme/scanner:1.0.0") + "  egress:\n    allow:\n    - cidr: 10.0.0.0/8\n      except: [10.96.0.0/12]\n"
	f := u.file("scanner.yaml", pods)
	want := "spec.egress.allow[0].cidr: Forbidden: 10.0.0.0/8 reaches 10.244.0.0/16, this cluster's pod or Service range"
	expect(t, u.run("apply", "-f", f, "--cluster", "custom"), 1, nil, []string{want, "nothing was published"})

	// Past apply (which, without --cluster, knows no pod range), the
	// controller refuses it.
	u.must("apply", "-f", f)
	testenv.Eventually(t, 30*time.Second, func() error {
		out := u.must("status", "scanner", "-n", ns, "-o", "json").stdout
		if !strings.Contains(out, "InvalidSpec") || !strings.Contains(out, want) {
			return fmt.Errorf("status of scanner does not report %q:\n%s", want, out)
		}
		return nil
	})
	if _, err := kube.Clientset(t).AppsV1().Deployments(ns).Get(context.Background(), "scanner", metav1.GetOptions{}); err == nil {
		t.Error("the controller applied a Deployment for a component whose egress reaches the pod range")
	}
	u.must("delete", "scanner", "-n", ns, "--yes")
}
