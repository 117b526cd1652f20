package workload

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/render"
)

// cachedDeployment is what the Deployment informer keeps of a Deployment:
// what Assess reads and what the cache is looked up by. An
// appsv1.Deployment, even emptied, takes 1.2 KB (its pod template's
// fields), label and annotation maps 600 bytes more, and an ObjectMeta
// 230 bytes: at 10,000 components 18 MB of a 93 MB heap, against about
// 3 MB for these. Its identity is what the informer keys it by
// (GetObjectMeta); kept is what the Watcher's KeepMetadata function made
// of the full metadata, for the other reader of the same cache (Kept).
type cachedDeployment struct {
	name, namespace, resourceVersion string
	uid                              types.UID
	generation                       int64
	// component and componentName are its render.LabelComponent and
	// render.LabelName labels, hash its render.AnnotationContentHash.
	component, componentName, hash string
	replicas                       *int32
	status                         appsv1.DeploymentStatus
	kept                           any
}

// Kept returns what the Watcher's KeepMetadata function kept of a
// Deployment cache object's metadata, for the other reader of the same
// informer (Watcher.Deployments); false for any other object, or when
// nothing was kept. The result belongs to the cache: do not change it.
func Kept(obj any) (any, bool) {
	d, ok := obj.(*cachedDeployment)
	if !ok || d.kept == nil {
		return nil, false
	}
	return d.kept, true
}

// GetObjectMeta lets the informer's store and indexes read the
// Deployment's name, namespace and resourceVersion (meta.Accessor).
func (d *cachedDeployment) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: d.name, Namespace: d.namespace, UID: d.uid, ResourceVersion: d.resourceVersion,
		Generation: d.generation}
}

// trimDeployment returns the informer transform that keeps what Assess
// reads of a Deployment, and of its metadata what keep returns (when not
// nil), so that 10,000 of them cost little memory and an update that
// changes none of it notifies nobody.
func trimDeployment(keep func(metav1.ObjectMeta) any) cache.TransformFunc {
	return func(obj any) (any, error) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return obj, nil
		}
		out := &cachedDeployment{name: d.Name, namespace: d.Namespace, uid: d.UID, resourceVersion: d.ResourceVersion,
			generation: d.Generation,
			component:  d.Labels[render.LabelComponent], componentName: d.Labels[render.LabelName],
			hash: d.Annotations[render.AnnotationContentHash], replicas: d.Spec.Replicas}
		out.status = trimStatus(d.Status)
		if keep != nil {
			out.kept = keep(d.ObjectMeta)
		}
		return out, nil
	}
}

// trimStatus keeps of a Deployment's status the counts and the
// conditions Assess reads.
func trimStatus(s appsv1.DeploymentStatus) appsv1.DeploymentStatus {
	out := appsv1.DeploymentStatus{ObservedGeneration: s.ObservedGeneration, Replicas: s.Replicas,
		UpdatedReplicas: s.UpdatedReplicas, AvailableReplicas: s.AvailableReplicas}
	for _, c := range s.Conditions {
		switch {
		case c.Type == appsv1.DeploymentReplicaFailure,
			c.Type == appsv1.DeploymentProgressing && c.Reason == reasons.ProgressDeadlineExceeded:
			out.Conditions = append(out.Conditions,
				appsv1.DeploymentCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return out
}

// deployment is the Deployment Assess judges (nil when d is), built again
// from what the cache kept.
func (d *cachedDeployment) deployment() *appsv1.Deployment {
	if d == nil {
		return nil
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: d.namespace, Generation: d.generation},
		Spec: appsv1.DeploymentSpec{Replicas: d.replicas}, Status: d.status}
}

// namespaceOf returns the namespace of a cached object.
func namespaceOf(obj any) string {
	switch o := obj.(type) {
	case *cachedDeployment:
		return o.namespace
	case metav1.Object:
		return o.GetNamespace()
	}
	return ""
}

// componentLabels returns the component and name labels of a cached
// object: a trimmed Deployment keeps them as fields, a pod as labels.
func componentLabels(obj any) (component, name string) {
	switch o := obj.(type) {
	case *cachedDeployment:
		return o.component, o.componentName
	case metav1.Object:
		return o.GetLabels()[render.LabelComponent], o.GetLabels()[render.LabelName]
	}
	return "", ""
}
