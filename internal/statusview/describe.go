package statusview

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/client/queues"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// DescriptionKind is the kind of `tinyctl describe -o json|yaml`.
const DescriptionKind = "Description"

// Description is everything `tinyctl describe` shows of one component: the
// stored spec, each cluster's status, the children a removal would take,
// and its queue on the broker the CLI is connected to. Its shape is a
// documented contract (docs/cli.md): fields may be added, never renamed
// or removed.
type Description struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Key        string `json:"key"`
	Revision   uint64 `json:"revision"`
	// Published is when the revision was stored, UTC.
	Published time.Time `json:"published"`
	// Component is the stored spec (canonical), absent when it does not
	// decode; Invalid then says why.
	Component *api.Component `json:"component,omitempty"`
	Invalid   string         `json:"invalid,omitempty"`
	// Clusters are the status rows, one per cluster that reported.
	Clusters []StatusItem `json:"clusters"`
	// Children are the Kubernetes objects a cluster that places the
	// component holds ("Kind/namespace/name"), and Stream and Consumer its
	// JetStream names.
	Children []string `json:"children"`
	Stream   string   `json:"stream"`
	Consumer string   `json:"consumer"`
	// Queue is the queue on the broker the CLI reached; QueueError says
	// why it is absent.
	Queue      *QueueInfo `json:"queue,omitempty"`
	QueueError string     `json:"queueError,omitempty"`
	// ClusterQueues are the queues of the clusters that reported on the
	// component, each as its controller answered, when the broker the CLI
	// reached holds none (a fleet hub, whose members hold the queues).
	ClusterQueues []ClusterQueue `json:"clusterQueues,omitempty"`
	// Events are the component's latest events on that broker, oldest
	// first (at most DescribeEvents); EventsError says why they are
	// absent.
	Events      []event.Event `json:"events,omitempty"`
	EventsError string        `json:"eventsError,omitempty"`
}

// DescribeEvents is how many of a component's latest events describe
// shows.
const DescribeEvents = 10

// WithEvents sets d's events to the last DescribeEvents of evs, or says
// why they could not be read.
func (d Description) WithEvents(evs []event.Event, err error) Description {
	if err != nil {
		d.EventsError = err.Error()
		return d
	}
	d.Events = evs[max(0, len(evs)-DescribeEvents):]
	return d
}

// QueueInfo is a component's queue: see queues.Queue.
type QueueInfo struct {
	Jobs  uint64 `json:"jobs"`
	Bytes uint64 `json:"bytes"`
	// Oldest is when the oldest job was published (absent: no job).
	Oldest      *time.Time `json:"oldest,omitempty"`
	Pending     uint64     `json:"pending"`
	AckPending  int        `json:"ackPending"`
	Redelivered int        `json:"redelivered"`
	Waiting     int        `json:"waitingPulls"`
	MaxDeliver  int        `json:"maxDeliver"`
	NoConsumer  bool       `json:"noConsumer,omitempty"`
	// Dead is how many jobs its dead-letter stream holds (absent: the
	// component has none, spec.jobs.deadLetter is off).
	Dead *uint64 `json:"dead,omitempty"`
}

// ClusterQueue is a component's queue on one cluster, or why it is absent.
type ClusterQueue struct {
	Cluster    string     `json:"cluster"`
	Queue      *QueueInfo `json:"queue,omitempty"`
	QueueError string     `json:"queueError,omitempty"`
}

// WithClusterQueue adds what asking cluster's controller for the queue
// returned.
func (d Description) WithClusterQueue(cluster string, rd QueueReading) Description {
	cq := ClusterQueue{Cluster: cluster}
	cq.Queue, cq.QueueError = rd.shown()
	d.ClusterQueues = append(d.ClusterQueues, cq)
	return d
}

// Describe puts together what describe shows of revision e: rows are its
// status rows, q and qerr what reading its queue returned.
func Describe(e client.Revision, rows []client.Row, q queues.Queue, qerr error) Description {
	plan := client.PlanRemoval(e)
	d := Description{APIVersion: api.APIVersion, Kind: DescriptionKind, Key: e.Key, Revision: e.Revision, Published: e.Created.UTC(),
		Clusters: NewStatusList(rows).Items, Children: plan.Objects, Stream: plan.Stream, Consumer: plan.Consumer}
	if c, err := decode.Component(e.Value); err != nil {
		d.Invalid = err.Error()
	} else {
		d.Component = &c
	}
	if d.Invalid == "" && plan.Problem != nil { // decodes, but does not render
		d.Invalid = plan.Problem.Error()
	}
	if qerr != nil {
		d.QueueError = qerr.Error()
		return d
	}
	d.Queue = queueInfo(q)
	return d
}

// queueInfo is q as a Description shows it.
func queueInfo(q queues.Queue) *QueueInfo {
	info := &QueueInfo{Jobs: q.Jobs, Bytes: q.Bytes, Pending: q.Pending, AckPending: q.AckPending, Redelivered: q.Redelivered,
		Waiting: q.Waiting, MaxDeliver: q.MaxDeliver, NoConsumer: q.NoConsumer}
	if q.DeadLetters {
		info.Dead = &q.Dead
	}
	if !q.Oldest.IsZero() {
		t := q.Oldest.UTC()
		info.Oldest = &t
	}
	return info
}

