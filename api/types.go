package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIVersion and Kind identify a Component document.
const (
	APIVersion = "tinyctl.io/v1alpha1"
	Kind       = "Component"
)

// Component is a queue worker: a container image that consumes jobs from
// NATS JetStream subjects. It is the value stored in the spec bucket under
// Key(namespace, name).
type Component struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata names a component and carries the user's labels, which are copied
// onto every derived Kubernetes object.
type Metadata struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Spec is what the component's worker needs.
type Spec struct {
	// Image is a container image reference with a tag or a digest.
	Image   string   `json:"image"`
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Env     []EnvVar `json:"env,omitempty"`
	// EnvFrom adds every key of Secrets and ConfigMaps of the component's
	// namespace to the environment.
	EnvFrom []EnvFromSource `json:"envFrom,omitempty"`
	// Volumes mount Secrets and ConfigMaps of the component's namespace,
	// read-only, into the worker container.
	Volumes []Volume `json:"volumes,omitempty"`
	// ImagePullSecrets name the registry credentials (Secrets of type
	// kubernetes.io/dockerconfigjson) the kubelet pulls Image with.
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// NodeSelector, Tolerations and PriorityClassName place and rank the
	// worker's pods as in a pod spec.
	NodeSelector      map[string]string `json:"nodeSelector,omitempty"`
	Tolerations       []Toleration      `json:"tolerations,omitempty"`
	PriorityClassName string            `json:"priorityClassName,omitempty"`
	// ServiceAccountName runs the worker's pods as that ServiceAccount of
	// the component's namespace (a cloud workload identity, say), where
	// the cluster's operator allows it for the namespace (tinyctl serve
	// --service-account-namespaces); by default they run as the
	// namespace's default account. AutomountServiceAccountToken mounts the
	// account's API token into the pods, which tinyctl does only when
	// asked.
	ServiceAccountName           string `json:"serviceAccountName,omitempty"`
	AutomountServiceAccountToken bool   `json:"automountServiceAccountToken,omitempty"`
	// Probes tell the kubelet whether the worker is alive and ready.
	Probes *Probes `json:"probes,omitempty"`
	// MetricsPort, when set, is where the worker serves Prometheus metrics
	// at /metrics: tinyctl gives the worker library the address in
	// TINYCTL_METRICS_ADDR, names the pod port "metrics" (for a PodMonitor),
	// and the NetworkPolicy admits the cluster's monitoring namespaces to it.
	MetricsPort int32 `json:"metricsPort,omitempty"`
	// Affinity (node affinity, pod affinity and anti-affinity) and
	// TopologySpreadConstraints place the worker's pods as in a pod spec,
	// in Kubernetes' own terms. A spread constraint without a labelSelector
	// spreads the component's own pods.
	Affinity                  *corev1.Affinity                  `json:"affinity,omitempty"`
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// TerminationGracePeriodSeconds is how long a stopping pod may take
	// (Kubernetes' default: 30). The worker library drains running jobs
	// for all of it but the last 5 seconds.
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	// Resources are Kubernetes quantities keyed by resource name (cpu,
	// memory, ephemeral-storage).
	Resources *Resources `json:"resources,omitempty"`
	Jobs      Jobs       `json:"jobs"`
	// Scaling makes KEDA scale the worker on its consumer's pending depth.
	// Exclusive with Replicas.
	Scaling *Scaling `json:"scaling,omitempty"`
	// Replicas fixes the worker count when Scaling is absent (default 1).
	Replicas  *int32     `json:"replicas,omitempty"`
	Egress    Egress     `json:"egress,omitzero"`
	Placement *Placement `json:"placement,omitempty"`
	// Overrides change the image, worker count, scaling limits,
	// environment or resources on the clusters each one selects.
	Overrides []Override `json:"overrides,omitempty"`
	Deletion  Deletion   `json:"deletion,omitzero"`
	// Suspend stops reconciling the component (an incident, a manual
	// fix): nothing of it is applied, reverted or pruned until it is
	// false again; an explicit delete still removes it.
	Suspend bool `json:"suspend,omitempty"`
}

// Probes are the worker container's liveness and readiness probes:
// Worker for those the worker library serves (tinyctl sets its health
// address and probes /healthz and /readyz), or Liveness and Readiness in
// Kubernetes' own terms for a worker written without it.
type Probes struct {
	Worker    bool          `json:"worker,omitempty"`
	Liveness  *corev1.Probe `json:"liveness,omitempty"`
	Readiness *corev1.Probe `json:"readiness,omitempty"`
}

// EnvVar is one environment variable of the worker container: a literal
// Value, or a key of a Secret or ConfigMap (ValueFrom).
type EnvVar struct {
	Name      string     `json:"name"`
	Value     string     `json:"value,omitempty"`
	ValueFrom *EnvSource `json:"valueFrom,omitempty"`
}

// Resources are container requests and limits as Kubernetes quantity strings.
type Resources struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

// Duration is a Go duration string such as "30s" or "24h". It is kept as
// text so that Validate can report a bad value with its field path.
type Duration string

