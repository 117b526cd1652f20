package provision_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
)

var kube *testenv.Kube

func TestMain(m *testing.M) { testenv.RunWithKube(m, &kube) }

// runtime is one Provisioner on a fresh runtime namespace, whose API
// warnings are collected.
type runtime struct {
	t        *testing.T
	p        *provision.Provisioner
	ns       string
	warnings *testenv.Warnings
	dyn      dynamic.Interface
}

// newRuntime returns a Provisioner for a runtime namespace that does not
// exist yet (opts.Namespace, when set, names an existing one). The runtime
// is uninstalled when the test ends.
func newRuntime(t *testing.T, opts provision.Options) *runtime {
	t.Helper()
	r := &runtime{t: t, ns: opts.Namespace, warnings: &testenv.Warnings{}}
	if r.ns == "" {
		r.ns = "rt-" + strings.ToLower(rand.Text()[:8])
	}
	cfg := rest.CopyConfig(kube.Config)
	cfg.WarningHandler = r.warnings
	opts.Namespace = r.ns
	if opts.CacheDir == "" {
		opts.CacheDir = t.TempDir()
	}
	var err error
	if r.p, err = provision.New(cfg, opts); err != nil {
		t.Fatal(err)
	}
	r.dyn, _ = kube.Dynamic(t)
	t.Cleanup(func() {
		if _, err := r.p.Uninstall(context.Background(), provision.UninstallOptions{}, nil); err != nil {
			t.Logf("cleanup: uninstall %s: %v", r.ns, err)
		}
	})
	return r
}

// install runs a full Install and fails the test on error.
func (r *runtime) install(plan provision.Plan) []provision.Result {
	r.t.Helper()
	res, err := r.p.Install(context.Background(), plan, func(res provision.Result) { r.t.Log(res) })
	if err != nil {
		r.t.Fatalf("install: %v", err)
	}
	return res
}

// storage reads release records the way the helm command does: Helm's
// Secrets driver in the release namespace.
func (r *runtime) storage() *storage.Storage {
	r.t.Helper()
	return storage.Init(driver.NewSecrets(kube.Clientset(r.t).CoreV1().Secrets(r.ns)))
}

// deployed returns the deployed revision of release name.
func (r *runtime) deployed(name string) *release.Release {
	r.t.Helper()
	rel, err := r.storage().Deployed(name)
	if err != nil {
		r.t.Fatalf("release %s: %v", name, err)
	}
	return rel
}

// objectRef identifies one object of a release manifest.
type objectRef struct {
	gvr       schema.GroupVersionResource
	kind      string
	namespace string
	name      string
}

func (o objectRef) String() string { return o.kind + "/" + o.namespace + "/" + o.name }

var resources = map[string]schema.GroupVersionResource{
	"ConfigMap":                 {Version: "v1", Resource: "configmaps"},
	"Secret":                    {Version: "v1", Resource: "secrets"},
	"Service":                   {Version: "v1", Resource: "services"},
	"ServiceAccount":            {Version: "v1", Resource: "serviceaccounts"},
	"Deployment":                {Group: "apps", Version: "v1", Resource: "deployments"},
	"StatefulSet":               {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"ClusterRole":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":                      {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"PodDisruptionBudget":       {Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	"NetworkPolicy":             {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
	"ValidatingAdmissionPolicy": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
	"ValidatingAdmissionPolicyBinding": {Group: "admissionregistration.k8s.io", Version: "v1",
		Resource: "validatingadmissionpolicybindings"},
}

var clusterScoped = []string{"ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

// objects lists the objects of a release's manifest.
func (r *runtime) objects(rel *release.Release) []objectRef {
	r.t.Helper()
	var out []objectRef
	for _, doc := range strings.Split(rel.Manifest, "\n---") {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			r.t.Fatalf("manifest of %s: %v", rel.Name, err)
		}
		if obj.Object == nil {
			continue
		}
		gvr, ok := resources[obj.GetKind()]
		if !ok {
			r.t.Fatalf("manifest of %s: unexpected kind %s", rel.Name, obj.GetKind())
		}
		ns := obj.GetNamespace()
		if slices.Contains(clusterScoped, obj.GetKind()) {
			ns = ""
		}
		out = append(out, objectRef{gvr, obj.GetKind(), ns, obj.GetName()})
	}
	return out
}

// get returns the live object, or nil when it does not exist.
func (r *runtime) get(o objectRef) *unstructured.Unstructured {
	r.t.Helper()
	var ri dynamic.ResourceInterface = r.dyn.Resource(o.gvr)
	if o.namespace != "" {
		ri = r.dyn.Resource(o.gvr).Namespace(o.namespace)
	}
	obj, err := ri.Get(context.Background(), o.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		r.t.Fatalf("get %s: %v", o, err)
	}
	return obj
}

// kinds returns the sorted kinds of refs.
func kinds(refs []objectRef) []string {
	out := make([]string, len(refs))
	for i, o := range refs {
		out[i] = o.kind
	}
	slices.Sort(out)
	return out
}

// actions summarises results as "Kind/name action" lines, sorted.
func actions(rs []provision.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s/%s %s", r.Kind, r.Name, r.Action)
	}
	slices.Sort(out)
	return out
}
