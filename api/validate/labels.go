package validate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ControllerLabelDomains are the label prefixes (and their subdomains) that
// other controllers act on: a pod labelled sidecar.istio.io/inject gets a
// sidecar, one labelled azure.workload.identity/use gets cloud credentials,
// one labelled under kubernetes.io may change how the node, the scheduler
// or a Service treat it. A component's labels are copied onto its pods, so
// a component may not set them: what its pods run with is decided by the
// component's spec and the cluster's operators, not by a label its
// publisher picks. app.kubernetes.io (the recommended labels) is allowed,
// less app.kubernetes.io/managed-by, which tinyctl sets.
var ControllerLabelDomains = []string{
	"kubernetes.io", "k8s.io",
	"istio.io", "linkerd.io", "kuma.io", "consul.hashicorp.com", "vault.hashicorp.com",
	"cilium.io", "projectcalico.org",
	"azure.workload.identity", "azure.com", "eks.amazonaws.com", "amazonaws.com", "iam.gke.io", "cloud.google.com",
	"openshift.io", "karpenter.sh", "keda.sh", "knative.dev",
}

// recommendedLabelDomain is the one kubernetes.io subdomain a component's
// labels may use.
const recommendedLabelDomain = "app.kubernetes.io"

// controllerLabels reports the keys of labels under ControllerLabelDomains.
func controllerLabels(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		if d := controllerDomain(k); d != "" {
			errs = append(errs, field.Forbidden(path.Key(k), fmt.Sprintf(
				"labels under %s are acted on by other controllers and a component's labels are copied onto its pods; use a key without a prefix, or under %s/",
				d, recommendedLabelDomain)))
		}
	}
	return errs
}

// controllerDomain returns the entry of ControllerLabelDomains that key's
// prefix is or is a subdomain of, or "".
func controllerDomain(key string) string {
	prefix, _, ok := strings.Cut(strings.ToLower(key), "/")
	if !ok || prefix == recommendedLabelDomain {
		return ""
	}
	for _, d := range ControllerLabelDomains {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return d
		}
	}
	return ""
}
