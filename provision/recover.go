package provision

import (
	"fmt"
	"time"

	helmclient "github.com/mittwald/go-helm-client"
	"helm.sh/helm/v3/pkg/release"
)

// recoverPending makes a release left pending-install, pending-upgrade or
// pending-rollback by an interrupted operation (a crash, a killed helm)
// installable again: it marks that revision failed, so the install or
// upgrade that follows retries it from the last deployed revision. It
// returns a sentence for the user, or "" when nothing was pending. A
// pending revision younger than Options.StuckAfter may belong to an
// operation still running: that is ErrReleaseBusy, and nothing is touched.
func (p *Provisioner) recoverPending(hc *helmclient.HelmClient, last *release.Release) (string, error) {
	if last == nil || !last.Info.Status.IsPending() {
		return "", nil
	}
	status := last.Info.Status
	age := p.opts.Now().Sub(last.Info.LastDeployed.Time).Round(time.Second)
	if age < p.opts.StuckAfter {
		return "", fmt.Errorf("revision %d is %s since %s ago: %w; retry when it has finished, or after %s when it counts as interrupted",
			last.Version, status, age, ErrReleaseBusy, p.opts.StuckAfter)
	}
	last.SetStatus(release.StatusFailed, fmt.Sprintf("Interrupted while %s; marked failed by tinyctl install", status))
	if err := hc.ActionConfig.Releases.Update(last); err != nil {
		return "", fmt.Errorf("mark interrupted revision %d failed: %w", last.Version, err)
	}
	retry := "retried the install"
	if deployed, err := hc.ActionConfig.Releases.Deployed(last.Name); err == nil {
		retry = fmt.Sprintf("retried it from deployed revision %d", deployed.Version)
	}
	return fmt.Sprintf("revision %d was stuck in %s for %s (an interrupted operation); marked it failed and %s",
		last.Version, status, age, retry), nil
}
