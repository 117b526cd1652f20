package serve

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/bus/tenants"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/reconcile"
)

// openTenants connects to the broker's system account with the claims
// credentials and returns the manager of namespaces' accounts, loaded with
// the namespaces the control account already imports.
func (p *Process) openTenants(ctx context.Context, t *Tenants) (*tenants.Manager, func(), error) {
	seed, err := os.ReadFile(t.OperatorSigningKeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("operator signing key: %w", err)
	}
	signing, _ := p.signer.PublicKey()
	issuer, err := identity.NewIssuer(bytes.TrimSpace(seed), identity.Control{Account: p.signer.Account(), SigningKey: signing, Buckets: p.buckets()})
	if err != nil {
		return nil, nil, err
	}
	cfg := p.cfg.NATS
	cfg.Name = "tinyctl-serve-claims/" + p.cfg.Holder
	cfg.Token, cfg.User, cfg.Password, cfg.NKeySeedFile, cfg.Options, cfg.JetStreamDomain = "", "", "", "", nil, ""
	cfg.CredsFile = t.ClaimsCredsFile
	conn, err := bus.Connect(ctx, cfg, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to the broker's system account: %w", err)
	}
	tenancy := p.cfg.Loop.Tenancy
	m := tenants.New(issuer, conn.NATS(), tenants.Options{
		Quota:    identity.JetStreamQuota{FileBytes: t.FileBytes, MemoryBytes: t.MemoryBytes},
		Patterns: tenancy.Allowed,
	})
	if err := m.Load(ctx, p.signer.Account()); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return m, conn.Close, nil
}

// accountsCheck is how often a leader checks that the broker still holds
// the namespaces' accounts.
const accountsCheck = 30 * time.Second

// keepAccounts, while ctx lasts (this process leads), makes the accounts
// of every namespace the controller is told to manage exist at once (so a
// namespace publisher can connect before its first component), then
// checks every accountsCheck that the broker still holds every account
// pushed, pushing again what it lost. Writes pass the lease's fence.
func (p *Process) keepAccounts(ctx context.Context, l *lease.Lease) {
	log := zerolog.Ctx(ctx)
	fenced := func(f func(context.Context) error) error {
		fctx, cancel, err := l.Fence().Check(ctx)
		if err != nil {
			return err
		}
		defer cancel()
		return f(fctx)
	}
	for _, ns := range p.cfg.Loop.Namespaces {
		if err := fenced(func(ctx context.Context) error { _, err := p.tenants.Ensure(ctx, ns); return err }); err != nil && ctx.Err() == nil {
			log.Warn().Err(err).Str("namespace", ns).Msg("namespace accounts")
		}
	}
	tick := time.NewTicker(accountsCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := fenced(p.tenants.Verify); err != nil && ctx.Err() == nil {
				log.Warn().Err(err).Msg("namespace accounts check")
			}
		}
	}
}

// tenantsPort adapts a tenants.Manager to the loop's Tenants.
type tenantsPort struct{ m *tenants.Manager }

func (t tenantsPort) Account(ns string) string { return t.m.Namespace(ns).JobsAccount() }

func (t tenantsPort) Ensure(ctx context.Context, ns string) (reconcile.Minter, error) {
	n, err := t.m.Ensure(ctx, ns)
	if err != nil {
		return nil, err
	}
	return n.TenantSigner(), nil
}

// namespaceStreams keeps one streams.Manager per namespace, on the
// namespace's jobs-account API as the control account imports it.
type namespaceStreams struct {
	conn *bus.Conn
	mu   sync.Mutex
	of   map[string]*streams.Manager
}

func (n *namespaceStreams) manager(ns string) (*streams.Manager, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if m, ok := n.of[ns]; ok {
		return m, nil
	}
	m, err := streams.NewPrefixed(n.conn, identity.NamespaceAPIPrefix(ns), identity.NamespaceDeadLetterSubjects(ns), 0)
	if err != nil {
		return nil, err
	}
	n.of[ns] = m
	return m, nil
}
