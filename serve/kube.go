package serve

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultKubeQPS leaves the controller's Kubernetes client without a
// client-side rate limiter: the API server's Priority and Fairness queues
// and, when it must, refuses (429 with Retry-After, which client-go obeys)
// what exceeds the controller's share, and the reconcile workers already
// bound how many requests are in flight. See docs/operations.md.
const DefaultKubeQPS = -1

// kubeConfig loads the API server config by client-go's conventions: an
// explicit kubeconfig path, else in-cluster, else $KUBECONFIG or
// ~/.kube/config. The user agent names the holder so that audit logs tell
// controller processes apart; the client-side rate limit is cfg's.
func kubeConfig(cfg Config) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if cfg.Kubeconfig == "" {
		rc, err = rest.InClusterConfig()
	}
	if cfg.Kubeconfig != "" || err != nil {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		rules.ExplicitPath = cfg.Kubeconfig
		rc, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
			&clientcmd.ConfigOverrides{CurrentContext: cfg.KubeContext}).ClientConfig()
	}
	if clientcmd.IsEmptyConfig(err) {
		return nil, fmt.Errorf("no Kubernetes cluster configured: not running in a pod, and no --kubeconfig, KUBECONFIG or ~/.kube/config")
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes config: %w", err)
	}
	rc.UserAgent = "tinyctl-serve/" + cfg.Holder
	rc.QPS, rc.Burst = clientLimits(cfg.KubeQPS, cfg.KubeBurst)
	return rc, nil
}

// clientLimits turns the configured limits into rest.Config's: a QPS of
// zero or less turns client-go's token bucket off (client-go reads only a
// negative QPS that way; zero would mean its default of 5), and a burst of
// zero is twice the QPS.
func clientLimits(qps float32, burst int) (float32, int) {
	if qps <= 0 {
		return -1, 0
	}
	if burst <= 0 {
		burst = max(1, int(2*qps))
	}
	return qps, burst
}
