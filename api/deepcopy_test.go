package api_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
)

func TestDeepCopySharesNothing(t *testing.T) {
	orig := fullComponent()
	orig.Spec.Command = []string{"/worker"}
	orig.Spec.Args = []string{"--x"}
	orig.Spec.Scaling, orig.Spec.Replicas = nil, ptr.To(int32(2))
	orig.Spec.Egress.Allow[0].PodLabels = map[string]string{"a": "b"}
	orig.Spec.Placement.ClusterSelector.MatchExpressions = []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold"}}}
	snapshot := orig.DeepCopy()

	cp := orig.DeepCopy()
	cp.Metadata.Labels["team"] = "x"
	cp.Metadata.Annotations["example.com/owner"] = "x"
	cp.Spec.Command[0], cp.Spec.Args[0] = "x", "x"
	cp.Spec.Env[0].Name = "X"
	cp.Spec.Env[2].ValueFrom.SecretKeyRef.Key = "x"
	cp.Spec.EnvFrom[0].ConfigMapRef.Name = "x"
	cp.Spec.Volumes[0].Secret.Name, cp.Spec.Volumes[0].Items[0].Path = "x", "x"
	cp.Spec.ImagePullSecrets[0].Name = "x"
	cp.Spec.NodeSelector["disk"] = "x"
	*cp.Spec.Tolerations[0].TolerationSeconds = 9
	*cp.Spec.TerminationGracePeriodSeconds = 9
	cp.Spec.Resources.Requests["cpu"] = "9"
	cp.Spec.Resources.Limits["memory"] = "9Gi"
	cp.Spec.Jobs.Subjects[0] = "x"
	cp.Spec.Jobs.Consumer.Backoff[0] = "9s"
	*cp.Spec.Replicas = 9
	r := &cp.Spec.Egress.Allow[0]
	r.Except[0], r.PodLabels["a"], r.Ports[0].Port = "x", "x", 9
	cp.Spec.Placement.Clusters[0] = "x"
	cp.Spec.Placement.ClusterSelector.MatchLabels["env"] = "x"
	cp.Spec.Placement.ClusterSelector.MatchExpressions[0].Values[0] = "x"
	o := &cp.Spec.Overrides[0]
	o.Clusters[0], o.ClusterSelector.MatchLabels["region"] = "x", "x"
	*o.Replicas, *o.MinReplicas, *o.MaxReplicas = 9, 9, 9
	o.Env[0].Value, o.Resources.Requests["cpu"], o.Resources.Limits["memory"] = "x", "9", "9Gi"
	cp.Spec.Overrides[1].Image = "x"
	o.NodeSelector["disk"] = "x"
	*o.Tolerations[0].TolerationSeconds = 9

	if diff := cmp.Diff(snapshot, orig); diff != "" {
		t.Errorf("changing the copy changed the original (-before +after):\n%s", diff)
	}
}

func TestDeepCopyOfScalingAndNils(t *testing.T) {
	orig := fullComponent()
	cp := orig.DeepCopy()
	cp.Spec.Scaling.MaxReplicas = 99
	if orig.Spec.Scaling.MaxReplicas == 99 {
		t.Error("the copy shares Scaling")
	}
	var empty api.Component
	if diff := cmp.Diff(empty, empty.DeepCopy()); diff != "" {
		t.Errorf("copy of the zero component differs:\n%s", diff)
	}
}

// fullComponent sets every map, slice and pointer of a Component.
func fullComponent() api.Component {
	return api.Component{
		APIVersion: api.APIVersion,
		Kind:       api.Kind,
		Metadata: api.Metadata{
			Name: "extractor", Namespace: "workers",
			Labels:      map[string]string{"team": "docs"},
			Annotations: map[string]string{"example.com/owner": "docs"},
		},
		Spec: api.Spec{
			Image:   "registry.example.com/acme/extractor:1.4.2",
			Command: []string{"/worker"},
			Args:    []string{"--mode=pdf"},
			Env: []api.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "MODE", Value: "pdf"},
				{Name: "DB_PASSWORD", ValueFrom: &api.EnvSource{SecretKeyRef: &api.KeyRef{Name: "db", Key: "password"}}}},
			EnvFrom: []api.EnvFromSource{{ConfigMapRef: &api.ObjectRef{Name: "settings"}}},
			Volumes: []api.Volume{{Name: "tls", MountPath: "/etc/tls", Secret: &api.ObjectRef{Name: "db-tls"},
				Items: []api.KeyToPath{{Key: "ca.crt", Path: "ca.pem"}}}},
			ImagePullSecrets:              []api.LocalObjectReference{{Name: "registry"}},
			NodeSelector:                  map[string]string{"disk": "ssd"},
			Tolerations:                   []api.Toleration{{Key: "dedicated", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To(int64(60))}},
			TerminationGracePeriodSeconds: ptr.To(int64(60)),
			Resources: &api.Resources{
				Requests: map[string]string{"cpu": "100m", "memory": "128Mi"},
				Limits:   map[string]string{"memory": "256Mi"},
			},
			Jobs: api.Jobs{
				Subjects: []string{"jobs.extract.>", "jobs.ocr.*"},
				Consumer: api.ConsumerSpec{Backoff: []api.Duration{"30s", "1m"}},
			},
			Scaling:   &api.Scaling{MinReplicas: 0, MaxReplicas: 20},
			Egress:    api.Egress{Mode: api.EgressAllow, Allow: []api.EgressRule{{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}, Ports: []api.Port{{Port: 443}}}}},
			Placement: &api.Placement{Clusters: []string{"east", "west"}, ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
			Overrides: []api.Override{{
				Clusters:        []string{"east"},
				ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}},
				Replicas:        ptr.To(int32(1)),
				MinReplicas:     ptr.To(int32(1)),
				MaxReplicas:     ptr.To(int32(5)),
				Env:             []api.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}},
				NodeSelector:    map[string]string{"disk": "nvme"},
				Tolerations:     []api.Toleration{{Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To(int64(30))}},
				Resources: &api.Resources{
					Requests: map[string]string{"cpu": "200m"},
					Limits:   map[string]string{"memory": "512Mi"},
				},
			}, {Clusters: []string{"west"}, Image: "registry.example.com/acme/extractor:1.4.3"}},
		},
	}
}

