package worker

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Publish stores data on subject in the stream that holds it and waits for
// the stream's acknowledgement (for at most 5s, or until ctx ends). A
// component's minted credentials allow the subjects of its
// spec.jobs.publish: another component's jobs, say, which the stream of
// that component then holds. The message carries ctx's trace context (the
// handler's, by default as W3C traceparent and baggage), so the span of
// the worker that takes it up continues this job's trace.
func (j *Job) Publish(ctx context.Context, subject string, data []byte) error {
	return j.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data})
}

// PublishMsg is Publish with headers of the caller's. A job is delivered
// at least once, so its handler may publish twice: set the Nats-Msg-Id
// header (jetstream.MsgIDHeader) from the job's ID and the stream drops a
// copy published within its duplicate window.
func (j *Job) PublishMsg(ctx context.Context, msg *nats.Msg) error {
	if msg.Header == nil {
		msg.Header = nats.Header{}
	}
	j.w.o.propagator.Inject(ctx, headerCarrier(msg.Header))
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	if _, err := j.w.js.PublishMsg(ctx, msg); err != nil {
		return fmt.Errorf("publish to %s: %w", msg.Subject, err)
	}
	return nil
}
