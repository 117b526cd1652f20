package identity

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// UserOption is a client option that authenticates as a user named name
// with perms, minted by the signer on the first connect and again on a
// reconnect once less than half of ttl is left. The controller connects
// this way: it needs no credentials file of its own.
func (s *Signer) UserOption(name string, perms Permissions, ttl time.Duration) nats.Option {
	var mu sync.Mutex
	var cur user
	current := func() (user, error) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if cur.jwt == "" || now.After(cur.expires.Add(-ttl/2)) {
			u, err := s.mint(name, perms, now, ttl)
			if err != nil {
				return user{}, err
			}
			cur = u
		}
		return cur, nil
	}
	var sent user // the user whose JWT the handshake sent: sign as it
	return nats.UserJWT(
		func() (string, error) {
			u, err := current()
			mu.Lock()
			sent = u
			mu.Unlock()
			return u.jwt, err
		},
		func(nonce []byte) ([]byte, error) {
			mu.Lock()
			u := sent
			mu.Unlock()
			return u.key.Sign(nonce)
		})
}
