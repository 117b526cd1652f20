package streams

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// Server defaults that a zero field in a desired config stands for.
const (
	serverDuplicateWindow = 2 * time.Minute
	serverAckWait         = 30 * time.Second
)

// differ collects the fields where a desired config and a live one differ.
type differ []bus.ConfigDiff

func (d *differ) add(field string, want, have any) {
	w, h := fmt.Sprint(want), fmt.Sprint(have)
	if w != h {
		*d = append(*d, bus.ConfigDiff{Field: field, Want: w, Have: h})
	}
}

// unlimited maps the zero value of a limit to the server's -1.
func unlimited[T int | int32 | int64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// streamDiffs compares the settings a desired stream config controls with
// the live config, reading zero desired values as the server's defaults.
func streamDiffs(want, have jetstream.StreamConfig) []bus.ConfigDiff {
	var d differ
	d.add("subjects", sorted(want.Subjects), sorted(have.Subjects))
	d.add("description", want.Description, have.Description)
	d.add("retention", want.Retention, have.Retention)
	d.add("storage", want.Storage, have.Storage)
	d.add("discard", want.Discard, have.Discard)
	d.add("replicas", max(want.Replicas, 1), have.Replicas)
	d.add("maxAge", want.MaxAge, have.MaxAge)
	d.add("duplicates", duplicateWindow(want), have.Duplicates)
	d.add("maxMsgs", unlimited(want.MaxMsgs), have.MaxMsgs)
	d.add("maxBytes", unlimited(want.MaxBytes), have.MaxBytes)
	d.add("maxMsgSize", unlimited(want.MaxMsgSize), have.MaxMsgSize)
	d.add("maxMsgsPerSubject", unlimited(want.MaxMsgsPerSubject), have.MaxMsgsPerSubject)
	d.add("maxConsumers", unlimited(want.MaxConsumers), have.MaxConsumers)
	d.add("noAck", want.NoAck, have.NoAck)
	d.add("denyDelete", want.DenyDelete, have.DenyDelete)
	d.add("denyPurge", want.DenyPurge, have.DenyPurge)
	d.add("allowRollup", want.AllowRollup, have.AllowRollup)
	d.add("metadata", userMetadata(want.Metadata), userMetadata(have.Metadata))
	d.add("subjectTransform", transform(want.SubjectTransform), transform(have.SubjectTransform))
	return d
}

// transform renders a stream's subject transform ("" without one).
func transform(t *jetstream.SubjectTransformConfig) string {
	if t == nil {
		return ""
	}
	return t.Source + " -> " + t.Destination
}

// duplicateWindow is the window the server uses for cfg: as set, else two
// minutes capped at MaxAge.
func duplicateWindow(cfg jetstream.StreamConfig) time.Duration {
	if cfg.Duplicates != 0 {
		return cfg.Duplicates
	}
	if cfg.MaxAge > 0 && cfg.MaxAge < serverDuplicateWindow {
		return cfg.MaxAge
	}
	return serverDuplicateWindow
}

// consumerDiffs compares the settings a desired consumer config controls
// with the live config. Zero desired values stand for the server's
// defaults; limits whose default depends on server or account settings
// (max ack pending, max waiting, replicas, inactive threshold) are
// compared only when set.
func consumerDiffs(want, have jetstream.ConsumerConfig) []bus.ConfigDiff {
	var d differ
	d.add("description", want.Description, have.Description)
	d.add("deliverPolicy", want.DeliverPolicy, have.DeliverPolicy)
	d.add("optStartSeq", want.OptStartSeq, have.OptStartSeq)
	d.add("ackPolicy", want.AckPolicy, have.AckPolicy)
	d.add("ackWait", ackWait(want), have.AckWait)
	d.add("maxDeliver", unlimited(want.MaxDeliver), have.MaxDeliver)
	d.add("backoff", want.BackOff, have.BackOff)
	d.add("filterSubject", want.FilterSubject, have.FilterSubject)
	d.add("filterSubjects", sorted(want.FilterSubjects), sorted(have.FilterSubjects))
	d.add("replayPolicy", want.ReplayPolicy, have.ReplayPolicy)
	d.add("headersOnly", want.HeadersOnly, have.HeadersOnly)
	d.add("memoryStorage", want.MemoryStorage, have.MemoryStorage)
	d.add("deliverSubject", want.DeliverSubject, have.DeliverSubject)
	d.add("metadata", userMetadata(want.Metadata), userMetadata(have.Metadata))
	addIfSet(&d, "maxAckPending", want.MaxAckPending, have.MaxAckPending)
	addIfSet(&d, "maxWaiting", want.MaxWaiting, have.MaxWaiting)
	addIfSet(&d, "replicas", want.Replicas, have.Replicas)
	addIfSet(&d, "inactiveThreshold", want.InactiveThreshold, have.InactiveThreshold)
	return d
}

func addIfSet[T comparable](d *differ, field string, want, have T) {
	var zero T
	if want != zero {
		d.add(field, want, have)
	}
}

// ackWait is the ack wait the server applies to cfg: the first backoff
// step when there is a backoff, else as set, else 30s for acked policies.
func ackWait(cfg jetstream.ConsumerConfig) time.Duration {
	switch {
	case len(cfg.BackOff) > 0:
		return cfg.BackOff[0]
	case cfg.AckWait != 0 || cfg.AckPolicy == jetstream.AckNonePolicy:
		return cfg.AckWait
	}
	return serverAckWait
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// userMetadata drops the keys the server adds ("_nats." prefixed) and
// renders the rest in key order.
func userMetadata(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !strings.HasPrefix(k, "_nats.") {
			parts = append(parts, k+"="+m[k])
		}
	}
	return strings.Join(parts, ",")
}
