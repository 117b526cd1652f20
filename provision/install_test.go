package provision_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// The objects each chart creates with its default values.
var chartKinds = map[string][]string{
	"nats":      {"ConfigMap", "NetworkPolicy", "Service", "Service", "StatefulSet"},
	"collector": {"ConfigMap", "Deployment", "Service"},
	"tinyctl": {"ClusterRole", "ClusterRoleBinding", "Deployment", "PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"},
}

var releaseNames = []string{"nats", "collector", "tinyctl"}

// withoutCRDs drops CRD results: the CRD is cluster-wide, so an earlier
// test may have installed it already.
func withoutCRDs(rs []provision.Result) []provision.Result {
	return slices.DeleteFunc(slices.Clone(rs), func(r provision.Result) bool { return r.Kind == "CustomResourceDefinition" })
}

// TestInstallLifecycle takes an empty runtime namespace through install,
// a repeated install, a values change and uninstall, checking each against
// the API server.
func TestInstallLifecycle(t *testing.T) {
	r := newRuntime(t, provision.Options{})
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}
	var objects []objectRef
	step("install creates every object of each chart", func(t *testing.T) {
		got := actions(withoutCRDs(r.install(provision.Plan{})))
		want := []string{"Namespace/" + r.ns + " created", "Release/collector created", "Release/nats created",
			"Release/tinyctl created", "Secret/nats-auth created"}
		if !slices.Equal(got, want) {
			t.Errorf("results = %v, want %v", got, want)
		}
		for _, name := range releaseNames {
			rel := r.deployed(name)
			objs := r.objects(rel)
			if k := kinds(objs); !slices.Equal(k, chartKinds[name]) || rel.Version != 1 {
				t.Errorf("release %s revision %d has %v, want revision 1 with %v", name, rel.Version, k, chartKinds[name])
			}
			for _, o := range objs {
				obj := r.get(o)
				if obj == nil {
					t.Errorf("%s of release %s does not exist", o, name)
				} else if obj.GetAnnotations()["meta.helm.sh/release-name"] != name {
					t.Errorf("%s is not annotated as release %s's", o, name)
				}
			}
			objects = append(objects, objs...)
		}
		checkRuntimeNamespace(t, r)
		checkBrokerWiring(t, r)
		if w := r.warnings.PodSecurity(); len(w) > 0 {
			t.Errorf("PodSecurity warnings: %v", w)
		}
		checkWarningsAreSeen(t, r)
	})
	step("a second install writes nothing", func(t *testing.T) {
		mark := kube.AuditMark(t)
		for _, res := range r.install(provision.Plan{}) {
			if res.Action != action.Unchanged {
				t.Errorf("%s, want unchanged", res)
			}
		}
		if w := kube.Writes(t, mark, byAdmin); len(w) > 0 {
			t.Errorf("second install wrote %d times: %+v", len(w), w)
		}
		for _, name := range releaseNames {
			if v := r.deployed(name).Version; v != 1 {
				t.Errorf("release %s at revision %d, want 1", name, v)
			}
		}
	})
	step("a values change upgrades in place", func(t *testing.T) {
		dep := objectRef{resources["Deployment"], "Deployment", r.ns, "tinyctl"}
		before := r.get(dep)
		got := actions(withoutCRDs(r.install(provision.Plan{ControllerValues: map[string]any{"workers": 8}})))
		want := []string{"Namespace/" + r.ns + " unchanged", "Release/collector unchanged", "Release/nats unchanged",
			"Release/tinyctl upgraded", "Secret/nats-auth unchanged"}
		if !slices.Equal(got, want) {
			t.Errorf("results = %v, want %v", got, want)
		}
		after := r.get(dep)
		if after.GetUID() != before.GetUID() {
			t.Error("the controller Deployment was replaced, want it updated in place")
		}
		if args := containerArgs(t, after); !slices.Contains(args, "--workers=8") {
			t.Errorf("controller args %v lack --workers=8", args)
		}
		if v := r.deployed("tinyctl").Version; v != 2 {
			t.Errorf("release tinyctl at revision %d, want 2", v)
		}
	})
	step("uninstall removes what install created and nothing else", func(t *testing.T) {
		checkUninstall(t, r, objects)
	})
}

func byAdmin(e testenv.AuditEvent) bool { return e.User.Username == "admin" }

