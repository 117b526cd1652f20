package deploy_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/deploy"
)

var chartNames = []string{"tinyctl", "nats", "collector", "keda"}

// withIdentity are the controller's nats values with an account signing
// key, as `tinyctl install` sets them for a broker with jwt auth.
var withIdentity = map[string]any{"identity": map[string]any{
	"signerSecret": "tinyctl-account-signer",
	"account":      "ADQJXFJYYD3D4KDVJ7HDQWOZ7XFRBLZMLACPKQIWGWMQTVWX5BBTRHAQ",
}}

// chartDir copies the embedded chart name into a temporary directory, the
// way `tinyctl install` hands it to Helm.
func chartDir(t *testing.T, name string) string {
	t.Helper()
	sub, err := fs.Sub(deploy.Charts, "charts/"+name)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatalf("extract chart %s: %v", name, err)
	}
	return dir
}

// TestChartsAreEmbedded checks every chart directory made it into the
// binary, helpers included.
func TestChartsAreEmbedded(t *testing.T) {
	for _, name := range chartNames {
		for _, f := range []string{"Chart.yaml", "values.yaml", "values.schema.json", "templates/_helpers.tpl"} {
			if _, err := fs.Stat(deploy.Charts, "charts/"+name+"/"+f); err != nil {
				t.Errorf("chart %s: %v", name, err)
			}
		}
	}
}

// TestChartsLintClean runs Helm's linter on every chart, with its default
// values and with the values that switch its other branches on, and wants
// no message at all (not even INFO).
func TestChartsLintClean(t *testing.T) {
	cases := []struct {
		chart  string
		values map[string]any
	}{
		{"tinyctl", nil},
		{"tinyctl", map[string]any{"namespaces": []any{"team-a", "team-b"}}},
		{"tinyctl", map[string]any{"namespaces": []any{}, "createNamespaces": true, "clusterLabels": map[string]any{"region": "eu"}}},
		{"tinyctl", map[string]any{"nats": withIdentity}},
		{"tinyctl", map[string]any{"nats": map[string]any{"tls": map[string]any{"secretName": "nats-tls", "clientCert": true}}}},
		{"tinyctl", monitoringOn},
		{"tinyctl", map[string]any{"replicas": 1}},
		{"tinyctl", map[string]any{"kube": map[string]any{"qps": 50, "burst": 100}}},
		{"nats", nil},
		{"nats", map[string]any{"auth": map[string]any{"mode": "none"}, "storage": map[string]any{"storageClassName": "fast"}}},
		{"nats", map[string]any{"auth": map[string]any{"mode": "jwt"}, "tls": map[string]any{"secretName": "nats-tls", "verify": true}}},
		{"nats", threeServers},
		{"nats", map[string]any{"auth": map[string]any{"mode": "jwt"}, "cluster": map[string]any{"replicas": 5, "name": "broker"}}},
		{"tinyctl", map[string]any{"nats": map[string]any{"replicas": 3}}},
		{"collector", nil},
		{"keda", nil},
	}
	for _, tc := range cases {
		t.Run(tc.chart, func(t *testing.T) {
			l := lint.AllWithKubeVersion(chartDir(t, tc.chart), tc.values, "tinyctl-system", nil)
			for _, m := range l.Messages {
				t.Errorf("values %v: %s", tc.values, m)
			}
		})
	}
}

// render renders chart name as release name in namespace tinyctl-system
// and returns the non-empty manifests by template path.
func render(t *testing.T, name string, values map[string]any) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir(t, name))
	if err != nil {
		t.Fatal(err)
	}
	opts := chartutil.ReleaseOptions{Name: name, Namespace: "tinyctl-system", IsInstall: true, Revision: 1}
	vals, err := chartutil.ToRenderValues(ch, values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	for k, v := range out {
		if strings.TrimSpace(v) == "" {
			delete(out, k)
		}
	}
	return out, nil
}

