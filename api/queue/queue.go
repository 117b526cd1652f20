// Package queue is the wire contract of a component's queue figures: what
// `tinyctl describe` shows of its work queue, and the request a fleet hub
// sends each member's controller for them. A hub holds no work queue (each
// cluster's streams live on its own broker, in its namespaces' jobs
// accounts behind the leafnode), so describe at a hub asks every cluster
// that reported on the component, at Subject(cluster, ns, name), and the
// controller there answers from its own broker. Only names and wire
// types: the reading is client/queues'.
package queue

import "time"

// Service starts the subjects of the controllers' queue-figure requests.
const Service = "tinyctl.queuefigures"

// Subject is where the controller of cluster answers for component
// ns/name (one subject token each: cluster names, namespaces and
// component names hold no '.').
func Subject(cluster, ns, name string) string { return Prefix(cluster) + ns + "." + name }

// Prefix starts every request subject of cluster's controller.
func Prefix(cluster string) string { return Service + "." + cluster + "." }

// Figures is a component's work queue as one broker reports it: its
// stream (the jobs not yet acknowledged) and its worker's durable
// consumer.
type Figures struct {
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	// Jobs and Bytes are what the stream holds: every job not yet
	// acknowledged (a work queue removes a job when it is acked or
	// terminated).
	Jobs  uint64 `json:"jobs"`
	Bytes uint64 `json:"bytes"`
	// Oldest is when the oldest job in the stream was published (zero
	// when the stream is empty).
	Oldest time.Time `json:"oldest,omitzero"`
	// Pending is how many jobs no worker has been handed yet.
	Pending uint64 `json:"pending"`
	// AckPending is how many were handed to a worker and not yet settled;
	// Redelivered how many of those were handed out more than once.
	AckPending  int `json:"ackPending"`
	Redelivered int `json:"redelivered"`
	// Waiting is how many pull requests of workers wait for jobs.
	Waiting int `json:"waitingPulls"`
	// MaxDeliver is the consumer's limit on deliveries (-1: none).
	MaxDeliver int `json:"maxDeliver"`
	// NoConsumer says the stream exists and its consumer does not (a
	// controller still creating it, or a stream kept after a delete).
	NoConsumer bool `json:"noConsumer,omitempty"`
	// DeadLetters says the component has a dead-letter stream
	// (spec.jobs.deadLetter); Dead is how many jobs it holds
	// (`tinyctl jobs dead`).
	DeadLetters bool   `json:"deadLetters,omitempty"`
	Dead        uint64 `json:"dead,omitempty"`
}

// Reply is a controller's answer: the figures, or NotFound (its broker
// holds no stream of the component: not placed there, or not reconciled
// yet), or Error.
type Reply struct {
	Cluster  string   `json:"cluster"`
	Figures  *Figures `json:"figures,omitempty"`
	NotFound bool     `json:"notFound,omitempty"`
	Error    string   `json:"error,omitempty"`
}
