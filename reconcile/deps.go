package reconcile

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/clock"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/streams"
)

// Entry is one revision of a spec key as the loop sees it.
type Entry struct {
	Key      string
	Revision uint64
	// Deleted marks a delete or purge marker; Value is empty then.
	Deleted bool
	// Purged marks a purge marker: the key's history is gone with it, so
	// the stream is kept whatever the last value said (as a controller
	// that starts after the purge, reading the history, would decide).
	Purged bool
	Value  []byte
}

// Event is one item of a spec watch: an Entry, or, with Synced set and
// Entry zero, the sign that every value the bucket held when the watch
// began has been delivered.
type Event struct {
	Entry
	Synced bool
}

// SpecWatch is a running watch of the spec bucket. Events delivers every
// key's latest revision (markers included), then one Synced event, then
// each change in revision order, surviving disconnects without loss or
// replay. It is closed when the watch ends; Err then says why.
type SpecWatch interface {
	Events() <-chan Event
	Err() error
	Stop()
}

// Specs is the spec bucket as the loop reads it.
type Specs interface {
	// Watch starts a watch of the whole bucket; see SpecWatch.
	Watch(ctx context.Context) (SpecWatch, error)
	// Latest returns the key's newest revision, value or marker, as the
	// bucket's leader has it (not a replica catching up); found is false
	// when the key has no revision at all.
	Latest(ctx context.Context, key string) (e Entry, found bool, err error)
	// History returns the kept revisions of key, oldest first.
	History(ctx context.Context, key string) ([]Entry, error)
	// Incarnation names the bucket whose revisions the loop reads: a
	// bucket deleted and created again has another name, and its
	// revisions start over. A mirror's is the hub bucket it records (see
	// Hub), so a mirror rebuilt from the same hub bucket keeps it. The
	// form is "<id>" or "<id>/<boundary>" (see epoch).
	Incarnation(ctx context.Context) (string, error)
}

// Hub is the fleet hub's spec bucket, which Specs mirrors: nats-server's
// mirror cannot tell that the hub's bucket was created again, restored,
// or purged, so the loop compares the two and rebuilds the mirror.
type Hub interface {
	// Compare reads the mirror, then the hub's bucket (with its keys when
	// keys is set): whatever the mirror held, the hub held first.
	Compare(ctx context.Context, keys bool) (HubView, error)
	// Rebuild deletes the mirror and creates it again recording epoch; it
	// then copies the hub's bucket from its first revision.
	Rebuild(ctx context.Context, epoch string) error
	// WaitMirror waits until the mirror has copied the hub's revision rev.
	WaitMirror(ctx context.Context, rev uint64) error
	// PurgeLocal removes every message of key from the mirror only.
	PurgeLocal(ctx context.Context, key string) error
}

// HubView is the mirror and the hub's bucket side by side.
type HubView struct {
	// Epoch is what the mirror recorded of the hub bucket when it was
	// created ("" nothing: the hub was out of reach); MirrorLast the
	// newest hub revision it copied.
	Epoch      string
	MirrorLast uint64
	// Hub names the hub bucket's incarnation; HubFirst and HubLast are
	// its first and last sequences (a purge leaves HubLast, and removes
	// messages up to HubFirst); HubLastMessage is the newest revision it
	// still holds (0: none), which the mirror can copy; HubKeys are the
	// keys holding any message there (nil unless asked for).
	Hub                               string
	HubFirst, HubLast, HubLastMessage uint64
	HubKeys                           map[string]bool
}

// Streams provisions a component's JetStream stream and durable consumer,
// in the account that holds namespace ns's streams (one account for all
// without Tenants).
type Streams interface {
	// Ensure makes both exist as configured and says what it did to each;
	// fresh says the stream most likely does not exist yet (create it
	// first, look it up only if the name is taken).
	// fp is the stream's live config's streams.Fingerprint once ensured
	// (0: unknown).
	Ensure(ctx context.Context, ns string, stream jetstream.StreamConfig, consumer jetstream.ConsumerConfig, fresh bool) (s, c action.Action, fp uint64, err error)
	// DeadLetters ensures dead-letter stream cfg of work-queue stream
	// work in ns's account and moves into it the jobs of consumer that
	// used up their deliveries, saying what it did to the stream and how
	// many jobs it moved.
	DeadLetters(ctx context.Context, ns string, cfg jetstream.StreamConfig, work, consumer string) (action.Action, int, error)
	// Delete removes a stream with its messages and consumers.
	Delete(ctx context.Context, ns, stream string) (action.Action, error)
	// Names lists every stream of the namespaces' accounts, for the check
	// that re-creates streams deleted out of band.
	Names(ctx context.Context, namespaces []string) (map[string]bool, error)
	// Walk lists every stream of the namespaces' accounts with its live
	// config and consumer count, calling fn for each (the full recheck).
	Walk(ctx context.Context, namespaces []string, fn func(streams.Listed)) error
}

