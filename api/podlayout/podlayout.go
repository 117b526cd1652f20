// Package podlayout names what tinyctl itself puts in a worker's pod: its
// volumes, their mount paths, the Secrets it mints and the port it probes. Render lays the pod
// out with these names; validation keeps a component's own volumes and
// references clear of them.
package podlayout

const (
	// TmpVolume is the writable emptyDir mounted at TmpMountPath (the
	// root filesystem is read-only).
	TmpVolume    = "tmp"
	TmpMountPath = "/tmp"
	// CredentialsVolume mounts the worker's NATS credentials, read-only,
	// at CredentialsDir.
	CredentialsVolume = "nats-creds"
	CredentialsDir    = "/etc/tinyctl/nats"
	// MintedSecretSuffix ends the name of the Secret holding the NATS
	// credentials minted for a component: NAME-nats. A component may not
	// read one (it would take another component's identity).
	MintedSecretSuffix = "-nats"
	// HealthPort, named HealthPortName, is where a worker asked for the
	// library's probes (spec.probes.worker) serves /healthz and /readyz.
	HealthPortName = "health"
	HealthPort     = 8081
	// MetricsPortName names the port of spec.metricsPort, where the worker
	// serves /metrics (a PodMonitor selects it by this name).
	MetricsPortName = "metrics"
)
