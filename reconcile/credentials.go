package reconcile

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/render"
)

// A component's worker gets credentials of its own when the controller has
// a Minter (an account signing key): a user allowed exactly its consumer,
// its inbox and the subjects it declares, delivered as a Secret in its
// namespace that its Deployment mounts. The credentials expire after
// Config.CredentialsTTL and are minted again when less than half of it is
// left, so a deleted component's credentials stop working within the TTL
// (the controller holds no key that could revoke them sooner).

// Minter mints user credentials (identity.Signer).
type Minter interface {
	Mint(name string, perms identity.Permissions, now time.Time, ttl time.Duration) (identity.Creds, error)
}

// TLSFiles are the TLS files workers get with their credentials: the CA
// of the broker's certificate and a client certificate and key for mutual
// TLS (empty when the broker needs none).
type TLSFiles struct {
	CA, Cert, Key []byte
}

// kindSecret is the Kind of the credentials child.
const kindSecret = "Secret"

// credsPlan says which credentials a component needs and whether to mint
// them now.
type credsPlan struct {
	secret string
	perms  identity.Permissions
	// hash covers the permissions and TLS files: a change mints again.
	hash string
	// mint is false while the last minted credentials are current; kept is
	// then what the status recorded of them.
	mint bool
	kept api.Child
}

// planCredentials decides the credentials of comp, given what the previous
// status recorded (prev may be nil) and the time.
func planCredentials(comp api.Component, prev *api.Status, tls TLSFiles, apiPrefix string, ttl time.Duration, now time.Time) *credsPlan {
	md := comp.Metadata
	stream, consumer := render.StreamName(md.Namespace, md.Name), render.ConsumerName(md.Namespace, md.Name)
	p := &credsPlan{
		secret: render.CredentialsSecretName(md.Name),
		perms:  identity.Worker(cmp.Or(apiPrefix, identity.DefaultAPIPrefix), stream, consumer, render.InboxPrefix(md.Namespace, md.Name), comp.Spec.Jobs.Publish),
	}
	p.hash = digest(p.perms, tls)
	var old api.Child
	if prev != nil {
		old, _ = prev.ChildOfKind(kindSecret)
	}
	fresh := old.Name == p.secret && old.Hash == p.hash && now.Before(old.Expires.Add(-ttl/2))
	p.mint, p.kept = !fresh, old
	return p
}

func digest(perms identity.Permissions, tls TLSFiles) string {
	b, _ := json.Marshal(struct {
		P identity.Permissions
		T TLSFiles
	}{perms, tls})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// ensureCredentials mints and applies the credentials Secret when the plan
// says so, and returns the child to record, with its expiry.
func (c *Controller) ensureCredentials(ctx context.Context, minter Minter, ns, component string, p *credsPlan) (api.Child, error) {
	if !p.mint {
		return p.kept, nil
	}
	creds, err := minter.Mint(identity.Name("worker", ns, component), p.perms, c.clock.Now(), c.cfg.CredentialsTTL)
	if err != nil {
		return api.Child{}, err
	}
	tls := c.cfg.WorkerTLS
	obj := render.CredentialsSecret(ns, component, p.secret, render.Credentials{File: creds.File, User: creds.User, Expires: creds.Expires,
		CA: tls.CA, Cert: tls.Cert, Key: tls.Key})
	owner := render.ComponentLabelValue(ns, component)
	err = c.fenced(ctx, func(ctx context.Context) error {
		res, err := c.deps.Kube.ApplyAll(ctx, []*unstructured.Unstructured{obj},
			apply.SetOptions{Options: c.writeOptions(owner)})
		for _, r := range res {
			c.observe(ctx, r, err)
		}
		return err
	})
	if err != nil {
		return api.Child{}, stepError("credentials", err)
	}
	return api.Child{Kind: kindSecret, Namespace: ns, Name: p.secret, Hash: p.hash, Expires: creds.Expires}, nil
}
