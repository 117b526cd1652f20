package provision

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/render"
)

// The broker's token Secret, as the nats chart and the tinyctl chart
// expect it by default.
const (
	TokenSecret = "nats-auth"
	TokenKey    = "token"
)

// brokerService is the client Service of the nats chart's release.
const brokerService = ChartBroker

// InstallBroker installs or upgrades the NATS broker (release "nats" of
// the embedded nats chart) with values on top of the chart's defaults.
// Unless values set auth.enabled to false, it first makes sure the token
// Secret exists: generated once, at random, and never rewritten, so the
// token survives upgrades (Helm's lookup is not available in every mode,
// so the chart does not generate it). The upgrade is never forced: the
// broker's StatefulSet holds the JetStream store. It returns the Secret's
// result (when auth is on) and the release's.
func (p *Provisioner) InstallBroker(ctx context.Context, values map[string]any) ([]Result, error) {
	var out []Result
	auth, err := brokerAuth(values)
	if err != nil {
		return nil, err
	}
	if auth.enabled {
		res, err := p.ensureToken(ctx, auth.secret, auth.key)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	res, err := p.InstallRelease(ctx, Release{Name: ChartBroker, Chart: Embedded(ChartBroker), Values: values})
	return append(out, res), err
}

type tokenRef struct {
	enabled     bool
	secret, key string
}

// brokerAuth reads the auth settings of the nats chart from values.
func brokerAuth(values map[string]any) (tokenRef, error) {
	ref := tokenRef{enabled: true}
	if v, ok := nested(values, "auth", "enabled"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return ref, fmt.Errorf("broker values: auth.enabled: want true or false, got %v", v)
		}
		ref.enabled = b
	}
	var err error
	if ref.secret, err = nestedString(values, TokenSecret, "auth", "secretName"); err != nil {
		return ref, fmt.Errorf("broker values: %w", err)
	}
	if ref.key, err = nestedString(values, TokenKey, "auth", "secretKey"); err != nil {
		return ref, fmt.Errorf("broker values: %w", err)
	}
	return ref, nil
}

// ensureToken creates Secret name with a random token under key when it
// does not exist; an existing one is never rewritten. It fails with
// ErrTokenSecret when the Secret exists without that key.
func (p *Provisioner) ensureToken(ctx context.Context, name, key string) (Result, error) {
	ns := p.opts.Namespace
	res := Result{Kind: "Secret", Namespace: ns, Name: name}
	tok, err := p.readToken(ctx, name, key)
	switch {
	case err != nil:
		return res, err
	case tok != "":
		res.Action = api.Unchanged
		return res, nil
	}
	ar, err := p.applier.Apply(ctx, tokenSecret(ns, name, key, newToken()))
	if err != nil {
		return res, err
	}
	return fromApply(ar), nil
}

// readToken returns the token in Secret name, or "" when the Secret does
// not exist.
func (p *Provisioner) readToken(ctx context.Context, name, key string) (string, error) {
	ref := Result{Kind: "Secret", Namespace: p.opts.Namespace, Name: name}.Ref()
	s, err := p.kube.CoreV1().Secrets(p.opts.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%s: read: %w", ref, err)
	}
	if len(s.Data[key]) == 0 {
		return "", fmt.Errorf("%s: %w under key %q", ref, ErrTokenSecret, key)
	}
	return string(s.Data[key]), nil
}

// newToken returns 260 random bits as upper-case letters and digits 2-7,
// after a letter prefix: the NATS configuration reads $NATS_TOKEN as a bare
// value, and a value starting with a digit would parse as a number. (It
// cannot fail: rand.Text panics if the system's random source breaks.)
func newToken() string {
	return "tk" + rand.Text() + rand.Text()
}

func tokenSecret(ns, name, key, token string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"labels": map[string]any{
				LabelRuntime: ns, LabelPartOf: PartOfTinyctl,
				render.LabelManagedBy: apply.FieldManager,
			},
		},
		"type": "Opaque",
		"data": map[string]any{key: base64.StdEncoding.EncodeToString([]byte(token))},
	}}
}

// BrokerURL returns the URL clients inside the cluster use to reach the
// broker: nats://<token>@nats.<namespace>.svc:4222 when the token Secret
// exists, else the same URL without a token. It fails only when the
// Secret cannot be read (or holds no token).
func (p *Provisioner) BrokerURL(ctx context.Context) (string, error) {
	tok, err := p.readToken(ctx, TokenSecret, TokenKey)
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
