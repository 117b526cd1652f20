package reconcile

import (
	"hash/maphash"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/render"
	"github.com/tinyctl/tinyctl/workload"
)

// cachedChild is what the children cache keeps of a child: its name,
// namespace, UID, resourceVersion and generation; of its managedFields
// each manager's name and subresource and the field sets of managers
// other than tinyctl (apply's up-to-date check intersects them with the
// fields tinyctl sets); the two labels and two annotations the loop and
// apply read; and a digest of all its labels and of all its annotations,
// which tell a change by someone else. At 10,000 components the cache
// holds 30,000 children, so each byte counts 30,000 times: a label or
// annotation map costs about 200 bytes even with one entry (the maps took
// 12.5 MB of a 64 MB heap), and an embedded ObjectMeta 230 bytes.
type cachedChild struct {
	name, namespace, resourceVersion string
	uid                              types.UID
	generation                       int64
	managers                         []keptManager
	// componentName and component are its render.LabelName and
	// render.LabelComponent labels; hash and fence its
	// render.AnnotationContentHash and apply.AnnotationFence annotations.
	componentName, component, hash, fence string
	// labels and annotations digest every label and every annotation
	// but deploymentRevision (see changedByAnyone).
	labels, annotations uint64
}

// keptManager is a managedFields entry as the cache keeps it.
type keptManager struct {
	manager, subresource string
	// fields is the manager's field set; nil for tinyctl's own.
	fields *metav1.FieldsV1
}

// GetObjectMeta lets the informer's store and indexes read the child's
// name, namespace and resourceVersion (meta.Accessor).
func (c *cachedChild) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: c.name, Namespace: c.namespace, UID: c.uid, ResourceVersion: c.resourceVersion,
		Generation: c.generation}
}

// trimChild is the children informers' transform: a child's metadata
// becomes a cachedChild.
func trimChild(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return keptChild(m.ObjectMeta), nil
}

// keptChild is what the cache keeps of a child's metadata m; the workload
// watcher's Deployment cache keeps the same (workload.Watcher.KeepMetadata).
// The strings every child repeats (namespace, managers) are shared;
// tinyctl's own field set, which outweighs the rest of a child's
// metadata, and the status subresource's entries are dropped.
func keptChild(m metav1.ObjectMeta) any {
	out := &cachedChild{name: m.Name, namespace: interned(m.Namespace), uid: m.UID, resourceVersion: m.ResourceVersion,
		generation:    m.Generation,
		componentName: m.Labels[render.LabelName], component: m.Labels[render.LabelComponent],
		hash: m.Annotations[render.AnnotationContentHash], fence: interned(m.Annotations[apply.AnnotationFence]),
		labels: mapDigest(m.Labels, ""), annotations: mapDigest(m.Annotations, deploymentRevision)}
	for _, mf := range m.ManagedFields {
		if mf.Subresource == "status" {
			continue
		}
		e := keptManager{manager: interned(mf.Manager), subresource: interned(mf.Subresource)}
		if mf.Manager != apply.FieldManager {
			e.fields = mf.FieldsV1
		}
		out.managers = append(out.managers, e)
	}
	return out
}

// asChild returns a cached child: a children informer's object, or what
// the workload watcher's Deployment cache kept of one.
func asChild(obj any) (*cachedChild, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if c, ok := obj.(*cachedChild); ok {
		return c, true
	}
	kept, ok := workload.Kept(obj)
	if !ok {
		return nil, false
	}
	c, ok := kept.(*cachedChild)
	return c, ok
}

// live returns the child's metadata as apply reads it: with the labels
// and annotations kept. It is a new object each time.
func (c *cachedChild) live() *metav1.PartialObjectMetadata {
	out := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: c.namespace, UID: c.uid,
		ResourceVersion: c.resourceVersion, Generation: c.generation}}
	out.Labels = present(nil, render.LabelName, c.componentName)
	out.Labels = present(out.Labels, render.LabelComponent, c.component)
	out.Annotations = present(nil, render.AnnotationContentHash, c.hash)
	out.Annotations = present(out.Annotations, apply.AnnotationFence, c.fence)
	if len(c.managers) > 0 {
		out.ManagedFields = make([]metav1.ManagedFieldsEntry, len(c.managers))
		for i, e := range c.managers {
			out.ManagedFields[i] = metav1.ManagedFieldsEntry{Manager: e.manager, Subresource: e.subresource, FieldsV1: e.fields}
			if e.fields != nil {
				out.ManagedFields[i].FieldsType = "FieldsV1"
			}
		}
	}
	return out
}

// present adds k=v to m (made when nil) when v is not empty.
func present(m map[string]string, k, v string) map[string]string {
	if v == "" {
		return m
	}
	if m == nil {
		m = make(map[string]string, 2)
	}
	m[k] = v
	return m
}

// key returns the spec-bucket key of the component that owns the child.
func (c *cachedChild) key() (string, bool) {
	if c.componentName == "" {
		return "", false
	}
	return api.Key(c.namespace, c.componentName), true
}

// digestSeed seeds the digests: they are compared within one process
// only.
var digestSeed = maphash.MakeSeed()

// mapDigest returns a digest of m's entries but the key skip, the same in
// any order: the sum of a hash of each entry.
func mapDigest(m map[string]string, skip string) uint64 {
	var sum, n uint64
	var h maphash.Hash
	h.SetSeed(digestSeed)
	for k, v := range m {
		if k == skip {
			continue
		}
		h.Reset()
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
		n++
	}
	return sum + n
}

// interned returns s's canonical copy.
func interned(s string) string { return unique.Make(s).Value() }