// documents splits rendered manifests into YAML documents, decoded.
func documents(t *testing.T, manifests map[string]string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for path, m := range manifests {
		if strings.HasSuffix(path, ".txt") {
			continue
		}
		for _, doc := range strings.Split(m, "\n---") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if obj != nil {
				out = append(out, obj)
			}
		}
	}
	return out
}

// TestControllerRBAC checks the controller's permissions as rendered: a
// Role in namespace default by default, one Role per namespace when
// namespaces are listed (and then a ClusterRole reading KEDA's metrics
// APIService alone), when the list is empty reads cluster-wide and writes
// bound in each granted namespace (or cluster-wide to create namespaces),
// create namespaces only when asked, Secrets (by name, never listed) only with
// an account signing key, and never a wildcard, a ConfigMap, a Pod or a
// Lease.
func TestControllerRBAC(t *testing.T) {
	cases := []struct {
		name      string
		values    map[string]any
		wantKinds []string
		nsVerbs   []string
		secrets   bool
	}{
		{"default", nil, []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, []string{"get"}, false},
		{"every namespace, none granted", map[string]any{"namespaces": []any{}}, []string{"ClusterRole", "ClusterRole", "ClusterRoleBinding"}, []string{"get"}, false},
		{"every namespace, two granted", map[string]any{"namespaces": []any{}, "grantNamespaces": []any{"team-a", "team-b"}},
			[]string{"ClusterRole", "ClusterRole", "ClusterRoleBinding", "RoleBinding", "RoleBinding"}, []string{"get"}, false},
		{"create namespaces", map[string]any{"namespaces": []any{}, "createNamespaces": true},
			[]string{"ClusterRole", "ClusterRole", "ClusterRoleBinding", "ClusterRoleBinding"}, []string{"get", "create"}, false},
		{"listed namespaces", map[string]any{"namespaces": []any{"team-a", "team-b"}},
			[]string{"ClusterRole", "ClusterRoleBinding", "Role", "Role", "RoleBinding", "RoleBinding"}, []string{"get"}, false},
		{"identity", map[string]any{"nats": withIdentity, "namespaces": []any{"team-a"}},
			[]string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, []string{"get"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := render(t, "tinyctl", tc.values)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, obj := range documents(t, out) {
				kind, _ := obj["kind"].(string)
				if !strings.Contains(kind, "Role") {
					continue
				}
				kinds = append(kinds, kind)
				meta, _ := obj["metadata"].(map[string]any)
				name, _ := meta["name"].(string)
				switch {
				case kind == "ClusterRole" && strings.HasSuffix(name, "-keda-probe"):
					checkRules(t, obj, nil, false) // the apiservices rule alone
				case kind == "ClusterRole" && strings.HasSuffix(name, "-watch"):
					checkWatchRules(t, obj, tc.nsVerbs)
				case kind == "Role" || kind == "ClusterRole":
					checkRules(t, obj, tc.nsVerbs, tc.secrets)
				}
			}
			slices.Sort(kinds)
			if !slices.Equal(kinds, tc.wantKinds) {
				t.Errorf("RBAC kinds = %v, want %v", kinds, tc.wantKinds)
			}
		})
	}
}

