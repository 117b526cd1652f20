package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/bus/status"
)

// writeCount is what a controller wrote between two marks: Kubernetes
// writes from the API server's audit log (only those whose user agent is
// the controller's), JetStream API writes from the server's API
// advisories, and status records from the status stream's sequence.
// Others is how many of the Kubernetes writes touched objects of another
// component than the one changed (counted only when one was).
type writeCount struct {
	Kube, JetStream, Status, Others int
}

// The controllers' user agents, as the audit log shows them.
const (
	serveAgent    = "tinyctl-serve/"
	baselineAgent = "tinyctl-crbaseline"
)

// writeMark is the start of a writeCount.
type writeMark struct {
	audit  int64
	js     int64
	status uint64
}

// auditEvent is the part of an audit log line the driver reads.
type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	ObjectRef  struct {
		Resource string `json:"resource"`
		Name     string `json:"name"`
	} `json:"objectRef"`
}

// jsWrites counts JetStream API create, update, delete and purge requests
// outside KV buckets (KV watches create read consumers, which are not
// writes), as the controller's own tests do.
type jsWrites struct{ n atomic.Int64 }

func (e *env) countJetStreamWrites() (*jsWrites, error) {
	w := &jsWrites{}
	_, err := e.conn.NATS().Subscribe("$JS.EVENT.ADVISORY.API", func(m *nats.Msg) {
		var adv struct {
			Subject string `json:"subject"`
		}
		_ = json.Unmarshal(m.Data, &adv)
		if strings.Contains(adv.Subject, ".KV_") {
			return
		}
		for _, verb := range []string{".CREATE.", ".UPDATE.", ".DELETE.", ".PURGE."} {
			if strings.Contains(adv.Subject, verb) {
				w.n.Add(1)
				return
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return w, e.conn.NATS().Flush()
}

// mark notes where every count stands now.
func (e *env) mark(ctx context.Context, js *jsWrites) (writeMark, error) {
	m := writeMark{js: js.n.Load()}
	if fi, err := os.Stat(e.cp.AuditLogPath()); err == nil {
		m.audit = fi.Size()
	}
	var err error
	m.status, err = e.statusSeq(ctx)
	return m, err
}

// since counts what the controller with user agent agent wrote after m;
// changed, when not empty, is the name of the one component changed
// since. The JetStream count needs the advisories delivered: it flushes
// the connection first.
func (e *env) since(ctx context.Context, m writeMark, js *jsWrites, agent, changed string) (writeCount, error) {
	if err := e.conn.NATS().Flush(); err != nil {
		return writeCount{}, err
	}
	c := writeCount{JetStream: int(js.n.Load() - m.js)}
	events, err := e.auditSince(m.audit, agent)
	if err != nil {
		return c, err
	}
	c.Kube = len(events)
	for _, ev := range events {
		if changed != "" && !strings.Contains(ev.ObjectRef.Name, changed) {
			c.Others++
		}
	}
	seq, err := e.statusSeq(ctx)
	c.Status = int(seq - m.status)
	return c, err
}

// auditSince returns the writes (requests with a write verb, dry runs
// left out) the controller with user agent agent made after offset.
func (e *env) auditSince(offset int64, agent string) ([]auditEvent, error) {
	f, err := os.Open(e.cp.AuditLogPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue // a line being written
		}
		if strings.HasPrefix(ev.UserAgent, agent) && !strings.Contains(ev.RequestURI, "dryRun=") {
			out = append(out, ev)
		}
	}
	return out, sc.Err()
}

// statusSeq is the last sequence of the status bucket's stream.
func (e *env) statusSeq(ctx context.Context) (uint64, error) {
	s, err := e.js.Stream(ctx, "KV_"+status.DefaultBucket)
	if err != nil {
		return 0, err
	}
	return s.CachedInfo().State.LastSeq, nil
}
