package streams

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// fakeAPI answers every lookup with lookupErr, counting the calls in
// flight and any create. With hold set, lookups block until it is closed.
type fakeAPI struct {
	lookupErr error
	hold      chan struct{}
	inFlight  atomic.Int32
	peak      atomic.Int32
	creates   atomic.Int32
}

func (f *fakeAPI) enter() func() {
	n := f.inFlight.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if f.hold != nil {
		<-f.hold
	}
	return func() { f.inFlight.Add(-1) }
}

func (f *fakeAPI) StreamInfo(context.Context, string) (*jetstream.StreamInfo, error) {
	defer f.enter()()
	return nil, f.lookupErr
}

func (f *fakeAPI) ConsumerInfo(context.Context, string, string) (*jetstream.ConsumerInfo, error) {
	defer f.enter()()
	return nil, f.lookupErr
}

func (f *fakeAPI) CreateStream(context.Context, jetstream.StreamConfig) (*jetstream.StreamInfo, error) {
	f.creates.Add(1)
	return nil, nil
}

func (f *fakeAPI) CreateConsumer(context.Context, string, jetstream.ConsumerConfig) error {
	f.creates.Add(1)
	return nil
}

func (f *fakeAPI) UpdateStream(context.Context, jetstream.StreamConfig) (*jetstream.StreamInfo, error) {
	return nil, nil
}

func (f *fakeAPI) UpdateConsumer(context.Context, string, jetstream.ConsumerConfig) error { return nil }

func (f *fakeAPI) DeleteStream(context.Context, string) error { return nil }

func (f *fakeAPI) DeleteConsumer(context.Context, string, string) error { return nil }

func (f *fakeAPI) StreamNames(context.Context) ([]string, error) { return nil, nil }

func (f *fakeAPI) ListStreams(context.Context, func(*jetstream.StreamInfo)) error { return nil }

func TestStreamManagerBoundsAPICallsInFlight(t *testing.T) {
	api := &fakeAPI{lookupErr: nats.ErrTimeout, hold: make(chan struct{})}
	m := newManager(api, 3)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { _, _ = m.EnsureStream(context.Background(), jetstream.StreamConfig{Name: "S"}) })
	}
	// With every call held, exactly the bound's worth get in.
	testenv.Eventually(t, 5*time.Second, func() error {
		if n := api.inFlight.Load(); n != 3 {
			return fmt.Errorf("%d calls in flight, want 3", n)
		}
		return nil
	})
	close(api.hold)
	wg.Wait()
	if peak := api.peak.Load(); peak != 3 {
		t.Fatalf("peak calls in flight %d, want 3 with a bound of 3", peak)
	}
}

func TestEnsureTreatsAFailedLookupAsTransientNeverAsExists(t *testing.T) {
	cases := map[string]error{
		"timeout":       nats.ErrTimeout,
		"no responders": nats.ErrNoResponders,
		"server error":  &jetstream.APIError{Code: 503, Description: "jetstream unavailable"},
		"unexpected":    errors.New("something else"),
	}
	for name, lookupErr := range cases {
		t.Run(name, func(t *testing.T) {
			api := &fakeAPI{lookupErr: lookupErr}
			m := newManager(api, 1)
			res, err := m.EnsureStreamAndConsumer(context.Background(),
				jetstream.StreamConfig{Name: "S"}, jetstream.ConsumerConfig{Durable: "C"}, EnsureOptions{})
			if !bus.IsTransient(err) || res.Stream != "" || api.creates.Load() != 0 {
				t.Fatalf("got %+v, %v, %d creates; want a transient error and nothing created", res, err, api.creates.Load())
			}
		})
	}
}

func TestStreamDiffsReadZeroAsTheServerDefault(t *testing.T) {
	want := jetstream.StreamConfig{Name: "S", Subjects: []string{"b", "a"}, MaxAge: time.Minute}
	live := jetstream.StreamConfig{
		Name: "S", Subjects: []string{"a", "b"}, MaxAge: time.Minute, Duplicates: time.Minute,
		Replicas: 1, MaxMsgs: -1, MaxBytes: -1, MaxMsgSize: -1, MaxMsgsPerSubject: -1, MaxConsumers: -1,
		Metadata: map[string]string{"_nats.req.level": "0"},
	}
	if d := streamDiffs(want, live); len(d) != 0 {
		t.Fatalf("defaults read as drift: %v", d)
	}
	live.MaxMsgs = 10
	if d := streamDiffs(want, live); len(d) != 1 || d[0].Field != "maxMsgs" {
		t.Fatalf("want one maxMsgs diff, got %v", d)
	}
}

func TestConsumerDiffsReadZeroAsTheServerDefault(t *testing.T) {
	want := jetstream.ConsumerConfig{Durable: "C", BackOff: []time.Duration{time.Second, time.Minute}}
	live := jetstream.ConsumerConfig{
		Durable: "C", BackOff: []time.Duration{time.Second, time.Minute}, AckWait: time.Second,
		MaxDeliver: -1, MaxAckPending: 1000, MaxWaiting: 512,
	}
	if d := consumerDiffs(want, live); len(d) != 0 {
		t.Fatalf("defaults read as drift: %v", d)
	}
	want.BackOff = nil
	if d := consumerDiffs(want, live); len(d) != 2 {
		t.Fatalf("want backoff and ack wait diffs, got %v", d)
	}
}
