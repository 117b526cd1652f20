package render

import (
	"strings"

	"crypto/sha256"
	"encoding/hex"

	"github.com/tinyctl/tinyctl/api/podlayout"
)

// Label keys carried by every Kubernetes object Render produces.
const (
	// LabelManagedBy marks tinyctl's children; its value is ManagedByValue.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelComponent names the owning component; its value is
	// ComponentLabelValue(namespace, name).
	LabelComponent = "tinyctl.io/component"
	// LabelName is the component's name.
	LabelName = "app.kubernetes.io/name"
)

// ManagedByValue is the value of LabelManagedBy on every child.
const ManagedByValue = "tinyctl"

// Annotation keys carried by every Kubernetes object Render produces.
const (
	// AnnotationRevision is the spec-bucket revision the object was rendered from.
	AnnotationRevision = "tinyctl.io/revision"
	// AnnotationContentHash is the hex SHA-256 of the object's desired
	// content, computed before the revision and hash annotations are added.
	AnnotationContentHash = "tinyctl.io/content-hash"
	// AnnotationCluster names the cluster whose controller rendered the
	// object (Cluster.Name).
	AnnotationCluster = "tinyctl.io/cluster"
	// AnnotationReloadSecret is read by Stakater Reloader
	// (https://github.com/stakater/Reloader): its value names Secrets, and
	// Reloader rolls the Deployment's pods when one of them changes. Render
	// sets it on the Deployment to a shared NATS credentials Secret, so
	// changed credentials reach running workers. Credentials minted per
	// component get none: workers re-read them when they reconnect. Without
	// Reloader installed it is inert.
	AnnotationReloadSecret = "secret.reloader.stakater.com/reload"
)

// maxLabelValue is the longest valid Kubernetes label value.
const maxLabelValue = 63

// labelHashLen is how many hex digits of a hash end a shortened label value.
const labelHashLen = 10

// StreamName returns the JetStream stream that carries the jobs of component
// namespace/name. Namespaces and names are DNS labels, which never contain
// '_', so joining them with '_' is injective, and the result holds none of
// the characters JetStream refuses in a name ('.', '*', '>', '/', '\',
// whitespace).
func StreamName(namespace, name string) string {
	return "tinyctl_" + namespace + "_" + name
}

// ComponentOfStream is StreamName's inverse: the component whose
// work-queue stream is stream, ok false for a name StreamName never makes.
func ComponentOfStream(stream string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(stream, "tinyctl_")
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, "_")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "_") {
		return "", "", false
	}
	return namespace, name, true
}

// ConsumerName returns the durable consumer the worker of component
// namespace/name binds, on the stream StreamName(namespace, name). It is
// injective for the same reason as StreamName.
func ConsumerName(namespace, name string) string {
	return "tinyctl_" + namespace + "_" + name + "_worker"
}

// CredentialsSecretName returns the Secret that holds the NATS credentials
// minted for component namespace/name (with NATS.CredentialsSecret set to
// PerComponent), in its namespace.
func CredentialsSecretName(name string) string { return name + podlayout.MintedSecretSuffix }

// InboxPrefix returns the inbox prefix the worker of component
// namespace/name must use: its minted credentials let it receive replies
// only under this prefix (identity.Worker), so it cannot read another
// party's replies.
func InboxPrefix(namespace, name string) string { return "_INBOX_" + ConsumerName(namespace, name) }

// ComponentLabelValue returns the value of LabelComponent for component
// namespace/name: "<namespace>.<name>", the component's key in the spec
// bucket. A label value holds at most 63 characters, so when the key is
// longer it is cut to 52 characters and ends with '-' and the first 10 hex
// digits of the key's SHA-256: still deterministic, unique in practice, and
// always a valid label value.
func ComponentLabelValue(namespace, name string) string {
	v := namespace + "." + name
	if len(v) <= maxLabelValue {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	keep := maxLabelValue - 1 - labelHashLen
	return v[:keep] + "-" + hex.EncodeToString(sum[:])[:labelHashLen]
}

// selectorLabels are the labels that select a component's pods. They never
// change across revisions: a Deployment's selector is immutable.
func selectorLabels(namespace, name string) map[string]string {
	return map[string]string{
		LabelName:      name,
		LabelComponent: ComponentLabelValue(namespace, name),
	}
}

// objectLabels are the user's labels plus tinyctl's, tinyctl's winning.
func objectLabels(namespace, name string, user map[string]string) map[string]string {
	out := make(map[string]string, len(user)+3)
	for k, v := range user {
		out[k] = v
	}
	for k, v := range selectorLabels(namespace, name) {
		out[k] = v
	}
	out[LabelManagedBy] = ManagedByValue
	return out
}
