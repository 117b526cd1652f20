package worker

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/tinyctl/tinyctl/api/workerenv"
)

// EnvMetricsAddr names the environment variable that, when set, makes Run
// serve the worker's metrics on that address at /metrics (":9090", say),
// for a worker run outside tinyctl. A component asks for metrics with
// spec.metricsPort instead: tinyctl then sets TINYCTL_METRICS_ADDR, which wins.
const EnvMetricsAddr = "WORKER_METRICS_ADDR"

// ErrEnvironment is matched (errors.Is) by every error ConfigFromEnv
// returns: the process lacks what a tinyctl Deployment gives its worker.
var ErrEnvironment = errors.New("worker environment incomplete")

// Config is where the worker finds NATS and its jobs: what the Deployment
// tinyctl renders puts in the worker container's environment (package
// api/workerenv names the variables). Paths are of files in the container.
type Config struct {
	// URL is the NATS server URL (NATS_URL).
	URL string
	// Stream and Consumer name the component's work-queue stream and the
	// durable consumer the worker fetches from (TINYCTL_STREAM,
	// TINYCTL_CONSUMER).
	Stream, Consumer string
	// CredsFile is the NATS credentials file (NATS_CREDS), read again on
	// every reconnect; empty when the cluster mounts none.
	CredsFile string
	// InboxPrefix is the prefix of the client's reply inboxes
	// (TINYCTL_INBOX_PREFIX); minted credentials allow no other.
	InboxPrefix string
	// JSAPIPrefix is the JetStream API prefix the consumer is reached at
	// (TINYCTL_JS_API_PREFIX): set when the worker's account imports its
	// stream's API instead of having JetStream; empty means $JS.API.
	JSAPIPrefix string
	// CAFile, CertFile and KeyFile are the broker's CA and a client
	// certificate for mutual TLS (NATS_CA, NATS_CERT, NATS_KEY).
	CAFile, CertFile, KeyFile string
	// Name names the client to the server and in traces
	// (OTEL_SERVICE_NAME, else the consumer's name).
	Name string
	// MetricsAddr, when not empty, is where Run serves /metrics
	// (TINYCTL_METRICS_ADDR, else EnvMetricsAddr).
	MetricsAddr string
	// HealthAddr, when not empty, is where Run serves /healthz and
	// /readyz for the kubelet's probes (TINYCTL_HEALTH_ADDR).
	HealthAddr string
	// Grace is how long a drain may take (TINYCTL_DRAIN_GRACE, set from
	// the component's terminationGracePeriodSeconds); 0 means
	// DefaultGrace. The Grace option overrides it.
	Grace time.Duration
}

// ConfigFromEnv reads the Config from the process environment. It checks
// that the required variables are set and that every file they name can
// be read, and returns all problems at once, each naming its variable.
func ConfigFromEnv() (Config, error) { return ConfigFrom(os.Getenv) }

// ConfigFrom is ConfigFromEnv with the environment read through getenv.
func ConfigFrom(getenv func(string) string) (Config, error) {
	c := Config{
		URL:         getenv(workerenv.NATSURL),
		Stream:      getenv(workerenv.Stream),
		Consumer:    getenv(workerenv.Consumer),
		CredsFile:   getenv(workerenv.NATSCreds),
		InboxPrefix: getenv(workerenv.InboxPrefix),
		JSAPIPrefix: getenv(workerenv.JSAPIPrefix),
		CAFile:      getenv(workerenv.NATSCA),
		CertFile:    getenv(workerenv.NATSCert),
		KeyFile:     getenv(workerenv.NATSKey),
		Name:        getenv(workerenv.ServiceName),
		MetricsAddr: cmp.Or(getenv(workerenv.MetricsAddr), getenv(EnvMetricsAddr)),
		HealthAddr:  getenv(workerenv.HealthAddr),
	}
	if c.Name == "" {
		c.Name = c.Consumer
	}
	var graceErr error
	if v := getenv(workerenv.DrainGrace); v != "" {
		if c.Grace, graceErr = time.ParseDuration(v); graceErr == nil && c.Grace <= 0 {
			graceErr = errors.New("must be positive")
		}
		if graceErr != nil {
			graceErr = fmt.Errorf("%w: %s=%s: %w", ErrEnvironment, workerenv.DrainGrace, v, graceErr)
		}
	}
	return c, errors.Join(graceErr, c.check())
}

// check reports every required field that is empty and every file that
// cannot be read.
func (c Config) check() error {
	var errs []error
	for _, v := range []struct{ name, value string }{
		{workerenv.NATSURL, c.URL}, {workerenv.Stream, c.Stream}, {workerenv.Consumer, c.Consumer},
	} {
		if v.value == "" {
			errs = append(errs, fmt.Errorf("%w: %s is not set: is this process running in a tinyctl Deployment?", ErrEnvironment, v.name))
		}
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		errs = append(errs, fmt.Errorf("%w: %s and %s must be set together (a client certificate and its key)",
			ErrEnvironment, workerenv.NATSCert, workerenv.NATSKey))
	}
	for _, f := range []struct{ name, path string }{
		{workerenv.NATSCreds, c.CredsFile}, {workerenv.NATSCA, c.CAFile},
		{workerenv.NATSCert, c.CertFile}, {workerenv.NATSKey, c.KeyFile},
	} {
		if err := readable(f.path); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s=%s: %w: is the credentials Secret mounted?", ErrEnvironment, f.name, f.path, err))
		}
	}
	return errors.Join(errs...)
}

// readable fails when path is set and cannot be opened for reading.
func readable(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err // the variable already names the path
	}
	if err != nil {
		return err
	}
	return f.Close()
}