// TestDeepCopyCopiesEveryReference walks a component whose every map,
// slice and pointer field is set somewhere (the walk fails on a field it
// never finds set, so a field added to the model must be set here too)
// beside its copy, and fails wherever the copy shares memory with the
// original: a field DeepCopy does not copy. It needs no list of fields
// kept by hand.
func TestDeepCopyCopiesEveryReference(t *testing.T) {
	orig := fullComponent()
	orig.Spec.Replicas = ptr.To(int32(2))
	orig.Spec.Jobs.Publish = []string{"jobs.done.>"}
	orig.Spec.Egress.Allow[0].PodLabels = map[string]string{"a": "b"}
	orig.Spec.Placement.ClusterSelector.MatchExpressions = []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold"}}}
	orig.Spec.Overrides[0].Suspend = ptr.To(true)
	orig.Spec.Env = append(orig.Spec.Env, api.EnvVar{Name: "REGION", ValueFrom: &api.EnvSource{ConfigMapKeyRef: &api.KeyRef{Name: "site", Key: "region"}}})
	orig.Spec.EnvFrom = append(orig.Spec.EnvFrom, api.EnvFromSource{SecretRef: &api.ObjectRef{Name: "tokens"}})
	orig.Spec.Volumes = append(orig.Spec.Volumes, api.Volume{Name: "cfg", MountPath: "/etc/cfg", ConfigMap: &api.ObjectRef{Name: "cfg"}})
	orig.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 50, PodAffinityTerm: corev1.PodAffinityTerm{
			TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}}}}
	orig.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
		WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}
	orig.Spec.Probes = &api.Probes{Liveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/alive"}}}},
		Readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/ready"}}}}}
	w := &refWalk{t: t, set: map[string]bool{}}
	w.walk("Component", reflect.ValueOf(orig), reflect.ValueOf(orig.DeepCopy()))
	for field, set := range w.set {
		if !set {
			t.Errorf("%s is never set in the fixture: set it, so that its copy is checked", field)
		}
	}
	if w.checked < 40 {
		t.Errorf("the walk checked %d references: it proves little", w.checked)
	}
}

// refWalk compares the references of a value and its copy.
type refWalk struct {
	t       *testing.T
	set     map[string]bool // struct field of a reference kind -> found set
	checked int
}

func (w *refWalk) walk(path string, a, b reflect.Value) {
	switch a.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if a.IsNil() || (a.Kind() != reflect.Pointer && a.Len() == 0) {
			return
		}
		w.checked++
		if a.Pointer() == b.Pointer() {
			w.t.Errorf("%s: the copy shares it with the original", path)
		}
	}
	switch a.Kind() {
	case reflect.Pointer:
		w.walk(path, a.Elem(), b.Elem())
	case reflect.Slice:
		for i := range a.Len() {
			w.walk(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i))
		}
	case reflect.Map:
		for _, k := range a.MapKeys() {
			w.walk(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), b.MapIndex(k))
		}
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() || f.Type.PkgPath() == "time" {
				continue
			}
			fa := a.Field(i)
			switch fa.Kind() {
			case reflect.Pointer, reflect.Map, reflect.Slice:
				// The model's own fields must all be set; Kubernetes' types
				// within it (affinity, selectors) are walked for sharing
				// only.
				if a.Type().PkgPath() == reflect.TypeFor[api.Component]().PkgPath() {
					id := a.Type().String() + "." + f.Name
					w.set[id] = w.set[id] || !fa.IsNil()
				}
			}
			w.walk(path+"."+f.Name, fa, b.Field(i))
		}
	}
}
