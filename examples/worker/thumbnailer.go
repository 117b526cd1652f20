package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/worker"
)

// request is a thumbnail job.
type request struct {
	Image string `json:"image"`
	Sizes []int  `json:"sizes"`
}

// result is what the thumbnailer publishes of a job it finished.
type result struct {
	Job        string   `json:"job"`
	Image      string   `json:"image"`
	Thumbnails []string `json:"thumbnails"`
}

// thumbnailer handles thumbnail jobs and records each one it finished.
type thumbnailer struct {
	work    time.Duration
	results string // the subject results go to; "": none

	mu     sync.Mutex
	record io.WriteCloser // nil: log only
}

func newThumbnailer(recordPath, work, results string) (*thumbnailer, error) {
	d, err := workDuration(work)
	if err != nil {
		return nil, err
	}
	t := &thumbnailer{work: d, results: results}
	if recordPath != "" {
		f, err := os.OpenFile(recordPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("THUMBNAIL_RECORD: %w", err)
		}
		t.record = f
	}
	return t, nil
}

// Handle renders every size of the job's image, publishes the result
// when THUMBNAIL_RESULTS names a subject, then records the job. It returns
// an error (the job is retried) when the work was interrupted or the
// result or record could not be written, and gives up on a job it cannot
// read (Permanent: retrying cannot fix it).
func (t *thumbnailer) Handle(ctx context.Context, job *worker.Job) error {
	var req request
	if err := json.Unmarshal(job.Data(), &req); err != nil || req.Image == "" {
		return worker.Permanent(fmt.Errorf("not a thumbnail job (want {\"image\": ..., \"sizes\": [...]}): %q", job.Data()))
	}
	for range max(len(req.Sizes), 1) {
		select {
		case <-time.After(t.work): // pretend to resize
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := t.publish(ctx, job, req); err != nil {
		return err
	}
	if err := t.write(fmt.Sprintf("%s %d %s %s %v\n", job.ID(), job.Attempt(), job.Subject(), req.Image, req.Sizes)); err != nil {
		return err
	}
	zerolog.Ctx(ctx).Info().Str("job", job.ID()).Int("attempt", job.Attempt()).Str("image", req.Image).
		Ints("sizes", req.Sizes).Msg("thumbnailed")
	return nil
}

// publish sends the job's result to t.results, with the job's ID as its
// Nats-Msg-Id: a job run twice (delivery is at least once) publishes a
// copy the results stream drops.
func (t *thumbnailer) publish(ctx context.Context, job *worker.Job, req request) error {
	if t.results == "" {
		return nil
	}
	res := result{Job: job.ID(), Image: req.Image}
	for _, s := range req.Sizes {
		res.Thumbnails = append(res.Thumbnails, fmt.Sprintf("%s@%dpx", req.Image, s))
	}
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return job.PublishMsg(ctx, &nats.Msg{Subject: t.results, Data: data, Header: nats.Header{jetstream.MsgIDHeader: {job.ID()}}})
}

func (t *thumbnailer) write(line string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.record == nil {
		return nil
	}
	_, err := io.WriteString(t.record, line)
	return err
}

// Close closes the record.
func (t *thumbnailer) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.record != nil {
		_ = t.record.Close()
		t.record = nil
	}
}
