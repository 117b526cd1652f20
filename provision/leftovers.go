package provision

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// maxLeftoversShown bounds the objects named in a kept namespace's detail.
const maxLeftoversShown = 3

// ignoredInEmptyNamespace are objects Kubernetes itself puts in every
// namespace, by resource and name.
var ignoredInEmptyNamespace = map[string]string{
	"configmaps":      "kube-root-ca.crt",
	"serviceaccounts": "default",
}

// ignoredResources are never counted: they record or mirror other objects.
var ignoredResources = map[schema.GroupResource]bool{
	{Resource: "events"}:                         true,
	{Group: "events.k8s.io", Resource: "events"}: true,
	{Resource: "endpoints"}:                      true,
}

// leftovers lists (up to a few, as "Kind/name, ...") the objects in
// namespace ns that nobody owns and that are not being deleted, found
// through discovery over every listable namespaced kind. Objects with an
// owner are garbage collected with it, and the ones Kubernetes creates in
// every namespace do not count. It returns "" for an empty namespace.
func (p *Provisioner) leftovers(ctx context.Context, ns string) (string, error) {
	lists, err := p.kube.Discovery().ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return "", fmt.Errorf("discover kinds: %w", err)
	}
	var found []string
	for _, gvr := range listable(lists) {
		names, err := p.unownedNames(ctx, gvr, ns)
		if err != nil {
			return "", err
		}
		found = append(found, names...)
		if len(found) >= maxLeftoversShown {
			break
		}
	}
	if len(found) > maxLeftoversShown {
		found = found[:maxLeftoversShown]
	}
	return strings.Join(found, ", "), nil
}

func listable(lists []*metav1.APIResourceList) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, l := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists) {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			gvr := gv.WithResource(r.Name)
			if !ignoredResources[gvr.GroupResource()] && !strings.Contains(r.Name, "/") {
				out = append(out, gvr)
			}
		}
	}
	return out
}

// unownedNames lists the objects of gvr in ns that count as someone
// else's, as "resource/name".
func (p *Provisioner) unownedNames(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]string, error) {
	list, err := p.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 50})
	if apierrors.IsNotFound(err) {
		return nil, nil // a kind removed since discovery (a CRD just deleted)
	}
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", gvr.Resource, ns, err)
	}
	var out []string
	for i := range list.Items {
		obj, err := meta.Accessor(&list.Items[i])
		if err != nil || len(obj.GetOwnerReferences()) > 0 || obj.GetDeletionTimestamp() != nil {
			continue
		}
		if ignoredInEmptyNamespace[gvr.Resource] == obj.GetName() {
			continue
		}
		out = append(out, gvr.Resource+"/"+obj.GetName())
	}
	return out, nil
}
