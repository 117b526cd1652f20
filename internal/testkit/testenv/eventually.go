package testenv

import (
	"context"
	"testing"
	"time"
)

// PollInterval is how often Eventually re-checks its condition.
const PollInterval = 20 * time.Millisecond

// Eventually calls check until it returns nil or within has passed. On the
// deadline it fails the test with check's last error, so the failure says
// what was still wrong rather than just "timed out".
func Eventually(tb testing.TB, within time.Duration, check func() error) {
	tb.Helper()
	EventuallyEvery(tb, within, PollInterval, check)
}

// EventuallyEvery is Eventually re-checking every interval, for checks too
// costly to run every PollInterval (listing many objects, say).
func EventuallyEvery(tb testing.TB, within, every time.Duration, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("condition not met within %s: %v", within, err)
		}
		<-tick.C
	}
}

// Ctx is a context that ends after d or with the test.
func Ctx(tb testing.TB, d time.Duration) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// Must fails the test at once when err is not nil.
func Must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