func checkRuntimeNamespace(t *testing.T, r *runtime) {
	t.Helper()
	ns, err := kube.Clientset(t).CoreV1().Namespaces().Get(context.Background(), r.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		provision.LabelNamespaceRole:         provision.NamespaceRoleRuntime,
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	} {
		if ns.Labels[k] != v {
			t.Errorf("namespace label %s = %q, want %q", k, ns.Labels[k], v)
		}
	}
}

// checkBrokerWiring checks the token reaches the broker and the controller
// through secretKeyRefs, and BrokerURL carries it.
func checkBrokerWiring(t *testing.T, r *runtime) {
	t.Helper()
	url, err := r.p.BrokerURL(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "nats://tk") || !strings.HasSuffix(url, "@nats."+r.ns+".svc:4222") {
		t.Errorf("BrokerURL = %q, want nats://<token>@nats.%s.svc:4222", url, r.ns)
	}
	ctrl := r.get(objectRef{resources["Deployment"], "Deployment", r.ns, "tinyctl"})
	if args := containerArgs(t, ctrl); !slices.Contains(args, "--nats-url=nats://nats."+r.ns+".svc:4222") {
		t.Errorf("controller args %v lack the tokenless broker URL", args)
	}
	for _, o := range []objectRef{
		{resources["Deployment"], "Deployment", r.ns, "tinyctl"},
		{resources["StatefulSet"], "StatefulSet", r.ns, "nats"},
	} {
		env, _, _ := unstructured.NestedSlice(r.get(o).Object, "spec", "template", "spec", "containers")
		if !strings.Contains(toJSON(env), `"secretKeyRef":{"key":"token","name":"nats-auth"}`) {
			t.Errorf("%s does not read the token from Secret nats-auth: %s", o, toJSON(env))
		}
	}
}

// checkWarningsAreSeen proves the warning check means something: a chart
// with a privileged pod, installed the same way, draws PodSecurity
// warnings through the same client.
func checkWarningsAreSeen(t *testing.T, r *runtime) {
	t.Helper()
	srv := testenv.ChartRepo(t, privilegedChart)
	_, err := r.p.InstallRelease(context.Background(), provision.Release{
		Name: "privileged", Chart: provision.Chart{RepoURL: srv.URL, Name: "privileged"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.warnings.PodSecurity()) == 0 {
		t.Error("a privileged pod template drew no PodSecurity warning: the check above proves nothing")
	}
}

func checkUninstall(t *testing.T, r *runtime, objects []objectRef) {
	t.Helper()
	ctx := context.Background()
	cs := kube.Clientset(t)
	bystander := objectRef{resources["ConfigMap"], "ConfigMap", r.ns, "bystander"}
	createConfigMap(t, r.ns, bystander.name)
	res, err := r.p.Uninstall(ctx, provision.UninstallOptions{}, func(res provision.Result) { t.Log(res) })
	if err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	for _, o := range objects {
		if r.get(o) != nil {
			t.Errorf("%s still exists", o)
		}
	}
	records, err := cs.CoreV1().Secrets(r.ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil || len(records.Items) > 0 {
		t.Errorf("release records left: %d (%v)", len(records.Items), err)
	}
	if _, err := cs.CoreV1().Secrets(r.ns).Get(ctx, keyring.TokenSecret, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("token Secret: %v, want it gone", err)
	}
	if r.get(bystander) == nil {
		t.Error("uninstall deleted a ConfigMap it did not create")
	}
	last := res[len(res)-1]
	if last.Kind != "Namespace" || last.Action != action.Retained || !strings.Contains(last.Detail, "configmaps/bystander") {
		t.Errorf("namespace result = %s, want it kept for configmaps/bystander", last)
	}

	if err := cs.CoreV1().ConfigMaps(r.ns).Delete(ctx, bystander.name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err = r.p.Uninstall(ctx, provision.UninstallOptions{}, func(res provision.Result) { t.Log(res) })
	if err != nil {
		t.Fatalf("second uninstall: %v", err)
	}
	if got := actions(res); !slices.Contains(got, "Namespace/"+r.ns+" deleted") {
		t.Errorf("second uninstall = %v, want the emptied namespace removed", got)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, r.ns, metav1.GetOptions{})
	if err == nil && ns.DeletionTimestamp == nil {
		t.Error("namespace is not being deleted")
	}
	if err == nil { // no namespace controller here: it stays Terminating
		_, err := r.p.Install(ctx, provision.Plan{}, nil)
		if !errors.Is(err, provision.ErrNamespaceTerminating) {
			t.Errorf("install into a terminating namespace: %v, want ErrNamespaceTerminating", err)
		}
	}
}
