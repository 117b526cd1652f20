package workload

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tinyctl/tinyctl/render"
)

// TestTheCacheKeepsWhatAssessReads trims Deployments as the informer does
// and checks what the cache then serves: the informer's key, the
// component index, the judgement Assess gives of the whole Deployment,
// and a notification only when something Assess reads changed.
func TestTheCacheKeepsWhatAssessReads(t *testing.T) {
	two := int32(2)
	full := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "resize", Namespace: "media", Generation: 3, ResourceVersion: "41",
			Labels:      map[string]string{render.LabelComponent: "media.resize", render.LabelName: "resize", "team": "video"},
			Annotations: map[string]string{render.AnnotationContentHash: "h1", "deployment.kubernetes.io/revision": "3"}},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "worker", Image: "registry.example.com/resize:1"}}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "took too long"},
			}},
	}
	obj, err := trimDeployment(nil)(full)
	if err != nil {
		t.Fatal(err)
	}
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err != nil || key != "media/resize" {
		t.Errorf("informer key of the trimmed Deployment: %q, %v; want media/resize", key, err)
	}
	if got, _ := byComponent(obj); len(got) != 1 || got[0] != componentBucket("media.resize") {
		t.Errorf("component index of the trimmed Deployment: %q, want [%s], the bucket of media.resize", got, componentBucket("media.resize"))
	}
	if c, name := componentLabels(obj); c != "media.resize" || name != "resize" {
		t.Errorf("component labels: %q, %q; want media.resize, resize", c, name)
	}
	d := obj.(*cachedDeployment)
	if got, want := Assess(d.deployment(), nil), Assess(full, nil); got != want {
		t.Errorf("Assess of the cached Deployment: %+v, want what the whole one gives: %+v", got, want)
	}
	if got := Assess((*cachedDeployment)(nil).deployment(), nil); got.Reason != "Progressing" {
		t.Errorf("Assess of no cached Deployment: %+v, want Progressing", got)
	}

	for _, tt := range []struct {
		name   string
		change func(*appsv1.Deployment)
		same   bool
	}{
		{"a new resource version only", func(d *appsv1.Deployment) { d.ResourceVersion = "42" }, true},
		{"a foreign label and annotation", func(d *appsv1.Deployment) {
			d.Labels["team"], d.Annotations["kubectl.kubernetes.io/restartedAt"] = "audio", "now"
		}, true},
		{"the Available condition only", func(d *appsv1.Deployment) { d.Status.Conditions[0].Status = corev1.ConditionTrue }, true},
		{"a replica available", func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 2 }, false},
		{"a new content hash", func(d *appsv1.Deployment) { d.Annotations[render.AnnotationContentHash] = "h2" }, false},
		{"scaled", func(d *appsv1.Deployment) { one := int32(1); d.Spec.Replicas = &one }, false},
		{"a new generation", func(d *appsv1.Deployment) { d.Generation = 4 }, false},
	} {
		changed := full.DeepCopy()
		tt.change(changed)
		cur, _ := trimDeployment(nil)(changed)
		if got := sameHealthInputs(obj, cur); got != tt.same {
			t.Errorf("%s: same health inputs = %v, want %v", tt.name, got, tt.same)
		}
	}
}

// TestTheCacheKeepsTheMetadataAskedFor: with a KeepMetadata function the
// cached Deployment carries what it returned, for the other reader of the
// cache (Kept), beside what Assess reads; without one, nothing.
func TestTheCacheKeepsTheMetadataAskedFor(t *testing.T) {
	full := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "resize", Namespace: "media", ResourceVersion: "7",
		Labels:      map[string]string{render.LabelComponent: "media.resize", render.LabelName: "resize", "team": "video"},
		Annotations: map[string]string{render.AnnotationContentHash: "h1"}}}
	keepTeam := func(m metav1.ObjectMeta) any { return m.Labels["team"] }
	obj, _ := trimDeployment(keepTeam)(full)
	if kept, ok := Kept(obj); !ok || kept != "video" {
		t.Errorf("Kept of a Deployment cached with KeepMetadata: %v, %v; want video", kept, ok)
	}
	if m, err := meta.Accessor(obj); err != nil || m.GetName() != "resize" || m.GetNamespace() != "media" || m.GetResourceVersion() != "7" || m.GetLabels() != nil {
		t.Errorf("the cache key's metadata: %+v, %v; want the name, namespace and version, no labels", m, err)
	}
	if c, _ := componentLabels(obj); c != "media.resize" {
		t.Errorf("component label beside the kept metadata: %q, want media.resize", c)
	}
	bare, _ := trimDeployment(nil)(full)
	if kept, ok := Kept(bare); ok {
		t.Errorf("Kept of a Deployment cached without KeepMetadata: %v, ok; want nothing", kept)
	}
	if _, ok := Kept(&corev1.Pod{}); ok {
		t.Error("Kept of a pod: ok, want false (only the Deployment cache's objects)")
	}
}
