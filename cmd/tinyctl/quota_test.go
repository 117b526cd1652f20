package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// TestATenantFillsOnlyItsOwnQuota: on an install whose controller gives
// each namespace a 3 MiB store (--tenant-store), namespace a's two
// components get their streams (a stream that asks for no byte limit sets
// nothing aside), a's producer fills them until the broker refuses with
// the account's quota (below what either stream could hold alone), and
// namespace b's producer still queues its jobs. A component of a asking
// for a byte limit the rest of the quota cannot set aside waits, its
// status saying why and what to change.
func TestATenantFillsOnlyItsOwnQuota(t *testing.T) {
	a, b := kube.RestrictedNamespace(t), kube.RestrictedNamespace(t)
	const quota, job = 3 << 20, 100 << 10
	in := installWithJWT(t, a+","+b, fmt.Sprintf("--tenant-store=%d", quota))
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
	fill := func(subject string, most int) (stored int, refusal error) {
		for stored < most {
			if _, err := pa.Publish(testenv.Ctx(t, 10*time.Second), subject, body); err != nil {
				return stored, err
			}
			stored++
		}
		return stored, nil
	}
	n1, _ := fill(a+".one.job", 15)
	n2, refusal := fill(a+".two.job", 100)
	b1, _ := streamBytes(a, "one")
	b2, _ := streamBytes(a, "two")
	t.Logf("a's first stream took %d jobs (%d bytes), its second %d (%d bytes) then: %v", n1, b1, n2, b2, refusal)
	if n1 != 15 || n2 == 0 || refusal == nil {
		t.Fatalf("a stored %d and %d jobs of %d bytes, refused with %v: want 15, some, then a refusal", n1, n2, job, refusal)
	}
	if b1+b2 > quota || b1+b2+job <= quota || !strings.Contains(refusal.Error(), "resource limits exceeded for account") {
		t.Errorf("a's streams were refused at %d bytes together (quota %d) with %v: want the account's quota", b1+b2, quota, refusal)
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

	big := strings.Replace(componentYAML(a, "big", a+".big.>", ""), "  jobs:\n", "  jobs:\n    stream:\n      maxBytes: 4194304\n", 1)
	pub.must("apply", "-f", pub.file("big.yaml", big))
	testenv.Eventually(t, 30*time.Second, func() error {
		r := pub.run("status", "big", "-n", a, "-o", "json")
		if !strings.Contains(r.stdout, `"InsufficientStorage"`) || !strings.Contains(r.stdout, "--tenant-store") {
			return fmt.Errorf("status of %s.big does not say why it waits: %s", a, r)
		}
		return nil
	})
}

// TestANamespaceBeyondTheStoreWaitsAndSaysWhy: the broker (the chart's
// 9 GiB store) can set aside three namespaces' quotas of 4 GiB only twice:
// the third namespace's component waits with a status naming
// --tenant-store, and the other two get their streams.
func TestANamespaceBeyondTheStoreWaitsAndSaysWhy(t *testing.T) {
	nss := []string{kube.RestrictedNamespace(t), kube.RestrictedNamespace(t), kube.RestrictedNamespace(t)}
	in := installWithJWT(t, strings.Join(nss, ","), "--tenant-store=4GiB")
	pub := in.publisher
	for _, ns := range nss {
		pub.must("apply", "-f", pub.file(ns+".yaml", componentYAML(ns, "queue", ns+".q.>", "")))
	}
	obs := observeControl(t, in, true)
	var said string
	testenv.Eventually(t, 60*time.Second, func() error {
		var streams, waiting []string
		for _, ns := range nss {
			if _, err := obs.nsJS(t, ns).Stream(testenv.Ctx(t, 10*time.Second), render.StreamName(ns, "queue")); err == nil {
				streams = append(streams, ns)
			}
			r := pub.run("status", "queue", "-n", ns, "-o", "json")
			if strings.Contains(r.stdout, `"InsufficientStorage"`) && strings.Contains(r.stdout, "--tenant-store") {
				waiting, said = append(waiting, ns), r.stdout
			}
		}
		if len(streams) != 2 || len(waiting) != 1 || slices.Contains(streams, waiting[0]) {
			return fmt.Errorf("streams in %v, waiting for room with a status naming --tenant-store: %v; want two and the third", streams, waiting)
		}
		return nil
	})
	t.Logf("the third namespace's status: %s", said)
}
