package render

import (
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/deadletter"
)

// Dead-letter stream limits: a week of dead jobs, at most this many (the
// oldest go first), within the namespace's quota like its work queue; a
// job moved twice within the duplicate window (a move interrupted and
// done again) is stored once.
const (
	deadLetterMaxAge  = 7 * 24 * time.Hour
	deadLetterMaxMsgs = 10_000
	deadLetterDups    = 2 * time.Minute
)

// withDeadLetters returns the work-queue stream work taking replayed jobs
// too (deadletter.ReplayPrefix, given back their original subject by the
// stream's subject transform) and its dead-letter stream: it captures the
// consumer's max-deliveries advisories and the dead jobs the controller
// moves there (deadletter.Subject), keeps them by limits and drops the
// oldest when full.
func withDeadLetters(work jetstream.StreamConfig, consumer jetstream.ConsumerConfig) (jetstream.StreamConfig, *jetstream.StreamConfig) {
	replay := deadletter.ReplayPrefix(work.Name) + ".>"
	work.Subjects = append(slices.Clone(work.Subjects), replay)
	work.SubjectTransform = &jetstream.SubjectTransformConfig{Source: replay, Destination: ">"}
	dead := &jetstream.StreamConfig{
		Name:              deadletter.StreamName(work.Name),
		Description:       "tinyctl dead letters of " + work.Name,
		Subjects:          []string{deadletter.Advisory(work.Name, consumer.Durable), deadletter.Subject(work.Name)},
		Retention:         jetstream.LimitsPolicy,
		MaxConsumers:      unlimited,
		MaxMsgs:           deadLetterMaxMsgs,
		MaxBytes:          unlimited,
		MaxMsgsPerSubject: unlimited,
		MaxMsgSize:        unlimited,
		Discard:           jetstream.DiscardOld,
		MaxAge:            deadLetterMaxAge,
		Duplicates:        deadLetterDups,
		Storage:           work.Storage,
		Replicas:          work.Replicas,
		Metadata:          maps.Clone(work.Metadata),
	}
	return work, dead
}
