package provision_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// TestInstallWithJWTAuth installs the runtime with decentralized auth: the
// keys and the Secrets derived from them are generated once, the broker
// mounts only the public trust configuration (which nats-server accepts),
// the controller only the signing key's seed, no seed reaches a Helm
// release record, and a second install writes nothing.
func TestInstallWithJWTAuth(t *testing.T) {
	r := newRuntime(t, provision.Options{})
	plan := provision.Plan{BrokerAuth: provision.AuthJWT, SkipCollector: true}
	got := actions(withoutCRDs(r.install(plan)))
	want := []string{"Namespace/" + r.ns + " created", "Release/nats created", "Release/tinyctl created",
		"Secret/nats-jwt created", "Secret/tinyctl-account-signer created", "Secret/tinyctl-nats-keys created", "Secret/tinyctl-publisher created"}
	if !slices.Equal(got, want) {
		t.Errorf("results = %v, want %v", got, want)
	}
	ctx := context.Background()
	secret := func(name string) map[string][]byte {
		s, err := kube.Clientset(t).CoreV1().Secrets(r.ns).Get(ctx, name, metav1.GetOptions{})
		testenv.Must(t, err)
		return s.Data
	}
	signer := secret(keyring.SignerSecret)
	account := string(signer[keyring.SignerAccountKey])

	// The broker: nats-server accepts the trust configuration as mounted.
	dir := t.TempDir()
	testenv.Must(t, os.WriteFile(filepath.Join(dir, "auth.conf"), secret(keyring.JWTSecret)[keyring.JWTKey], 0o600))
	testenv.Must(t, os.WriteFile(filepath.Join(dir, "nats.conf"), []byte("include ./auth.conf\n"), 0o600))
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
	if err != nil || len(opts.TrustedOperators) != 1 {
		t.Errorf("nats-server on the trust configuration: %v, %d operators", err, len(opts.TrustedOperators))
	}
	sts := r.get(objectRef{resources["StatefulSet"], "StatefulSet", r.ns, "nats"})
	if vols := toJSON(sts.Object["spec"]); !strings.Contains(vols, `"name":"nats-jwt"`) || strings.Contains(vols, "NATS_TOKEN") {
		t.Errorf("broker does not mount Secret nats-jwt, or still reads a token: %s", vols)
	}

	// The controller: the seed as a file, the account as a flag, no token.
	ctrl := r.get(objectRef{resources["Deployment"], "Deployment", r.ns, "tinyctl"})
	args := containerArgs(t, ctrl)
	for _, want := range []string{"--nats-account=" + account, "--nats-account-signing-key-file=/var/run/tinyctl/signer/seed"} {
		if !slices.Contains(args, want) {
			t.Errorf("controller args %v lack %s", args, want)
		}
	}
	if pod := toJSON(ctrl.Object["spec"]); strings.Contains(pod, "TINYCTL_NATS_TOKEN") {
		t.Errorf("controller still reads a token: %s", pod)
	}

	// No seed in any release record.
	for _, name := range []string{"nats", "tinyctl"} {
		rel := r.deployed(name)
		b, _ := json.Marshal(rel)
		for _, seed := range [][]byte{signer[keyring.SignerSeedKey], secret(keyring.KeysSecret)["operator.nk"]} {
			if len(seed) == 0 || strings.Contains(string(b), string(seed)) {
				t.Errorf("release %s holds a seed (or the seed is empty)", name)
			}
		}
	}

	mark := kube.AuditMark(t)
	r.install(plan)
	if w := kube.Writes(t, mark, byAdmin); len(w) > 0 {
		t.Errorf("second install wrote %d times: %+v", len(w), w)
	}

	if ok, err := r.p.HasPublisherCredentials(ctx); !ok || err != nil {
		t.Errorf("HasPublisherCredentials = %v, %v", ok, err)
	}

	// An upgrade: the admin publisher an older version minted (one
	// subject fewer) is minted again, and nothing else is written.
	role := identity.Publisher(identity.DefaultBuckets())
	older := role
	older.Publish = role.Publish[:len(role.Publish)-1]
	signing, err := identity.NewSigner(signer[keyring.SignerSeedKey], account)
	testenv.Must(t, err)
	creds, err := signing.Mint("publisher", older, time.Now(), 0)
	testenv.Must(t, err)
	pub, err := kube.Clientset(t).CoreV1().Secrets(r.ns).Get(ctx, keyring.PublisherSecret, metav1.GetOptions{})
	testenv.Must(t, err)
	pub.Data[keyring.PublisherCredsKey] = creds.File
	_, err = kube.Clientset(t).CoreV1().Secrets(r.ns).Update(ctx, pub, metav1.UpdateOptions{})
	testenv.Must(t, err)
	mark = kube.AuditMark(t)
	upgraded := withoutCRDs(r.install(plan))
	if !slices.Contains(actions(upgraded), "Secret/tinyctl-publisher configured") {
		t.Errorf("an older admin publisher is not minted again: %v", actions(upgraded))
	}
	if w := kube.Writes(t, mark, byAdmin); len(w) != 1 {
		t.Errorf("upgrade wrote %d times, want 1 (the publisher Secret): %+v", len(w), w)
	}
	if ok, err := identity.Grants(secret(keyring.PublisherSecret)[keyring.PublisherCredsKey], role); !ok || err != nil {
		t.Errorf("the publisher Secret after the upgrade grants the current role: %v, %v", ok, err)
	}
}

// TestInstallRefusesNewKeysUnderAnOldTrust: with the keys gone but the
// broker's trust configuration left, install stops before writing
// anything, rather than lock out every identity minted so far.
func TestInstallRefusesNewKeysUnderAnOldTrust(t *testing.T) {
	r := newRuntime(t, provision.Options{})
	plan := provision.Plan{BrokerAuth: provision.AuthJWT, SkipCollector: true, SkipCRDs: true}
	r.install(plan)
	ctx := context.Background()
	testenv.Must(t, kube.Clientset(t).CoreV1().Secrets(r.ns).Delete(ctx, keyring.KeysSecret, metav1.DeleteOptions{}))
	mark := kube.AuditMark(t)
	_, err := r.p.Install(ctx, plan, nil)
	if !errors.Is(err, provision.ErrKeysLost) || !strings.Contains(err.Error(), "restore tinyctl-nats-keys") {
		t.Fatalf("install = %v, want ErrKeysLost saying what to restore", err)
	}
	if w := kube.Writes(t, mark, func(e testenv.AuditEvent) bool {
		return byAdmin(e) && e.ObjectRef.Resource == "secrets"
	}); len(w) > 0 {
		t.Errorf("install wrote Secrets: %+v", w)
	}
}
