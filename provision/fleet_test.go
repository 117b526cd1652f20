package provision_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/provision"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// TestInstallFleetMemberBindsItsLeafnodeToTheControlAccount: a fleet
// member installed with jwt auth (install --hub-url) gets a leafnode remote
// bound to its control account, which operator mode requires (the server
// refuses to start without one) and where the controller mirrors the hub.
func TestInstallFleetMemberBindsItsLeafnodeToTheControlAccount(t *testing.T) {
	r := newRuntime(t, provision.Options{})
	r.install(provision.Plan{SkipCollector: true, SkipCRDs: true, BrokerAuth: provision.AuthJWT,
		BrokerValues: map[string]any{"fleet": map[string]any{"hubURLs": []any{"nats-leaf://hub.example.com:7422"}}}})
	cm := r.get(objectRef{resources["ConfigMap"], "ConfigMap", r.ns, "nats-config"})
	conf, _, _ := unstructured.NestedString(cm.Object, "data", "nats.conf")
	signer := r.get(objectRef{resources["Secret"], "Secret", r.ns, keyring.SignerSecret})
	account := string(secretBytes(t, signer)[keyring.SignerAccountKey])
	if account == "" || !strings.Contains(conf, `account: "`+account+`"`) {
		t.Errorf("the leafnode remote is not bound to the control account %q:\n%s", account, conf)
	}
}
