package identity

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
)

// ServerConfig is the fragment of nats-server configuration that makes a
// server trust these keys: the operator's JWT, the system account and a
// memory resolver preloaded with the account JWTs. It holds public JWTs
// only, no seed: the broker can verify users but mint none.
func (k Keys) ServerConfig() ([]byte, error) {
	op, err := k.OperatorJWT()
	if err != nil {
		return nil, err
	}
	accounts, err := k.AccountJWTs()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "operator: %q\n", op)
	fmt.Fprintf(&b, "system_account: %q\n", k.SystemPublicKey())
	b.WriteString("resolver: MEMORY\nresolver_preload: {\n")
	for _, pub := range slices.Sorted(maps.Keys(accounts)) {
		fmt.Fprintf(&b, "  %q: %q\n", pub, accounts[pub])
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
