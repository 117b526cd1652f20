package worker

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// afterGrace is how long a drain still waits for handlers after their
// contexts were cancelled at the end of the grace period, so that a
// handler that honours its context can still hand its job back.
const afterGrace = time.Second

// drain waits for the running handlers wg tracks: up to the grace period,
// then, their contexts cancelled, up to afterGrace more. It returns an
// error when some are still running.
func (w *Worker) drain(ctx context.Context, wg *sync.WaitGroup, cancelHandlers context.CancelFunc) error {
	w.draining.Store(true)
	log := logger(ctx)
	begin := time.Now()
	log.Info().Int64("running", w.running.Load()).Dur("grace", w.o.grace).Msg("draining: stopped pulling jobs")
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	if !waitFor(done, w.o.grace) {
		cancelHandlers()
		if !waitFor(done, afterGrace) {
			n := w.running.Load()
			log.Error().Int64("running", n).Msg("drain: handlers still running; their jobs are redelivered after the ack wait")
			return fmt.Errorf("worker: %d %w (%s): JetStream redelivers their jobs after the ack wait", n, ErrGraceExpired, w.o.grace)
		}
	}
	log.Info().Dur("took", time.Since(begin)).Msg("drained")
	return nil
}

// waitFor waits up to d for done to close and reports whether it did.
func waitFor(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
