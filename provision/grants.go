package provision

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/deploy"
)

// withGrants completes the values of a controller that manages every
// namespace (values namespaces: []): the chart binds its write rights
// with a RoleBinding in each namespace of grantNamespaces, so install
// lists the namespaces that exist and leaves out denyNamespaces and the
// runtime's own. A namespace made later is not granted until install runs
// again; its components wait (reason PermissionDenied) meanwhile. With
// createNamespaces the chart binds cluster-wide instead (the controller
// must act in namespaces that do not exist yet), and values are returned
// as they are, as they are for a namespaced controller.
func (p *Provisioner) withGrants(ctx context.Context, values map[string]any) (map[string]any, error) {
	chart, err := chartDefaults(ChartController)
	if err != nil {
		return nil, err
	}
	all := mergeValues(chart, values)
	if list, _ := all["namespaces"].([]any); len(list) > 0 {
		return values, nil
	}
	if create, _ := all["createNamespaces"].(bool); create {
		return values, nil
	}
	denied := []string{p.opts.Namespace}
	deny, _ := all["denyNamespaces"].([]any)
	for _, d := range deny {
		if s, ok := d.(string); ok {
			denied = append(denied, s)
		}
	}
	nss, err := p.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list namespaces to grant the controller: %w", err)
	}
	var grant []any
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp == nil && !slices.Contains(denied, ns.Name) {
			grant = append(grant, ns.Name)
		}
	}
	return mergeValues(values, map[string]any{"grantNamespaces": grant}), nil
}

// chartDefaults reads the values.yaml of embedded chart name.
func chartDefaults(name string) (map[string]any, error) {
	b, err := deploy.Charts.ReadFile("charts/" + name + "/values.yaml")
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("chart %s values: %w", name, err)
	}
	return v, nil
}
