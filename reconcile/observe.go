package reconcile

import (
	"time"

	"github.com/tinyctl/tinyctl/apply"
)

// Log field keys used on every reconcile log line, and by the serve
// process's lines about a component.
const (
	LogCluster = "cluster"
	LogKey     = "component"
)

// The log field keys only the reconcile failure line carries.
const (
	logRevision = "revision"
	logClass    = "class"
	logReason   = "reason"
)

// Observer receives the events metrics are made of. Implementations must be
// safe for concurrent use and must not block.
type Observer interface {
	// Reconciled is called after every reconcile of a key, with its
	// duration and outcome (err nil on success).
	Reconciled(key string, d time.Duration, err error)
	// Applied is called for every child written, skipped or deleted.
	Applied(r apply.Result)
	// Retried is called when a key is requeued after a failure.
	Retried(class Class)
	// Rechecked is called after every periodic check.
	Rechecked(r Recheck)
	// DeadLettered is called when jobs of component key that used up
	// their deliveries were moved to its dead-letter stream.
	DeadLettered(key string, jobs int)
	// Stepped is called after each round trip of a component's apply
	// that the loop waits for (the Step constants), with how long it
	// took, failed or not.
	Stepped(step Step, d time.Duration)
}

// Step names a round trip a reconcile waits for before the next one.
type Step string

// The steps of applying a component, in their order.
const (
	// StepGuard: the read of the key's latest revision before any write.
	StepGuard Step = "guard"
	// StepJetStream: the stream and consumer ensured.
	StepJetStream Step = "jetstream"
	// StepKubernetes: the Kubernetes children applied, in order, with
	// the wait for the reads of those the cache does not hold.
	StepKubernetes Step = "kubernetes"
	// StepStatus: the status record written.
	StepStatus Step = "status"
)

// Steps are the Step values in order.
var Steps = []Step{StepGuard, StepJetStream, StepKubernetes, StepStatus}

// Recheck is what one periodic check did.
type Recheck struct {
	// Full: the full recheck (every tenth), which also audits every
	// stream's config and consumer (audit.go).
	Full bool
	Took time.Duration
	// Found counts the components it enqueued by what it found (the
	// Found constants).
	Found map[string]int
}

type nopObserver struct{}

func (nopObserver) Reconciled(string, time.Duration, error) {}
func (nopObserver) Applied(apply.Result)                    {}
func (nopObserver) Retried(Class)                           {}
func (nopObserver) Rechecked(Recheck)                       {}
func (nopObserver) DeadLettered(string, int)                {}
func (nopObserver) Stepped(Step, time.Duration)             {}
