package identity_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestGrantsTellsCurrentCredentialsFromOlderOnes: credentials minted with
// a role's permissions grant them, in whatever order they are listed;
// credentials minted when the role had one subject fewer, or could not
// respond, do not; a file without a user JWT is an error.
func TestGrantsTellsCurrentCredentialsFromOlderOnes(t *testing.T) {
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	now := time.Now()
	role := identity.Publisher(identity.DefaultBuckets())
	if len(role.Publish) < 2 {
		t.Fatalf("the publisher role publishes to %d subjects; the test needs two", len(role.Publish))
	}
	mint := func(p identity.Permissions) []byte {
		c, err := keys.Signer().Mint("publisher", p, now, 0)
		testenv.Must(t, err)
		return c.File
	}
	reordered := role
	reordered.Publish = slices.Clone(role.Publish)
	slices.Reverse(reordered.Publish)
	older := role
	older.Publish = role.Publish[:len(role.Publish)-1]
	responder := role
	responder.Respond = !role.Respond
	for _, c := range []struct {
		what  string
		creds []byte
		want  bool
	}{
		{"minted with the role", mint(role), true},
		{"minted with the role's subjects in another order", mint(reordered), true},
		{"minted with one subject fewer", mint(older), false},
		{"minted with another response permission", mint(responder), false},
		{"minted with nothing", mint(identity.Permissions{}), false},
	} {
		got, err := identity.Grants(c.creds, role)
		if err != nil || got != c.want {
			t.Errorf("%s: Grants = %v, %v; want %v", c.what, got, err, c.want)
		}
	}
	if _, err := identity.Grants([]byte("not a creds file"), role); err == nil {
		t.Error("Grants of a file without a user JWT: no error")
	}
}
