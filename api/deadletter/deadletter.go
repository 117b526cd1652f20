// Package deadletter names the parts of a component's dead-letter path
// (spec.jobs.deadLetter): the stream that keeps the jobs its worker
// never finished, the subjects the controller moves them on, the
// headers it records with each, and the requests `tinyctl jobs` sends
// the controller to list and replay them. Only names and wire types: the
// mechanics are bus/deadletter's.
package deadletter

import "time"

// StreamName is the dead-letter stream of the work-queue stream work (its
// name, render.StreamName). Component names never hold '_', so no
// component's work-queue stream is named like another's dead letters.
func StreamName(work string) string { return work + "_dead" }

// Advisory is the subject nats-server announces, in the account holding
// work, that a job of consumer used up its deliveries. The dead-letter
// stream captures it, so an advisory is kept until the controller has
// moved its job, also while no controller runs.
func Advisory(work, consumer string) string {
	return AdvisoryPrefix + "." + work + "." + consumer
}

// AdvisoryPrefix starts every max-deliveries advisory.
const AdvisoryPrefix = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"

// Subjects is the subject space of the dead-letter path in the account
// holding the streams: the controller publishes dead jobs and replayed
// ones under it (a jobs account exports it to the control account only).
const Subjects = "tinyctl.dlq"

// Subject is where the controller publishes a dead job of work; the
// dead-letter stream captures it.
func Subject(work string) string { return Subjects + ".dead." + work }

// ReplayPrefix starts the subjects a replayed job of work is published
// on: ReplayPrefix(work) + "." + its original subject. The work-queue
// stream captures them and its subject transform gives the job its
// original subject back, so the worker sees the job as it was sent.
func ReplayPrefix(work string) string { return Subjects + ".replay." + work }

// Headers the controller sets on a dead job, besides the job's own.
const (
	// HeaderSubject is the subject the job was published to.
	HeaderSubject = "Tinyctl-Subject"
	// HeaderSequence is its sequence in the work-queue stream.
	HeaderSequence = "Tinyctl-Sequence"
	// HeaderDeliveries is how often it was handed to a worker.
	HeaderDeliveries = "Tinyctl-Deliveries"
	// HeaderPublished is when it was first stored (RFC 3339, UTC).
	HeaderPublished = "Tinyctl-Published"
)

// Service is the subject space of the controller's dead-letter requests:
// Service + ".list." + namespace + "." + name (ListRequest) and ".replay."
// (ReplayRequest). A namespace's publisher account imports only its own
// namespace's.
const Service = "tinyctl.deadletter"

// ListSubject and ReplaySubject are the requests for component ns/name.
func ListSubject(ns, name string) string   { return Service + ".list." + ns + "." + name }
func ReplaySubject(ns, name string) string { return Service + ".replay." + ns + "." + name }

// ListRequest asks for up to Limit dead jobs from sequence After + 1 of
// the dead-letter stream (0: from the start).
type ListRequest struct {
	After uint64 `json:"after,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// Job is one dead job as `tinyctl jobs dead` shows it.
type Job struct {
	// Sequence is its sequence in the dead-letter stream: what
	// ReplayRequest.Sequences names.
	Sequence   uint64            `json:"sequence"`
	Subject    string            `json:"subject"`
	Deliveries int               `json:"deliveries"`
	Published  time.Time         `json:"published,omitzero"`
	Died       time.Time         `json:"died"`
	Headers    map[string]string `json:"headers,omitempty"`
	Data       []byte            `json:"data"`
}

// ListReply is the answer to a ListRequest: the jobs, how many the
// stream holds in all, and an Error when the request failed.
type ListReply struct {
	Jobs  []Job  `json:"jobs"`
	Total uint64 `json:"total"`
	Error string `json:"error,omitempty"`
}

// ReplayRequest names the dead jobs to put back on the queue: Sequences,
// or every one with All.
type ReplayRequest struct {
	Sequences []uint64 `json:"sequences,omitempty"`
	All       bool     `json:"all,omitempty"`
}

// ReplayReply says how many jobs went back on the queue, which named
// sequences were not found, and an Error when the request failed.
type ReplayReply struct {
	Replayed int      `json:"replayed"`
	Missing  []uint64 `json:"missing,omitempty"`
	Error    string   `json:"error,omitempty"`
}
