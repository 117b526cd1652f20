package api

import (
	"maps"
	"slices"
	"time"
)

// Status is what one cluster's controller last observed about one
// component: the model of a record in the status bucket, shared by the
// controller that writes it and every reader (the CLI, the public client,
// a hub). Its JSON form is documented in docs/status.md; readers ignore
// fields they do not know, so fields may be added.
type Status struct {
	// Component is the spec key, "<namespace>.<name>".
	Component string `json:"component"`
	// Cluster is the reporting cluster's name (one NATS subject token).
	Cluster string `json:"cluster"`
	// ObservedRevision is the spec revision this status describes.
	ObservedRevision uint64 `json:"observedRevision"`
	// SpecBucket names the spec bucket ObservedRevision is a revision of
	// (its incarnation, and the revision it went back to if it did): a
	// revision number means something only within one bucket.
	SpecBucket string `json:"specBucket,omitempty"`
	// ClusterLabels are the labels the cluster had when its controller
	// applied this revision: a later controller with other labels can
	// tell that its own identity changed, not the placement, and keeps
	// the children (docs/fleet.md, "Unplacing").
	ClusterLabels map[string]string `json:"clusterLabels,omitempty"`
	// HeldSince is the first revision whose unplace this cluster held
	// because it found the component's children without a status record
	// of its own (a renamed cluster): it cannot tell which identity
	// applied them, so every later revision that does not select the
	// cluster is held too, until one selects it again or the controller
	// runs with --accept-unplace.
	HeldSince  uint64      `json:"heldSince,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
	Children   []Child     `json:"children,omitempty"`
	// Error is the last reconcile error, empty when it succeeded.
	Error     string    `json:"error,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Condition is one aspect of a component's state, Kubernetes style.
type Condition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
	LastTransitionTime time.Time       `json:"lastTransitionTime"`
}

// ConditionStatus is True, False or Unknown.
type ConditionStatus string

// Condition statuses.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// Condition types the controller writes.
const (
	// ConditionReady is True when every child is applied at the observed
	// revision and its workload runs it: the Deployment's pods are
	// updated and available, or it is scaled to zero (docs/status.md).
	ConditionReady = "Ready"
	// ConditionApplied is True when every child is applied at the observed
	// revision, whatever its pods do.
	ConditionApplied = "Applied"
	// ConditionDegraded is True when the workload has a problem a user
	// must act on (an image that cannot be pulled, a crashing container,
	// pods that cannot be scheduled or created, a rollout past its
	// deadline).
	ConditionDegraded = "Degraded"
	// ConditionStalled is True when retrying cannot help: the controller
	// waits for a new revision.
	ConditionStalled = "Stalled"
	// ConditionOrphaned is True when children exist but the spec bucket
	// holds neither a value nor a delete marker for the key.
	ConditionOrphaned = "Orphaned"
)

// Child is an object derived from a component: a Kubernetes object, or a
// JetStream stream or consumer (Namespace empty).
type Child struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Hash      string `json:"hash,omitempty"`
	// Expires is when what the child holds stops working: the worker
	// credentials in a Secret the controller minted (zero otherwise).
	Expires time.Time `json:"expires,omitzero"`
}

// Same reports whether c and o name the same object in the same state.
func (c Child) Same(o Child) bool {
	return c.Kind == o.Kind && c.Namespace == o.Namespace && c.Name == o.Name && c.Hash == o.Hash &&
		c.Expires.Equal(o.Expires)
}

// Kinds of the JetStream children in Status.Children.
const (
	KindStream   = "Stream"
	KindConsumer = "Consumer"
)

// Condition returns the condition of type typ, if s has one.
func (s Status) Condition(typ string) (Condition, bool) {
	i := slices.IndexFunc(s.Conditions, func(c Condition) bool { return c.Type == typ })
	if i < 0 {
		return Condition{}, false
	}
	return s.Conditions[i], true
}

// IsTrue reports whether s has condition typ with status True.
func (s Status) IsTrue(typ string) bool {
	c, ok := s.Condition(typ)
	return ok && c.Status == ConditionTrue
}

// ChildOfKind returns the first child of kind, if s lists one.
func (s Status) ChildOfKind(kind string) (Child, bool) {
	i := slices.IndexFunc(s.Children, func(c Child) bool { return c.Kind == kind })
	if i < 0 {
		return Child{}, false
	}
	return s.Children[i], true
}

// SameAs reports whether s and o say the same thing: every field but
// UpdatedAt is equal (conditions compared with their transition times).
func (s Status) SameAs(o Status) bool {
	return s.Component == o.Component && s.Cluster == o.Cluster &&
		s.ObservedRevision == o.ObservedRevision && s.Error == o.Error &&
		maps.Equal(s.ClusterLabels, o.ClusterLabels) &&
		slices.EqualFunc(s.Conditions, o.Conditions, func(x, y Condition) bool {
			return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason &&
				x.Message == y.Message && x.LastTransitionTime.Equal(y.LastTransitionTime)
		}) &&
		slices.EqualFunc(s.Children, o.Children, Child.Same)
}
