package cli

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// ProgressDelay is how long an operation runs before Progress says what it
// is waiting for.
const ProgressDelay = time.Second

// Progress tells a user on a terminal what a slow operation waits for: the
// message appears only once the operation has taken ProgressDelay, and is
// erased when it ends. Off a terminal it prints nothing.
type Progress struct {
	w     io.Writer
	mu    sync.Mutex
	shown bool
	done  bool
	timer *time.Timer
}

// StartProgress starts timing an operation described by msg (such as
// "connecting to nats://..."). on is false when w is not a terminal. Call
// Stop when the operation ends.
func StartProgress(w io.Writer, on bool, msg string) *Progress {
	p := &Progress{w: w}
	if !on {
		return p
	}
	p.timer = time.AfterFunc(ProgressDelay, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.done {
			fmt.Fprintf(p.w, "… %s", msg)
			p.shown = true
		}
	})
	return p
}

// Stop ends the operation and erases the message if it was shown.
func (p *Progress) Stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
