// Package worker is the library a tinyctl worker is written with: it
// connects the way the Deployment tinyctl renders says, fetches jobs from
// the component's durable JetStream consumer, runs a Handler on each with
// bounded concurrency, settles every job, and drains on SIGTERM.
//
// A main is one call:
//
//	err := worker.Run(ctx, func(ctx context.Context, job *worker.Job) error {
//		return resize(ctx, job.Data())
//	}, worker.MaxInFlight(4))
//
// # Connecting
//
// ConfigFromEnv reads what the Deployment sets (package api/workerenv
// names the variables): NATS_URL, TINYCTL_STREAM, TINYCTL_CONSUMER and,
// when the cluster mounts credentials, NATS_CREDS, TINYCTL_INBOX_PREFIX and
// the TLS files NATS_CA, NATS_CERT and NATS_KEY. A missing variable or an
// unreadable file is an error naming it. The credentials file is read
// again on every reconnect: the controller mints new credentials at half
// their lifetime and Kubernetes updates the mounted Secret in place, so a
// running worker picks them up without a restart. Reply inboxes use
// TINYCTL_INBOX_PREFIX, the only inboxes minted credentials may receive on.
// The connection reconnects for ever.
//
// # Jobs
//
// The worker asks JetStream for only as many jobs as it has free handler
// slots (MaxInFlight, default 1), so jobs wait in the stream, where
// another replica can take them, not in this process. A handler that
// returns nil has its job acked, and the ack is confirmed by the server
// before the slot is freed; an error naks it with a delay: the consumer's
// backoff step for the attempt (JetStream applies backoff to ack timeouts
// only, never to naks), else DefaultRetryDelay, or as RetryDelay says. An
// error wrapped in Permanent terminates the job instead, its text the
// reason; a panic is recovered and naks it. A handler may settle the job
// itself: Job.Ack, Job.Nak with a delay, Job.Term to give it up for good.
// Job.InProgress restarts the job's ack wait; with KeepAlive the worker
// does that every half ack wait while the handler runs. JetStream gives up
// on a job after the consumer's maxDeliver attempts: Job.LastAttempt says
// when a handler runs the last one. Job.Publish stores a result on another
// subject (spec.jobs.publish) with the job's trace context.
//
// For many small jobs a second, Prefetch fetches jobs ahead of the
// handlers into a buffer in this process, and UnconfirmedAcks frees a
// slot without waiting for the ack's confirmation; docs/worker.md
// measures both.
//
// # Draining, and why no job is lost
//
// When ctx ends or the process gets SIGTERM (Run), the worker stops
// pulling within a couple of seconds; a job that arrives after that is
// handed back (nak) so it is redelivered 2 s later, once no draining pod
// still has a pull request waiting to take it. Running handlers get the
// Grace period (default 25s, under Kubernetes' 30s) to finish and their
// jobs are settled as usual; then their contexts are cancelled. Nothing is
// lost even when a process dies mid-job: a job leaves the work-queue
// stream only when an ack reaches the server, and JetStream redelivers
// every delivered job it has no ack for once the consumer's ack wait has
// passed. The price is at-least-once delivery: a job whose handler
// finished but whose ack was lost runs again, so handlers should be
// idempotent (Job.ID and Job.Attempt help).
//
// # Metrics and traces
//
// The worker's Prometheus metrics are tinyctl_worker_jobs_total by
// outcome, tinyctl_worker_handler_duration_seconds,
// tinyctl_worker_jobs_in_flight and tinyctl_worker_pull_errors_total, in a
// registry of its own or the one given with Registry. Run serves it at
// /metrics when WORKER_METRICS_ADDR (EnvMetricsAddr) or MetricsAddr says
// where.
//
// The handler's ctx carries the W3C trace context (traceparent, baggage)
// of the job's headers and a consumer span started from OpenTelemetry's
// global TracerProvider. This package depends on the OpenTelemetry API
// only: spans are exported once the program installs an SDK and exporter
// (for the collector OTEL_EXPORTER_OTLP_ENDPOINT names); without one they
// cost nothing, and the trace context still reaches the handler.
//
// Logs go to the zerolog logger ctx carries (none: no logs).
package worker
