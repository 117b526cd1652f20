package worker

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Outcomes of a job, the values of the outcome label of
// tinyctl_worker_jobs_total.
const (
	outcomeAck       = "ack"       // acknowledged: JetStream removes it
	outcomeNak       = "nak"       // handed back for redelivery by the handler
	outcomeError     = "error"     // the handler failed: redelivered after a delay
	outcomePanic     = "panic"     // the handler panicked: redelivered after a delay
	outcomeTerm      = "term"      // given up: never redelivered
	outcomeReturned  = "returned"  // pulled while draining: redelivered 2 s later
	outcomeUnsettled = "unsettled" // an ack that failed: redelivered after the ack wait
)

// Job is one message from the component's consumer. A handler may settle
// it itself (Ack, Nak, Term); otherwise the worker acks it when the
// handler returns nil and naks it when the handler fails. Its methods are
// safe for concurrent use.
type Job struct {
	msg  jetstream.Msg
	meta *jetstream.MsgMetadata
	w    *Worker

	mu      sync.Mutex
	outcome string
}

func newJob(msg jetstream.Msg, w *Worker) *Job {
	meta, err := msg.Metadata()
	if err != nil {
		meta = &jetstream.MsgMetadata{} // not a JetStream message: only tests make these
	}
	return &Job{msg: msg, meta: meta, w: w}
}

// Subject is the subject the job was published on.
func (j *Job) Subject() string { return j.msg.Subject() }

// Data is the job's payload.
func (j *Job) Data() []byte { return j.msg.Data() }

// Header holds the job's NATS headers (nil when it has none).
func (j *Job) Header() nats.Header { return j.msg.Headers() }

// ID is the publisher's Nats-Msg-Id header, which JetStream uses to drop
// duplicate publishes, or else the job's stream sequence number.
func (j *Job) ID() string {
	if id := j.msg.Headers().Get(jetstream.MsgIDHeader); id != "" {
		return id
	}
	return strconv.FormatUint(j.meta.Sequence.Stream, 10)
}

// Attempt is how many times JetStream has delivered the job, this time
// included: 1 the first time, more after a redelivery.
func (j *Job) Attempt() int { return int(j.meta.NumDelivered) }

// LastAttempt reports whether JetStream delivers the job no more after
// this attempt: its consumer's maxDeliver is reached. A job whose handler
// fails now stays in the stream, delivered to no one, until the stream's
// maxAge: record it somewhere, or Term it.
func (j *Job) LastAttempt() bool {
	b := j.w.bound.Load()
	return b != nil && b.maxDeliver > 0 && j.Attempt() >= b.maxDeliver
}

// Ack acknowledges the job and waits until the server has recorded it
// (for at most 5s, or until ctx ends): JetStream removes it from the
// stream. It fails when the job was already settled or the server did not
// confirm; an unconfirmed job is redelivered after its ack wait.
func (j *Job) Ack(ctx context.Context) error {
	return j.settle(outcomeAck, func() error {
		ctx, cancel := context.WithTimeout(ctx, settleTimeout)
		defer cancel()
		return j.msg.DoubleAck(ctx)
	})
}

// Nak hands the job back: JetStream redelivers it after delay (0: at
// once), to this or another worker.
func (j *Job) Nak(delay time.Duration) error {
	return j.settle(outcomeNak, func() error { return j.msg.NakWithDelay(delay) })
}

// Term gives the job up: JetStream never redelivers it. reason is
// recorded in the server's advisory.
func (j *Job) Term(reason string) error {
	return j.settle(outcomeTerm, func() error { return j.msg.TermWithReason(reason) })
}

// InProgress tells JetStream the job is still being worked on: its ack
// wait starts again. Call it from long handlers, or run the worker with
// KeepAlive.
func (j *Job) InProgress() error { return j.msg.InProgress() }

// settle runs send unless the job was settled before, and records outcome
// when it succeeds.
func (j *Job) settle(outcome string, send func() error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.outcome != "" {
		return jetstream.ErrMsgAlreadyAckd
	}
	if err := send(); err != nil {
		return err
	}
	j.outcome = outcome
	return nil
}

// settled returns the outcome the handler gave the job, or "".
func (j *Job) settled() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.outcome
}
