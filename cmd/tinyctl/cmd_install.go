//go:build !noinstall

package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/provision"
	"github.com/tinyctl/tinyctl/provision/keyring"
	"github.com/tinyctl/tinyctl/render"
)

// controllerRepository is the image repository of released controllers.
const controllerRepository = "ghcr.io/tinyctl/tinyctl"

// runtimeFlags select the cluster and runtime namespace, for install and
// uninstall.
type runtimeFlags struct {
	kube      cli.KubeFlags
	namespace string
	wait      bool
	timeout   time.Duration
}

// addFlags registers the flags; waitHelp says what --wait waits for.
func (f *runtimeFlags) addFlags(fs *pflag.FlagSet, waitHelp string) {
	f.kube.AddFlags(fs)
	fs.StringVar(&f.namespace, "runtime-namespace", render.DefaultNATSNamespace, "namespace of the runtime (broker, collector, controller)")
	cli.BindEnv(fs, "runtime-namespace", "TINYCTL_RUNTIME_NAMESPACE")
	fs.BoolVar(&f.wait, "wait", false, waitHelp)
	fs.DurationVar(&f.timeout, "timeout", provision.DefaultTimeout, "how long each Helm operation (and --wait) may take")
}

// provisioner connects to the cluster the flags select. API warnings (a
// Pod Security violation, say) go to stderr.
func (f *runtimeFlags) provisioner(o *options) (*provision.Provisioner, error) {
	cfg, err := f.kube.RESTConfig(o.nats.RequestTimeout, o.errOut)
	if err != nil {
		return nil, err
	}
	return provision.New(cfg, provision.Options{Namespace: f.namespace, Wait: f.wait, Timeout: f.timeout})
}

// installFlags are the flags of `tinyctl install`.
type installFlags struct {
	runtime                                   runtimeFlags
	image, clusterName                        string
	brokerValues, collectorValues, ctrlValues string
	skipCRDs, skipCollector                   bool
	brokerAuth, brokerStorage                 string
	brokerReplicas                            int
	namespaces                                []string
	podCIDRs, serviceCIDRs                    []string
	allNamespaces                             bool
	repo, chart, version, release, releaseNS  string
	chartValues                               string
	keda                                      kedaFlags
	fleet                                     fleetFlags
}

func newInstallCmd(o *options) *cobra.Command {
	f := &installFlags{}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install or upgrade the tinyctl runtime in a Kubernetes cluster",
		Long: `install takes a cluster to a working tinyctl runtime with the Helm charts built
into tinyctl (no helm binary, no network): it creates and labels the runtime
namespace, applies the CRDs the runtime needs, generates the NATS broker's keys
(once), and installs the NATS broker, the trace collector and the controller.

With --broker-auth jwt (the default) the broker trusts an operator and
account kept in Secret tinyctl-nats-keys; the controller holds only the
account's signing key and mints its own credentials, each worker's (allowed
only its component's consumer and declared subjects) and nothing else; the
publisher credentials in Secret tinyctl-publisher may write specs and read
status. --broker-auth token shares one token among every party.

Components may go only to the namespaces --namespaces lists ("default"
unless told otherwise; the controller gets a Role in each), or with
--all-namespaces to every namespace but kube-system, kube-public,
kube-node-lease and the runtime's own. Running it again changes nothing unless a chart or a value
changed, in which case the releases are upgraded in place. A release left
pending by an interrupted install is detected and retried.

--with-keda also installs KEDA from its chart (release keda in namespace keda),
at the version this tinyctl pins (--keda-version to change it), from KEDA's
chart repository or, with no network, from --keda-chart-dir. --repo, --chart
and --version install any other chart from a chart repository. Both go before
the CRDs, so that a chart bringing its own CRDs owns them.`,
		Example: `  tinyctl install
  tinyctl install --image ghcr.io/tinyctl/tinyctl:0.3.0 --cluster-name eu-1 --namespaces media,billing
  tinyctl install --with-keda
  tinyctl install --with-keda --keda-chart-dir ./keda-` + provision.KEDAVersion + `.tgz
  tinyctl install --repo https://kedacore.github.io/charts --chart keda --version 2.17.0 --release-namespace keda`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Context(), o) },
	}
	f.addFlags(cmd.Flags())
	return cmd
}

