package worker_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/worker"
)

func TestConfigFromNamesEveryProblem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	creds := filepath.Join(dir, "nats.creds")
	if err := os.WriteFile(creds, []byte("creds"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"NATS_URL": "nats://n:4222", "TINYCTL_STREAM": "s", "TINYCTL_CONSUMER": "c"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	for name, tc := range map[string]struct {
		env  map[string]string
		want []string // one line per problem
	}{
		"empty environment": {env: nil, want: []string{
			"worker environment incomplete: NATS_URL is not set: is this process running in a tinyctl Deployment?",
			"worker environment incomplete: TINYCTL_STREAM is not set: is this process running in a tinyctl Deployment?",
			"worker environment incomplete: TINYCTL_CONSUMER is not set: is this process running in a tinyctl Deployment?",
		}},
		"credentials not mounted": {env: with(map[string]string{"NATS_CREDS": filepath.Join(dir, "absent.creds")}), want: []string{
			"worker environment incomplete: NATS_CREDS=" + filepath.Join(dir, "absent.creds") + ": no such file or directory: is the credentials Secret mounted?",
		}},
		"a certificate without its key": {env: with(map[string]string{"NATS_CERT": creds}), want: []string{
			"worker environment incomplete: NATS_CERT and NATS_KEY must be set together (a client certificate and its key)",
		}},
		"a drain grace that is not a duration": {env: with(map[string]string{"TINYCTL_DRAIN_GRACE": "120"}), want: []string{
			`worker environment incomplete: TINYCTL_DRAIN_GRACE=120: time: missing unit in duration "120"`,
		}},
		"a CA that is not there": {env: with(map[string]string{"NATS_CA": filepath.Join(dir, "ca.crt")}), want: []string{
			"worker environment incomplete: NATS_CA=" + filepath.Join(dir, "ca.crt") + ": no such file or directory: is the credentials Secret mounted?",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := worker.ConfigFrom(func(k string) string { return tc.env[k] })
			if !errors.Is(err, worker.ErrEnvironment) {
				t.Fatalf("error %v does not match ErrEnvironment", err)
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigFromReadsWhatTheDeploymentSets(t *testing.T) {
	t.Parallel()
	creds := filepath.Join(t.TempDir(), "nats.creds")
	if err := os.WriteFile(creds, []byte("creds"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"NATS_URL": "nats://n:4222", "TINYCTL_STREAM": "tinyctl_media_thumbs", "TINYCTL_CONSUMER": "tinyctl_media_thumbs_worker",
		"NATS_CREDS": creds, "TINYCTL_INBOX_PREFIX": "_INBOX_tinyctl_media_thumbs_worker", "OTEL_SERVICE_NAME": "thumbs",
		"WORKER_METRICS_ADDR": ":9090", "TINYCTL_DRAIN_GRACE": "1m55s",
	}
	got, err := worker.ConfigFrom(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := worker.Config{URL: "nats://n:4222", Stream: "tinyctl_media_thumbs", Consumer: "tinyctl_media_thumbs_worker",
		CredsFile: creds, InboxPrefix: "_INBOX_tinyctl_media_thumbs_worker", Name: "thumbs", MetricsAddr: ":9090",
		Grace: 115 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	env["TINYCTL_METRICS_ADDR"] = ":9464" // spec.metricsPort: the Deployment's wins
	if got, _ := worker.ConfigFrom(func(k string) string { return env[k] }); got.MetricsAddr != ":9464" {
		t.Errorf("with TINYCTL_METRICS_ADDR and WORKER_METRICS_ADDR metrics are served at %q, want the Deployment's :9464", got.MetricsAddr)
	}
	delete(env, "OTEL_SERVICE_NAME")
	if got, _ := worker.ConfigFrom(func(k string) string { return env[k] }); got.Name != "tinyctl_media_thumbs_worker" {
		t.Errorf("without OTEL_SERVICE_NAME the client is named %q, want the consumer's name", got.Name)
	}
}
