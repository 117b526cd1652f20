package serve

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeConfig loads the API server config by client-go's conventions: an
// explicit kubeconfig path, else in-cluster, else $KUBECONFIG or
// ~/.kube/config. The user agent names the holder so that audit logs tell
// controller processes apart.
func kubeConfig(path, context, holder string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if path == "" {
		cfg, err = rest.InClusterConfig()
	}
	if path != "" || err != nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.ExplicitPath = path
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
			&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	}
	if clientcmd.IsEmptyConfig(err) {
		return nil, fmt.Errorf("no Kubernetes cluster configured: not running in a pod, and no --kubeconfig, KUBECONFIG or ~/.kube/config")
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes config: %w", err)
	}
	cfg.UserAgent = "tinyctl-serve/" + holder
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}
