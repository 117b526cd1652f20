// Package defaults fills the optional fields of a Component with the
// values documented in docs/component.md.
package defaults

import "github.com/tinyctl/tinyctl/api"

// Defaults applied by Apply. They are documented in docs/component.md.
const (
	Namespace              = "default"
	StreamStorage          = "file"
	MaxAge                 = api.Duration("24h")
	DuplicateWindow        = api.Duration("2m")
	AckWait                = api.Duration("30s")
	MaxDeliver             = 5
	MaxAckPending          = 1000
	LagThreshold           = 10
	ActivationLagThreshold = 1
	PollingInterval        = 30
	CooldownPeriod         = 300
	Replicas               = 1
)

// Apply returns a copy of c with every unset optional field filled in. It
// never changes a value the user set, and it is idempotent.
func Apply(c api.Component) api.Component {
	c = c.DeepCopy()
	if c.Metadata.Namespace == "" {
		c.Metadata.Namespace = Namespace
	}
	s := &c.Spec
	st := &s.Jobs.Stream
	// st.Replicas stays 0 when unset: the stream then gets the replicas
	// of the cluster it runs in (tinyctl serve --replicas), which a
	// default written into the spec would hide.
	if st.Storage == "" {
		st.Storage = StreamStorage
	}
	if st.MaxAge == "" {
		st.MaxAge = MaxAge
	}
	if st.DuplicateWindow == "" {
		st.DuplicateWindow = DuplicateWindow
	}
	co := &s.Jobs.Consumer
	if co.AckWait == "" {
		co.AckWait = AckWait
	}
	if co.MaxDeliver == 0 {
		co.MaxDeliver = MaxDeliver
	}
	if co.MaxAckPending == 0 {
		co.MaxAckPending = MaxAckPending
	}
	if sc := s.Scaling; sc != nil {
		if sc.LagThreshold == 0 {
			sc.LagThreshold = LagThreshold
		}
		if sc.ActivationLagThreshold == 0 {
			sc.ActivationLagThreshold = ActivationLagThreshold
		}
		if sc.PollingInterval == 0 {
			sc.PollingInterval = PollingInterval
		}
		if sc.CooldownPeriod == 0 {
			sc.CooldownPeriod = CooldownPeriod
		}
	} else if s.Replicas == nil {
		r := int32(Replicas)
		s.Replicas = &r
	}
	if s.Egress.Mode == "" {
		s.Egress.Mode = api.EgressNone
	}
	if s.Deletion.Stream == "" {
		s.Deletion.Stream = api.Retain
	}
	return c
}