func checkRules(t *testing.T, obj map[string]any, nsVerbs []string, secrets bool) {
	t.Helper()
	b, _ := yaml.Marshal(obj)
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatal(err)
	}
	managed := []string{"get", "list", "watch", "create", "patch", "delete"}
	sawSecrets := false
	defer func() {
		if sawSecrets != secrets {
			t.Errorf("grants Secrets = %v, want %v", sawSecrets, secrets)
		}
	}()
	for _, r := range role.Rules {
		for _, s := range slices.Concat(r.APIGroups, r.Resources, r.Verbs) {
			if s == "*" {
				t.Errorf("rule %+v has a wildcard", r)
			}
		}
		for _, res := range r.Resources {
			switch res {
			case "deployments", "networkpolicies", "scaledobjects", "poddisruptionbudgets":
				if !slices.Equal(r.Verbs, managed) {
					t.Errorf("%s verbs = %v, want %v", res, r.Verbs, managed)
				}
			case "pods": // Ready is judged on them: read only
				if !slices.Equal(r.Verbs, []string{"list", "watch"}) {
					t.Errorf("pods verbs = %v, want [list watch]", r.Verbs)
				}
			case "secrets":
				sawSecrets = true
				if want := []string{"get", "create", "patch", "delete"}; !slices.Equal(r.Verbs, want) {
					t.Errorf("secrets verbs = %v, want %v (never list or watch)", r.Verbs, want)
				}
			case "namespaces":
				if !slices.Equal(r.Verbs, nsVerbs) {
					t.Errorf("namespaces verbs = %v, want %v", r.Verbs, nsVerbs)
				}
			case "events": // Kubernetes Events about components: written, never read
				if !slices.Equal(r.APIGroups, []string{"events.k8s.io"}) || !slices.Equal(r.Verbs, []string{"create", "patch"}) {
					t.Errorf("events rule %+v, want create and patch on events.k8s.io only", r)
				}
			case "apiservices": // is KEDA running? one name, read only
				if !slices.Equal(r.Verbs, []string{"get"}) || !slices.Equal(r.ResourceNames, []string{"v1beta1.external.metrics.k8s.io"}) {
					t.Errorf("apiservices rule %+v, want get on v1beta1.external.metrics.k8s.io only", r)
				}
			default:
				t.Errorf("rule grants %s, which the controller does not use", res)
			}
		}
	}
}

// checkWatchRules checks the cluster-wide reads of a controller of every
// namespace: list and watch of its child kinds, the namespaces rule, and
// nothing else (no Secret, no write).
func checkWatchRules(t *testing.T, obj map[string]any, nsVerbs []string) {
	t.Helper()
	b, _ := yaml.Marshal(obj)
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			seen++
			switch res {
			case "deployments", "networkpolicies", "scaledobjects", "poddisruptionbudgets", "pods":
				if !slices.Equal(r.Verbs, []string{"list", "watch"}) {
					t.Errorf("cluster-wide %s verbs = %v, want [list watch]", res, r.Verbs)
				}
			case "namespaces":
				if !slices.Equal(r.Verbs, nsVerbs) {
					t.Errorf("namespaces verbs = %v, want %v", r.Verbs, nsVerbs)
				}
			default:
				t.Errorf("the cluster-wide reads grant %s", res)
			}
		}
	}
	if seen != 6 {
		t.Errorf("cluster-wide reads cover %d resources, want 6", seen)
	}
}

// TestControllerRefusesAGrantOfADeniedNamespace: grantNamespaces may not
// name a namespace denyNamespaces (or the release namespace) keeps from
// the controller.
func TestControllerRefusesAGrantOfADeniedNamespace(t *testing.T) {
	for _, ns := range []string{"kube-system", "tinyctl-system"} {
		_, err := render(t, "tinyctl", map[string]any{"namespaces": []any{}, "grantNamespaces": []any{"team-a", ns}})
		if err == nil || !strings.Contains(err.Error(), "grantNamespaces lists "+ns) {
			t.Errorf("grant of %s: %v, want refused", ns, err)
		}
	}
}

// TestControllerRefusesNamespacesWithCreate checks the chart refuses a
// namespaced controller that may create namespaces: a Role cannot grant
// that.
func TestControllerRefusesNamespacesWithCreate(t *testing.T) {
	_, err := render(t, "tinyctl", map[string]any{"createNamespaces": true}) // with the default list
	if err == nil || !strings.Contains(err.Error(), "createNamespaces cannot be combined with namespaces") {
		t.Fatalf("render error = %v, want the chart's refusal", err)
	}
}

