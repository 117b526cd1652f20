package reconcile_test

import (
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// TestStreamsAreBoundedByTheClusterCaps: a component that sets no stream
// limits gets no byte limit (nothing set aside from the broker's store or
// its namespace's quota) and the cluster's message cap (a million by
// default); a spec may ask for a byte limit up to the cluster's cap, and
// asking for more stalls the revision with a message naming the cap.
func TestStreamsAreBoundedByTheClusterCaps(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.start()
	rev := e.publish(e.component("capped"))
	e.waitStatus("capped", api.ConditionApplied, "True", rev)
	if s := e.stream("capped"); s.Config.MaxBytes != -1 || s.Config.MaxMsgs != 1_000_000 {
		t.Errorf("stream of a component without limits: MaxBytes %d, MaxMsgs %d; want no byte limit and 1000000 messages",
			s.Config.MaxBytes, s.Config.MaxMsgs)
	}
	e.halt()

	small := reconcile.Config{Cluster: render.Cluster{Streams: render.StreamLimits{MaxBytes: 16 << 20, MaxMsgs: -1}}}
	e = newEnv(t, small)
	e.start()
	rev = e.publish(e.component("lower", func(c *api.Component) { c.Spec.Jobs.Stream.MaxBytes = 1 << 20 }))
	e.waitStatus("lower", api.ConditionApplied, "True", rev)
	if s := e.stream("lower"); s.Config.MaxBytes != 1<<20 || s.Config.MaxMsgs != -1 {
		t.Errorf("stream asking for 1 MiB under a 16 MiB cap, no message cap: MaxBytes %d, MaxMsgs %d", s.Config.MaxBytes, s.Config.MaxMsgs)
	}
	rev = e.publish(e.component("greedy", func(c *api.Component) { c.Spec.Jobs.Stream.MaxBytes = 128 << 20 }))
	rec := e.waitStatus("greedy", api.ConditionStalled, "True", rev)
	if c, _ := condition(rec.Conditions, api.ConditionApplied); c.Reason != reasons.InvalidSpec ||
		!strings.Contains(c.Message, "--stream-max-bytes") {
		t.Errorf("Ready = %+v, want InvalidSpec naming the cap's flag", c)
	}
	if e.stream("greedy") != nil {
		t.Error("a stream above the cluster's cap was created")
	}
}
