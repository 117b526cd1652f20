package identity

import (
	"fmt"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// Keys are the keys of a broker with decentralized auth: the operator and
// its signing key (which signs namespaces' accounts, see Issuer), the
// system account the server needs, and tinyctl's control account with the
// signing key the controller mints its own user with. `tinyctl install`
// generates them once and keeps them in a Secret; only the signing keys
// leave it, for the controller.
type Keys struct {
	Operator, OperatorSigning, System, Account, Signing nkeys.KeyPair
}

// Seeds holds Keys as seeds, for storage.
type Seeds struct {
	Operator, OperatorSigning, System, Account, Signing []byte
}

// NewKeys generates a new set of keys.
func NewKeys() (Keys, error) {
	var k Keys
	var err error
	for _, p := range []*nkeys.KeyPair{&k.Operator, &k.OperatorSigning} {
		if *p, err = nkeys.CreateOperator(); err != nil {
			return k, fmt.Errorf("identity: operator key: %w", err)
		}
	}
	for _, p := range []*nkeys.KeyPair{&k.System, &k.Account, &k.Signing} {
		if *p, err = nkeys.CreateAccount(); err != nil {
			return k, fmt.Errorf("identity: account key: %w", err)
		}
	}
	return k, nil
}

// KeysFromSeeds restores Keys.
func KeysFromSeeds(s Seeds) (Keys, error) {
	var k Keys
	var err error
	for _, p := range []struct {
		seed []byte
		key  *nkeys.KeyPair
		name string
	}{{s.Operator, &k.Operator, "operator"}, {s.OperatorSigning, &k.OperatorSigning, "operator signing"}, {s.System, &k.System, "system account"},
		{s.Account, &k.Account, "account"}, {s.Signing, &k.Signing, "signing"}} {
		if *p.key, err = nkeys.FromSeed(p.seed); err != nil {
			return Keys{}, fmt.Errorf("identity: %s key: %w", p.name, err)
		}
	}
	return k, nil
}

// Seeds returns the keys' seeds.
func (k Keys) Seeds() Seeds {
	seed := func(kp nkeys.KeyPair) []byte { s, _ := kp.Seed(); return s }
	return Seeds{Operator: seed(k.Operator), OperatorSigning: seed(k.OperatorSigning), System: seed(k.System), Account: seed(k.Account), Signing: seed(k.Signing)}
}

func public(kp nkeys.KeyPair) string { p, _ := kp.PublicKey(); return p }

// AccountPublicKey is tinyctl's account ("A..."): what KEDA and users'
// JWTs name.
func (k Keys) AccountPublicKey() string { return public(k.Account) }

// SystemPublicKey is the system account's public key.
func (k Keys) SystemPublicKey() string { return public(k.System) }

// OperatorJWT is the operator's self-signed JWT, naming the system account.
func (k Keys) OperatorJWT() (string, error) {
	oc := jwt.NewOperatorClaims(public(k.Operator))
	oc.Name = "tinyctl"
	oc.SystemAccount = public(k.System)
	oc.SigningKeys.Add(public(k.OperatorSigning))
	return oc.Encode(k.Operator)
}

// AccountJWTs returns the JWTs of the system account and of tinyctl's
// control account (controlClaims without namespaces yet), signed by the
// operator, by public key: what the server's resolver preloads.
func (k Keys) AccountJWTs() (map[string]string, error) {
	sys := jwt.NewAccountClaims(public(k.System))
	sys.Name = "SYS"
	out := map[string]string{}
	for _, c := range []*jwt.AccountClaims{sys, controlClaims(k.Control(DefaultBuckets()), nil)} {
		token, err := c.Encode(k.Operator)
		if err != nil {
			return nil, fmt.Errorf("identity: account %s: %w", c.Name, err)
		}
		out[c.Subject] = token
	}
	return out, nil
}

// Control is what an Issuer needs to know of the control account.
func (k Keys) Control(b Buckets) Control {
	return Control{Account: public(k.Account), SigningKey: public(k.Signing), Buckets: b}
}

// Issuer returns the Issuer of namespaces' accounts.
func (k Keys) Issuer(b Buckets) *Issuer {
	i, err := NewIssuer(k.Seeds().OperatorSigning, k.Control(b))
	if err != nil {
		panic(err) // keys generated or restored here are always valid
	}
	return i
}

// SystemSigner mints users of the system account (Claims).
func (k Keys) SystemSigner() *Signer { return &Signer{key: k.System, account: public(k.System)} }

// Signer returns the Signer of tinyctl's account.
func (k Keys) Signer() *Signer { return &Signer{key: k.Signing, account: public(k.Account)} }
