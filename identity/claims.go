package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
)

// Subjects of the system account's resolver services.
const (
	claimsUpdateSubject = "$SYS.REQ.CLAIMS.UPDATE"
	claimsLookupSubject = "$SYS.REQ.ACCOUNT.%s.CLAIMS.LOOKUP"
	accountInfoSubject  = "$SYS.REQ.ACCOUNT.%s.INFO"
)

// PushAccount stores a signed account JWT in the broker's resolver (a full
// resolver) through nc, a connection of the system account (Claims). The
// server answers once every resolver of the cluster has it, or with why
// not. It fails when no resolver answers or one refuses the JWT.
// ErrAccountTooLarge means an account JWT does not fit in one message of
// the broker (its max_payload, 1 MB by default).
var ErrAccountTooLarge = errors.New("account JWT larger than a message may be")

func PushAccount(ctx context.Context, nc *nats.Conn, token string) error {
	if max := nc.MaxPayload(); max > 0 && int64(len(token)) > max {
		return fmt.Errorf("identity: push account: %w: the JWT is %d bytes, the broker's max_payload %d", ErrAccountTooLarge, len(token), max)
	}
	m, err := nc.RequestWithContext(ctx, claimsUpdateSubject, []byte(token))
	if err != nil {
		return fmt.Errorf("identity: push account: %w", err)
	}
	var resp struct {
		Data *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"data"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return fmt.Errorf("identity: push account: answer %q: %w", m.Data, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("identity: push account: the resolver refused it (%d): %s", resp.Error.Code, resp.Error.Description)
	}
	return nil
}

// LookupAccount returns the account JWT the broker's resolver holds for
// account, decoded; nil when it holds none.
func LookupAccount(ctx context.Context, nc *nats.Conn, account string) (*jwt.AccountClaims, error) {
	m, err := nc.RequestWithContext(ctx, fmt.Sprintf(claimsLookupSubject, account), nil)
	if err != nil {
		return nil, fmt.Errorf("identity: look up account %s: %w", account, err)
	}
	if len(m.Data) == 0 {
		return nil, nil
	}
	c, err := jwt.DecodeAccountClaims(string(m.Data))
	if err != nil {
		return nil, fmt.Errorf("identity: look up account %s: %w", account, err)
	}
	return c, nil
}

// ImportedNamespaces are the namespaces whose jobs accounts' APIs the
// control account claims c imports (ControlClaims names each import
// "jobs <namespace>").
func ImportedNamespaces(c *jwt.AccountClaims) []string {
	var out []string
	seen := map[string]bool{}
	for _, im := range c.Imports {
		var ns string
		if _, err := fmt.Sscanf(im.Name, "jobs %s", &ns); err == nil && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}

// ErrAccountNotLoaded means the server answered that it cannot say: it
// has not loaded the account from its resolver yet (it does on the
// account's first use), or another error of its monitoring.
var ErrAccountNotLoaded = errors.New("account not loaded by the server")

// AccountHasJetStream asks the server whether account has JetStream. It
// has not when the server could not set the account's JetStream quota
// aside (a single server refuses quotas that together exceed its store);
// the account's streams then cannot be created, and requests to its
// JetStream API find no responder. Asking does not load the account: one
// the server has not used yet returns ErrAccountNotLoaded.
func AccountHasJetStream(ctx context.Context, nc *nats.Conn, account string) (bool, error) {
	m, err := nc.RequestWithContext(ctx, fmt.Sprintf(accountInfoSubject, account), nil)
	if err != nil {
		return false, fmt.Errorf("identity: account %s info: %w", account, err)
	}
	var resp struct {
		Data struct {
			JetStream bool `json:"jetstream_enabled"`
		} `json:"data"`
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return false, fmt.Errorf("identity: account %s info: %w", account, err)
	}
	if resp.Error != nil {
		return false, fmt.Errorf("identity: account %s info: %w (%s)", account, ErrAccountNotLoaded, resp.Error.Description)
	}
	return resp.Data.JetStream, nil
}