// Jobs names the subjects the worker consumes and tunes the JetStream stream
// and durable consumer that carry them.
type Jobs struct {
	Subjects []string `json:"subjects"`
	// Publish are the subjects the worker may publish to (its results,
	// follow-up jobs), NATS wildcards allowed. Its credentials allow
	// nothing else.
	Publish  []string     `json:"publish,omitempty"`
	Stream   StreamSpec   `json:"stream,omitzero"`
	Consumer ConsumerSpec `json:"consumer,omitzero"`
	// DeadLetter moves each job that used up consumer.maxDeliver out of
	// the work-queue stream into a dead-letter stream of its own, where
	// `tinyctl jobs dead` lists it and `tinyctl jobs replay` puts it back
	// (package api/deadletter). Without it such a job stays in the work
	// queue, delivered no more, until stream.maxAge.
	DeadLetter bool `json:"deadLetter,omitempty"`
}

// StreamSpec tunes the component's work-queue stream.
type StreamSpec struct {
	Replicas        int      `json:"replicas,omitempty"`
	Storage         string   `json:"storage,omitempty"` // file | memory
	MaxAge          Duration `json:"maxAge,omitempty"`
	DuplicateWindow Duration `json:"duplicateWindow,omitempty"`
	MaxMsgs         int64    `json:"maxMsgs,omitempty"`
	MaxBytes        int64    `json:"maxBytes,omitempty"`
}

// ConsumerSpec tunes the component's durable pull consumer.
type ConsumerSpec struct {
	AckWait       Duration   `json:"ackWait,omitempty"`
	MaxDeliver    int        `json:"maxDeliver,omitempty"`
	MaxAckPending int        `json:"maxAckPending,omitempty"`
	Backoff       []Duration `json:"backoff,omitempty"`
}

// Scaling configures the KEDA ScaledObject.
type Scaling struct {
	MinReplicas            int32 `json:"minReplicas"`
	MaxReplicas            int32 `json:"maxReplicas"`
	LagThreshold           int64 `json:"lagThreshold,omitempty"`
	ActivationLagThreshold int64 `json:"activationLagThreshold,omitempty"`
	PollingInterval        int32 `json:"pollingInterval,omitempty"` // seconds
	CooldownPeriod         int32 `json:"cooldownPeriod,omitempty"`  // seconds
}

// Egress postures.
const (
	EgressNone     = "none"     // NATS pods and cluster DNS only
	EgressCluster  = "cluster"  // anything inside the cluster, plus NATS and DNS
	EgressInternet = "internet" // anything
	EgressAllow    = "allow"    // NATS, DNS and an explicit allow list
)

// Egress is the worker's outbound network posture. In YAML it is either one
// of the words none, cluster, internet, or an object {allow: [...]}.
type Egress struct {
	Mode  string       `json:"-"`
	Allow []EgressRule `json:"-"`
}

// EgressRule allows traffic to one peer: an IP block (CIDR) or the pods of a
// namespace, optionally limited to ports.
type EgressRule struct {
	CIDR      string            `json:"cidr,omitempty"`
	Except    []string          `json:"except,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	PodLabels map[string]string `json:"podLabels,omitempty"`
	Ports     []Port            `json:"ports,omitempty"`
}

// Port is a destination port and protocol (TCP by default).
type Port struct {
	Port     int32  `json:"port"`
	Protocol string `json:"protocol,omitempty"` // TCP | UDP | SCTP
}

// Placement selects the clusters that run the component. Empty means all.
type Placement struct {
	Clusters        []string              `json:"clusters,omitempty"`
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
}

// Override changes some fields of the spec on the clusters it selects: those
// named in Clusters and matching ClusterSelector (both, when both are set;
// at least one must be). Fields left unset keep the spec's value.
type Override struct {
	Clusters        []string              `json:"clusters,omitempty"`
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
	Image           string                `json:"image,omitempty"`
	// Replicas replaces spec.replicas; only without spec.scaling.
	Replicas *int32 `json:"replicas,omitempty"`
	// MinReplicas and MaxReplicas replace spec.scaling's; only with
	// spec.scaling.
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// Env is merged into spec.env by name: a variable named here replaces
	// the spec's, a new one is added after them.
	Env []EnvVar `json:"env,omitempty"`
	// Resources are merged into spec.resources by resource name.
	Resources *Resources `json:"resources,omitempty"`
	// Suspend replaces spec.suspend on the clusters selected.
	Suspend *bool `json:"suspend,omitempty"`
	// NodeSelector is merged into spec.nodeSelector by key; Tolerations
	// and PriorityClassName replace the spec's: node labels, taints and
	// priority classes differ from cluster to cluster.
	NodeSelector      map[string]string `json:"nodeSelector,omitempty"`
	Tolerations       []Toleration      `json:"tolerations,omitempty"`
	PriorityClassName string            `json:"priorityClassName,omitempty"`
}

// SetsSomething reports whether o changes at least one field of the spec
// (an override that does not is refused, and dropped when one is edited).
func (o Override) SetsSomething() bool {
	r := o.Resources
	return o.Image != "" || o.Replicas != nil || o.MinReplicas != nil || o.MaxReplicas != nil || len(o.Env) > 0 ||
		(r != nil && (len(r.Requests) > 0 || len(r.Limits) > 0)) || o.Suspend != nil ||
		len(o.NodeSelector) > 0 || len(o.Tolerations) > 0 || o.PriorityClassName != ""
}

// Stream deletion policies.
const (
	Retain = "Retain"
	Delete = "Delete"
)

// Deletion says what happens to durable state when the component is deleted.
type Deletion struct {
	Stream string `json:"stream,omitempty"` // Retain (default) | Delete
}

// Key returns the spec-bucket key of a component: "<namespace>.<name>".
func Key(namespace, name string) string { return namespace + "." + name }