func (f *installFlags) addFlags(fs *pflag.FlagSet) {
	f.runtime.addFlags(fs, "wait until each release's pods are ready; when --timeout passes, say which are not and why")
	fs.StringVar(&f.image, "image", defaultControllerImage(), "controller image, repository:tag (default: the chart's)")
	fs.StringVar(&f.clusterName, "cluster-name", render.DefaultClusterName, "this cluster's name, given to the controller")
	fs.StringVar(&f.brokerValues, "broker-values", "", "YAML file of values for the NATS broker chart")
	fs.StringVar(&f.collectorValues, "collector-values", "", "YAML file of values for the trace collector chart")
	fs.StringVar(&f.ctrlValues, "controller-values", "", "YAML file of values for the controller chart")
	fs.StringVar(&f.brokerAuth, "broker-auth", string(provision.AuthJWT),
		"how NATS clients authenticate: jwt (an identity per party, minted by the controller), token (one shared token) or none")
	fs.StringVar(&f.brokerStorage, "broker-storage", "",
		"where the broker keeps its JetStream store: pvc (a claim from the default StorageClass), pvc:CLASS, existing:CLAIM or emptyDir (lost with the pod) (default: the installed broker's; on a first install pvc when the cluster has a default StorageClass, else emptyDir)")
	fs.IntVar(&f.brokerReplicas, "broker-replicas", 0,
		"run the broker as a JetStream cluster of 1, 3 or 5 servers, and keep that many copies of the controller's buckets and streams (default: the values files', else 1)")
	fs.StringSliceVar(&f.namespaces, "namespaces", nil, "the only namespaces components may go to, comma-separated (default: the chart's, \"default\")")
	fs.BoolVar(&f.allNamespaces, "all-namespaces", false, "let components go to every namespace but the cluster's own and the runtime's: the controller may write in each namespace that exists now (a RoleBinding in each; run install again to grant newer ones)")
	fs.StringSliceVar(&f.podCIDRs, "pod-cidrs", nil, "the cluster's pod address ranges, comma-separated (default: the nodes' spec.podCIDRs); internet egress excludes them and allow lists may not name them")
	fs.StringSliceVar(&f.serviceCIDRs, "service-cidrs", nil, "the cluster's Service address ranges, comma-separated (default: the ServiceCIDR objects')")
	fs.BoolVar(&f.skipCRDs, "skip-crds", false, "do not apply the CRDs the runtime needs")
	fs.BoolVar(&f.skipCollector, "without-collector", false, "do not install the trace collector")
	fs.StringVar(&f.repo, "repo", "", "chart repository URL of an extra chart to install")
	fs.StringVar(&f.chart, "chart", "", "name of the extra chart in --repo")
	fs.StringVar(&f.version, "version", "", "version of the extra chart (default: the newest)")
	fs.StringVar(&f.release, "release", "", "release name of the extra chart (default: the chart name)")
	fs.StringVar(&f.releaseNS, "release-namespace", "", "namespace of the extra chart (default: the runtime namespace)")
	fs.StringVar(&f.chartValues, "chart-values", "", "YAML file of values for the extra chart")
	f.keda.addFlags(fs)
	f.fleet.addFlags(fs)
}

// defaultControllerImage is the released image of this tinyctl version, or
// "" (the chart's default) for a development build.
func defaultControllerImage() string { return releasedImage(version) }

// releasedImage is the controller image of release v (such as v1.2.3): the
// repository tagged with the version without its "v", the way the chart's
// appVersion and `go tool task image` write it. It is "" for any other v.
func releasedImage(v string) string {
	if regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(v) {
		return controllerRepository + ":" + strings.TrimPrefix(v, "v")
	}
	return ""
}

func (f *installFlags) run(ctx context.Context, o *options) error {
	plan, err := f.plan()
	if err != nil {
		return err
	}
	p, err := f.runtime.provisioner(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "Installing the tinyctl runtime in namespace %s\n", p.Namespace())
	if plan.BrokerStorage, err = p.ResolveBrokerStorage(ctx, plan.BrokerStorage, plan.BrokerValues); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	printStorage(o, plan.BrokerStorage)
	if err := f.network(ctx, o, p, &plan); err != nil {
		return err
	}
	results, err := p.Install(ctx, plan, printResult(o.out))
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	fmt.Fprintf(o.out, "Done: %s.\n", summary(results))
	printBrokerAccess(ctx, o.out, p)
	return nil
}

