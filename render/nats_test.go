package render_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// TestJetStreamAcceptsRenderedConfigs creates every case's stream and
// consumer on a real nats-server and checks what a worker and KEDA rely on:
// the consumer is durable and unfiltered, a job published on a job subject
// shows as pending on it, the server kept the settings as rendered (so
// comparing desired and live finds no drift), and re-applying is a no-op.
func TestJetStreamAcceptsRenderedConfigs(t *testing.T) {
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			objs := mustRender(t, tc)
			js, err := jetstream.New(natstest.Start(t).Connect(t))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			stream, err := js.CreateStream(ctx, objs.Stream)
			if err != nil {
				t.Fatalf("CreateStream: %v", err)
			}
			cons, err := js.CreateOrUpdateConsumer(ctx, objs.Stream.Name, objs.Consumer)
			if err != nil {
				t.Fatalf("CreateOrUpdateConsumer: %v", err)
			}
			md := tc.component.Metadata
			assertLiveMatchesRendered(t, ctx, stream, cons, objs, render.ConsumerName(md.Namespace, md.Name))
			assertJobIsPending(t, ctx, js, cons, objs.Stream.Subjects[0])
			assertTriggerNamesExist(t, ctx, js, objs.ScaledObject)
			if objs.DeadLetters != nil {
				assertDeadLettersAsRendered(t, ctx, js, objs)
			}

			if _, err := js.UpdateStream(ctx, objs.Stream); err != nil {
				t.Errorf("re-applying the stream: %v", err)
			}
			if _, err := js.CreateOrUpdateConsumer(ctx, objs.Stream.Name, objs.Consumer); err != nil {
				t.Errorf("re-applying the consumer: %v", err)
			}
		})
	}
}

// assertDeadLettersAsRendered creates the dead-letter stream, compares it
// with its rendering, and checks that a job published on the replay path
// is stored in the work queue under its original subject.
func assertDeadLettersAsRendered(t *testing.T, ctx context.Context, js jetstream.JetStream, objs render.Objects) {
	t.Helper()
	dead, err := js.CreateStream(ctx, *objs.DeadLetters)
	if err != nil {
		t.Fatalf("create the dead-letter stream: %v", err)
	}
	ignoreServerMeta := cmpopts.IgnoreMapEntries(func(k, _ string) bool { return strings.HasPrefix(k, "_nats") })
	if diff := cmp.Diff(*objs.DeadLetters, dead.CachedInfo().Config, ignoreServerMeta); diff != "" {
		t.Errorf("live dead-letter stream differs from rendered (-rendered +live):\n%s", diff)
	}
	subject := objs.Stream.Subjects[0]
	if _, err := js.Publish(ctx, deadletter.ReplayPrefix(objs.Stream.Name)+"."+subject, []byte("again")); err != nil {
		t.Fatalf("publish on the replay path: %v", err)
	}
	s, err := js.Stream(ctx, objs.Stream.Name)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := s.GetLastMsgForSubject(ctx, subject); err != nil || string(m.Data) != "again" {
		t.Errorf("the replayed job is not stored under %s: %v %v", subject, m, err)
	}
}

func assertLiveMatchesRendered(t *testing.T, ctx context.Context, s jetstream.Stream, c jetstream.Consumer, objs render.Objects, durable string) {
	t.Helper()
	si, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The server adds its own metadata keys (API level, version); the
	// rendered ones must be kept.
	ignoreServerMeta := cmpopts.IgnoreMapEntries(func(k, _ string) bool { return strings.HasPrefix(k, "_nats") })
	if diff := cmp.Diff(objs.Stream, si.Config, ignoreServerMeta); diff != "" {
		t.Errorf("live stream config differs from rendered (-rendered +live):\n%s", diff)
	}
	ci, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := ci.Config
	if got.Durable != durable || ci.Name != durable {
		t.Errorf("consumer %q durable %q, want durable %q", ci.Name, got.Durable, durable)
	}
	if got.FilterSubject != "" || len(got.FilterSubjects) > 0 {
		t.Errorf("consumer filters %q %v, want none", got.FilterSubject, got.FilterSubjects)
	}
	// MaxWaiting is a server default tinyctl does not set.
	ignore := cmp.Options{ignoreServerMeta, cmpopts.IgnoreFields(jetstream.ConsumerConfig{}, "MaxWaiting")}
	if diff := cmp.Diff(objs.Consumer, got, ignore); diff != "" {
		t.Errorf("live consumer config differs from rendered (-rendered +live):\n%s", diff)
	}
}

// assertJobIsPending publishes one job on a subject the stream binds and
// waits for the consumer to count it as pending, the number KEDA scales on.
func assertJobIsPending(t *testing.T, ctx context.Context, js jetstream.JetStream, c jetstream.Consumer, pattern string) {
	t.Helper()
	subject := strings.NewReplacer(">", "job", "*", "job").Replace(pattern)
	if _, err := js.Publish(ctx, subject, []byte("work")); err != nil {
		t.Fatalf("publish on %s: %v", subject, err)
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		ci, err := c.Info(ctx)
		if err != nil {
			return err
		}
		if ci.NumPending != 1 {
			return fmt.Errorf("consumer %s has %d pending, want 1", ci.Name, ci.NumPending)
		}
		return nil
	})
}

// assertTriggerNamesExist looks up the stream and consumer the ScaledObject's
// trigger names: KEDA can scale from zero only if they exist.
func assertTriggerNamesExist(t *testing.T, ctx context.Context, js jetstream.JetStream, so *unstructured.Unstructured) {
	t.Helper()
	if so == nil {
		return
	}
	triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
	if len(triggers) != 1 {
		t.Fatalf("triggers = %v, want one", triggers)
	}
	md, _, _ := unstructured.NestedStringMap(triggers[0].(map[string]any), "metadata")
	if _, err := js.Consumer(ctx, md[render.TriggerStream], md[render.TriggerConsumer]); err != nil {
		t.Errorf("trigger names stream %q consumer %q: %v", md[render.TriggerStream], md[render.TriggerConsumer], err)
	}
}
