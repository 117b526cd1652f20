package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// TestATenantFillsOnlyItsOwnQuota: on an install whose controller gives
// each namespace a 3 MiB store (--tenant-store) and caps each stream at
// 2 MiB, namespace a's first stream reserves 2 MiB of its quota; its
// second component cannot reserve another 2 MiB and waits, its status
// saying why; a's producer fills the first stream until the broker
// refuses at the stream's cap; and namespace b, whose quota is its own,
// still gets its stream and queues its jobs.
func TestATenantFillsOnlyItsOwnQuota(t *testing.T) {
	a, b := kube.RestrictedNamespace(t), kube.RestrictedNamespace(t)
	const quota, streamCap, job = 3 << 20, 2 << 20, 100 << 10
	in := installWithJWT(t, a+","+b, fmt.Sprintf("--tenant-store=%d", quota), fmt.Sprintf("--stream-max-bytes=%d", streamCap))
	pub := in.publisher
	obs := observeControl(t, in, true)
	streamBytes := func(ns, name string) (uint64, error) {
		s, err := obs.nsJS(t, ns).Stream(testenv.Ctx(t, 10*time.Second), render.StreamName(ns, name))
		if err != nil {
			return 0, err
		}
		return s.CachedInfo().State.Bytes, nil
	}
	waitStream := func(ns, name string) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, func() error { _, err := streamBytes(ns, name); return err })
	}
	// One at a time: nats-server checks a stream's reservation against
	// the account's quota without serialising two creations at once.
	pub.must("apply", "-f", pub.file("a1.yaml", componentYAML(a, "one", a+".one.>", "")))
	waitStream(a, "one")
	pub.must("apply", "-f", pub.file("a2.yaml", componentYAML(a, "two", a+".two.>", "")))
	pub.must("apply", "-f", pub.file("b.yaml", componentYAML(b, "billing", b+".bill.>", "")))
	waitStream(b, "billing")
	testenv.Eventually(t, 30*time.Second, func() error {
		r := pub.run("status", "two", "-n", a, "-o", "json")
		if !strings.Contains(r.stdout, "insufficient storage resources") || !strings.Contains(r.stdout, `"Retrying"`) {
			return fmt.Errorf("status of %s.two does not say why it waits: %s", a, r)
		}
		return nil
	})
	if _, err := streamBytes(a, "two"); err == nil {
		t.Errorf("%s's second stream exists although its cap does not fit the rest of the quota", a)
	}

	pa, err := jetstream.New(in.producer(a, a+".>"))
	testenv.Must(t, err)
	body := make([]byte, job)
	stored, refusal := 0, error(nil)
	for ; stored < 100 && refusal == nil; stored++ {
		_, refusal = pa.Publish(testenv.Ctx(t, 10*time.Second), a+".one.job", body)
	}
	held, _ := streamBytes(a, "one")
	t.Logf("a's stream took %d jobs (%d bytes) then: %v", stored-1, held, refusal)
	if refusal == nil || held == 0 {
		t.Fatalf("a published %d jobs of %d bytes (%d held) without a refusal", stored, job, held)
	}
	if held > streamCap || held+job <= streamCap || !strings.Contains(refusal.Error(), "maximum bytes exceeded") {
		t.Errorf("a's stream was refused at %d bytes (cap %d) with %v: want the stream's cap", held, streamCap, refusal)
	}

	pb, err := jetstream.New(in.producer(b, b+".bill.>"))
	testenv.Must(t, err)
	for i := range 5 {
		if _, err := pb.Publish(testenv.Ctx(t, 10*time.Second), b+".bill.job", body); err != nil {
			t.Fatalf("b's job %d refused after a filled its quota: %v", i, err)
		}
	}
	if n, err := streamBytes(b, "billing"); err != nil || n < 5*job {
		t.Errorf("b's stream holds %d bytes (%v), want its 5 jobs", n, err)
	}
}
