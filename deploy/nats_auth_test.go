package deploy_test

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func writeCreds(t *testing.T, c identity.Creds) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "user.creds")
	testenv.Must(t, os.WriteFile(path, c.File, 0o600))
	return path
}

// TestNATSConfigJWT runs the chart's jwt mode with the trust configuration
// `tinyctl install` writes beside it: users minted by the account's
// signing key get in, with JetStream; anyone else is refused.
func TestNATSConfigJWT(t *testing.T) {
	t.Setenv("SERVER_NAME", "nats-0")
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	conf, err := keys.ServerConfig(filepath.Join(t.TempDir(), "jwt"))
	testenv.Must(t, err)
	path := natsConf(t, map[string]any{"auth": map[string]any{"mode": "jwt"}})
	testenv.Must(t, os.WriteFile(filepath.Join(filepath.Dir(path), "auth.conf"), conf, 0o600))
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server rejects the chart's jwt config: %v", err)
	}
	if len(opts.TrustedOperators) != 1 || opts.SystemAccount != keys.SystemPublicKey() || opts.Authorization != "" {
		t.Fatalf("trusted operators %d, system account %q, token %q: want the operator, %s and no token",
			len(opts.TrustedOperators), opts.SystemAccount, opts.Authorization, keys.SystemPublicKey())
	}
	url := startServer(t, opts).ClientURL()

	pub, err := keys.Signer().Mint("publisher", identity.Publisher(identity.DefaultBuckets()), time.Now(), time.Hour)
	testenv.Must(t, err)
	nc, err := nats.Connect(url, nats.UserCredentials(writeCreds(t, pub)))
	if err != nil {
		t.Fatalf("a minted user is refused: %v", err)
	}
	defer nc.Close()
	if _, err := nc.Request("$JS.API.INFO", nil, 5*time.Second); err != nil {
		t.Errorf("JetStream is not enabled for tinyctl's account: %v", err)
	}

	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Error("a client without credentials got in")
	}
	other, err := identity.NewKeys()
	testenv.Must(t, err)
	forged, err := other.Signer().Mint("forger", identity.Publisher(identity.DefaultBuckets()), time.Now(), time.Hour)
	testenv.Must(t, err)
	if nc, err := nats.Connect(url, nats.UserCredentials(writeCreds(t, forged))); err == nil {
		nc.Close()
		t.Error("a user signed by another operator's account got in")
	}
}

// TestNATSConfigMutualTLS runs the chart's TLS settings with verify on:
// a client with a certificate from the CA gets in, one without is refused.
// The test puts the Secret's files where the pod mounts them.
func TestNATSConfigMutualTLS(t *testing.T) {
	t.Setenv("SERVER_NAME", "nats-0")
	t.Setenv("NATS_TOKEN", "tkEXAMPLETOKEN")
	pki := natstest.WriteTLSFiles(t)
	path := natsConf(t, map[string]any{"tls": map[string]any{"secretName": "nats-tls", "verify": true}})
	b, err := os.ReadFile(path)
	testenv.Must(t, err)
	dir := t.TempDir()
	for name, src := range map[string]string{"tls.crt": pki.ServerCert, "tls.key": pki.ServerKey, "ca.crt": pki.CA} {
		data, err := os.ReadFile(src)
		testenv.Must(t, err)
		testenv.Must(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	testenv.Must(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(b), "/etc/nats-tls/", dir+"/")), 0o600))
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server rejects the chart's tls config: %v", err)
	}
	if opts.TLSConfig == nil || opts.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Fatalf("tls config %+v: want one that requires client certificates", opts.TLSConfig)
	}
	url := startServer(t, opts).ClientURL()
	nc, err := nats.Connect(url, nats.Token("tkEXAMPLETOKEN"), nats.RootCAs(pki.CA), nats.ClientCert(pki.ClientCert, pki.ClientKey))
	if err != nil {
		t.Fatalf("a client with a certificate is refused: %v", err)
	}
	nc.Close()
	if nc, err := nats.Connect(url, nats.Token("tkEXAMPLETOKEN"), nats.RootCAs(pki.CA)); err == nil {
		nc.Close()
		t.Error("a client without a certificate got in")
	}
}
