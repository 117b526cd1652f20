package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestEventsSayWhatTheControllerDidAndWhy takes a component through what a
// user does to one — apply, a revision the controller must refuse (written
// straight into the bucket, as a script might), a delete — and reads what
// the controller announced: `tinyctl events` lists each step with its
// reason, `events -w` prints them as they happen, and the API server holds
// them as Kubernetes Events about the component's Deployment (or its
// namespace, for a component refused before anything was made).
func TestEventsSayWhatTheControllerDidAndWhy(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	ns := kube.RestrictedNamespace(t)
	u.serveFor(ns)
	watch := u.start("events", "-n", ns, "-w", "-o", "json")

	u.must("apply", "-f", u.file("c.yaml", component(ns, "worker", "acme/worker:1.0.0")))
	u.waitStatus(ns, ns+" worker "+e2eCluster+" False Progressing 1/1 live")
	waitEvents(t, u, ns, "Normal Created Deployment/worker 1", "Normal Created NetworkPolicy/worker 1", "Normal Progressing - 1")

	// A revision without an image, put with plain nats.go: refused, with
	// the field that is wrong.
	js, err := jetstream.New(u.nats.Connect(t))
	testenv.Must(t, err)
	ctx := testenv.Ctx(t, 30*time.Second)
	kv, err := js.KeyValue(ctx, "tinyctl-components")
	testenv.Must(t, err)
	stored := u.must("get", "worker", "-n", ns, "-o", "json").stdout
	bad := strings.Replace(stored, `"image": "acme/worker:1.0.0"`, `"image": ""`, 1)
	if bad == stored {
		t.Fatalf("no image to remove in:\n%s", stored)
	}
	_, err = kv.Put(ctx, ns+".worker", []byte(bad))
	testenv.Must(t, err)
	evs := waitEvents(t, u, ns, "Warning InvalidSpec - 2")
	if e := find(evs, "InvalidSpec"); !strings.Contains(e.Message, "spec.image") || e.Cluster != e2eCluster || e.Component != ns+".worker" {
		t.Errorf("the refusal's event = %+v, want the field spec.image named, cluster %s, component %s.worker", e, e2eCluster, ns)
	}

	u.must("delete", "worker", "-n", ns, "--yes")
	waitEvents(t, u, ns, "Normal Deleted Deployment/worker 3", "Normal Deleted NetworkPolicy/worker 3", "Normal Removed - 3")

	// A component refused before anything was made for it: its Kubernetes
	// Event is on the namespace.
	broken := strings.Replace(bad, `"name": "worker"`, `"name": "broken"`, 1)
	if broken == bad {
		t.Fatalf("no name to change in:\n%s", bad)
	}
	_, err = kv.Put(ctx, ns+".broken", []byte(broken))
	testenv.Must(t, err)
	waitEvents(t, u, ns, "Warning InvalidSpec - 4")

	// The watch saw them all as they came, in the order recorded.
	testenv.Eventually(t, 10*time.Second, func() error {
		got := eventLines(t, watch.out.String())
		if !slices.Contains(got, "Normal Removed - 3") || !slices.Contains(got, "Warning InvalidSpec - 2") {
			return fmt.Errorf("events -w printed:\n%s", strings.Join(got, "\n"))
		}
		if first := slices.Index(got, "Normal Created Deployment/worker 1"); first < 0 || first > slices.Index(got, "Normal Removed - 3") {
			return fmt.Errorf("events -w printed them out of order:\n%s", strings.Join(got, "\n"))
		}
		return nil
	})
	if r := watch.interrupt(10 * time.Second); r.code != 0 {
		t.Errorf("events -w after SIGINT: %s", r)
	}

	// The table, for a person, and for one component.
	expect(t, u.must("events", "worker", "-n", ns), 0,
		[]string{"AGE", "NAMESPACE", "REASON", "OBJECT", "MESSAGE", "Deployment/worker", "Removed", "InvalidSpec"}, nil)
	expect(t, u.run("events", "-n", ns+"-none"), 0, nil, []string{`No events for namespace "` + ns + `-none" in the last 1h0m0s`})
	expect(t, u.run("events", "worker", "-A"), 2, nil, []string{"--all-namespaces cannot be used with a NAME"})

	// Kubernetes Events by tinyctl in the component's namespace: a write's
	// about the child written, a condition's about the Deployment, a
	// refusal of a component that never had one about the namespace.
	testenv.Eventually(t, 30*time.Second, func() error {
		got, all, err := testenv.KubeEvents(context.Background(), kube.Clientset(t), ns, "tinyctl.io/controller")
		if err != nil {
			return err
		}
		for _, want := range []string{"Deployment/worker Normal Created", "NetworkPolicy/worker Normal Created", "Deployment/worker Warning InvalidSpec",
			"Deployment/worker Normal Deleted", "Namespace/" + ns + " Warning InvalidSpec"} {
			if !slices.Contains(got, want) {
				return fmt.Errorf("Kubernetes Events by tinyctl: %v, want %q among them (all: %s)", got, want, all)
			}
		}
		// The removal is about the Deployment until the controller has
		// seen it go, then about the namespace.
		if !slices.Contains(got, "Deployment/worker Normal Removed") && !slices.Contains(got, "Namespace/"+ns+" Normal Removed") {
			return fmt.Errorf("Kubernetes Events by tinyctl: %v, want the removal among them", got)
		}
		return nil
	})
}

// waitEvents waits until `tinyctl events -n ns -o json` shows each of want
// ("TYPE REASON OBJECT REVISION", "-" for no object) and returns them all.
func waitEvents(t *testing.T, u *user, ns string, want ...string) []event.Event {
	t.Helper()
	var evs []event.Event
	testenv.Eventually(t, 30*time.Second, func() error {
		out := u.must("events", "-n", ns, "-o", "json").stdout
		got := eventLines(t, out)
		for _, w := range want {
			if !slices.Contains(got, w) {
				return fmt.Errorf("events -n %s:\n%s\nwant %q among them", ns, strings.Join(got, "\n"), w)
			}
		}
		evs = decodeEvents(t, out)
		return nil
	})
	return evs
}

func decodeEvents(t *testing.T, out string) []event.Event {
	t.Helper()
	var evs []event.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e event.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("events -o json printed %q: %v", line, err)
		}
		evs = append(evs, e)
	}
	return evs
}

// eventLines are the events of -o json output as "TYPE REASON OBJECT
// REVISION".
func eventLines(t *testing.T, out string) []string {
	var lines []string
	for _, e := range decodeEvents(t, out) {
		lines = append(lines, fmt.Sprintf("%s %s %s %d", e.Type, e.Reason, dash(e.Object), e.Revision))
	}
	return lines
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func find(evs []event.Event, reason string) event.Event {
	for _, e := range evs {
		if e.Reason == reason {
			return e
		}
	}
	return event.Event{}
}
