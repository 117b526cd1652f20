package render

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
)

// KEDA's ScaledObject group, version and kind, and the trigger type tinyctl
// uses. Only the fields tinyctl sets are modelled below; KEDA's Go module
// is not imported.
const (
	ScaledObjectAPIVersion = "keda.sh/v1alpha1"
	ScaledObjectKind       = "ScaledObject"
	TriggerType            = "nats-jetstream"
)

// Keys of the nats-jetstream trigger's metadata, as KEDA documents them.
const (
	TriggerMonitoringEndpoint = "natsServerMonitoringEndpoint"
	TriggerAccount            = "account"
	TriggerStream             = "stream"
	TriggerConsumer           = "consumer"
	TriggerLagThreshold       = "lagThreshold"
	TriggerActivationLag      = "activationLagThreshold"
)

// scaledObjectDoc is the subset of keda.sh/v1alpha1 ScaledObject that
// tinyctl writes, with KEDA's JSON field names.
type scaledObjectDoc struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              scaledObjectSpec `json:"spec"`
}

type scaledObjectSpec struct {
	ScaleTargetRef  scaleTargetRef `json:"scaleTargetRef"`
	MinReplicaCount *int32         `json:"minReplicaCount,omitempty"`
	MaxReplicaCount *int32         `json:"maxReplicaCount,omitempty"`
	PollingInterval *int32         `json:"pollingInterval,omitempty"`
	CooldownPeriod  *int32         `json:"cooldownPeriod,omitempty"`
	Triggers        []trigger      `json:"triggers"`
}

type scaleTargetRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
}

type trigger struct {
	Type     string            `json:"type"`
	Name     string            `json:"name,omitempty"`
	Metadata map[string]string `json:"metadata"`
}

// scaledObject scales the component's Deployment between the spec's bounds
// on the pending depth of its durable consumer. It returns nil when the
// component has no spec.scaling.
func scaledObject(c api.Component, cl Cluster, m meta) (*unstructured.Unstructured, error) {
	s := c.Spec.Scaling
	if s == nil {
		return nil, nil
	}
	md := c.Metadata
	doc := &scaledObjectDoc{
		TypeMeta:   metav1.TypeMeta{APIVersion: ScaledObjectAPIVersion, Kind: ScaledObjectKind},
		ObjectMeta: m.objectMeta(nil),
		Spec: scaledObjectSpec{
			ScaleTargetRef:  scaleTargetRef{APIVersion: "apps/v1", Kind: "Deployment", Name: md.Name},
			MinReplicaCount: ptr.To(s.MinReplicas),
			MaxReplicaCount: ptr.To(s.MaxReplicas),
			PollingInterval: positive(s.PollingInterval),
			CooldownPeriod:  positive(s.CooldownPeriod),
			Triggers: []trigger{{
				Type: TriggerType,
				Name: "jobs",
				Metadata: map[string]string{
					TriggerMonitoringEndpoint: cl.NATS.MonitoringEndpoint,
					TriggerAccount:            cl.NATS.AccountFor(c.Metadata.Namespace),
					TriggerStream:             StreamName(md.Namespace, md.Name),
					TriggerConsumer:           ConsumerName(md.Namespace, md.Name),
					TriggerLagThreshold:       strconv.FormatInt(s.LagThreshold, 10),
					TriggerActivationLag:      strconv.FormatInt(s.ActivationLagThreshold, 10),
				},
			}},
		},
	}
	if err := stamp(doc, doc, m); err != nil {
		return nil, err
	}
	return toUnstructured(doc)
}

// positive leaves a zero (unset) value to KEDA's default.
func positive(v int32) *int32 {
	if v <= 0 {
		return nil
	}
	return &v
}
