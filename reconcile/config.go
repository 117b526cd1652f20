package reconcile

import (
	"slices"
	"time"

	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/render"
)

// Defaults of Config, the one place they are defined: `tinyctl serve`'s
// flags show them and Config.withDefaults fills them.
const (
	DefaultWorkers       = 4
	DefaultRecheck       = 30 * time.Second
	DefaultRetryBase     = 10 * time.Millisecond
	DefaultRetryMax      = 5 * time.Minute
	DefaultCoalesce      = 50 * time.Millisecond
	DefaultCoalesceMax   = time.Second
	DefaultShutdownGrace = 10 * time.Second
	// DefaultCredentialsTTL is how long minted worker credentials live;
	// they are minted again when less than half of it is left.
	DefaultCredentialsTTL = time.Hour
)

// DefaultDenyNamespaces are the cluster's own namespaces, which `tinyctl
// serve` never manages unless they are listed in Config.Namespaces.
var DefaultDenyNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// Config tunes a Controller. Zero fields take the defaults above.
type Config struct {
	// Cluster is what render needs about this cluster; Cluster.Name is the
	// cluster's name in status keys and placement.
	Cluster render.Cluster
	// ClusterLabels are matched by placement.clusterSelector.
	ClusterLabels map[string]string
	// AcceptUnplace confirms, once, the unplaces held when the controller
	// starts (status reason UnplaceHeld: components that no longer select
	// this cluster only because its name or labels changed): their
	// children are removed. Holds that arise after the start are kept and
	// reported as without it, so a flag left on confirms nothing new.
	AcceptUnplace bool
	// Workers is the number of keys reconciled at once.
	Workers int
	// Namespaces, when not empty, are the only target namespaces allowed;
	// a component elsewhere stalls with reason NamespaceNotAllowed.
	Namespaces []string
	// DenyNamespaces are never managed when Namespaces is empty; a
	// component there stalls with reason NamespaceNotAllowed. nil means
	// DefaultDenyNamespaces (an embedder that sets nothing does not
	// manage kube-system); an empty, non-nil list denies nothing.
	DenyNamespaces []string
	// CreateNamespaces lets the controller create a missing target
	// namespace; otherwise the component waits with NamespaceMissing.
	CreateNamespaces bool
	// ServiceAccountNamespaces are the namespaces whose components may run
	// as a ServiceAccount of their own (spec.serviceAccountName); "*"
	// allows every managed namespace. Elsewhere such a component stalls
	// with reason ServiceAccountNotAllowed. Empty: none.
	ServiceAccountNamespaces []string
	// Tenancy scopes the subjects each namespace's components may bind and
	// publish (the zero value: only those under the namespace's name).
	Tenancy validate.Tenancy
	// CredentialsTTL is how long the worker credentials the Minter mints
	// live (see Deps.Minter).
	CredentialsTTL time.Duration
	// WorkerTLS are the TLS files workers get with their credentials.
	WorkerTLS TLSFiles
	// Recheck is how often waiting components, streams deleted out of band
	// and orphans are checked.
	Recheck time.Duration
	// RetryBase and RetryMax bound the exponential backoff of transient
	// failures.
	RetryBase, RetryMax time.Duration
	// Coalesce is how long a key changed again soon after a change waits
	// for its changes to stop before it is reconciled, and CoalesceMax the
	// longest it waits while they keep coming. The first change to a key
	// quiet for Coalesce, drift events and the initial values are not held
	// back.
	Coalesce, CoalesceMax time.Duration
	// ShutdownGrace is how long in-flight reconciles may run on after Run's
	// context is cancelled with ErrDrain before they are cancelled too.
	ShutdownGrace time.Duration
	// ReadyWhenApplied makes Ready mean only that every child is applied
	// (condition Applied), without watching Deployments' and pods' status:
	// for an API server that runs no pods, as `tinyctl dev` without
	// --node. Off, Ready also needs the workload to run the revision.
	ReadyWhenApplied bool
}

// WithDefaults returns c with its cluster settings, counts and durations
// defaulted where zero, and DenyNamespaces where nil. Namespaces, labels,
// tenancy and the booleans have no default: their zero value is the
// setting (every namespace, no labels, subjects under the namespace's
// name, off).
func (c Config) WithDefaults() Config {
	c.Cluster = c.Cluster.WithDefaults()
	c.Workers = positive(c.Workers, DefaultWorkers)
	c.Recheck = positive(c.Recheck, DefaultRecheck)
	c.RetryBase = positive(c.RetryBase, DefaultRetryBase)
	c.RetryMax = positive(c.RetryMax, DefaultRetryMax)
	c.Coalesce = positive(c.Coalesce, DefaultCoalesce)
	c.CoalesceMax = positive(c.CoalesceMax, DefaultCoalesceMax)
	c.ShutdownGrace = positive(c.ShutdownGrace, DefaultShutdownGrace)
	c.CredentialsTTL = positive(c.CredentialsTTL, DefaultCredentialsTTL)
	if c.DenyNamespaces == nil {
		c.DenyNamespaces = slices.Clone(DefaultDenyNamespaces)
	}
	return c
}

func positive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// namespacePolicy says where components may go and which subjects they
// may use there.
type namespacePolicy struct {
	allowed []string // empty: every namespace but denied
	denied  []string
	create  bool
	tenancy validate.Tenancy
	// accounts may name a ServiceAccount ("*": every namespace).
	accounts []string
}