// TestControllerArgs checks the chart passes `tinyctl serve` the flags it
// takes, with defaults pointing at the broker in the release namespace and
// the token coming from a secretKeyRef.
func TestControllerArgs(t *testing.T) {
	out, err := render(t, "tinyctl", map[string]any{"clusterLabels": map[string]any{"zone": "b", "region": "eu"}})
	if err != nil {
		t.Fatal(err)
	}
	m := out["tinyctl/templates/deployment.yaml"]
	for _, want := range []string{
		"- serve",
		"- --nats-url=nats://nats.tinyctl-system.svc:4222",
		"- --worker-nats-url=nats://nats.tinyctl-system.svc:4222",
		"- --nats-namespace=tinyctl-system",
		"- --nats-pod-labels=app.kubernetes.io/name=nats",
		"- --cluster-labels=region=eu,zone=b",
		"- --keda-monitoring-endpoint=nats.tinyctl-system.svc:8222",
		"- --metrics-addr=:9090",
		"- --health-addr=:8081",
		"name: TINYCTL_NATS_TOKEN",
		"name: nats-auth",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("deployment lacks %q:\n%s", want, m)
		}
	}
	if strings.Contains(m, "--replicas") {
		t.Errorf("one broker: deployment passes --replicas:\n%s", m)
	}
	out, err = render(t, "tinyctl", map[string]any{"nats": map[string]any{"replicas": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if m := out["tinyctl/templates/deployment.yaml"]; !strings.Contains(m, "- --replicas=3") {
		t.Errorf("nats.replicas 3: deployment lacks --replicas=3:\n%s", m)
	}
}

// TestControllerArgsKubeLimits checks kube.qps and kube.burst reach the
// controller as --kube-qps and --kube-burst, that by default neither is
// passed (serve's own default: no client-side limit), and that a burst
// without a limit, or a value of the wrong type, is refused. Values come
// as a values file gives them (YAML numbers, float64) and as --set does
// (int64).
func TestControllerArgsKubeLimits(t *testing.T) {
	cases := []struct {
		name string
		kube any // YAML of the kube values, or a map; "" for the defaults
		want []string
	}{
		{"default", "", nil},
		{"qps and burst", "{qps: 50, burst: 100}", []string{"--kube-qps=50", "--kube-burst=100"}},
		{"qps alone", "{qps: 2.5}", []string{"--kube-qps=2.5"}},
		{"burst 0", "{qps: 20, burst: 0}", []string{"--kube-qps=20"}},
		{"large", "{qps: 1000000, burst: 2000000}", []string{"--kube-qps=1e+06", "--kube-burst=2000000"}},
		{"qps 0", "{qps: 0}", nil},
		{"negative qps", "{qps: -1}", nil},
		{"from --set", map[string]any{"qps": int64(50), "burst": int64(100)}, []string{"--kube-qps=50", "--kube-burst=100"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := render(t, "tinyctl", kubeValues(t, tc.kube))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range controllerArgs(t, out) {
				if strings.HasPrefix(a, "--kube-") {
					got = append(got, a)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("kube %v: controller args %v, want %v", tc.kube, got, tc.want)
			}
		})
	}
	for kube, wantErr := range map[string]string{
		"{burst: 100}":         "kube.burst needs kube.qps above 0",
		"{qps: 0, burst: 100}": "kube.burst needs kube.qps above 0",
		"{qps: -1, burst: 1}":  "kube.burst needs kube.qps above 0",
		"{qps: fast}":          "qps",
		"{qps: 5, burst: -1}":  "burst",
		"{QPS: 5}":             "QPS",
	} {
		if _, err := render(t, "tinyctl", kubeValues(t, kube)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("kube %s: render error = %v, want one naming %q", kube, err, wantErr)
		}
	}
}

// kubeValues are the chart values with kube set to kube: YAML, a map, or
// "" for none.
func kubeValues(t *testing.T, kube any) map[string]any {
	t.Helper()
	if s, ok := kube.(string); ok {
		if s == "" {
			return nil
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		kube = m
	}
	return map[string]any{"kube": kube}
}

// controllerArgs are the controller container's args in rendered
// manifests.
func controllerArgs(t *testing.T, manifests map[string]string) []string {
	t.Helper()
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(manifests["tinyctl/templates/deployment.yaml"]), &dep); err != nil {
		t.Fatal(err)
	}
	if n := len(dep.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("deployment has %d containers, want 1", n)
	}
	return dep.Spec.Template.Spec.Containers[0].Args
}

// TestControllerArgsWithIdentity checks an account signing key reaches the
// controller as a file holding only the seed, with the account and the
// worker credentials' lifetime, and that the runtime's namespace is never
// managed.
func TestControllerArgsWithIdentity(t *testing.T) {
	out, err := render(t, "tinyctl", map[string]any{"nats": withIdentity})
	if err != nil {
		t.Fatal(err)
	}
	m := out["tinyctl/templates/deployment.yaml"]
	for _, want := range []string{
		"- --nats-account-signing-key-file=/var/run/tinyctl/signer/seed",
		"- --nats-account=ADQJXFJYYD3D4KDVJ7HDQWOZ7XFRBLZMLACPKQIWGWMQTVWX5BBTRHAQ",
		"- --worker-credentials-ttl=1h",
		"- --namespaces=default",
		"- --deny-namespaces=kube-system,kube-public,kube-node-lease,tinyctl-system",
		"secretName: tinyctl-account-signer",
		"mountPath: /var/run/tinyctl/signer",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("deployment lacks %q:\n%s", want, m)
		}
	}
	if strings.Contains(m, "key: account") {
		t.Errorf("the account key is mounted; only the seed should be:\n%s", m)
	}
	bad := map[string]any{"identity": map[string]any{"signerSecret": "s"}}
	if _, err := render(t, "tinyctl", map[string]any{"nats": bad}); err == nil || !strings.Contains(err.Error(), "nats.identity.account is required") {
		t.Errorf("render without the account = %v, want it required", err)
	}
}

// TestControllerArgsWithTLS checks the broker's CA (and client
// certificate) reach the controller and, through it, the workers.
func TestControllerArgsWithTLS(t *testing.T) {
	out, err := render(t, "tinyctl", map[string]any{"nats": map[string]any{"tls": map[string]any{"secretName": "nats-tls", "clientCert": true}}})
	if err != nil {
		t.Fatal(err)
	}
	m := out["tinyctl/templates/deployment.yaml"]
	for _, want := range []string{
		"- --nats-ca=/var/run/tinyctl/nats-tls/ca.crt",
		"- --nats-cert=/var/run/tinyctl/nats-tls/tls.crt",
		"- --worker-tls-ca-file=/var/run/tinyctl/nats-tls/ca.crt",
		"- --worker-tls-key-file=/var/run/tinyctl/nats-tls/tls.key",
		"secretName: nats-tls",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("deployment lacks %q:\n%s", want, m)
		}
	}
}

// TestControllerCanReadItsSecrets checks what kubelet needs to let the
// controller (a non-root user) read the Secrets mounted into it: the pod's
// fsGroup is the group it runs as, and every Secret volume's files are
// readable by that group. (Without it the controller crash-looped on
// "account signing key: permission denied" on a real node.)
func TestControllerCanReadItsSecrets(t *testing.T) {
	tls := map[string]any{"secretName": "nats-tls", "clientCert": true}
	out, err := render(t, "tinyctl", map[string]any{"nats": map[string]any{
		"identity": withIdentity["identity"], "tls": tls}})
	if err != nil {
		t.Fatal(err)
	}
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					SecurityContext struct{ RunAsGroup, FSGroup *int64 }
					Volumes         []struct {
						Name   string
						Secret *struct{ DefaultMode *int32 }
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(out["tinyctl/templates/deployment.yaml"]), &dep); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	if sc := pod.SecurityContext; sc.FSGroup == nil || sc.RunAsGroup == nil || *sc.FSGroup != *sc.RunAsGroup {
		t.Fatalf("pod securityContext runAsGroup %v, fsGroup %v: the controller's group must own its Secrets' files", sc.RunAsGroup, sc.FSGroup)
	}
	secrets := 0
	for _, v := range pod.Volumes {
		if v.Secret == nil {
			continue
		}
		secrets++
		if v.Secret.DefaultMode == nil || *v.Secret.DefaultMode&0o040 == 0 {
			t.Errorf("volume %s: defaultMode %v is not readable by the fsGroup", v.Name, v.Secret.DefaultMode)
		}
	}
	if secrets != 2 {
		t.Errorf("checked %d Secret volumes, want 2 (signer, nats-tls)", secrets)
	}
}

// TestControllerArgsCollector checks where workers are told to send
// traces: the collector of the release namespace by default, nowhere with
// endpoint "-" (`tinyctl install --without-collector`).
func TestControllerArgsCollector(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   []string
	}{
		{nil, []string{"- --collector-endpoint=http://collector.tinyctl-system.svc:4317", "- --collector-namespace=tinyctl-system"}},
		{map[string]any{"collector": map[string]any{"endpoint": "-"}}, []string{"- --collector-endpoint=-"}},
	} {
		out, err := render(t, "tinyctl", tc.values)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if m := out["tinyctl/templates/deployment.yaml"]; !strings.Contains(m, w) {
				t.Errorf("values %v: deployment lacks %q", tc.values, w)
			}
		}
	}
}

