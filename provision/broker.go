package provision

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/provision/keyring"
	"github.com/tinyctl/tinyctl/render"
)

// brokerService is the client Service of the nats chart's release.
const brokerService = ChartBroker

// BrokerAuth is how clients authenticate to the broker: the nats chart's
// auth.mode.
type BrokerAuth string

// The broker's auth modes. The chart defaults to AuthToken; `tinyctl
// install` uses AuthJWT.
const (
	AuthToken BrokerAuth = "token"
	AuthJWT   BrokerAuth = "jwt"
	AuthNone  BrokerAuth = "none"
)

// InstallBroker installs or upgrades the NATS broker (release "nats" of
// the embedded nats chart) with values on top of the chart's defaults.
// Before the chart, it makes sure the Secrets its auth mode needs exist:
// the token (AuthToken) or the keys, the server's trust configuration,
// the controller's signing key and the publisher's credentials (AuthJWT),
// and with more than one server the routes' certificate. Each is
// generated once and never rewritten, so they survive upgrades
// (Helm's lookup is not available in every mode, so the chart does not
// generate them). The upgrade is never forced: the broker's StatefulSet
// holds the JetStream store. It returns the Secrets' results and the
// release's.
func (p *Provisioner) InstallBroker(ctx context.Context, values map[string]any) ([]Result, error) {
	auth, err := brokerAuth(values)
	if err != nil {
		return nil, err
	}
	var out []Result
	switch auth.mode {
	case AuthToken:
		res, err := p.ensureToken(ctx, auth.secret, auth.key)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	case AuthJWT:
		rs, err := p.ensureIdentity(ctx, auth.jwtSecret)
		out = append(out, rs...)
		if err != nil {
			return out, err
		}
		if values, err = p.withLeafAccount(ctx, values); err != nil {
			return out, err
		}
	}
	res, routes, err := p.ensureRoutesCertificate(ctx, values)
	if routes {
		out = append(out, res)
	}
	if err != nil {
		return out, err
	}
	res, err = p.InstallRelease(ctx, Release{Name: ChartBroker, Chart: Embedded(ChartBroker), Values: values})
	return append(out, res), err
}

type authRef struct {
	mode                   BrokerAuth
	secret, key, jwtSecret string
}

// brokerAuth reads the auth settings of the nats chart from values.
func brokerAuth(values map[string]any) (authRef, error) {
	var ref authRef
	mode, err := nestedString(values, string(AuthToken), "auth", "mode")
	if err != nil {
		return ref, fmt.Errorf("broker values: %w", err)
	}
	switch ref.mode = BrokerAuth(mode); ref.mode {
	case AuthToken, AuthJWT, AuthNone:
	default:
		return ref, fmt.Errorf("broker values: auth.mode %q: want token, jwt or none", mode)
	}
	if ref.secret, err = nestedString(values, keyring.TokenSecret, "auth", "secretName"); err != nil {
		return ref, fmt.Errorf("broker values: %w", err)
	}
	if ref.key, err = nestedString(values, keyring.TokenKey, "auth", "secretKey"); err != nil {
		return ref, fmt.Errorf("broker values: %w", err)
	}
	if ref.jwtSecret, err = nestedString(values, keyring.JWTSecret, "auth", "jwtSecretName"); err != nil {
		return ref, fmt.Errorf("broker values: %w", err)
	}
	return ref, nil
}

// ensureToken creates Secret name with a random token under key when it
// does not exist; an existing one is never rewritten. It fails with
// ErrTokenSecret when the Secret exists without that key.
func (p *Provisioner) ensureToken(ctx context.Context, name, key string) (Result, error) {
	res := Result{Kind: "Secret", Namespace: p.opts.Namespace, Name: name}
	tok, err := p.readToken(ctx, name, key)
	switch {
	case err != nil:
		return res, err
	case tok != "":
		res.Action = action.Unchanged
		return res, nil
	}
	return p.createSecret(ctx, name, map[string][]byte{key: []byte(newToken())})
}

// readToken returns the token in Secret name, or "" when the Secret does
// not exist.
func (p *Provisioner) readToken(ctx context.Context, name, key string) (string, error) {
	data, found, err := p.readSecret(ctx, name)
	if err != nil || !found {
		return "", err
	}
	if len(data[key]) == 0 {
		ref := Result{Kind: "Secret", Namespace: p.opts.Namespace, Name: name}.Ref()
		return "", fmt.Errorf("%s: %w under key %q", ref, ErrTokenSecret, key)
	}
	return string(data[key]), nil
}

// newToken returns 260 random bits as upper-case letters and digits 2-7,
// after a letter prefix: the NATS configuration reads $NATS_TOKEN as a bare
// value, and a value starting with a digit would parse as a number. (It
// cannot fail: rand.Text panics if the system's random source breaks.)
func newToken() string {
	return "tk" + rand.Text() + rand.Text()
}

// createSecret creates Secret name in the runtime namespace, labelled as
// the runtime's so that uninstall finds it.
func (p *Provisioner) createSecret(ctx context.Context, name string, data map[string][]byte) (Result, error) {
	enc := map[string]any{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString(v)
	}
	ns := p.opts.Namespace
	ar, err := p.applier.Apply(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"labels": map[string]any{
				LabelRuntime: ns, LabelPartOf: PartOfTinyctl,
				render.LabelManagedBy: apply.FieldManager,
			},
		},
		"type": "Opaque",
		"data": enc,
	}})
	if err != nil {
		return Result{Kind: "Secret", Namespace: ns, Name: name}, err
	}
	return fromApply(ar), nil
}

// BrokerURL returns the URL clients inside the cluster use to reach the
// broker: nats://<token>@nats.<namespace>.svc:4222 when the token Secret
// exists, else the same URL without a token. It fails only when the
// Secret cannot be read (or holds no token).
func (p *Provisioner) BrokerURL(ctx context.Context) (string, error) {
	tok, err := p.readToken(ctx, keyring.TokenSecret, keyring.TokenKey)
	if err != nil {
		return "", err
	}
	u := p.brokerEndpoint()
	if tok != "" {
		u.User = url.User(tok)
	}
	return u.String(), nil
}

// brokerEndpoint is the broker's client URL without credentials.
func (p *Provisioner) brokerEndpoint() *url.URL {
	host := brokerService + "." + p.opts.Namespace + ".svc:" + strconv.Itoa(render.DefaultNATSClientPort)
	return &url.URL{Scheme: "nats", Host: host}
}

// withLeafAccount binds a fleet member's leafnode to the control account
// (fleet.localAccount): in operator mode a remote names the local account
// it joins, and the control account is where the controller mirrors the
// hub's specs and the hub sources status from. Values without hubURLs, or
// that name the account already, are returned as they are.
func (p *Provisioner) withLeafAccount(ctx context.Context, values map[string]any) (map[string]any, error) {
	if hubs, _ := nested(values, "fleet", "hubURLs"); hubs == nil {
		return values, nil
	}
	if acc, _ := nestedString(values, "", "fleet", "localAccount"); acc != "" {
		return values, nil
	}
	data, found, err := p.readSecret(ctx, keyring.SignerSecret)
	if err != nil {
		return nil, err
	}
	if !found || len(data[keyring.SignerAccountKey]) == 0 {
		return nil, fmt.Errorf("cannot bind the leafnode to the control account: Secret %s/%s holds no %s", p.opts.Namespace, keyring.SignerSecret, keyring.SignerAccountKey)
	}
	return mergeValues(values, map[string]any{"fleet": map[string]any{"localAccount": string(data[keyring.SignerAccountKey])}}), nil
}
