package render

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
)

// Limits nats-server enforces on stream and consumer settings.
const (
	minWindow = 100 * time.Millisecond
	// unlimited is how JetStream spells "no limit"; the server reports -1
	// for a limit sent as 0, so rendering -1 keeps desired and live equal.
	unlimited = -1
)

// streamConfig is the component's work-queue stream: each job is kept until
// one worker acknowledges it. Its size is capped by caps (the spec may ask
// for less). When a size limit is reached the stream refuses new jobs
// (DiscardNew) rather than dropping queued ones. A spec that sets no
// replicas gets caps.Replicas.
func streamConfig(c api.Component, caps StreamLimits) (jetstream.StreamConfig, error) {
	md, st := c.Metadata, c.Spec.Jobs.Stream
	storage, err := storageType(st.Storage)
	if err != nil {
		return jetstream.StreamConfig{}, err
	}
	maxAge, err := duration("spec.jobs.stream.maxAge", st.MaxAge)
	if err != nil {
		return jetstream.StreamConfig{}, err
	}
	dups, err := duration("spec.jobs.stream.duplicateWindow", st.DuplicateWindow)
	if err != nil {
		return jetstream.StreamConfig{}, err
	}
	if err := checkStreamLimits(st.Replicas, maxAge, dups); err != nil {
		return jetstream.StreamConfig{}, err
	}
	maxBytes, maxMsgs, err := streamLimits(caps, storage, st.MaxBytes, st.MaxMsgs)
	if err != nil {
		return jetstream.StreamConfig{}, err
	}
	return jetstream.StreamConfig{
		Name:              StreamName(md.Namespace, md.Name),
		Description:       "tinyctl jobs of component " + key(c),
		Subjects:          slices.Clone(c.Spec.Jobs.Subjects),
		Retention:         jetstream.WorkQueuePolicy,
		MaxConsumers:      unlimited,
		MaxMsgs:           maxMsgs,
		MaxBytes:          maxBytes,
		MaxMsgsPerSubject: unlimited,
		MaxMsgSize:        unlimited,
		Discard:           jetstream.DiscardNew,
		MaxAge:            maxAge,
		Storage:           storage,
		Replicas:          max(cmp.Or(st.Replicas, caps.Replicas), 1),
		Duplicates:        dups,
		Metadata:          jetstreamMetadata(c),
	}, nil
}

// checkStreamLimits refuses what nats-server would refuse.
func checkStreamLimits(replicas int, maxAge, dups time.Duration) error {
	switch {
	case replicas < 0 || replicas > MaxStreamReplicas:
		return fmt.Errorf("spec.jobs.stream.replicas %d: must be between 1 and %d", replicas, MaxStreamReplicas)
	case maxAge != 0 && maxAge < minWindow:
		return fmt.Errorf("spec.jobs.stream.maxAge %s: must be 0 (unlimited) or at least %s", maxAge, minWindow)
	case dups != 0 && dups < minWindow:
		return fmt.Errorf("spec.jobs.stream.duplicateWindow %s: must be at least %s", dups, minWindow)
	case maxAge != 0 && dups > maxAge:
		return fmt.Errorf("spec.jobs.stream.duplicateWindow %s: must not exceed maxAge %s", dups, maxAge)
	}
	return nil
}

// consumerConfig is the durable pull consumer the worker binds. It has no
// filter subject: it takes every job of its stream, and a work-queue stream
// allows only one such consumer. With a backoff list nats-server uses its
// first step as the ack wait (and a pedantic server refuses anything else),
// so the rendered AckWait is backoff[0] and desired equals live.
func consumerConfig(c api.Component) (jetstream.ConsumerConfig, error) {
	md, co := c.Metadata, c.Spec.Jobs.Consumer
	ackWait, err := duration("spec.jobs.consumer.ackWait", co.AckWait)
	if err != nil {
		return jetstream.ConsumerConfig{}, err
	}
	backoff, err := backoffSteps(co.Backoff)
	if err != nil {
		return jetstream.ConsumerConfig{}, err
	}
	if len(backoff) > 0 {
		ackWait = backoff[0]
	}
	maxDeliver := int(limit(int64(co.MaxDeliver)))
	if err := checkConsumerLimits(co, maxDeliver, len(backoff)); err != nil {
		return jetstream.ConsumerConfig{}, err
	}
	name := ConsumerName(md.Namespace, md.Name)
	return jetstream.ConsumerConfig{
		Name:          name,
		Durable:       name,
		Description:   "tinyctl worker of component " + key(c),
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    maxDeliver,
		BackOff:       backoff,
		ReplayPolicy:  jetstream.ReplayInstantPolicy,
		MaxAckPending: co.MaxAckPending,
		Metadata:      jetstreamMetadata(c),
	}, nil
}

// checkConsumerLimits refuses what nats-server would refuse. maxDeliver is
// the spec's with 0 read as unlimited, as the server reads it.
func checkConsumerLimits(co api.ConsumerSpec, maxDeliver, steps int) error {
	switch {
	case co.MaxDeliver < unlimited:
		return fmt.Errorf("spec.jobs.consumer.maxDeliver %d: must be -1 (unlimited) or positive", co.MaxDeliver)
	case maxDeliver != unlimited && steps > maxDeliver:
		return fmt.Errorf("spec.jobs.consumer.backoff: %d steps exceed maxDeliver %d", steps, maxDeliver)
	case co.MaxAckPending < unlimited:
		return fmt.Errorf("spec.jobs.consumer.maxAckPending %d: must be -1 (unlimited) or positive", co.MaxAckPending)
	}
	return nil
}

func backoffSteps(in []api.Duration) ([]time.Duration, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]time.Duration, len(in))
	for i, s := range in {
		d, err := duration(fmt.Sprintf("spec.jobs.consumer.backoff[%d]", i), s)
		if err != nil {
			return nil, err
		}
		if d <= 0 {
			return nil, fmt.Errorf("spec.jobs.consumer.backoff[%d] %s: must be positive", i, d)
		}
		out[i] = d
	}
	return out, nil
}

// jetstreamMetadata marks a stream or consumer as tinyctl's, the way labels
// mark Kubernetes children.
func jetstreamMetadata(c api.Component) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedByValue,
		LabelComponent: api.Key(c.Metadata.Namespace, c.Metadata.Name),
	}
}

func storageType(s string) (jetstream.StorageType, error) {
	switch s {
	case "file", "":
		return jetstream.FileStorage, nil
	case "memory":
		return jetstream.MemoryStorage, nil
	default:
		return 0, fmt.Errorf("spec.jobs.stream.storage %q: must be file or memory", s)
	}
}

func duration(field string, d api.Duration) (time.Duration, error) {
	if d == "" {
		return 0, nil
	}
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	if v < 0 {
		return 0, fmt.Errorf("%s %s: must not be negative", field, v)
	}
	return v, nil
}

func limit(v int64) int64 {
	if v <= 0 {
		return unlimited
	}
	return v
}
