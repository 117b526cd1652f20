// Package tenants gives each Kubernetes namespace NATS accounts of its own
// on a broker with decentralized auth (identity's jobs, tenant and
// publisher accounts): it signs them with the operator signing key,
// pushes them into the broker's resolver through a system-account
// connection, and keeps the control account importing each namespace's
// jobs-account API, so the controller manages the namespace's streams on
// its one connection (streams.NewPrefixed at identity.NamespaceAPIPrefix).
package tenants

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/identity"
)

// Manager ensures namespaces' accounts. It is safe for concurrent use;
// namespaces are ensured one at a time.
type Manager struct {
	issuer   *identity.Issuer
	claims   *nats.Conn
	quota    identity.JetStreamQuota
	patterns func(ns string) []string

	mu sync.Mutex
	// pushed are the namespaces whose three accounts this process pushed.
	pushed map[string]bool
	// streaming are the namespaces whose jobs account the broker was seen
	// to give JetStream; cannotAsk is set once the broker did not answer.
	streaming map[string]bool
	cannotAsk bool
	// imported are the namespaces the control account imports, as the
	// resolver held it at Load and as pushed since.
	imported []string
}

// Options configure a Manager.
type Options struct {
	// Quota bounds each namespace's jobs account.
	Quota identity.JetStreamQuota
	// Patterns are the job subjects namespace ns may use (its tenancy).
	Patterns func(ns string) []string
}

// New returns a Manager that signs with issuer and pushes through claims, a
// connection of a system-account user (identity.Claims).
func New(issuer *identity.Issuer, claims *nats.Conn, opts Options) *Manager {
	return &Manager{issuer: issuer, claims: claims, quota: opts.Quota, patterns: opts.Patterns, pushed: map[string]bool{}, streaming: map[string]bool{}}
}

// Load reads which namespaces the control account already imports, so a
// restarted controller adds to that set instead of replacing it. It fails
// when the resolver cannot be asked.
func (m *Manager) Load(ctx context.Context, control string) error {
	c, err := identity.LookupAccount(ctx, m.claims, control)
	if err != nil || c == nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.imported = identity.ImportedNamespaces(c)
	return nil
}

// Namespaces are the namespaces whose jobs accounts the control account
// imports: every namespace that has accounts.
func (m *Manager) Namespaces() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.imported)
}

// Namespace derives ns's accounts: pure, no I/O.
func (m *Manager) Namespace(ns string) identity.Namespace { return m.issuer.Namespace(ns) }

// Ensure makes ns's accounts exist in the broker as this controller
// configures them and the control account import ns's jobs API. Accounts
// already stored as wanted are not pushed again (a restarted controller
// writes nothing); each is checked once per process, so a changed quota or
// tenancy takes effect on the next start. It fails when the resolver
// refuses or cannot be reached; then nothing is recorded and the next call
// tries again.
func (m *Manager) Ensure(ctx context.Context, ns string) (identity.Namespace, error) {
	n := m.issuer.Namespace(ns)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.pushed[ns] {
		patterns := m.patterns(ns)
		for _, c := range []*jwt.AccountClaims{
			m.issuer.JobsClaims(n, patterns, m.quota), m.issuer.TenantClaims(n, patterns), m.issuer.PublisherClaims(n),
		} {
			if err := m.push(ctx, c); err != nil {
				return n, fmt.Errorf("namespace %s: %w", ns, err)
			}
		}
		m.pushed[ns] = true
	}
	if err := m.checkJetStream(ctx, n); err != nil {
		return n, err
	}
	if slices.Contains(m.imported, ns) {
		return n, nil
	}
	next := append(slices.Clone(m.imported), ns)
	if err := m.push(ctx, m.issuer.ControlClaims(next)); err != nil {
		if errors.Is(err, identity.ErrAccountTooLarge) {
			err = fmt.Errorf("%w; the control account imports the JetStream API of each of the %d namespaces with accounts "+
				"(about 2.3 KB each): raise the broker's max_payload (the nats chart's maxPayload) to manage more", err, len(next))
		}
		return n, fmt.Errorf("namespace %s: %w", ns, err)
	}
	m.imported = next
	return n, nil
}

// Verify checks that the resolver still holds every account this process
// pushed, as pushed, and pushes again what it lost (a broker whose store
// was lost starts with only the accounts its configuration preloads: the
// control account without a namespace's import). Nothing is written when
// all is in place. It returns the first failure.
func (m *Manager) Verify(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ns := range m.pushed {
		n := m.issuer.Namespace(ns)
		patterns := m.patterns(ns)
		for _, c := range []*jwt.AccountClaims{
			m.issuer.JobsClaims(n, patterns, m.quota), m.issuer.TenantClaims(n, patterns), m.issuer.PublisherClaims(n),
		} {
			if err := m.push(ctx, c); err != nil {
				return fmt.Errorf("namespace %s: %w", ns, err)
			}
		}
	}
	if len(m.imported) == 0 {
		return nil
	}
	return m.push(ctx, m.issuer.ControlClaims(m.imported))
}

// checkJetStream fails, with an error that is
// jetstream.ErrJetStreamNotEnabledForAccount, when the broker did not give
// n's jobs account JetStream (its quota did not fit the store), which
// otherwise shows only as requests without a responder. An account the
// broker has not loaded yet is asked again on the next call. A broker that
// does not answer within askJetStreamFor (claims credentials minted before
// they could ask) is not asked again, for any namespace: streams then fail
// as they would have.
func (m *Manager) checkJetStream(ctx context.Context, n identity.Namespace) error {
	if m.streaming[n.Name] || m.cannotAsk {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, askJetStreamFor)
	defer cancel()
	ok, err := identity.AccountHasJetStream(ctx, m.claims, n.JobsAccount())
	switch {
	case errors.Is(err, identity.ErrAccountNotLoaded):
		return nil // the first request to its API loads it; asked again next time
	case err != nil:
		m.cannotAsk = true
		return nil
	case !ok:
		return jetstream.ErrJetStreamNotEnabledForAccount
	}
	m.streaming[n.Name] = true
	return nil
}

// askJetStreamFor bounds checkJetStream's question.
const askJetStreamFor = 2 * time.Second

// push stores claims in the resolver unless it holds the same already.
func (m *Manager) push(ctx context.Context, c *jwt.AccountClaims) error {
	stored, err := identity.LookupAccount(ctx, m.claims, c.Subject)
	if err == nil && identity.SameAccount(stored, c) {
		return nil
	}
	token, err := m.issuer.Sign(c)
	if err != nil {
		return err
	}
	if err := identity.PushAccount(ctx, m.claims, token); err != nil {
		return fmt.Errorf("account %s: %w", c.Name, err)
	}
	return nil
}
