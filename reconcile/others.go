package reconcile

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tinyctl/tinyctl/render"
)

// The children informers hold only the objects that carry tinyctl's
// label, so their caches cannot say that a new component's Deployment
// does not exist: someone else's object of that name would not be in
// them. A second metadata informer per kind and scope therefore watches
// every other object (label managed-by not tinyctl, which matches objects
// without the label too) and keeps only their names. An object in
// neither cache does not exist, as of the last event either informer
// received: get answers that without a read, and apply creates it
// without force, so that one someone else has created since, setting a
// field tinyctl sets to another value, comes back as a conflict and is
// read and judged. An object in the others' cache is left to apply to
// read, and refused unless it is this component's.

// other is what the others' cache keeps of an object: where it is.
type other struct{ namespace, name, resourceVersion string }

// GetObjectMeta lets the informer's store read the object's key.
func (o *other) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: o.name, Namespace: o.namespace, ResourceVersion: o.resourceVersion}
}

// trimOther is the others' informers' transform.
func trimOther(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &other{namespace: interned(m.Namespace), name: m.Name, resourceVersion: m.ResourceVersion}, nil
}

// newOthersInformer watches the objects of kind k in scope ns that do
// not carry tinyctl's label. It wakes nothing: the loop reads it only to
// know that a name is taken.
func (c *children) newOthersInformer(k childKind, ns string) cache.SharedIndexInformer {
	return c.metadataInformer(k, ns, render.LabelManagedBy+"!="+render.ManagedByValue, cache.Indexers{}, trimOther)
}

// untaken reports whether the others' cache of key's kind and scope runs
// and holds nothing at namespace/name. The caller holds c.mu.
func (c *children) untaken(key informerKey, namespace, name string) bool {
	inf, ok := c.others[key]
	if !ok {
		return false
	}
	_, exists, err := inf.GetIndexer().GetByKey(namespace + "/" + name)
	return err == nil && !exists
}
