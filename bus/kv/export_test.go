package kv

import "time"

// SetOpenAttemptTimeout bounds each attempt of Open at d until the
// returned func restores it (tests).
func SetOpenAttemptTimeout(d time.Duration) (restore func()) {
	prev := openAttemptTimeout
	openAttemptTimeout = d
	return func() { openAttemptTimeout = prev }
}