// TestBrokerStorage checks each storage.type renders the volume it names:
// claims from a template (pvc), the pod's emptyDir limited to size, or an
// existing claim; and that an existing claim without a name, or shared by
// several servers, is refused.
func TestBrokerStorage(t *testing.T) {
	type volume struct {
		Name                  string
		EmptyDir              *struct{ SizeLimit string }
		PersistentVolumeClaim *struct{ ClaimName string }
	}
	statefulSet := func(storage map[string]any) (vols []volume, templates int) {
		t.Helper()
		var values map[string]any
		if storage != nil {
			values = map[string]any{"storage": storage}
		}
		out, err := render(t, "nats", values)
		if err != nil {
			t.Fatal(err)
		}
		var sts struct {
			Spec struct {
				Template             struct{ Spec struct{ Volumes []volume } }
				VolumeClaimTemplates []map[string]any
			}
		}
		if err := yaml.Unmarshal([]byte(out["nats/templates/statefulset.yaml"]), &sts); err != nil {
			t.Fatal(err)
		}
		for _, v := range sts.Spec.Template.Spec.Volumes {
			if v.Name == "data" {
				vols = append(vols, v)
			}
		}
		return vols, len(sts.Spec.VolumeClaimTemplates)
	}
	if vols, n := statefulSet(nil); len(vols) != 0 || n != 1 {
		t.Errorf("default: %d data volumes, %d claim templates; want a claim template only", len(vols), n)
	}
	vols, n := statefulSet(map[string]any{"type": "emptyDir", "size": "2Gi"})
	if len(vols) != 1 || vols[0].EmptyDir == nil || vols[0].EmptyDir.SizeLimit != "2Gi" || n != 0 {
		t.Errorf("emptyDir: volumes %+v, %d claim templates; want one emptyDir limited to 2Gi and no template", vols, n)
	}
	vols, n = statefulSet(map[string]any{"type": "existing", "existingClaim": "js-store"})
	if len(vols) != 1 || vols[0].PersistentVolumeClaim == nil || vols[0].PersistentVolumeClaim.ClaimName != "js-store" || n != 0 {
		t.Errorf("existing: volumes %+v, %d claim templates; want claim js-store and no template", vols, n)
	}
	for _, bad := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"storage": map[string]any{"type": "existing"}}, "storage.type existing needs storage.existingClaim"},
		{map[string]any{"storage": map[string]any{"type": "existing", "existingClaim": "x"}, "cluster": map[string]any{"replicas": 3}}, "with cluster.replicas above 1 use pvc"},
		{map[string]any{"storage": map[string]any{"type": "hostPath"}}, "/storage/type"},
	} {
		if _, err := render(t, "nats", bad.values); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("values %v: render error %v, want one saying %q", bad.values, err, bad.want)
		}
	}
}
