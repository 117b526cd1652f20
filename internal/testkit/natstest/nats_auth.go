package natstest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/tinyctl/tinyctl/identity"
)

// Auth names how clients of a test server authenticate.
type Auth int

// Authentication modes of a test server.
const (
	AuthNone Auth = iota
	AuthToken
	AuthUserPassword
	AuthNKey
	AuthJWT
)

// Permissions limit what a user may publish and subscribe to. Empty
// lists leave that direction unrestricted. A user with a Subscribe allow
// list needs "_INBOX.>" in it to receive replies.
type Permissions struct {
	PublishAllow   []string
	PublishDeny    []string
	SubscribeAllow []string
	SubscribeDeny  []string
}

// User is an extra user/password identity of a test server, with
// optional permissions.
type User struct {
	Name        string
	Password    string
	Permissions Permissions
}

// Credentials are what a server's own, fully privileged client uses.
// Only the fields of the server's auth mode (and TLS files when TLS is on)
// are set.
type Credentials struct {
	Token        string
	User         string
	Password     string
	NKeySeedFile string
	NKeyPublic   string
	CredsFile    string
	TLS          *TLSFiles
	// ClientCert is true when the server requires a client certificate
	// (mutual TLS); TLS.ClientCert and TLS.ClientKey are then the ones it
	// accepts.
	ClientCert bool
}

// Option configures a test server started by NATS.
type Option func(*natsConfig)

type natsConfig struct {
	auth  Auth
	users []User
	tls   bool
	mtls  bool
}

// WithToken makes the server require a generated token.
func WithToken() Option { return func(c *natsConfig) { c.auth = AuthToken } }

// WithUserPassword makes the server require a generated user and password.
func WithUserPassword() Option { return func(c *natsConfig) { c.auth = AuthUserPassword } }

// WithNKey makes the server require a generated nkey user.
func WithNKey() Option { return func(c *natsConfig) { c.auth = AuthNKey } }

// WithJWT runs the server in operator mode: an operator, a system account
// and one JetStream-enabled account are generated, held in a memory
// resolver, and the server's user gets a creds file. More users of that
// account come from IssueUserCreds.
func WithJWT() Option { return func(c *natsConfig) { c.auth = AuthJWT } }

// WithUsers runs the server in user/password mode with the server's own
// full-access user plus these users, each limited by its permissions.
func WithUsers(users ...User) Option {
	return func(c *natsConfig) {
		c.auth = AuthUserPassword
		c.users = append(c.users, users...)
	}
}

// WithTLS makes the server speak TLS with a certificate from a generated CA.
// It combines with any auth mode.
func WithTLS() Option { return func(c *natsConfig) { c.tls = true } }

// WithMutualTLS is WithTLS plus a client certificate that the server
// requires and verifies against the same CA.
func WithMutualTLS() Option {
	return func(c *natsConfig) { c.tls, c.mtls = true, true }
}

// jwtChain holds the generated operator-mode keys of a server, made by
// package identity as `tinyctl install` makes them.
type jwtChain struct {
	keys identity.Keys
}

// newJWTChain generates an operator, a system account and tinyctl's
// JetStream account with a signing key.
func newJWTChain(tb testing.TB) *jwtChain {
	tb.Helper()
	keys, err := identity.NewKeys()
	if err != nil {
		tb.Fatal(err)
	}
	return &jwtChain{keys: keys}
}

// apply puts the chain into server options: trusted operator, system
// account and a memory resolver preloaded with both accounts.
func (c *jwtChain) apply(tb testing.TB, o *server.Options) {
	tb.Helper()
	op, err := c.keys.OperatorJWT()
	if err != nil {
		tb.Fatal(err)
	}
	decoded, err := jwt.DecodeOperatorClaims(op)
	if err != nil {
		tb.Fatalf("natstest: decode operator: %v", err)
	}
	accounts, err := c.keys.AccountJWTs()
	if err != nil {
		tb.Fatal(err)
	}
	resolver := &server.MemAccResolver{}
	for pub, token := range accounts {
		if err := resolver.Store(pub, token); err != nil {
			tb.Fatalf("natstest: store account jwt: %v", err)
		}
	}
	o.TrustedOperators = []*jwt.OperatorClaims{decoded}
	o.AccountResolver = resolver
	o.SystemAccount = c.keys.SystemPublicKey()
}

