package deadletter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/bus"
)

// JetStream API error codes the moves read.
const (
	errNoMessage      = 10037 // no message found (a get past the last, a deleted sequence)
	errStreamNotFound = 10059
	errDeleteFailed   = 10057 // a delete of a sequence that is not there
)

// apiError is a JetStream API error answer.
type apiError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%d)", e.Description, e.ErrCode) }

// ErrNoStream is what a move on a component without a dead-letter stream
// returns.
var ErrNoStream = errors.New("no dead-letter stream")

// stored is a message as STREAM.MSG.GET returns it.
type stored struct {
	Subject string    `json:"subject"`
	Seq     uint64    `json:"seq"`
	Header  []byte    `json:"hdrs,omitempty"`
	Data    []byte    `json:"data,omitempty"`
	Time    time.Time `json:"time"`
}

func (m stored) header() nats.Header {
	if len(m.Header) == 0 {
		return nats.Header{}
	}
	h, err := nats.DecodeHeadersMsg(m.Header)
	if err != nil {
		return nats.Header{}
	}
	return h
}

// getRequest is STREAM.MSG.GET's request: a sequence, or the first
// message on a subject from a sequence on.
type getRequest struct {
	Seq        uint64 `json:"seq,omitempty"`
	NextBySubj string `json:"next_by_subj,omitempty"`
}

// request sends one JetStream API request and decodes its answer into
// out, returning the API's error as an *apiError.
func (q *Queues) request(ctx context.Context, op, stream string, body, out any) error {
	subject := q.api + "." + op + "." + stream
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return q.c.Guarded(ctx, []string{subject}, func(ctx context.Context) error {
		msg, err := q.c.NATS().RequestWithContext(ctx, subject, b)
		if err != nil {
			return &bus.TransientError{Op: op + " " + stream, Err: err}
		}
		var e struct {
			Error *apiError `json:"error"`
		}
		if err := json.Unmarshal(msg.Data, &e); err != nil {
			return fmt.Errorf("bus: %s %s: %w", op, stream, err)
		}
		if e.Error != nil {
			return e.Error
		}
		return json.Unmarshal(msg.Data, out)
	})
}

// get returns a stored message, ok false when there is none.
func (q *Queues) get(ctx context.Context, stream string, req getRequest) (stored, bool, error) {
	var out struct {
		Message stored `json:"message"`
	}
	err := q.request(ctx, "STREAM.MSG.GET", stream, req, &out)
	if code(err) == errNoMessage {
		return stored{}, false, nil
	}
	if code(err) == errStreamNotFound {
		return stored{}, false, fmt.Errorf("stream %s: %w", stream, ErrNoStream)
	}
	return out.Message, err == nil, err
}

// remove deletes one message (without erasing its bytes); one already
// gone is not an error.
func (q *Queues) remove(ctx context.Context, stream string, seq uint64) error {
	var out struct {
		Success bool `json:"success"`
	}
	err := q.request(ctx, "STREAM.MSG.DELETE", stream, map[string]any{"seq": seq, "no_erase": true}, &out)
	if c := code(err); c == errNoMessage || c == errDeleteFailed {
		return nil
	}
	return err
}

// count is how many messages stream holds on subject.
func (q *Queues) count(ctx context.Context, stream, subject string) (uint64, error) {
	var out struct {
		State struct {
			Subjects map[string]uint64 `json:"subjects"`
		} `json:"state"`
	}
	err := q.request(ctx, "STREAM.INFO", stream, map[string]any{"subjects_filter": subject}, &out)
	if code(err) == errStreamNotFound {
		return 0, fmt.Errorf("stream %s: %w", stream, ErrNoStream)
	}
	return out.State.Subjects[subject], err
}

// publish stores msg with a JetStream publish and its acknowledgement.
func (q *Queues) publish(ctx context.Context, msg *nats.Msg) error {
	return q.c.Guarded(ctx, []string{msg.Subject}, func(ctx context.Context) error {
		reply, err := q.c.NATS().RequestMsgWithContext(ctx, msg)
		if err != nil {
			return &bus.TransientError{Op: "publish " + msg.Subject, Err: err}
		}
		var ack struct {
			Error *apiError `json:"error"`
			Seq   uint64    `json:"seq"`
		}
		if err := json.Unmarshal(reply.Data, &ack); err != nil {
			return fmt.Errorf("bus: publish %s: %w", msg.Subject, err)
		}
		if ack.Error != nil {
			return fmt.Errorf("bus: publish %s: %w", msg.Subject, ack.Error)
		}
		return nil
	})
}

func code(err error) int {
	var e *apiError
	if errors.As(err, &e) {
		return e.ErrCode
	}
	return 0
}
