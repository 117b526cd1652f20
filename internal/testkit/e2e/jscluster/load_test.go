package jscluster_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
)

// opTimeout bounds one put, delete or job publish: a write to a bucket or
// stream whose leader just died waits for the election that follows.
const opTimeout = 5 * time.Second

// keyState is what the writer knows about one key: the last write the
// server acknowledged, and whether a write failed after it (a timed-out
// write may still have been stored, so the key's latest revision may be
// newer than the last acknowledged one, never older).
type keyState struct {
	rev       uint64
	deleted   bool
	ambiguous bool
}

// ledger is what the load has done, shared with the Deployment watch.
type ledger struct {
	mu      sync.Mutex
	keys    map[string]*keyState
	deletes map[string][]ackedDelete // by key, in order
	puts    int
	dels    int
	failed  int
}

type ackedDelete struct {
	rev uint64
	at  time.Time
}

func newLedger() *ledger {
	return &ledger{keys: map[string]*keyState{}, deletes: map[string][]ackedDelete{}}
}

// state returns a copy of key's state (zero if never written).
func (l *ledger) state(key string) keyState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.keys[key]; ok {
		return *s
	}
	return keyState{}
}

// deletedAfter returns the first acknowledged delete of key above
// revision rev acknowledged before t.
func (l *ledger) deletedAfter(key string, rev uint64, t time.Time) (ackedDelete, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.deletes[key] {
		if d.rev > rev && d.at.Before(t) {
			return d, true
		}
	}
	return ackedDelete{}, false
}

func (l *ledger) record(key string, rev uint64, deleted bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.keys[key]
	if s == nil {
		s = &keyState{}
		l.keys[key] = s
	}
	switch {
	case err != nil:
		s.ambiguous = true
		l.failed++
	case deleted:
		*s = keyState{rev: rev, deleted: true}
		l.deletes[key] = append(l.deletes[key], ackedDelete{rev: rev, at: time.Now()})
		l.dels++
	default:
		*s = keyState{rev: rev}
		l.puts++
	}
}

// counts returns puts, deletes and failed writes so far.
func (l *ledger) counts() (puts, dels, failed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.puts, l.dels, l.failed
}

// spec is component name in namespace ns running image, taking jobs on
// subject ns.name.
func spec(ns, name, image string) []byte {
	b, err := api.Canonical(api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: name, Namespace: ns},
		Spec:     api.Spec{Image: image, Jobs: api.Jobs{Subjects: []string{ns + "." + name}}}})
	if err != nil {
		panic(err) // a fixed, valid component
	}
	return b
}

// put writes key's next spec and records the outcome.
func put(ctx context.Context, s *specs.Store, l *ledger, ns, name string, n int) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	rev, err := s.Put(ctx, api.Key(ns, name), spec(ns, name, fmt.Sprintf("registry.example.com/acme/%s:%d", name, n)))
	l.record(api.Key(ns, name), rev, false, err)
	return rev, err
}

// del deletes key (a delete marker) and records the outcome.
func del(ctx context.Context, s *specs.Store, l *ledger, ns, name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	key := api.Key(ns, name)
	err := s.Delete(ctx, key, 0)
	var rev uint64
	if err == nil {
		var e kv.Entry
		// The marker's revision, read back from the stream's leader (a
		// replica may still be catching up): the first read after a delete
		// sees it, or a newer write that is not ours (there is none).
		if e, err = s.LatestFromLeader(ctx, key); err == nil && e.Op == kv.OpPut {
			err = fmt.Errorf("%s: latest is a put at %d after our delete", key, e.Revision)
		}
		rev = e.Revision
	}
	l.record(key, rev, true, err)
	return err
}

// churn puts and deletes the components names at random, one write every
// tick, until ctx ends. A key is put when it is deleted and otherwise put
// again (three times in four) or deleted.
func churn(ctx context.Context, s *specs.Store, l *ledger, ns string, names []string, every time.Duration) {
	rng := rand.New(rand.NewPCG(13, 1))
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		name := names[rng.IntN(len(names))]
		st := l.state(api.Key(ns, name))
		if st.rev != 0 && !st.deleted && rng.IntN(4) == 0 {
			_ = del(ctx, s, l, ns, name)
		} else {
			_, _ = put(ctx, s, l, ns, name, n)
		}
	}
}

// jobs publishes jobs round-robin to subjects until ctx ends, each with a
// message ID and retried with the same ID until the stream acknowledges
// it, so every job is stored exactly once (within the duplicate window).
// It returns how many jobs each subject's stream must hold, or an error
// when a job was not acknowledged within jobDeadline.
func jobs(ctx context.Context, js jetstream.JetStream, subjects []string, every time.Duration) (map[string]int, error) {
	sent := map[string]int{}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return sent, nil
		case <-tick.C:
		}
		subj := subjects[n%len(subjects)]
		msg := &nats.Msg{Subject: subj, Data: []byte(fmt.Sprintf("job %d", n)), Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("job-%d", n))
		if err := publishUntilAcked(js, msg); err != nil {
			return sent, err
		}
		sent[subj]++
	}
}

// jobDeadline bounds the retries of one job: longer than any election.
// Healing a partition re-elects every stream of the cluster at once, and
// on a loaded 2-core CI machine one work queue answered no publish for
// over 30 s (ci12): the test is about jobs lost, not about how long the
// broker takes to elect.
const jobDeadline = 90 * time.Second

// publishUntilAcked retries msg until the stream acknowledges it, for at
// most jobDeadline. It is not cancelled with the load, so the last job
// too is either stored and counted or reported.
func publishUntilAcked(js jetstream.JetStream, msg *nats.Msg) error {
	deadline := time.Now().Add(jobDeadline)
	retry := time.NewTicker(100 * time.Millisecond)
	defer retry.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		_, err := js.PublishMsg(ctx, msg)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("job %s to %s not acknowledged in %s: %w", msg.Header.Get(jetstream.MsgIDHeader), msg.Subject, jobDeadline, err)
		}
		<-retry.C
	}
}
