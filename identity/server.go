package identity

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
)

// ServerConfig is the fragment of nats-server configuration that makes a
// server trust these keys: the operator's JWT, the system account and a
// full resolver storing account JWTs in dir, preloaded with the system and
// control accounts. The controller pushes namespaces' accounts into it
// (Claims). It holds public JWTs only, no seed: the broker can verify
// users but mint none.
func (k Keys) ServerConfig(dir string) ([]byte, error) {
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
	fmt.Fprintf(&b, "resolver: {type: full, dir: %q, allow_delete: false}\n", dir)
	b.WriteString("resolver_preload: {\n")
	for _, pub := range slices.Sorted(maps.Keys(accounts)) {
		fmt.Fprintf(&b, "  %q: %q\n", pub, accounts[pub])
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