// userCreds signs a user of the account with perms (with the account's
// identity key, as an operator's tooling would) and writes its creds file
// into dir.
func (c *jwtChain) userCreds(tb testing.TB, dir, name string, perms Permissions) string {
	tb.Helper()
	return writeUserCreds(tb, dir, name, c.keys.Account, perms)
}

// WriteUserCreds writes a creds file for a new user called name, signed by
// the account key signer, into dir. Tests pass a freshly generated account
// key to get credentials that a server must refuse.
func WriteUserCreds(tb testing.TB, dir, name string, signer nkeys.KeyPair) string {
	tb.Helper()
	return writeUserCreds(tb, dir, name, signer, Permissions{})
}

func writeUserCreds(tb testing.TB, dir, name string, signer nkeys.KeyPair, perms Permissions) string {
	tb.Helper()
	userKP := mustKP(tb, nkeys.CreateUser)
	uc := jwt.NewUserClaims(mustPub(tb, userKP))
	uc.Name = name
	uc.Pub = jwt.Permission{Allow: perms.PublishAllow, Deny: perms.PublishDeny}
	uc.Sub = jwt.Permission{Allow: perms.SubscribeAllow, Deny: perms.SubscribeDeny}
	token := mustEncode(tb, uc, signer)
	seed, err := userKP.Seed()
	if err != nil {
		tb.Fatalf("testenv: user seed: %v", err)
	}
	creds, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		tb.Fatalf("testenv: format creds: %v", err)
	}
	path := filepath.Join(dir, name+".creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		tb.Fatalf("testenv: write creds: %v", err)
	}
	return path
}

// NewNKeySeedFile generates an nkey user, writes its seed to a file in dir
// and returns the file and the public key.
func NewNKeySeedFile(tb testing.TB, dir string) (seedFile, public string) {
	tb.Helper()
	kp := mustKP(tb, nkeys.CreateUser)
	seed, err := kp.Seed()
	if err != nil {
		tb.Fatalf("testenv: nkey seed: %v", err)
	}
	seedFile = filepath.Join(dir, "user-"+randomToken(tb)[:8]+".nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		tb.Fatalf("testenv: write nkey seed: %v", err)
	}
	return seedFile, mustPub(tb, kp)
}

// serverUsers turns users into nats-server users with permissions.
func serverUsers(users []User) []*server.User {
	out := make([]*server.User, 0, len(users))
	for _, u := range users {
		p := u.Permissions
		out = append(out, &server.User{
			Username: u.Name,
			Password: u.Password,
			Permissions: &server.Permissions{
				Publish:   subjectPermission(p.PublishAllow, p.PublishDeny),
				Subscribe: subjectPermission(p.SubscribeAllow, p.SubscribeDeny),
			},
		})
	}
	return out
}

func subjectPermission(allow, deny []string) *server.SubjectPermission {
	if len(allow) == 0 && len(deny) == 0 {
		return nil
	}
	return &server.SubjectPermission{Allow: allow, Deny: deny}
}

func randomToken(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("testenv: random: %v", err)
	}
	return hex.EncodeToString(b)
}

func mustKP(tb testing.TB, create func() (nkeys.KeyPair, error)) nkeys.KeyPair {
	tb.Helper()
	kp, err := create()
	if err != nil {
		tb.Fatalf("testenv: create nkey: %v", err)
	}
	return kp
}

func mustPub(tb testing.TB, kp nkeys.KeyPair) string {
	tb.Helper()
	pub, err := kp.PublicKey()
	if err != nil {
		tb.Fatalf("testenv: nkey public key: %v", err)
	}
	return pub
}

type encoder interface {
	Encode(nkeys.KeyPair) (string, error)
}

func mustEncode(tb testing.TB, claims encoder, signer nkeys.KeyPair) string {
	tb.Helper()
	token, err := claims.Encode(signer)
	if err != nil {
		tb.Fatalf("testenv: sign jwt: %v", err)
	}
	return token
}
