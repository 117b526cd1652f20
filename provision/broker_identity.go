package provision

import (
	"github.com/tinyctl/tinyctl/provision/keyring"

	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/identity"
)

// ErrKeysLost means the broker's trust configuration exists but the keys
// it was made from are gone; new keys would lock out every identity minted
// so far, so provision stops.
var ErrKeysLost = errors.New("the keys of the broker's trust configuration are gone")

var seedKeys = []string{"operator.nk", "system.nk", "account.nk", "signing.nk"}

// ensureIdentity makes sure the keys and the Secrets derived from them
// exist, generating what is missing and rewriting nothing.
func (p *Provisioner) ensureIdentity(ctx context.Context, jwtSecret string) ([]Result, error) {
	keys, res, err := p.ensureKeys(ctx, jwtSecret)
	out := []Result{res}
	if err != nil {
		return out, err
	}
	derived := []struct {
		name string
		data func() (map[string][]byte, error)
	}{
		{jwtSecret, func() (map[string][]byte, error) {
			conf, err := keys.ServerConfig()
			return map[string][]byte{keyring.JWTKey: conf}, err
		}},
		{keyring.SignerSecret, func() (map[string][]byte, error) {
			return map[string][]byte{keyring.SignerSeedKey: keys.Seeds().Signing, keyring.SignerAccountKey: []byte(keys.AccountPublicKey())}, nil
		}},
		{keyring.PublisherSecret, func() (map[string][]byte, error) {
			c, err := keys.Signer().Mint(identity.Name("publisher", p.opts.Namespace), identity.Publisher(identity.DefaultBuckets()), time.Now(), 0)
			return map[string][]byte{keyring.PublisherCredsKey: c.File}, err
		}},
	}
	for _, d := range derived {
		res, err := p.ensureSecret(ctx, d.name, d.data)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// ensureKeys reads the keys, or generates and stores them when neither
// they nor a trust configuration made from them exist.
func (p *Provisioner) ensureKeys(ctx context.Context, jwtSecret string) (identity.Keys, Result, error) {
	res := Result{Kind: "Secret", Namespace: p.opts.Namespace, Name: keyring.KeysSecret}
	data, found, err := p.readSecret(ctx, keyring.KeysSecret)
	if err != nil {
		return identity.Keys{}, res, err
	}
	if found {
		k, err := identity.KeysFromSeeds(identity.Seeds{Operator: data[seedKeys[0]], System: data[seedKeys[1]], Account: data[seedKeys[2]], Signing: data[seedKeys[3]]})
		if err != nil {
			return k, res, fmt.Errorf("%s: %w", res.Ref(), err)
		}
		res.Action = api.Unchanged
		return k, res, nil
	}
	if _, trusted, err := p.readSecret(ctx, jwtSecret); err != nil || trusted {
		if err == nil {
			err = fmt.Errorf("%w: Secret %s/%s exists without Secret %s; restore %s, or delete %s to start over (every credential minted so far stops working)",
				ErrKeysLost, p.opts.Namespace, jwtSecret, keyring.KeysSecret, keyring.KeysSecret, jwtSecret)
		}
		return identity.Keys{}, res, err
	}
	k, err := identity.NewKeys()
	if err != nil {
		return k, res, err
	}
	s := k.Seeds()
	res, err = p.createSecret(ctx, keyring.KeysSecret, map[string][]byte{
		seedKeys[0]: s.Operator, seedKeys[1]: s.System, seedKeys[2]: s.Account, seedKeys[3]: s.Signing,
	})
	return k, res, err
}

// ensureSecret creates Secret name with data() when it does not exist; an
// existing one is never rewritten.
func (p *Provisioner) ensureSecret(ctx context.Context, name string, data func() (map[string][]byte, error)) (Result, error) {
	res := Result{Kind: "Secret", Namespace: p.opts.Namespace, Name: name}
	if _, found, err := p.readSecret(ctx, name); err != nil || found {
		res.Action = api.Unchanged
		return res, err
	}
	d, err := data()
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	return p.createSecret(ctx, name, d)
}

// readSecret returns the data of Secret name in the runtime namespace;
// found is false when it does not exist.
func (p *Provisioner) readSecret(ctx context.Context, name string) (map[string][]byte, bool, error) {
	s, err := p.kube.CoreV1().Secrets(p.opts.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		ref := Result{Kind: "Secret", Namespace: p.opts.Namespace, Name: name}.Ref()
		return nil, false, fmt.Errorf("%s: read: %w", ref, err)
	}
	return s.Data, true, nil
}

// HasPublisherCredentials reports whether the runtime holds publisher
// credentials (Secret PublisherSecret): the broker uses jwt auth.
func (p *Provisioner) HasPublisherCredentials(ctx context.Context) (bool, error) {
	data, found, err := p.readSecret(ctx, keyring.PublisherSecret)
	return found && len(data[keyring.PublisherCredsKey]) > 0, err
}
