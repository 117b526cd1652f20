package worker

import (
	"context"
	"strings"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the tracer of the spans the worker starts.
const tracerName = "github.com/tinyctl/tinyctl/worker"

// traced returns ctx carrying the trace context the job's headers carry
// and a consumer span for handling it, from the global TracerProvider
// (a no-op until the program installs an SDK, yet the remote span context
// still reaches the handler).
func traced(ctx context.Context, o options, j *Job) (context.Context, trace.Span) {
	ctx = o.propagator.Extract(ctx, headerCarrier(j.Header()))
	return otel.Tracer(tracerName).Start(ctx, j.Subject()+" process",
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.String("messaging.system", "nats"),
			attribute.String("messaging.operation.type", "process"),
			attribute.String("messaging.destination.name", j.Subject()),
			attribute.String("messaging.message.id", j.ID()),
			attribute.Int("messaging.message.delivery_count", j.Attempt()),
		))
}

// headerCarrier reads and writes trace context in NATS headers. Lookups
// ignore case: NATS keeps header names as sent ("traceparent" from most
// clients), unlike HTTP, which canonicalizes them.
type headerCarrier nats.Header

func (h headerCarrier) Get(key string) string {
	if v := nats.Header(h).Get(key); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, key) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

func (h headerCarrier) Set(key, value string) { nats.Header(h).Set(key, value) }

func (h headerCarrier) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return keys
}
