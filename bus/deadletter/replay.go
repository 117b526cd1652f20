package deadletter

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/api/deadletter"
)

// Replay puts dead jobs of work-queue stream work back on it, with their
// original subject and headers, and deletes them from the dead-letter
// stream: those req.Sequences names, or all (at most MaxSweep at a time)
// with req.All. A named sequence that holds no dead job is reported
// missing. It stops at the first job the work queue refuses (full, say),
// having replayed those before.
func (q *Queues) Replay(ctx context.Context, work string, req deadletter.ReplayRequest) (deadletter.ReplayReply, error) {
	dead, subject := deadletter.StreamName(work), deadletter.Subject(work)
	var out deadletter.ReplayReply
	if _, err := q.count(ctx, dead, subject); err != nil {
		return out, err
	}
	if req.All {
		for after := uint64(0); out.Replayed < MaxSweep; out.Replayed++ {
			m, ok, err := q.get(ctx, dead, getRequest{Seq: after + 1, NextBySubj: subject})
			if err != nil || !ok {
				return out, err
			}
			after = m.Seq
			if err := q.replay(ctx, work, m); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	for _, seq := range req.Sequences {
		m, ok, err := q.get(ctx, dead, getRequest{Seq: seq})
		if err != nil {
			return out, err
		}
		if !ok || m.Subject != subject {
			out.Missing = append(out.Missing, seq)
			continue
		}
		if err := q.replay(ctx, work, m); err != nil {
			return out, err
		}
		out.Replayed++
	}
	return out, nil
}

// replay publishes dead job m back to work under its original subject and
// deletes it from the dead-letter stream.
func (q *Queues) replay(ctx context.Context, work string, m stored) error {
	h := m.header()
	orig := h.Get(deadletter.HeaderSubject)
	if orig == "" {
		return fmt.Errorf("dead job %d of %s names no subject", m.Seq, work)
	}
	msg := nats.NewMsg(q.local(deadletter.ReplayPrefix(work) + "." + orig))
	msg.Data = m.Data
	msg.Header = nats.Header{}
	for k, v := range h {
		if !ours(k) {
			msg.Header[k] = v
		}
	}
	msg.Header.Set(nats.MsgIdHdr, fmt.Sprintf("replay:%s:%d", work, m.Seq))
	if err := q.publish(ctx, msg); err != nil {
		return err
	}
	return q.remove(ctx, deadletter.StreamName(work), m.Seq)
}
