package cli_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/testenv"
)

// syncBuffer is a bytes.Buffer safe for the progress timer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressAppearsOnlyAfterADelayAndIsErased(t *testing.T) {
	var quick syncBuffer
	cli.StartProgress(&quick, true, "connecting").Stop()
	var off syncBuffer
	slowOff := cli.StartProgress(&off, false, "connecting")

	var slow syncBuffer
	p := cli.StartProgress(&slow, true, "connecting")
	testenv.Eventually(t, cli.ProgressDelay+2*time.Second, func() error {
		if slow.String() != "… connecting" {
			return errors.New("no progress message yet")
		}
		return nil
	})
	p.Stop()
	slowOff.Stop()
	if got := slow.String(); got != "… connecting\r\x1b[K" {
		t.Errorf("after Stop: %q, want the message erased", got)
	}
	if quick.String() != "" || off.String() != "" {
		t.Errorf("quick operation printed %q, off a terminal printed %q; want nothing", quick.String(), off.String())
	}
}
