// Package provision installs a cluster's tinyctl runtime with the Helm Go
// SDK (through mittwald's go-helm-client), offline: the charts travel
// inside the binary (package deploy), so no helm binary and no network are
// needed.
//
// A Provisioner works on one runtime namespace (default tinyctl-system).
// Its steps are exported one by one, and Install runs them in order:
//
//   - EnsureNamespace creates the namespace when absent and labels it as
//     dedicated to tinyctl (plus the restricted Pod Security labels it does
//     not already carry);
//   - InstallCRDs server-side applies the CustomResourceDefinitions the
//     runtime needs (Helm's crds/ folder is never upgraded, so CRDs are not
//     in the charts);
//   - InstallBroker generates the NATS auth token once, into a Secret, and
//     installs the NATS chart (never forced: the broker holds state);
//   - InstallCollector installs the trace collector;
//   - InstallController installs `tinyctl serve` pointed at the broker;
//   - InstallRelease installs any chart, embedded or from a chart
//     repository (KEDA's, say).
//
// Every write outside Helm goes through package apply (server-side apply,
// field manager "tinyctl", skipped when unchanged). Releases are stored by
// Helm's Secrets driver in the release namespace, exactly as the helm
// command stores them. An install whose rendered manifest, values and chart
// equal the deployed release's writes nothing and creates no revision; any
// difference upgrades in place. A release left pending-install or
// pending-upgrade by a crash is detected, marked failed and retried.
//
// Cancellation: Helm operations honour ctx only between API calls; an
// install or upgrade whose ctx is cancelled returns, but Helm finishes the
// request in flight and may leave the release pending, which the next
// install recovers. Uninstall removes what Install created and nothing
// else (see docs/install.md).
package provision
