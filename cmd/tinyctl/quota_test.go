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
// 2 MiB, a producer of namespace a fills its two streams until the broker
// refuses: a's streams hold no more than its quota together, the second
// one is refused below its own cap (the account's quota acted, not the
// stream's), and namespace b's producer still queues its jobs.
func TestATenantFillsOnlyItsOwnQuota(t *testing.T) {
	a, b := kube.RestrictedNamespace(t), kube.RestrictedNamespace(t)
	const quota, streamCap, job = 3 << 20, 2 << 20, 100 << 10
	in := installWithJWT(t, a+","+b, fmt.Sprintf("--tenant-store=%d", quota), fmt.Sprintf("--stream-max-bytes=%d", streamCap))
	pub := in.publisher
	pub.must("apply", "-f", pub.file("a1.yaml", componentYAML(a, "one", a+".one.>", "")))
	pub.must("apply", "-f", pub.file("a2.yaml", componentYAML(a, "two", a+".two.>", "")))
	pub.must("apply", "-f", pub.file("b.yaml", componentYAML(b, "billing", b+".bill.>", "")))
	obs := observeControl(t, in, true)
	streamBytes := func(ns, name string) (uint64, error) {
		s, err := obs.nsJS(t, ns).Stream(testenv.Ctx(t, 10*time.Second), render.StreamName(ns, name))
		if err != nil {
			return 0, err
		}
		return s.CachedInfo().State.Bytes, nil
	}
	for _, c := range [][2]string{{a, "one"}, {a, "two"}, {b, "billing"}} {
		testenv.Eventually(t, 30*time.Second, func() error { _, err := streamBytes(c[0], c[1]); return err })
	}

	pa, err := jetstream.New(in.producer(a, a+".>"))
	testenv.Must(t, err)
	body := make([]byte, job)
	fill := func(subject string) (stored int, refusal error) {
		for stored < 100 {
			if _, err := pa.Publish(testenv.Ctx(t, 10*time.Second), subject, body); err != nil {
				return stored, err
			}
			stored++
		}
		return stored, nil
	}
	n1, err1 := fill(a + ".one.job")
	n2, err2 := fill(a + ".two.job")
	b1, _ := streamBytes(a, "one")
	b2, _ := streamBytes(a, "two")
	t.Logf("a's first stream took %d jobs (%d bytes) then: %v; its second %d (%d bytes) then: %v", n1, b1, err1, n2, b2, err2)
	if err1 == nil || err2 == nil {
		t.Fatalf("a published %d and %d jobs of %d bytes without a refusal", n1, n2, job)
	}
	if n2 == 0 {
		t.Fatal("a's second stream took nothing: the check below would compare nothing")
	}
	if b1+b2 > quota {
		t.Errorf("a's streams hold %d bytes together, above its quota of %d", b1+b2, quota)
	}
	// Refused while the stream itself had room, by the account's quota.
	if b2+job > streamCap || !strings.Contains(err2.Error(), "resource limits exceeded for account") {
		t.Errorf("a's second stream was refused at %d bytes (cap %d) with %v: want the account's quota below the stream's cap", b2, streamCap, err2)
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