// Tenants gives each namespace NATS accounts of its own, on a broker with
// decentralized auth (package tenants): its streams, its workers and its
// publishers each in an account that holds nothing of another namespace's.
type Tenants interface {
	// Account is the account holding ns's streams (what KEDA queries),
	// derived without I/O.
	Account(ns string) string
	// Ensure makes ns's accounts exist before its streams or workers are
	// touched, and returns the Minter of its workers.
	Ensure(ctx context.Context, ns string) (Minter, error)
}

// Statuses stores one status record per component per cluster. Writes are
// checked against the record's latest revision (markers included; 0: never
// written): one written since by anyone else fails the write with a
// *bus.RevisionMismatchError, so a write a deposed leader sent before its
// lease ran out, arriving after a newer leader wrote the record, is
// refused instead of putting an older status back.
type Statuses interface {
	// Put stores st if the record is at revision rev and returns the new
	// revision.
	Put(ctx context.Context, st api.Status, rev uint64) (uint64, error)
	// Delete removes the record if it is at revision rev and returns the
	// revision of its delete marker.
	Delete(ctx context.Context, component, cluster string, rev uint64) (uint64, error)
	// Load returns the records cluster wrote (and no other cluster's),
	// with their revisions; records that do not decode are left out.
	Load(ctx context.Context, cluster string) ([]StoredStatus, error)
}

// StoredStatus is a status record as Statuses holds it.
type StoredStatus struct {
	api.Status
	Revision uint64
}

// Kube is the Kubernetes write path (package apply's Manager).
type Kube interface {
	ApplyAll(ctx context.Context, objs []*unstructured.Unstructured, o apply.SetOptions) (apply.ChangeSet, error)
	Prefetch(ctx context.Context, objs []*unstructured.Unstructured,
		known func(*unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool)) func(*unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool)
	Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, opts ...apply.Option) (apply.Result, error)
	Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, apply.Result, error)
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
}

// Fence guards every write: Check returns ctx bounded by the moment the
// writer must stop, or an error when it already must; Token is the
// tenure's fencing token, stamped on every child written so that the API
// server refuses a late write of a deposed tenure ("": none; lease.Fence).
type Fence interface {
	Check(ctx context.Context) (context.Context, context.CancelFunc, error)
	Token() string
}

// Deps are the controller's connections to the outside world.
type Deps struct {
	Specs    Specs
	Streams  Streams
	Statuses Statuses
	Kube     Kube
	// Metadata and Discovery reach the API server for the children
	// informers and CRD detection.
	Metadata  metadata.Interface
	Discovery discovery.DiscoveryInterface
	// Workloads reads the Deployments' and pods' status that Ready is
	// judged on (package workload); nil, or Config.ReadyWhenApplied, makes
	// Ready mean Applied.
	Workloads kubernetes.Interface
	// Fence guards every write (nil: writes are not fenced).
	Fence Fence
	// Hub, when the spec bucket is a mirror of a fleet hub's, checks it
	// against the hub (nil: an ordinary bucket).
	Hub Hub
	// Minter, when not nil, mints each component's worker credentials
	// (Config.CredentialsTTL); the cluster must render with
	// NATS.CredentialsSecret set to render.PerComponent.
	Minter Minter
	// Tenants, when not nil, gives each namespace accounts of its own and
	// mints its workers there (Minter is then unused); the cluster must
	// render with NATS.CredentialsSecret set to render.PerComponent.
	Tenants Tenants
	// Clock times coalescing, rechecks and condition transitions (nil:
	// the real clock).
	Clock clock.WithTicker
	// Observer receives metrics-worthy events; nil discards them.
	Observer Observer
	// Events hears what the controller did to each component and why
	// (events.go); nil discards them.
	Events Events
}

// noFence lets every write pass.
type noFence struct{}

func (noFence) Check(ctx context.Context) (context.Context, context.CancelFunc, error) {
	return ctx, func() {}, nil
}

func (noFence) Token() string { return "" }
