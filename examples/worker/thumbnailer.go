package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/worker"
)

// request is a thumbnail job.
type request struct {
	Image string `json:"image"`
	Sizes []int  `json:"sizes"`
}

// thumbnailer handles thumbnail jobs and records each one it finished.
type thumbnailer struct {
	work time.Duration

	mu     sync.Mutex
	record io.WriteCloser // nil: log only
}

func newThumbnailer(recordPath, work string) (*thumbnailer, error) {
	d, err := workDuration(work)
	if err != nil {
		return nil, err
	}
	t := &thumbnailer{work: d}
	if recordPath != "" {
		f, err := os.OpenFile(recordPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("THUMBNAIL_RECORD: %w", err)
		}
		t.record = f
	}
	return t, nil
}

// Handle renders every size of the job's image, then records the job. It
// returns an error (the job is retried) when the work was interrupted or
// the record could not be written, and gives up on a job it cannot read.
func (t *thumbnailer) Handle(ctx context.Context, job *worker.Job) error {
	var req request
	if err := json.Unmarshal(job.Data(), &req); err != nil || req.Image == "" {
		return job.Term(fmt.Sprintf("not a thumbnail job (want {\"image\": ..., \"sizes\": [...]}): %q", job.Data()))
	}
	for range max(len(req.Sizes), 1) {
		select {
		case <-time.After(t.work): // pretend to resize
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := t.write(fmt.Sprintf("%s %d %s %s %v\n", job.ID(), job.Attempt(), job.Subject(), req.Image, req.Sizes)); err != nil {
		return err
	}
	zerolog.Ctx(ctx).Info().Str("job", job.ID()).Int("attempt", job.Attempt()).Str("image", req.Image).
		Ints("sizes", req.Sizes).Msg("thumbnailed")
	return nil
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
