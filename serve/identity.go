package serve

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/render"
)

// controllerCredsTTL is how long the controller's own minted user lives;
// it is minted again on a reconnect past half of it.
const controllerCredsTTL = 24 * time.Hour

// loadIdentity reads the signing key and the workers' TLS files, and sets
// the render settings that go with them: per-component credentials, the
// account KEDA reads, the TLS files workers are told about.
func (p *Process) loadIdentity() error {
	cl := &p.cfg.Loop.Cluster
	if err := p.loadWorkerTLS(); err != nil {
		return err
	}
	id := p.cfg.Identity
	if id == nil {
		return nil
	}
	seed, err := os.ReadFile(id.SigningKeyFile)
	if err != nil {
		return fmt.Errorf("account signing key: %w", err)
	}
	if p.signer, err = identity.NewSigner(bytes.TrimSpace(seed), id.Account); err != nil {
		return err
	}
	cl.NATS.CredentialsSecret = render.PerComponent
	if cl.NATS.Account == "" || cl.NATS.Account == render.DefaultAccount {
		cl.NATS.Account = id.Account
	}
	if id.Tenants != nil {
		// Workers live in their namespace's tenant account, which sees
		// their consumer's API under this prefix.
		cl.NATS.JSAPIPrefix = identity.JobsAPIPrefix
	}
	return nil
}

// loadWorkerTLS reads the TLS files workers get.
func (p *Process) loadWorkerTLS() error {
	files := p.cfg.WorkerTLS
	read := func(path, what string, into *[]byte) error {
		if path == "" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("worker TLS %s: %w", what, err)
		}
		*into = b
		return nil
	}
	tls := &p.cfg.Loop.WorkerTLS
	for _, f := range []struct {
		path, what string
		into       *[]byte
	}{{files.CA, "CA", &tls.CA}, {files.Cert, "certificate", &tls.Cert}, {files.Key, "key", &tls.Key}} {
		if err := read(f.path, f.what, f.into); err != nil {
			return err
		}
	}
	if (len(tls.Cert) == 0) != (len(tls.Key) == 0) {
		return fmt.Errorf("worker TLS: give both a client certificate and its key, or neither")
	}
	p.cfg.Loop.Cluster.NATS.WorkerTLS = render.WorkerTLS{CA: len(tls.CA) > 0, ClientCert: len(tls.Cert) > 0}
	return nil
}

// buckets are the bucket names the controller's identity may use.
func (p *Process) buckets() identity.Buckets {
	b := identity.DefaultBuckets()
	if p.cfg.SpecBucket != "" {
		b.Specs = p.cfg.SpecBucket
	}
	if p.cfg.StatusBucket != "" {
		b.Status = p.cfg.StatusBucket
	}
	b.Heartbeats, b.Leases = status.DefaultHeartbeatBucket, lease.DefaultBucket
	return b
}
