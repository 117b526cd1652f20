package provision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// ErrKeysLost means the broker's trust configuration exists but the keys
// it was made from are gone; new keys would lock out every identity minted
// so far, so provision stops.
var ErrKeysLost = errors.New("the keys of the broker's trust configuration are gone")

// The seeds in KeysSecret, by key. operator-signing.nk came later: an
// older install gets it added (ensureKeys).
const (
	seedOperator        = "operator.nk"
	seedOperatorSigning = "operator-signing.nk"
	seedSystem          = "system.nk"
	seedAccount         = "account.nk"
	seedSigning         = "signing.nk"
)

// jwtStoreDir is where the broker's full resolver keeps account JWTs: on
// the JetStream volume the nats chart mounts at /data.
const jwtStoreDir = "/data/jwt"

// derivedSecret is a Secret made from the keys, once; complete says
// whether an existing one already holds what this version needs (an older
// install's is made again).
type derivedSecret struct {
	name     string
	data     func() (map[string][]byte, error)
	complete func(map[string][]byte) bool
}

// ensureIdentity makes sure the keys and the Secrets derived from them
// exist, generating what is missing and rewriting only what an older
// version made without something this one needs.
func (p *Provisioner) ensureIdentity(ctx context.Context, jwtSecret string) ([]Result, error) {
	keys, res, err := p.ensureKeys(ctx, jwtSecret)
	out := []Result{res}
	if err != nil {
		return out, err
	}
	for _, d := range p.derivedSecrets(keys, jwtSecret) {
		res, err := p.ensureSecret(ctx, d)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func (p *Provisioner) derivedSecrets(keys identity.Keys, jwtSecret string) []derivedSecret {
	has := func(keys ...string) func(map[string][]byte) bool {
		return func(d map[string][]byte) bool {
			for _, k := range keys {
				if len(d[k]) == 0 {
					return false
				}
			}
			return true
		}
	}
	publisher := identity.Publisher(identity.DefaultBuckets())
	return []derivedSecret{
		{jwtSecret, func() (map[string][]byte, error) {
			conf, err := keys.ServerConfig(jwtStoreDir)
			return map[string][]byte{keyring.JWTKey: conf}, err
		}, func(d map[string][]byte) bool { return bytes.Contains(d[keyring.JWTKey], []byte("type: full")) }},
		{keyring.SignerSecret, func() (map[string][]byte, error) {
			claims, err := keys.SystemSigner().Mint(identity.Name("claims", p.opts.Namespace), identity.Claims(), time.Now(), 0)
			seeds := keys.Seeds()
			return map[string][]byte{
				keyring.SignerSeedKey: seeds.Signing, keyring.SignerAccountKey: []byte(keys.AccountPublicKey()),
				keyring.SignerOperatorKey: seeds.OperatorSigning, keyring.SignerClaimsKey: claims.File,
			}, err
		}, has(keyring.SignerSeedKey, keyring.SignerAccountKey, keyring.SignerOperatorKey, keyring.SignerClaimsKey)},
		{keyring.PublisherSecret, func() (map[string][]byte, error) {
			c, err := keys.Signer().Mint(identity.Name("publisher", p.opts.Namespace), publisher, time.Now(), 0)
			return map[string][]byte{keyring.PublisherCredsKey: c.File}, err
		}, func(d map[string][]byte) bool {
			// Credentials an older version minted lack what this one
			// grants (queue figures, dead letters): minted again. The
			// old ones keep working until the keys change.
			ok, err := identity.Grants(d[keyring.PublisherCredsKey], publisher)
			return ok && err == nil
		}},
	}
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
		return p.completeKeys(ctx, data, res)
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
	res, err = p.createSecret(ctx, keyring.KeysSecret, seedData(k.Seeds()))
	return k, res, err
}

func seedData(s identity.Seeds) map[string][]byte {
	return map[string][]byte{seedOperator: s.Operator, seedOperatorSigning: s.OperatorSigning,
		seedSystem: s.System, seedAccount: s.Account, seedSigning: s.Signing}
}

// completeKeys restores the keys from KeysSecret's data; an older
// install's lacks the operator signing key, which is generated and added
// (the trust configuration is then made again, ensureIdentity).
func (p *Provisioner) completeKeys(ctx context.Context, data map[string][]byte, res Result) (identity.Keys, Result, error) {
	s := identity.Seeds{Operator: data[seedOperator], OperatorSigning: data[seedOperatorSigning],
		System: data[seedSystem], Account: data[seedAccount], Signing: data[seedSigning]}
	res.Action = action.Unchanged
	if len(s.OperatorSigning) == 0 {
		fresh, err := identity.NewKeys()
		if err != nil {
			return identity.Keys{}, res, err
		}
		s.OperatorSigning = fresh.Seeds().OperatorSigning
		if res, err = p.createSecret(ctx, keyring.KeysSecret, seedData(s)); err != nil {
			return identity.Keys{}, res, err
		}
	}
	k, err := identity.KeysFromSeeds(s)
	if err != nil {
		return k, res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	return k, res, nil
}

// ensureSecret creates Secret d.name with d.data() when it does not exist,
// or writes it again when it exists but is not complete; a complete one is
// never rewritten.
func (p *Provisioner) ensureSecret(ctx context.Context, d derivedSecret) (Result, error) {
	res := Result{Kind: "Secret", Namespace: p.opts.Namespace, Name: d.name}
	have, found, err := p.readSecret(ctx, d.name)
	if err != nil || (found && d.complete(have)) {
		res.Action = action.Unchanged
		return res, err
	}
	data, err := d.data()
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	return p.createSecret(ctx, d.name, data)
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
