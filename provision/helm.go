package provision

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	helmclient "github.com/mittwald/go-helm-client"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/rest"
)

// helm returns the Helm client for releases in namespace ns, creating it
// on first use. Releases are stored by Helm's Secrets driver in ns,
// whatever $HELM_DRIVER says, so the helm command lists them.
func (p *Provisioner) helm(ns string) (*helmclient.HelmClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if hc, ok := p.helms[ns]; ok {
		return hc, nil
	}
	c, err := helmclient.NewClientFromRestConf(&helmclient.RestConfClientOptions{
		Options: &helmclient.Options{
			Namespace:        ns,
			RepositoryCache:  filepath.Join(p.opts.CacheDir, "repository"),
			RepositoryConfig: filepath.Join(p.opts.CacheDir, "repositories.yaml"),
			DebugLog:         p.opts.HelmLog,
			Output:           io.Discard,
		},
		// go-helm-client mutates the config it is given (discovery burst).
		RestConfig: rest.CopyConfig(p.cfg),
	})
	if err != nil {
		return nil, fmt.Errorf("helm client for namespace %s: %w", ns, err)
	}
	hc, ok := c.(*helmclient.HelmClient)
	if !ok {
		return nil, fmt.Errorf("helm client for namespace %s: unexpected type %T", ns, c)
	}
	secrets := driver.NewSecrets(p.kube.CoreV1().Secrets(ns))
	secrets.Log = p.opts.HelmLog
	hc.ActionConfig.Releases = storage.Init(secrets)
	hc.ActionConfig.Releases.Log = p.opts.HelmLog
	p.helms[ns] = hc
	return hc, nil
}

// lastRelease returns the newest revision of release name in ns, or nil
// when the release does not exist.
func (p *Provisioner) lastRelease(ns, name string) (*release.Release, error) {
	hc, err := p.helm(ns)
	if err != nil {
		return nil, err
	}
	rel, err := hc.ActionConfig.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("release %s/%s: read history: %w", ns, name, err)
	}
	return rel, nil
}

// chartRef renders "name-version" of a release's chart.
func chartRef(rel *release.Release) string {
	if rel == nil || rel.Chart == nil || rel.Chart.Metadata == nil {
		return ""
	}
	return rel.Chart.Metadata.Name + "-" + rel.Chart.Metadata.Version
}
