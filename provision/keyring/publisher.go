package keyring

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tinyctl/tinyctl/identity"
)

// DefaultPublisherTTL is how long a namespace publisher's credentials live
// unless told.
const DefaultPublisherTTL = 90 * 24 * time.Hour

// MintPublisher mints credentials of a publisher of namespace ns in ns's
// publisher account (issuer from Issuer): they write ns's specs and read
// ns's specs and status, and nothing else; the file's JWT names ns
// (identity.ScopeOf), so tinyctl knows to stay within it.
func MintPublisher(issuer *identity.Issuer, ns, name string, ttl time.Duration) (identity.Creds, error) {
	for what, v := range map[string]string{"namespace": ns, "name": name} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return identity.Creds{}, fmt.Errorf("publisher %s %q: %s", what, v, errs[0])
		}
	}
	if ttl <= 0 {
		ttl = DefaultPublisherTTL
	}
	n := issuer.Namespace(ns)
	return n.PublisherSigner().Mint(identity.Name("publisher", ns, name), identity.NamespacePublisher(identity.DefaultBuckets(), ns), time.Now(), ttl)
}

// PushPublisherAccount makes ns's publisher account exist in the broker nc
// (a connection of the claims credentials, ClaimsCreds) reaches, so its
// publishers can connect before the controller reconciles the namespace's
// first component. It writes nothing when the broker holds it already.
func PushPublisherAccount(ctx context.Context, nc *nats.Conn, issuer *identity.Issuer, ns string) error {
	c := issuer.PublisherClaims(issuer.Namespace(ns))
	stored, err := identity.LookupAccount(ctx, nc, c.Subject)
	if err == nil && identity.SameAccount(stored, c) {
		return nil
	}
	token, err := issuer.Sign(c)
	if err != nil {
		return err
	}
	return identity.PushAccount(ctx, nc, token)
}
