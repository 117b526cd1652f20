package cli_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func TestProgressAppearsOnlyAfterADelayAndIsErased(t *testing.T) {
	var quick testenv.SyncBuffer
	cli.StartProgress(&quick, true, "connecting").Stop()
	var off testenv.SyncBuffer
	slowOff := cli.StartProgress(&off, false, "connecting")

	var slow testenv.SyncBuffer
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