// network gives the controller the cluster's pod and Service ranges:
// those of --pod-cidrs and --service-cidrs, else those the controller
// values file sets, else those the cluster shows (said, or warned about
// when none is found).
func (f *installFlags) network(ctx context.Context, o *options, p *provision.Provisioner, plan *provision.Plan) error {
	given := provision.NetworkRanges{PodCIDRs: f.podCIDRs, ServiceCIDRs: f.serviceCIDRs}
	for _, c := range slices.Concat(given.PodCIDRs, given.ServiceCIDRs) {
		if pfx, err := netip.ParsePrefix(c); err != nil || pfx != pfx.Masked() {
			return usageError{fmt.Errorf("--pod-cidrs/--service-cidrs: %q is not a CIDR such as 10.244.0.0/16", c)}
		}
	}
	if _, set := plan.ControllerValues["network"]; set && len(given.PodCIDRs)+len(given.ServiceCIDRs) == 0 {
		return nil
	}
	found, err := p.DiscoverNetwork(ctx)
	if err != nil {
		o.warn(fmt.Sprintf("cluster network: %v; give --pod-cidrs and --service-cidrs, or workers with internet egress reach pods by address", err))
	}
	from := "found in the cluster"
	if len(given.PodCIDRs) > 0 {
		found.PodCIDRs, from = given.PodCIDRs, "given"
	}
	if len(given.ServiceCIDRs) > 0 {
		found.ServiceCIDRs = given.ServiceCIDRs
	}
	if len(found.PodCIDRs) == 0 || len(found.ServiceCIDRs) == 0 {
		o.warn("cluster network: no pod or no Service range found (nodes' podCIDRs, ServiceCIDR objects): give --pod-cidrs and --service-cidrs, or workers with internet egress reach pods by address")
	}
	fmt.Fprintf(o.out, "Cluster network (%s): pods %s, Services %s; internet egress excludes them\n",
		from, orNone(found.PodCIDRs), orNone(found.ServiceCIDRs))
	plan.ControllerValues = withValue(plan.ControllerValues, "network", found.Values())
	return nil
}

func orNone(cidrs []string) string {
	if len(cidrs) == 0 {
		return "none"
	}
	return strings.Join(cidrs, ",")
}

// printStorage says where the broker keeps its store, and warns when it is
// the pod's emptyDir because nothing better was found.
func printStorage(o *options, s provision.BrokerStorage) {
	switch {
	case s.Why == "":
		fmt.Fprintf(o.out, "Broker storage: %s\n", s)
	case s.Fallback:
		o.warn(fmt.Sprintf("broker storage: emptyDir: %s", s.Why))
	default:
		fmt.Fprintf(o.out, "Broker storage: %s (%s)\n", s, s.Why)
	}
}

// printBrokerAccess says where the broker is and how a publisher reaches
// it from outside the cluster.
func printBrokerAccess(ctx context.Context, w io.Writer, p *provision.Provisioner) {
	url, err := p.BrokerURL(ctx)
	if err != nil {
		return
	}
	jwt, err := p.HasPublisherCredentials(ctx)
	if err != nil || !jwt {
		fmt.Fprintf(w, "Broker: %s\n", maskToken(url, p.Namespace()))
		return
	}
	ns := p.Namespace()
	fmt.Fprintf(w, "Broker: %s (an identity per party; publisher credentials in Secret %s/%s, key %q)\n",
		url, ns, keyring.PublisherSecret, keyring.PublisherCredsKey)
	fmt.Fprintf(w, "Publish from here:\n  kubectl -n %s port-forward svc/%s 4222:4222 &\n", ns, provision.ChartBroker)
	fmt.Fprintf(w, "  kubectl -n %s get secret %s -o jsonpath='{.data.%s}' | base64 -d > publisher.creds\n",
		ns, keyring.PublisherSecret, strings.ReplaceAll(keyring.PublisherCredsKey, ".", `\.`))
	fmt.Fprintln(w, "  export TINYCTL_NATS_URL=nats://127.0.0.1:4222 TINYCTL_NATS_CREDS=$PWD/publisher.creds")
	fmt.Fprintln(w, "  tinyctl apply -f component.yaml")
	fmt.Fprintln(w, "Jobs come from producers: tinyctl identity producer NAMESPACE SUBJECT... --name NAME -o NAME.creds")
}

