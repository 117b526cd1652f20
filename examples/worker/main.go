// Command worker is an example tinyctl worker built with package worker: a
// pretend thumbnailer. A job is JSON, {"image": "s3://bucket/key.png",
// "sizes": [64, 256]}; the worker "renders" each size by waiting
// THUMBNAIL_WORK per size (default 10ms) and records what it did, one line
// per job ("<job id> <attempt> <subject> <image> <sizes>"), in the file
// THUMBNAIL_RECORD names, or only in its log when that is unset. When
// THUMBNAIL_RESULTS names a subject (one of the component's
// spec.jobs.publish), it publishes each job's result there,
// {"job": ID, "image": ..., "thumbnails": [...]}. A job that is not such
// JSON is given up (worker.Permanent): retrying cannot fix it.
//
// Run it where a tinyctl Deployment runs it, or locally under
// `tinyctl dev` (the thumbnailer example's dev.tinyctl.io/run
// annotation), or by hand with the environment a Deployment sets.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/worker"
)

// Exit codes: 2 when the environment is not a worker's.
const (
	exitFailed = 1
	exitEnv    = 2
)

func main() {
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel).With().Timestamp().Logger()
	t, err := newThumbnailer(os.Getenv("THUMBNAIL_RECORD"), os.Getenv("THUMBNAIL_WORK"), os.Getenv("THUMBNAIL_RESULTS"))
	if err != nil {
		log.Error().Err(err).Msg("thumbnailer")
		os.Exit(exitEnv)
	}
	defer t.Close()
	err = worker.Run(log.WithContext(context.Background()), t.Handle, worker.MaxInFlight(4), worker.KeepAlive())
	switch {
	case errors.Is(err, worker.ErrEnvironment):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(exitEnv)
	case err != nil:
		log.Error().Err(err).Msg("worker stopped")
		t.Close()
		os.Exit(exitFailed)
	}
}

// workDuration reads THUMBNAIL_WORK.
func workDuration(s string) (time.Duration, error) {
	if s == "" {
		return 10 * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("THUMBNAIL_WORK=%q: want a duration such as 10ms", s)
	}
	return d, nil
}
