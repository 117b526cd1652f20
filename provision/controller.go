package provision

import (
	"context"
	"fmt"
	"strings"

	"github.com/tinyctl/tinyctl/provision/keyring"
)

// InstallController installs or upgrades the controller, `tinyctl serve`
// (release "tinyctl" of the embedded tinyctl chart). image is the
// controller image as repository:tag; empty keeps the chart's default.
// The controller is pointed at the broker: nats.url is the broker's URL
// without credentials, nats.namespace the runtime namespace, and, by the
// broker's auth mode, nats.tokenSecret names the token Secret (AuthToken,
// when it exists) or nats.identity the account signing key's Secret
// (AuthJWT), so the kubelet hands the secret to the controller, which
// needs no right to read the runtime's Secrets (nor does a secret land in
// Helm's release record). values override any of these. It fails on an
// image with a digest, on an unreadable Secret, and as InstallRelease
// does.
func (p *Provisioner) InstallController(ctx context.Context, image string, auth BrokerAuth, values map[string]any) (Result, error) {
	res := Result{Kind: "Release", Namespace: p.opts.Namespace, Name: ChartController}
	base, err := p.controllerValues(ctx, image, auth)
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	kept, err := p.keptValues(values)
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	final, err := p.withGrants(ctx, mergeValues(mergeValues(base, kept), values))
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	return p.InstallRelease(ctx, Release{Name: ChartController, Chart: Embedded(ChartController), Values: final})
}

// KeptValues are the controller values an install keeps from the
// installed release unless given again: who this cluster is (a new name
// or lost labels would unplace components) and where it may act.
var KeptValues = []string{"clusterName", "clusterLabels", "namespaces", "hubDomain"}

// keptValues returns the KeptValues the installed controller release was
// given and values do not set.
func (p *Provisioner) keptValues(values map[string]any) (map[string]any, error) {
	last, err := p.lastRelease(p.opts.Namespace, ChartController)
	if err != nil || last == nil {
		return nil, err
	}
	kept := map[string]any{}
	for _, k := range KeptValues {
		if _, given := values[k]; given {
			continue
		}
		if v, ok := last.Config[k]; ok {
			kept[k] = v
		}
	}
	return kept, nil
}

// controllerValues are the values InstallController derives from the
// runtime: image and broker.
func (p *Provisioner) controllerValues(ctx context.Context, image string, auth BrokerAuth) (map[string]any, error) {
	nats := map[string]any{
		"url":         p.brokerEndpoint().String(),
		"namespace":   p.opts.Namespace,
		"tokenSecret": map[string]any{"name": "", "key": keyring.TokenKey},
	}
	switch auth {
	case AuthToken:
		tok, err := p.readToken(ctx, keyring.TokenSecret, keyring.TokenKey)
		if err != nil {
			return nil, err
		}
		if tok != "" {
			nats["tokenSecret"] = map[string]any{"name": keyring.TokenSecret, "key": keyring.TokenKey}
		}
	case AuthJWT:
		id, err := p.signerValues(ctx)
		if err != nil {
			return nil, err
		}
		nats["identity"] = id
	}
	vals := map[string]any{"nats": nats}
	if image != "" {
		repo, tag, err := splitImage(image)
		if err != nil {
			return nil, err
		}
		vals["image"] = map[string]any{"repository": repo, "tag": tag}
	}
	return vals, nil
}

// signerValues point the controller at the account signing key's Secret.
func (p *Provisioner) signerValues(ctx context.Context) (map[string]any, error) {
	data, found, err := p.readSecret(ctx, keyring.SignerSecret)
	if err != nil {
		return nil, err
	}
	if !found || len(data[keyring.SignerAccountKey]) == 0 {
		return nil, fmt.Errorf("broker auth jwt: Secret %s/%s with key %q does not exist (install the broker first)", p.opts.Namespace, keyring.SignerSecret, keyring.SignerAccountKey)
	}
	return map[string]any{"signerSecret": keyring.SignerSecret, "account": string(data[keyring.SignerAccountKey])}, nil
}

// splitImage splits "registry:5000/org/name:tag" into repository and tag.
// A missing tag is "" (the chart's appVersion), which go-containerregistry's
// name.NewTag would make "latest".
func splitImage(image string) (repo, tag string, err error) {
	if strings.Contains(image, "@") {
		return "", "", fmt.Errorf("controller image %q: digests are not supported, give repository:tag", image)
	}
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[:colon], image[colon+1:], nil
	}
	return image, "", nil
}
