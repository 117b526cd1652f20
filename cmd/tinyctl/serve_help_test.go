package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/internal/cli"
)

// TestServeHelpDocumentsEveryFlagWithItsEnvironmentVariable checks what an
// SRE reads: every flag of `tinyctl serve`, its own and the inherited
// connection flags, shows its TINYCTL_* variable, and every flag that has a
// default shows it.
func TestServeHelpDocumentsEveryFlagWithItsEnvironmentVariable(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("serve --help exited %d: %s", code, errOut.String())
	}
	help := out.String()
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(f *pflag.Flag) {
		if f.Name == "help" || f.Hidden {
			return
		}
		env := cli.EnvOf(f)
		switch {
		case env == "":
			t.Errorf("--%s has no environment variable", f.Name)
		case !strings.HasPrefix(env, "TINYCTL_"):
			t.Errorf("--%s reads %s, want a TINYCTL_ variable", f.Name, env)
		case !strings.Contains(help, "--"+f.Name) || !strings.Contains(help, "[$"+env+"]") && !strings.Contains(help, "[$"+env+", $"):
			t.Errorf("serve --help does not show --%s with [$%s]", f.Name, env)
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "[]" {
			if line := helpLine(help, f.Name); !strings.Contains(line, "(default ") {
				t.Errorf("--%s has default %q but its help line shows none: %q", f.Name, def, line)
			}
		}
	}
	serve.LocalFlags().VisitAll(check)
	serve.InheritedFlags().VisitAll(check)
}

// TestServeTakesNoClientOnlyFlags: the client commands' -n and
// --nats-context mean nothing to the controller; serve's help does not
// offer them, and giving one is a usage error that says what to use
// instead. TINYCTL_NAMESPACE, which a user's shell may export for the
// client commands, is not read.
func TestServeTakesNoClientOnlyFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("serve --help exited %d: %s", code, errOut.String())
	}
	for _, flag := range []string{"-n,", "--namespace ", "--nats-context"} {
		if strings.Contains(out.String(), flag) {
			t.Errorf("serve --help offers %s", flag)
		}
	}
	if !strings.Contains(out.String(), "--nats-url") {
		t.Errorf("serve --help lacks the connection flags it uses:\n%s", out.String())
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "-n", "media"}, "Error: serve takes no --namespace: the controller manages every namespace but --deny-namespaces, or those --namespaces names\n"},
		{[]string{"serve", "--nats-context", "laptop"}, "Error: serve reads no nats CLI context: give it --nats-url and a credentials flag"},
		{[]string{"serve", "--gc-percent", "-2"}, "Error: --gc-percent -2: want -1 (off) or a percentage of 0 or more\n"},
		{[]string{"serve", "--memory-limit", "lots"}, "Error: --memory-limit \"lots\": want auto, none or a size such as 300Mi\n"},
		{[]string{"serve", "--memory-limit", "-1Gi"}, "Error: --memory-limit \"-1Gi\": want auto, none or a size such as 300Mi\n"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), tt.args, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("tinyctl %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), code, errOut.String(), tt.want)
		}
	}
}

// helpLine returns the line of help that documents --name.
func helpLine(help, name string) string {
	for _, l := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--"+name+" ") || strings.Contains(l, ", --"+name+" ") {
			return l
		}
	}
	return ""
}

// TestServeRefusesBadNetworkSettingsAtStart: a mistyped cluster range
// stops `tinyctl serve` before it connects anywhere, naming the flag's
// setting, instead of failing every component later.
func TestServeRefusesBadNetworkSettingsAtStart(t *testing.T) {
	u := newUser(t)
	r := u.run("serve", "--pod-cidrs", "10.244.0.0/16,10.96.0.1/12", "--dns-node-local-ip", "169.254.20")
	expect(t, r, exitError, nil, []string{
		`cluster network podCIDRs[1] "10.96.0.1/12": not canonical: write 10.96.0.0/12`,
		`cluster dns nodeLocalIP "169.254.20": invalid IP address`,
	})
}

