package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/worker"
)

// A worker's main: Run reads the environment the Deployment sets, fetches
// jobs, and drains on SIGTERM.
func ExampleRun() {
	log := zerolog.New(os.Stderr).With().Timestamp().Logger()
	ctx := log.WithContext(context.Background())
	err := worker.Run(ctx, func(ctx context.Context, job *worker.Job) error {
		var req struct{ Image string }
		if err := json.Unmarshal(job.Data(), &req); err != nil {
			return job.Term("not JSON: " + err.Error()) // retrying cannot help
		}
		log.Info().Str("image", req.Image).Int("attempt", job.Attempt()).Msg("resizing")
		return nil // acked
	}, worker.MaxInFlight(4), worker.KeepAlive())
	if err != nil {
		log.Fatal().Err(err).Msg("worker stopped")
	}
}

// Outside a tinyctl Deployment the environment says what is missing.
func ExampleConfigFrom() {
	env := map[string]string{"NATS_URL": "nats://nats.tinyctl-system.svc:4222", "TINYCTL_CONSUMER": "tinyctl_media_thumbnailer_worker"}
	_, err := worker.ConfigFrom(func(name string) string { return env[name] })
	fmt.Println(err)
	// Output:
	// worker environment incomplete: TINYCTL_STREAM is not set: is this process running in a tinyctl Deployment?
}