// WriteDescription prints d for a person: the spec's essentials, the
// status table, the queue and the children. rows are d's status rows as
// the status table takes them; now is the server's clock.
func WriteDescription(w io.Writer, style cli.Style, d Description, rows []client.Row, now time.Time) error {
	ns, name, _ := api.ParseKey(d.Key)
	f := &fields{w: w}
	f.add("Name", name)
	f.add("Namespace", ns)
	f.add("Revision", fmt.Sprintf("%d, published %s ago", d.Revision, cli.Age(d.Published, now)))
	if d.Component != nil {
		specFields(f, *d.Component)
	}
	if d.Invalid != "" {
		f.add("Invalid", d.Invalid)
	}
	f.add("Stream", d.Stream)
	f.add("Consumer", d.Consumer)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Clusters:")
	if err := WriteTable(&indented{w: w}, style, rows, now); err != nil {
		return err
	}
	fmt.Fprintln(w)
	writeQueue(w, d, now)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Children (on each cluster that places it):")
	for _, c := range d.Children {
		fmt.Fprintln(w, "  "+c)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Events (the last %d on the broker this command reached; tinyctl events %s --since 0 for all):\n", DescribeEvents, name)
	switch {
	case d.EventsError != "":
		fmt.Fprintln(w, "  "+d.EventsError)
	case len(d.Events) == 0:
		fmt.Fprintln(w, "  none")
	default:
		if err := WriteEvents(&indented{w: w}, style, d.Events, now, true); err != nil {
			return err
		}
	}
	return f.err
}

// specFields adds what a person looks for first in a spec.
func specFields(f *fields, c api.Component) {
	f.add("Image", c.Spec.Image)
	f.add("Subjects", strings.Join(c.Spec.Jobs.Subjects, ", "))
	if len(c.Spec.Jobs.Publish) > 0 {
		f.add("Publishes", strings.Join(c.Spec.Jobs.Publish, ", "))
	}
	f.add("Scaling", scaling(c.Spec))
	if c.Spec.Suspend {
		f.add("Suspended", "yes: no cluster reconciles it (tinyctl resume)")
	}
	if len(c.Metadata.Labels) > 0 {
		f.add("Labels", cli.JoinLabels(c.Metadata.Labels))
	}
}

// scaling says how many pods the spec asks for.
func scaling(s api.Spec) string {
	switch {
	case s.Scaling != nil:
		return fmt.Sprintf("%d to %d pods, from the queue (KEDA)", s.Scaling.MinReplicas, s.Scaling.MaxReplicas)
	case s.Replicas != nil && *s.Replicas != 1:
		return fmt.Sprintf("%d pods", *s.Replicas)
	}
	return "1 pod"
}

// writeQueue prints the queue section: the queue on the broker the
// command reached, then each cluster's as its controller answered.
func writeQueue(w io.Writer, d Description, now time.Time) {
	fmt.Fprintln(w, "Queue (on the broker this command reached):")
	writeQueueFields(w, d, d.Queue, d.QueueError, now)
	for _, cq := range d.ClusterQueues {
		fmt.Fprintf(w, "Queue on cluster %s (as its controller answered):\n", cq.Cluster)
		writeQueueFields(w, d, cq.Queue, cq.QueueError, now)
	}
}

// writeQueueFields prints queue q of d, or problem when q is nil.
func writeQueueFields(w io.Writer, d Description, q *QueueInfo, problem string, now time.Time) {
	if q == nil {
		fmt.Fprintln(w, "  "+problem)
		return
	}
	f := &fields{w: w, indent: "  "}
	jobs := fmt.Sprintf("%d (%s)", q.Jobs, bytes(q.Bytes))
	if q.Oldest != nil {
		jobs += ", the oldest published " + cli.Age(*q.Oldest, now) + " ago"
	}
	f.add("Jobs", jobs)
	if q.NoConsumer {
		f.add("Consumer", "none yet: no worker can fetch")
		return
	}
	f.add("Pending", fmt.Sprintf("%d not yet handed to a worker", q.Pending))
	f.add("Ack pending", fmt.Sprintf("%d being worked on", q.AckPending))
	f.add("Redelivered", fmt.Sprintf("%d of those handed out more than once", q.Redelivered))
	f.add("Waiting pulls", fmt.Sprint(q.Waiting))
	switch {
	case q.Dead != nil && q.MaxDeliver > 0:
		f.add("Max deliver", fmt.Sprintf("%d (a job failed that often moves to the dead letters)", q.MaxDeliver))
	case q.MaxDeliver > 0:
		f.add("Max deliver", fmt.Sprintf("%d (a job failed that often stays in the stream until its maxAge: spec.jobs.deadLetter moves it out)", q.MaxDeliver))
	}
	if q.Dead != nil {
		f.add("Dead letters", fmt.Sprintf("%d (tinyctl jobs dead %s)", *q.Dead, d.name()))
	}
}

// name is the described component's name.
func (d Description) name() string {
	_, name, _ := api.ParseKey(d.Key)
	return name
}

// bytes prints a size in binary units.
func bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// fields prints "Name:  value" lines with the values aligned.
type fields struct {
	w      io.Writer
	indent string
	err    error
}

// fieldWidth is the column values start at.
const fieldWidth = 15

func (f *fields) add(name, value string) {
	if f.err == nil {
		_, f.err = fmt.Fprintf(f.w, "%s%-*s %s\n", f.indent, fieldWidth, name+":", value)
	}
}

// indented indents every line written through it by two spaces.
type indented struct {
	w       io.Writer
	midLine bool
}

func (i *indented) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, c := range string(p) {
		if !i.midLine {
			b.WriteString("  ")
		}
		b.WriteRune(c)
		i.midLine = c != '\n'
	}
	if _, err := io.WriteString(i.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
