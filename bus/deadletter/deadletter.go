// Package deadletter moves the jobs a component's worker never finished
// (they used up the consumer's deliveries) out of its work-queue stream
// into its dead-letter stream, lists them and puts them back: the
// mechanics of spec.jobs.deadLetter, on the JetStream API of the account
// that holds the streams (names and wire types in api/deadletter).
//
// Every step is a JetStream request whose effect a repeat does not
// double: the dead-letter stream keeps the max-deliveries advisory until
// its job is moved (a move interrupted between its steps is finished by
// the next sweep), a moved or replayed job carries a message ID the
// receiving stream deduplicates within its duplicate window, and a
// message already deleted counts as deleted.
package deadletter

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/bus"
)

// Queues moves dead jobs in one account's streams. It is safe for
// concurrent use.
type Queues struct {
	c *bus.Conn
	// api is the JetStream API prefix ("$JS.API", or another account's
	// imported under a prefix); subjects is where deadletter.Subjects of
	// that account is reached from c's.
	api, subjects string
}

// New returns the Queues of c's own account.
func New(c *bus.Conn) *Queues {
	return &Queues{c: c, api: "$JS.API", subjects: deadletter.Subjects}
}

// NewPrefixed returns the Queues of the account whose JetStream API c's
// account imports under apiPrefix and whose deadletter.Subjects it
// imports as subjects.
func NewPrefixed(c *bus.Conn, apiPrefix, subjects string) *Queues {
	return &Queues{c: c, api: apiPrefix, subjects: subjects}
}

// local is subject (under deadletter.Subjects) as c's account reaches it.
func (q *Queues) local(subject string) string {
	return q.subjects + strings.TrimPrefix(subject, deadletter.Subjects)
}

// MaxSweep bounds the jobs one Sweep moves; the next sweep goes on.
const MaxSweep = 1000

// Sweep moves every job of work-queue stream work whose max-deliveries
// advisory (of consumer) its dead-letter stream holds into that stream,
// deletes it from work, and says how many it moved. An advisory whose
// job is gone (acknowledged late, aged out) is dropped.
func (q *Queues) Sweep(ctx context.Context, work, consumer string) (int, error) {
	dead, advisory := deadletter.StreamName(work), deadletter.Advisory(work, consumer)
	moved := 0
	for seq := uint64(1); moved < MaxSweep; {
		adv, ok, err := q.get(ctx, dead, getRequest{Seq: seq, NextBySubj: advisory})
		if err != nil || !ok {
			return moved, err
		}
		seq = adv.Seq + 1
		var a struct {
			StreamSeq  uint64 `json:"stream_seq"`
			Deliveries int    `json:"deliveries"`
		}
		if json.Unmarshal(adv.Data, &a) == nil && a.StreamSeq > 0 {
			n, err := q.move(ctx, work, a.StreamSeq, a.Deliveries)
			if err != nil {
				return moved, err
			}
			moved += n
		}
		if err := q.remove(ctx, dead, adv.Seq); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// move copies job seq of work into its dead-letter stream and deletes it
// from work (1), or does nothing when work no longer holds it (0).
func (q *Queues) move(ctx context.Context, work string, seq uint64, deliveries int) (int, error) {
	job, ok, err := q.get(ctx, work, getRequest{Seq: seq})
	if err != nil || !ok {
		return 0, err
	}
	msg := nats.NewMsg(q.local(deadletter.Subject(work)))
	msg.Data = job.Data
	msg.Header = job.header()
	msg.Header.Set(deadletter.HeaderSubject, job.Subject)
	msg.Header.Set(deadletter.HeaderSequence, strconv.FormatUint(seq, 10))
	msg.Header.Set(deadletter.HeaderDeliveries, strconv.Itoa(deliveries))
	msg.Header.Set(deadletter.HeaderPublished, job.Time.UTC().Format(time.RFC3339Nano))
	msg.Header.Set(nats.MsgIdHdr, fmt.Sprintf("dead:%s:%d", work, seq))
	if err := q.publish(ctx, msg); err != nil {
		return 0, err
	}
	return 1, q.remove(ctx, work, seq)
}

// MaxList bounds the jobs one List returns.
const MaxList = 100

// List returns dead jobs of work-queue stream work from sequence
// req.After + 1 on (at most req.Limit, 20 when 0, MaxList at most), and
// how many it holds. ErrNoStream: the component has no dead-letter
// stream.
func (q *Queues) List(ctx context.Context, work string, req deadletter.ListRequest) (deadletter.ListReply, error) {
	dead, subject := deadletter.StreamName(work), deadletter.Subject(work)
	var out deadletter.ListReply
	var err error
	if out.Total, err = q.count(ctx, dead, subject); err != nil {
		return out, err
	}
	limit := min(max(req.Limit, 0), MaxList)
	if limit == 0 {
		limit = 20
	}
	out.Jobs = []deadletter.Job{}
	for seq := req.After + 1; len(out.Jobs) < limit; {
		m, ok, err := q.get(ctx, dead, getRequest{Seq: seq, NextBySubj: subject})
		if err != nil || !ok {
			return out, err
		}
		out.Jobs = append(out.Jobs, jobOf(m))
		seq = m.Seq + 1
	}
	return out, nil
}

// jobOf reads a dead job from its stored message.
func jobOf(m stored) deadletter.Job {
	h := m.header()
	j := deadletter.Job{Sequence: m.Seq, Subject: h.Get(deadletter.HeaderSubject), Died: m.Time, Data: m.Data}
	j.Deliveries, _ = strconv.Atoi(h.Get(deadletter.HeaderDeliveries))
	j.Published, _ = time.Parse(time.RFC3339Nano, h.Get(deadletter.HeaderPublished))
	for k := range h {
		if !ours(k) {
			if j.Headers == nil {
				j.Headers = map[string]string{}
			}
			j.Headers[k] = h.Get(k)
		}
	}
	return j
}

// ours says whether header k is one the move set.
func ours(k string) bool {
	return strings.HasPrefix(k, "Tinyctl-") || k == nats.MsgIdHdr
}
