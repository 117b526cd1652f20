package apply

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the server-side apply field manager of every tinyctl
// write.
const FieldManager = "tinyctl"

// Manager writes, diffs, deletes and waits for Kubernetes objects: the one
// path by which tinyctl changes a cluster. It is safe for concurrent use.
type Manager struct {
	dyn    dynamic.Interface
	meta   metadata.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// mappings remembers the mapper's answers (schema.GroupVersionKind
	// to *meta.RESTMapping) until it is reset: the mapper works each
	// answer out again from its cached discovery, 25 KB of garbage per
	// write at 10,000 components.
	mappings sync.Map
	// hashAnnotation names the annotation that carries an object's
	// desired content hash; objects without it are always applied.
	hashAnnotation string
}

// New returns a Manager for the cluster cfg reaches. hashAnnotation names
// the annotation Apply compares to skip unchanged objects. It contacts no
// server; it fails only when cfg cannot build clients.
func New(cfg *rest.Config, hashAnnotation string) (*Manager, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	return &Manager{
		dyn:            dyn,
		meta:           mc,
		mapper:         restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		hashAnnotation: hashAnnotation,
	}, nil
}

// Resource returns the resource (plural) serving gvk, refreshing discovery
// once when the kind is unknown. It returns ErrKindNotInstalled when the
// kind is still unknown after the refresh. The result is shared: do not
// change it.
func (m *Manager) Resource(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if known, ok := m.mappings.Load(gvk); ok {
		return known.(*meta.RESTMapping), nil
	}
	mapping, err := m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if isNoMatch(err) {
		m.mapper.Reset()
		m.mappings.Clear()
		mapping, err = m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if isNoMatch(err) {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, ErrKindNotInstalled)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: rest mapping: %w", gvk.Kind, err)
	}
	m.mappings.Store(gvk, mapping)
	return mapping, nil
}

func (m *Manager) client(mapping *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return m.dyn.Resource(mapping.Resource).Namespace(ns)
	}
	return m.dyn.Resource(mapping.Resource)
}

func (m *Manager) metaClient(mapping *meta.RESTMapping, ns string) metadata.ResourceInterface {
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return m.meta.Resource(mapping.Resource).Namespace(ns)
	}
	return m.meta.Resource(mapping.Resource)
}
