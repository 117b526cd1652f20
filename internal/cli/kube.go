package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeFlags select a Kubernetes cluster the way kubectl does: --kubeconfig
// (else $KUBECONFIG, else ~/.kube/config) and --context (else the
// kubeconfig's current context). Only commands that talk to the API server
// register them.
type KubeFlags struct {
	Kubeconfig string
	Context    string
}

// AddFlags registers --kubeconfig and --context on fs.
func (k *KubeFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&k.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	BindEnv(fs, "kubeconfig", "TINYCTL_KUBECONFIG")
	fs.StringVar(&k.Context, "context", "", "kubeconfig context to use (default: the current context)")
	BindEnv(fs, "context", "TINYCTL_KUBE_CONTEXT")
}

// RESTConfig loads the client configuration the flags select, with timeout
// bounding every request (0: none) and API warnings (such as PodSecurity
// violations) written to warnings. It returns an error when no kubeconfig
// is found or the context does not exist.
func (k *KubeFlags) RESTConfig(timeout time.Duration, warnings io.Writer) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: k.Context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, fmt.Errorf("no Kubernetes cluster configured: give --kubeconfig, set KUBECONFIG, or create ~/.kube/config (tinyctl dev prints an export KUBECONFIG=... line for its local cluster)")
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.Timeout = timeout
	cfg.WarningHandler = rest.NewWarningWriter(warnings, rest.WarningWriterOptions{Deduplicate: true})
	return cfg, nil
}