// plan turns the flags into a provision.Plan, reading the values files.
func (f *installFlags) plan() (provision.Plan, error) {
	plan := provision.Plan{SkipCRDs: f.skipCRDs, SkipCollector: f.skipCollector, ControllerImage: f.image,
		BrokerAuth: provision.BrokerAuth(f.brokerAuth), BrokerReplicas: f.brokerReplicas}
	switch f.brokerReplicas {
	case 0, 1, 3, 5:
	default:
		return plan, usageError{fmt.Errorf("--broker-replicas %d: want 1, 3 or 5 (an odd number of servers, at most JetStream's 5 replicas)", f.brokerReplicas)}
	}
	switch plan.BrokerAuth {
	case provision.AuthJWT, provision.AuthToken, provision.AuthNone:
	default:
		return plan, usageError{fmt.Errorf("--broker-auth %q: want jwt, token or none", f.brokerAuth)}
	}
	var err error
	if plan.BrokerStorage, err = provision.ParseBrokerStorage(f.brokerStorage); err != nil {
		return plan, usageError{fmt.Errorf("--broker-storage: %w", err)}
	}
	if f.allNamespaces && len(f.namespaces) > 0 {
		return plan, usageError{fmt.Errorf("--namespaces and --all-namespaces exclude each other")}
	}
	for _, v := range []struct {
		file string
		into *map[string]any
	}{{f.brokerValues, &plan.BrokerValues}, {f.collectorValues, &plan.CollectorValues}, {f.ctrlValues, &plan.ControllerValues}} {
		if *v.into, err = readValues(v.file); err != nil {
			return plan, err
		}
	}
	if f.clusterName != render.DefaultClusterName { // the chart's default otherwise
		plan.ControllerValues = withValue(plan.ControllerValues, "clusterName", f.clusterName)
	}
	switch {
	case f.allNamespaces:
		plan.ControllerValues = withValue(plan.ControllerValues, "namespaces", []any{})
	case len(f.namespaces) > 0:
		plan.ControllerValues = withValue(plan.ControllerValues, "namespaces", toAny(f.namespaces))
	}
	if err := f.fleet.apply(&plan, f.clusterName); err != nil {
		return plan, err
	}
	keda, err := f.keda.release()
	if err != nil {
		return plan, err
	}
	switch {
	case keda != nil && keda.Chart.Embedded != "":
		plan.AfterCRDs = append(plan.AfterCRDs, *keda)
	case keda != nil:
		plan.Extra = append(plan.Extra, *keda)
	}
	extra, err := f.extra()
	if extra != nil {
		plan.Extra = append(plan.Extra, *extra)
	}
	return plan, err
}

// extra is the chart from a repository, or nil without --repo.
func (f *installFlags) extra() (*provision.Release, error) {
	if f.repo == "" {
		if f.chart != "" || f.version != "" || f.release != "" || f.chartValues != "" {
			return nil, usageError{fmt.Errorf("--chart, --version, --release and --chart-values need --repo")}
		}
		return nil, nil
	}
	if f.chart == "" {
		return nil, usageError{fmt.Errorf("--repo needs --chart")}
	}
	vals, err := readValues(f.chartValues)
	if err != nil {
		return nil, err
	}
	name := f.release
	if name == "" {
		name = provision.SanitizeResourceName(f.chart)
	}
	return &provision.Release{
		Name: name, Namespace: f.releaseNS, Values: vals,
		Chart: provision.Chart{RepoURL: f.repo, Name: f.chart, Version: f.version},
	}, nil
}

// readValues reads a YAML values file; "" means none.
func readValues(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError{fmt.Errorf("values file: %w", err)}
	}
	var vals map[string]any
	if err := yaml.Unmarshal(b, &vals); err != nil {
		return nil, usageError{fmt.Errorf("values file %s: %w", path, err)}
	}
	return vals, nil
}

// withValue returns vals with key set to v: a flag given explicitly wins
// over a values file.
func withValue(vals map[string]any, key string, v any) map[string]any {
	if vals == nil {
		vals = map[string]any{}
	}
	vals[key] = v
	return vals
}

// printResult prints each result as its step finishes.
func printResult(w io.Writer) provision.Progress {
	return func(r provision.Result) { fmt.Fprintf(w, "  %s\n", r) }
}

// summary counts results by action, in a fixed order: "2 created, 1 unchanged".
func summary(rs []provision.Result) string {
	order := []action.Action{action.Created, action.Upgraded, action.Configured, action.Unchanged,
		action.Skipped, action.Deleted, action.Retained, action.Absent}
	count := map[action.Action]int{}
	for _, r := range rs {
		count[r.Action]++
	}
	var parts []string
	for _, a := range order {
		if count[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[a], a))
		}
	}
	if len(parts) == 0 {
		return "nothing to do"
	}
	return strings.Join(parts, ", ")
}

// maskToken hides the token of a broker URL and says where it is.
func maskToken(url, ns string) string {
	at := strings.Index(url, "@")
	if at < 0 {
		return url + " (no token)"
	}
	return fmt.Sprintf("nats://%s (token in Secret %s/%s, key %q)", url[at+1:], ns, keyring.TokenSecret, keyring.TokenKey)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
