package provision

import (
	"context"
	"fmt"
	"strings"
)

// InstallController installs or upgrades the controller, `tinyctl serve`
// (release "tinyctl" of the embedded tinyctl chart). image is the
// controller image as repository:tag; empty keeps the chart's default.
// The controller is pointed at the broker: nats.url is the broker's URL
// without credentials (BrokerURL's host), nats.namespace the runtime
// namespace, and nats.tokenSecret names the token Secret when it exists,
// so the kubelet hands the token to the controller and the controller
// needs no right to read Secrets (nor does the token land in Helm's
// release record). values override any of these. It fails on an image
// with a digest, on an unreadable token Secret, and as InstallRelease
// does.
func (p *Provisioner) InstallController(ctx context.Context, image string, values map[string]any) (Result, error) {
	res := Result{Kind: "Release", Namespace: p.opts.Namespace, Name: ChartController}
	base, err := p.controllerValues(ctx, image)
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	return p.InstallRelease(ctx, Release{
		Name: ChartController, Chart: Embedded(ChartController), Values: mergeValues(base, values),
	})
}

// controllerValues are the values InstallController derives from the
// runtime: image and broker.
func (p *Provisioner) controllerValues(ctx context.Context, image string) (map[string]any, error) {
	tok, err := p.readToken(ctx, TokenSecret, TokenKey)
	if err != nil {
		return nil, err
	}
	secret := ""
	if tok != "" {
		secret = TokenSecret
	}
	vals := map[string]any{
		"nats": map[string]any{
			"url":         p.brokerEndpoint().String(),
			"namespace":   p.opts.Namespace,
			"tokenSecret": map[string]any{"name": secret, "key": TokenKey},
		},
	}
	if image != "" {
		repo, tag, err := splitImage(image)
		if err != nil {
			return nil, err
		}
		vals["image"] = map[string]any{"repository": repo, "tag": tag}
	}
	return vals, nil
}

// splitImage splits "registry:5000/org/name:tag" into repository and tag.
// A missing tag is "" (the chart's appVersion).
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
