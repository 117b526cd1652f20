package api

// Defaults applied by Default. They are documented in docs/component.md.
const (
	DefaultNamespace              = "default"
	DefaultStreamReplicas         = 1
	DefaultStreamStorage          = "file"
	DefaultMaxAge                 = Duration("24h")
	DefaultDuplicateWindow        = Duration("2m")
	DefaultAckWait                = Duration("30s")
	DefaultMaxDeliver             = 5
	DefaultMaxAckPending          = 1000
	DefaultLagThreshold           = 10
	DefaultActivationLagThreshold = 1
	DefaultPollingInterval        = 30
	DefaultCooldownPeriod         = 300
	DefaultReplicas               = 1
)

// Default returns a copy of c with every unset optional field filled in. It
// never changes a value the user set, and it is idempotent.
func Default(c Component) Component {
	c = c.DeepCopy()
	if c.Metadata.Namespace == "" {
		c.Metadata.Namespace = DefaultNamespace
	}
	s := &c.Spec
	st := &s.Jobs.Stream
	if st.Replicas == 0 {
		st.Replicas = DefaultStreamReplicas
	}
	if st.Storage == "" {
		st.Storage = DefaultStreamStorage
	}
	if st.MaxAge == "" {
		st.MaxAge = DefaultMaxAge
	}
	if st.DuplicateWindow == "" {
		st.DuplicateWindow = DefaultDuplicateWindow
	}
	co := &s.Jobs.Consumer
	if co.AckWait == "" {
		co.AckWait = DefaultAckWait
	}
	if co.MaxDeliver == 0 {
		co.MaxDeliver = DefaultMaxDeliver
	}
	if co.MaxAckPending == 0 {
		co.MaxAckPending = DefaultMaxAckPending
	}
	if sc := s.Scaling; sc != nil {
		if sc.LagThreshold == 0 {
			sc.LagThreshold = DefaultLagThreshold
		}
		if sc.ActivationLagThreshold == 0 {
			sc.ActivationLagThreshold = DefaultActivationLagThreshold
		}
		if sc.PollingInterval == 0 {
			sc.PollingInterval = DefaultPollingInterval
		}
		if sc.CooldownPeriod == 0 {
			sc.CooldownPeriod = DefaultCooldownPeriod
		}
	} else if s.Replicas == nil {
		r := int32(DefaultReplicas)
		s.Replicas = &r
	}
	if s.Egress.Mode == "" {
		s.Egress.Mode = EgressNone
	}
	if s.Deletion.Stream == "" {
		s.Deletion.Stream = Retain
	}
	return c
}