// TestServeFlagsReadTheirVariables pins the environment variable of each of
// serve's own flags (bound by name, cli.BindAllEnv): the chart and users'
// manifests set them, so a renamed flag must be a decision, not an accident.
func TestServeFlagsReadTheirVariables(t *testing.T) {
	want := map[string]string{
		"cluster-name":                   "TINYCTL_CLUSTER_NAME",
		"cluster-labels":                 "TINYCTL_CLUSTER_LABELS",
		"hub-domain":                     "TINYCTL_HUB_DOMAIN",
		"accept-unplace":                 "TINYCTL_ACCEPT_UNPLACE",
		"workers":                        "TINYCTL_WORKERS",
		"namespaces":                     "TINYCTL_NAMESPACES",
		"deny-namespaces":                "TINYCTL_DENY_NAMESPACES",
		"create-namespaces":              "TINYCTL_CREATE_NAMESPACES",
		"service-account-namespaces":     "TINYCTL_SERVICE_ACCOUNT_NAMESPACES",
		"replicas":                       "TINYCTL_REPLICAS",
		"status-bucket":                  "TINYCTL_STATUS_BUCKET",
		"subject-prefixes":               "TINYCTL_SUBJECT_PREFIXES",
		"worker-nats-url":                "TINYCTL_WORKER_NATS_URL",
		"nats-namespace":                 "TINYCTL_NATS_NAMESPACE",
		"nats-pod-labels":                "TINYCTL_NATS_POD_LABELS",
		"keda-monitoring-endpoint":       "TINYCTL_KEDA_MONITORING_ENDPOINT",
		"keda-account":                   "TINYCTL_KEDA_ACCOUNT",
		"credentials-secret":             "TINYCTL_CREDENTIALS_SECRET",
		"collector-endpoint":             "TINYCTL_COLLECTOR_ENDPOINT",
		"collector-namespace":            "TINYCTL_COLLECTOR_NAMESPACE",
		"collector-pod-labels":           "TINYCTL_COLLECTOR_POD_LABELS",
		"pod-cidrs":                      "TINYCTL_POD_CIDRS",
		"service-cidrs":                  "TINYCTL_SERVICE_CIDRS",
		"egress-allow-cluster-cidrs":     "TINYCTL_EGRESS_ALLOW_CLUSTER_CIDRS",
		"egress-allow-metadata":          "TINYCTL_EGRESS_ALLOW_METADATA",
		"stream-max-bytes":               "TINYCTL_STREAM_MAX_BYTES",
		"stream-max-memory-bytes":        "TINYCTL_STREAM_MAX_MEMORY_BYTES",
		"stream-max-msgs":                "TINYCTL_STREAM_MAX_MSGS",
		"dns-node-local-ip":              "TINYCTL_DNS_NODE_LOCAL_IP",
		"nats-account-signing-key-file":  "TINYCTL_NATS_ACCOUNT_SIGNING_KEY_FILE",
		"nats-account":                   "TINYCTL_NATS_ACCOUNT",
		"nats-operator-signing-key-file": "TINYCTL_NATS_OPERATOR_SIGNING_KEY_FILE",
		"nats-claims-creds":              "TINYCTL_NATS_CLAIMS_CREDS",
		"tenant-store":                   "TINYCTL_TENANT_STORE",
		"tenant-memory":                  "TINYCTL_TENANT_MEMORY",
		"worker-credentials-ttl":         "TINYCTL_WORKER_CREDENTIALS_TTL",
		"worker-tls-ca-file":             "TINYCTL_WORKER_TLS_CA_FILE",
		"worker-tls-cert-file":           "TINYCTL_WORKER_TLS_CERT_FILE",
		"worker-tls-key-file":            "TINYCTL_WORKER_TLS_KEY_FILE",
		"metrics-addr":                   "TINYCTL_METRICS_ADDR",
		"health-addr":                    "TINYCTL_HEALTH_ADDR",
		"pprof-addr":                     "TINYCTL_PPROF_ADDR",
		"kube-qps":                       "TINYCTL_KUBE_QPS",
		"kube-burst":                     "TINYCTL_KUBE_BURST",
		"log-level":                      "TINYCTL_LOG_LEVEL",
		"log-format":                     "TINYCTL_LOG_FORMAT",
		"holder":                         "TINYCTL_HOLDER",
		"lease-ttl":                      "TINYCTL_LEASE_TTL",
		"heartbeat-ttl":                  "TINYCTL_HEARTBEAT_TTL",
		"keda-operator-selector":         "TINYCTL_KEDA_OPERATOR_SELECTOR",
		"shutdown-grace":                 "TINYCTL_SHUTDOWN_GRACE",
		"recheck":                        "TINYCTL_RECHECK",
		"gc-percent":                     "TINYCTL_GC_PERCENT",
		"memory-limit":                   "TINYCTL_MEMORY_LIMIT",
		"embedded-nats":                  "TINYCTL_EMBEDDED_NATS",
		"embedded-nats-store":            "TINYCTL_EMBEDDED_NATS_STORE",
		"embedded-nats-port":             "TINYCTL_EMBEDDED_NATS_PORT",
		"embedded-nats-monitor-port":     "TINYCTL_EMBEDDED_NATS_MONITOR_PORT",
	}
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range want {
		f := serve.Flags().Lookup(name)
		if f == nil {
			t.Errorf("serve has no flag --%s", name)
		} else if got := cli.EnvOf(f); got != env {
			t.Errorf("--%s reads %s, want %s", name, got, env)
		}
	}
}

// TestServeRefusesNamespaceListsThatNameNoNamespace: every entry of a
// namespace flag that cannot be a namespace is named, in one error,
// before serve connects to anything; "*" is taken where it means every
// managed namespace.
func TestServeRefusesNamespaceListsThatNameNoNamespace(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "--nats-url", "nats://127.0.0.1:1",
		"--namespaces", "media,Search", "--monitoring-namespaces", "monitoring,prom_ns",
		"--service-account-namespaces", "*", "--deny-namespaces", "kube-system,"}, &out, &errOut)
	if code == exitOK {
		t.Fatalf("serve with bad namespace lists exited 0")
	}
	for _, want := range []string{
		`namespaces: "Search" is not a namespace name: a lowercase RFC 1123 label`,
		`monitoring-namespaces: "prom_ns" is not a namespace name`,
		`deny-namespaces: "" is not a namespace name`,
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	for _, fine := range []string{`"media"`, `"monitoring"`, `"*"`, `"kube-system"`} {
		if strings.Contains(errOut.String(), fine) {
			t.Errorf("stderr refuses %s, a fine entry:\n%s", fine, errOut.String())
		}
	}
}
