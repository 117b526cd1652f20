package render_test

import (
	"encoding/json"
	"testing"

	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/validate"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tinyctl/tinyctl/render"
)

// designExample is the component of DESIGN.md, as a user writes it.
const designExample = `apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: extractor, namespace: workers, labels: {team: docs}}
spec:
  image: registry.example.com/acme/extractor:1.4.2
  args: ["--mode=pdf"]
  env: [{name: LOG_LEVEL, value: info}]
  resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}
  jobs:
    subjects: ["jobs.extract.>"]
    stream:   {replicas: 1, storage: file, maxAge: 24h, duplicateWindow: 2m}
    consumer: {ackWait: 30s, maxDeliver: 5, maxAckPending: 1000, backoff: [1s, 10s, 1m]}
  scaling:  {minReplicas: 0, maxReplicas: 20, lagThreshold: 10, activationLagThreshold: 1}
  egress: {allow: [{cidr: 10.1.0.0/16, except: [10.1.2.0/24], ports: [{port: 443}]}]}
`

// FuzzRender feeds arbitrary documents through the path the controller
// takes (Decode, Default, Validate) and requires that every component
// Validate accepts renders without error or panic, into objects that keep
// the invariants users rely on.
func FuzzRender(f *testing.F) {
	f.Add([]byte(designExample))
	for _, tc := range renderCases() {
		b, err := json.Marshal(tc.component)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decode.Component(data)
		if err != nil {
			return
		}
		c = defaults.Apply(c)
		if errs := validate.Component(c); len(errs) > 0 {
			return
		}
		for _, cl := range []render.Cluster{testCluster(), withCredentials()} {
			objs, err := render.Render(c, 1, cl)
			if err != nil {
				t.Fatalf("valid component failed to render: %v\n%s", err, data)
			}
			checkInvariants(t, objs)
		}
	})
}

// checkInvariants asserts what must hold for any rendered component.
func checkInvariants(t *testing.T, objs render.Objects) {
	t.Helper()
	d := objs.Deployment
	sel := labels.SelectorFromSet(d.Spec.Selector.MatchLabels)
	if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("selector %v does not match template labels %v", sel, d.Spec.Template.Labels)
	}
	for k, v := range d.Labels {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label %s=%q: %v", k, v, errs)
		}
	}
	if (d.Spec.Replicas == nil) != (objs.ScaledObject != nil) {
		t.Errorf("replicas set = %t with ScaledObject = %t", d.Spec.Replicas != nil, objs.ScaledObject != nil)
	}
	if n := len(objs.NetworkPolicy.Spec.PolicyTypes); n != 2 {
		t.Errorf("policyTypes = %v, want Ingress and Egress", objs.NetworkPolicy.Spec.PolicyTypes)
	}
	for i, r := range objs.NetworkPolicy.Spec.Egress {
		if len(r.To) == 0 {
			t.Errorf("egress rule %d names no peer, so it allows everything", i)
		}
	}
	if objs.Consumer.FilterSubject != "" || len(objs.Consumer.FilterSubjects) > 0 {
		t.Error("consumer has a filter subject")
	}
}
