package serve_test

import (
	"syscall"
	"testing"
	"time"
)

const img = "registry.example.com/acme/worker:"

func TestOneLeaderWritesAndAStandbyTakesOverAfterSIGKILL(t *testing.T) {
	f := newFixture(t)
	mark := kube.AuditMark(t)
	a := startServe(t, f.nats.URL(), f.ns, "a")
	a.waitRole("leader", 30*time.Second)
	b := startServe(t, f.nats.URL(), f.ns, "b")
	b.waitRole("standby", 30*time.Second)

	f.publish("one", img+"1")
	f.waitImage("one", img+"1")
	if n := b.writes(mark); n != 0 {
		t.Fatalf("standby wrote %d times while the leader was alive", n)
	}

	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	f.publish("two", img+"2") // published while nobody leads
	// TTL 3s plus one renew interval (1s); polling adds a little.
	b.waitRole("leader", 6*time.Second)
	t.Logf("standby took over %s after SIGKILL (lease TTL 3s)", time.Since(killed).Round(100*time.Millisecond))
	f.waitImage("two", img+"2")
}

func TestPausedLeaderWritesNothingAfterItResumes(t *testing.T) {
	f := newFixture(t)
	a := startServe(t, f.nats.URL(), f.ns, "a")
	a.waitRole("leader", 30*time.Second)
	b := startServe(t, f.nats.URL(), f.ns, "b")
	b.waitRole("standby", 30*time.Second)
	f.publish("one", img+"1")
	f.waitImage("one", img+"1")

	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b.waitRole("leader", 10*time.Second)
	// Requests the old leader had already sent when it was stopped have
	// been served by now (the takeover takes a TTL); count from here.
	stopped := kube.AuditMark(t)
	f.publish("one", img+"2")
	f.waitImage("one", img+"2")

	// Resume the old leader with work it would like to do, and let the new
	// leader finish that work too.
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	f.publish("one", img+"3")
	f.publish("three", img+"3")
	f.waitImage("one", img+"3")
	f.waitImage("three", img+"3")
	a.waitRole("standby", 10*time.Second)
	if n := a.writes(stopped); n != 0 {
		t.Fatalf("the paused leader made %d API writes after it resumed past its TTL", n)
	}
	if n := b.writes(stopped); n == 0 {
		t.Fatal("the new leader made no writes")
	}
}

func TestSIGTERMDrainsAndReleasesTheLease(t *testing.T) {
	f := newFixture(t)
	// A long TTL: a takeover well under it proves the lease was released.
	a := startServe(t, f.nats.URL(), f.ns, "a", "--lease-ttl", "30s")
	a.waitRole("leader", 30*time.Second)
	b := startServe(t, f.nats.URL(), f.ns, "b", "--lease-ttl", "30s")
	b.waitRole("standby", 30*time.Second)
	for i := range 20 {
		f.publish("burst-"+string(rune('a'+i)), img+"1")
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	termed := time.Now()
	select {
	case err := <-a.exited:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM, want exit 0", err)
		}
		a.exited <- err // for the cleanup
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit within 15s of SIGTERM (shutdown grace 5s)")
	}
	t.Logf("exited %s after SIGTERM", time.Since(termed).Round(10*time.Millisecond))
	// The standby campaigns every TTL/3 (10s): well before the 30s TTL.
	b.waitRole("leader", 15*time.Second)
	t.Logf("standby took over %s after SIGTERM (lease TTL 30s)", time.Since(termed).Round(100*time.Millisecond))
	for i := range 20 {
		f.waitImage("burst-"+string(rune('a'+i)), img+"1")
	}
}
