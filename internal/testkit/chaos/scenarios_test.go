package chaos_test

import (
	"testing"
	"time"
)

// TestChaosNATSKilled SIGKILLs the nats-server process several times per
// cycle while the driver writes, restarting it on the same store.
func TestChaosNATSKilled(t *testing.T) {
	r := newRig(t, "nats-server SIGKILLed", rigOptions{})
	kills := cycleCount(2, 5)
	landed := 0
	r.cycles(cycleCount(1, 6), func(r *rig, _ int) {
		for range kills {
			r.hold(1500 * time.Millisecond)
			if r.nats.Kill(t) {
				landed++
			} else {
				t.Error("nats-server was not running when it was to be killed")
			}
			r.hold(300 * time.Millisecond)
			r.nats.Start(t)
		}
		r.hold(time.Second)
	})
	r.fig.note("natsStarts", r.nats.Starts)
	r.fig.note("natsKills", landed)
	r.finish()
}

// TestChaosControllerKilled SIGKILLs the leading controller in the middle
// of a burst of writes and starts a new one, which must wait out the dead
// one's lease.
func TestChaosControllerKilled(t *testing.T) {
	r := newRig(t, "controller SIGKILLed", rigOptions{})
	r.cycles(cycleCount(1, 6), func(r *rig, _ int) {
		r.hold(time.Second)
		r.kill(r.leader)
		r.hold(500 * time.Millisecond)
		r.leader = r.startServe()
		r.leader.WaitReady(t, "leader", 30*time.Second)
		r.hold(time.Second)
	})
	r.fig.note("controllers", len(r.serves))
	r.finish()
}

// TestChaosNATSLinkCut cuts the controller's link to NATS (every
// connection closed, new ones refused) for 10 s (30 s in the full set).
func TestChaosNATSLinkCut(t *testing.T) {
	cut := 10 * time.Second
	if *full {
		cut = 30 * time.Second
	}
	r := newRig(t, "controller's NATS link cut", rigOptions{link: true})
	closed := 0
	r.cycles(cycleCount(1, 4), func(r *rig, _ int) {
		r.hold(time.Second)
		n := r.link.Cut()
		if n == 0 {
			t.Error("the cut closed no connection: the controller was not cut off")
		}
		closed += n
		r.hold(cut)
		r.link.Restore()
		r.hold(time.Second)
	})
	if r.link.Refused() == 0 {
		t.Error("no connection was refused while cut: the controller never tried to reconnect, the cut went unnoticed")
	}
	r.fig.note("cutSeconds", cut.Seconds())
	r.fig.note("connectionsClosed", closed)
	r.fig.note("connectionsRefused", r.link.Refused())
	r.finish()
}
