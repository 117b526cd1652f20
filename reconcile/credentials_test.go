package reconcile_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// mintingEnv is an env whose controller mints worker credentials for ttl.
func mintingEnv(t *testing.T, ttl time.Duration) (*env, *identity.Signer) {
	t.Helper()
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	cfg := reconcile.Config{CredentialsTTL: ttl, WorkerTLS: reconcile.TLSFiles{CA: []byte("test CA\n")}}
	cfg.Cluster.NATS.CredentialsSecret = render.PerComponent
	e := newEnv(t, cfg)
	e.minter = keys.Signer()
	return e, keys.Signer()
}

// secretClaims decodes the user JWT in a credentials Secret.
func secretClaims(t *testing.T, s *unstructured.Unstructured) *jwt.UserClaims {
	t.Helper()
	data, _, _ := unstructured.NestedStringMap(s.Object, "data")
	creds, err := base64.StdEncoding.DecodeString(data[render.DefaultCredentialsKey])
	testenv.Must(t, err)
	token, err := jwt.ParseDecoratedJWT(creds)
	testenv.Must(t, err)
	uc, err := jwt.DecodeUserClaims(token)
	testenv.Must(t, err)
	return uc
}

func TestEachWorkerGetsCredentialsOfItsOwn(t *testing.T) {
	e, signer := mintingEnv(t, time.Hour)
	e.start()
	comp := e.component("resizer", func(c *api.Component) { c.Spec.Jobs.Publish = []string{e.ns + ".thumbs.>"} })
	rev := e.publish(comp)
	rec := e.waitStatus("resizer", api.ConditionApplied, "True", rev)

	name := render.CredentialsSecretName("resizer")
	sec := e.waitFor(secrets, name, nil)
	if got := sec.GetLabels()[render.LabelComponent]; got != render.ComponentLabelValue(e.ns, "resizer") {
		t.Errorf("Secret %s component label = %q", name, got)
	}
	data, _, _ := unstructured.NestedStringMap(sec.Object, "data")
	if ca, _ := base64.StdEncoding.DecodeString(data[render.TLSCAKey]); string(ca) != "test CA\n" {
		t.Errorf("Secret %s %s = %q, want the configured CA", name, render.TLSCAKey, ca)
	}
	uc := secretClaims(t, sec)
	if uc.IssuerAccount != signer.Account() {
		t.Errorf("credentials issued for account %q, want %q", uc.IssuerAccount, signer.Account())
	}
	stream, consumer := render.StreamName(e.ns, "resizer"), render.ConsumerName(e.ns, "resizer")
	if want := "$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer; !slices.Contains(uc.Pub.Allow, want) {
		t.Errorf("worker may publish %v, want %s among them", uc.Pub.Allow, want)
	}
	if !slices.Contains(uc.Pub.Allow, e.ns+".thumbs.>") {
		t.Errorf("worker may publish %v, want its declared %s.thumbs.>", uc.Pub.Allow, e.ns)
	}
	for _, s := range uc.Pub.Allow {
		if strings.Contains(s, "$KV.") || strings.Contains(s, "STREAM.DELETE") {
			t.Errorf("worker may publish %s", s)
		}
	}
	if left := time.Until(time.Unix(uc.Expires, 0)); left < 50*time.Minute || left > time.Hour {
		t.Errorf("credentials expire in %s, want about an hour", left)
	}

	// The Deployment mounts them; the status records them with their expiry.
	d := e.get(deployments, "resizer")
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	if !strings.Contains(fmt.Sprint(vols), "secretName:"+name) {
		t.Errorf("Deployment volumes %v do not mount Secret %s", vols, name)
	}
	ch, ok := rec.ChildOfKind("Secret")
	if !ok || ch.Name != name || ch.Expires.Unix() != uc.Expires {
		t.Errorf("status child %+v (found %v), want Secret %s expiring at %d", ch, ok, name, uc.Expires)
	}

	// A restart with nothing changed mints nothing.
	e.halt()
	mark := kube.AuditMark(t)
	rechecks := newCounter()
	e.obs = rechecks
	e.start()
	waitUntil(t, func() error {
		if rechecks.fullRechecks() == 0 || e.ctrl.QueueDepth() != 0 {
			return fmt.Errorf("%d full rechecks, queue %d", rechecks.fullRechecks(), e.ctrl.QueueDepth())
		}
		return nil
	})
	if w := kubeWrites(t, mark, e.ns); w["secrets"] != 0 {
		t.Errorf("a restart rewrote the credentials: writes %v", w)
	}

	// Deleting the component deletes its credentials.
	testenv.Must(t, e.specs.Delete(context.Background(), api.KeyOf(defaults.Apply(comp)), 0))
	e.waitGone(secrets, name)
}

func TestCredentialsAreMintedAgainBeforeTheyExpire(t *testing.T) {
	e, _ := mintingEnv(t, 4*time.Second)
	e.start()
	rev := e.publish(e.component("rotor"))
	e.waitStatus("rotor", api.ConditionApplied, "True", rev)
	name := render.CredentialsSecretName("rotor")
	first := secretClaims(t, e.waitFor(secrets, name, nil))
	var second *jwt.UserClaims
	testenv.Eventually(t, 30*time.Second, func() error {
		second = secretClaims(t, e.waitFor(secrets, name, nil))
		if second.Subject == first.Subject {
			return fmt.Errorf("credentials still those minted first (expire %s)", time.Unix(first.Expires, 0))
		}
		return nil
	})
	if second.Expires <= first.Expires {
		t.Errorf("new credentials expire at %d, not after the old ones (%d)", second.Expires, first.Expires)
	}
	if time.Now().Unix() >= first.Expires {
		t.Errorf("credentials were replaced only after they expired")
	}
}
