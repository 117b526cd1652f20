package identity

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// Permissions are what a user may publish and subscribe to, as allow
// lists of subjects (NATS wildcards allowed).
type Permissions struct {
	Publish   []string
	Subscribe []string
	// DenyPublish are refused even where Publish allows them.
	DenyPublish []string
	// InboxPrefix, when set, is the inbox prefix the user's client must
	// use (nats.CustomInboxPrefix): the user may receive only under it.
	InboxPrefix string
	// Tags are written into the user JWT for clients to read (the server
	// ignores them): what a tool holding the credentials needs to know,
	// such as the namespace they are scoped to (ScopeOf).
	Tags []string
	// Respond lets the user answer each request it receives once, on the
	// request's reply subject whatever it is (a service's responder).
	Respond bool
}

// Signer mints user credentials for one account with one of its signing
// keys. It is safe for concurrent use.
type Signer struct {
	key     nkeys.KeyPair
	account string
}

// NewSigner returns a Signer for account (its public key, "A...") from a
// signing key seed ("SA..."). It fails when either is not what it should
// be.
func NewSigner(seed []byte, account string) (*Signer, error) {
	key, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("identity: account signing key: %w", err)
	}
	if pub, _ := key.PublicKey(); !nkeys.IsValidPublicAccountKey(pub) {
		return nil, errors.New("identity: the signing key is not an account key (its seed must start with SA)")
	}
	if !nkeys.IsValidPublicAccountKey(account) {
		return nil, fmt.Errorf("identity: account %q is not an account public key (A...)", account)
	}
	return &Signer{key: key, account: account}, nil
}

// Account returns the public key of the account users are minted in.
func (s *Signer) Account() string { return s.account }

// PublicKey returns the public key of the key users are signed with (the
// account's signing key, or the account's own).
func (s *Signer) PublicKey() (string, error) { return s.key.PublicKey() }

// Creds are minted user credentials: the content of a .creds file (the
// user JWT and its seed, which must be kept secret), the user's public key
// and when it expires (zero: never).
type Creds struct {
	File    []byte
	User    string
	Expires time.Time
}

// Mint creates a new user key and a user JWT named name with perms,
// signed by the signing key, valid from now until now+ttl (ttl 0: no
// expiry). It returns the credentials file content.
func (s *Signer) Mint(name string, perms Permissions, now time.Time, ttl time.Duration) (Creds, error) {
	u, err := s.mint(name, perms, now, ttl)
	if err != nil {
		return Creds{}, err
	}
	seed, _ := u.key.Seed()
	file, err := jwt.FormatUserConfig(u.jwt, seed)
	if err != nil {
		return Creds{}, fmt.Errorf("identity: creds of user %s: %w", name, err)
	}
	pub, _ := u.key.PublicKey()
	return Creds{File: file, User: pub, Expires: u.expires}, nil
}

// user is a minted user: its key, its signed JWT and when it expires.
type user struct {
	key     nkeys.KeyPair
	jwt     string
	expires time.Time
}

func (s *Signer) mint(name string, perms Permissions, now time.Time, ttl time.Duration) (user, error) {
	key, err := nkeys.CreateUser()
	if err != nil {
		return user{}, fmt.Errorf("identity: user key: %w", err)
	}
	pub, _ := key.PublicKey()
	uc := jwt.NewUserClaims(pub)
	uc.Name = name
	uc.IssuerAccount = s.account
	uc.IssuedAt = now.Unix()
	var expires time.Time
	if ttl > 0 {
		expires = now.Add(ttl).Truncate(time.Second)
		uc.Expires = expires.Unix()
	}
	grant(uc, perms)
	token, err := uc.Encode(s.key)
	if err != nil {
		return user{}, fmt.Errorf("identity: sign user %s: %w", name, err)
	}
	return user{key: key, jwt: token, expires: expires}, nil
}

// grant writes perms into user claims uc.
func grant(uc *jwt.UserClaims, perms Permissions) {
	uc.Pub.Allow.Add(perms.Publish...)
	uc.Pub.Deny.Add(perms.DenyPublish...)
	uc.Sub.Allow.Add(perms.Subscribe...)
	uc.Tags.Add(perms.Tags...)
	if perms.Respond {
		uc.Resp = &jwt.ResponsePermission{MaxMsgs: 1}
	}
	if len(perms.Publish) == 0 {
		uc.Pub.Deny.Add(">")
	}
	if len(perms.Subscribe) == 0 {
		uc.Sub.Deny.Add(">")
	}
}

// Grants reports whether the credentials file (a .creds file, as Mint
// makes) grants exactly perms: the same allowed and denied subjects, tags
// and response permission, whatever their order. Credentials an older
// version minted with fewer permissions do not: they are to be minted
// again. It fails when file holds no readable user JWT.
func Grants(file []byte, perms Permissions) (bool, error) {
	token, err := jwt.ParseDecoratedJWT(file)
	if err != nil {
		return false, fmt.Errorf("identity: credentials: %w", err)
	}
	have, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return false, fmt.Errorf("identity: credentials' user JWT: %w", err)
	}
	want := jwt.NewUserClaims(have.Subject)
	grant(want, perms)
	same := func(a, b jwt.StringList) bool {
		x, y := slices.Clone(a), slices.Clone(b)
		slices.Sort(x)
		slices.Sort(y)
		return slices.Equal(slices.Compact(x), slices.Compact(y))
	}
	return same(have.Pub.Allow, want.Pub.Allow) && same(have.Pub.Deny, want.Pub.Deny) &&
		same(have.Sub.Allow, want.Sub.Allow) && same(have.Sub.Deny, want.Sub.Deny) &&
		same(jwt.StringList(have.Tags), jwt.StringList(want.Tags)) &&
		(have.Resp == nil) == (want.Resp == nil) && (have.Resp == nil || *have.Resp == *want.Resp), nil
}
