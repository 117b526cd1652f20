package provision

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// ensureRoutesCertificate makes sure a broker of several servers has the
// Secret its routes authenticate with (the nats chart's
// cluster.tls.secretName): created once, with a CA of its own, and never
// rewritten. An existing Secret that does not cover the broker's pod names
// is an error naming it, not something install replaces: it may be the
// administrator's. A broker of one server needs none.
func (p *Provisioner) ensureRoutesCertificate(ctx context.Context, values map[string]any) (Result, bool, error) {
	replicas, err := nestedInt(values, 1, "cluster", "replicas")
	if err != nil || replicas <= 1 {
		return Result{}, false, err
	}
	name, err := nestedString(values, keyring.RoutesSecret, "cluster", "tls", "secretName")
	if err != nil {
		return Result{}, false, fmt.Errorf("broker values: %w", err)
	}
	if name == "" {
		return Result{}, false, fmt.Errorf("broker values: cluster.replicas %d needs cluster.tls.secretName: routes authenticate by certificate", replicas)
	}
	fullname, err := brokerFullname(values)
	if err != nil {
		return Result{}, false, err
	}
	names := keyring.RouteNames(fullname, p.opts.Namespace)
	res := Result{Kind: "Secret", Namespace: p.opts.Namespace, Name: name}
	data, found, err := p.readSecret(ctx, name)
	switch {
	case err != nil:
		return res, true, err
	case found:
		if err := keyring.RoutesCertificateCovers(data, names, time.Now()); err != nil {
			return res, true, fmt.Errorf("%s does not hold a routes certificate for %s: %w; delete it and run install again to have one made",
				res.Ref(), strings.Join(names, ", "), err)
		}
		res.Action = action.Unchanged
		return res, true, nil
	}
	data, err = keyring.NewRoutesCertificate(names, time.Now())
	if err != nil {
		return res, true, err
	}
	res, err = p.createSecret(ctx, name, data)
	return res, true, err
}

// brokerFullname is the name the nats chart gives its objects (its
// nats.fullname helper) for the release ChartBroker.
func brokerFullname(values map[string]any) (string, error) {
	override, err := nestedString(values, "", "fullnameOverride")
	if err != nil || override != "" {
		return override, err
	}
	name, err := nestedString(values, "", "nameOverride")
	if err != nil || name == "" || strings.Contains(ChartBroker, name) {
		return ChartBroker, err
	}
	return ChartBroker + "-" + name, nil
}
