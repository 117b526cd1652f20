package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/validate"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/render"
)

// scaledComponent is a component KEDA scales between 0 and maxReplicas.
func scaledComponent(namespace, name, maxReplicas string) string {
	return strings.Replace(component(namespace, name, "acme/"+name+":1.0.0"), "  jobs:", "  scaling: {maxReplicas: "+maxReplicas+"}\n  jobs:", 1)
}

// applyForReal renders doc as the controller of a default install would
// (jwt: each worker mounts credentials of its own, in its namespace's
// tenant account) and applies its objects to the API server.
func applyForReal(t *testing.T, doc string) {
	t.Helper()
	c, err := decode.Component([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if c, err = validate.Normalize(c); err != nil {
		t.Fatal(err)
	}
	cl := render.DefaultCluster()
	cl.NATS.CredentialsSecret = render.PerComponent
	cl.NATS.JSAPIPrefix = identity.JobsAPIPrefix
	objs, err := render.Render(c, 1, cl)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := objs.Children()
	if err != nil {
		t.Fatal(err)
	}
	a, err := apply.New(kube.Config, render.AnnotationContentHash)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if _, err := a.Apply(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
}

func TestServerDryRunAndDiffAgainstTheAPIServer(t *testing.T) {
	u := newUser(t)
	u.env = append(u.env, "KUBECONFIG="+kube.Kubeconfig)
	ns := kube.RestrictedNamespace(t)
	ref := func(kind string) string { return kind + "/" + ns + "/resizer" }
	f := u.file("c.yaml", scaledComponent(ns, "resizer", "3"))

	// Without KEDA's CRD the ScaledObject is a note, not a failure.
	r := u.run("apply", "-f", f, "--dry-run=server")
	expect(t, r, 0, []string{
		"component/" + ns + ".resizer created (server dry run)\n",
		"  " + ref("Deployment") + " accepted by the API server\n",
		"  " + ref("NetworkPolicy") + " accepted by the API server\n",
		"  " + ref("ScaledObject") + " not checked: ScaledObject is not installed in the cluster\n",
	}, nil)
	if strings.Contains(r.stderr, "would violate PodSecurity") {
		t.Errorf("the API server warned about Pod Security:\n%s", r.stderr)
	}
	if keys := u.keys("tinyctl-components"); len(keys) != 0 {
		t.Errorf("server dry run published %v", keys)
	}

	kube.ApplyCRD(t, deploy.ScaledObjectCRD)
	r = u.run("diff", "-f", f)
	expect(t, r, exitDiffFound, []string{
		"--- live/" + ref("Deployment") + "\n+++ desired/" + ref("Deployment") + "\n@@ -0,0 +1,",
		"+kind: Deployment\n",
		"+++ desired/" + ref("NetworkPolicy") + "\n",
		"+++ desired/" + ref("ScaledObject") + "\n",
		"+  maxReplicaCount: 3\n",
	}, nil)

	applyForReal(t, scaledComponent(ns, "resizer", "3"))
	r = u.run("diff", "-f", f)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("diff after applying the same component: want exit 0 and no output\n%s", r)
	}

	u.file("c.yaml", scaledComponent(ns, "resizer", "5"))
	r = u.run("diff", "-f", f)
	expect(t, r, exitDiffFound, []string{"--- live/" + ref("ScaledObject"), "-  maxReplicaCount: 3\n+  maxReplicaCount: 5\n"}, nil)
	if strings.Contains(r.stdout, ref("Deployment")) {
		t.Errorf("the Deployment did not change but shows in the diff:\n%s", r.stdout)
	}

	u.file("c.yaml", component(ns, "resizer", "acme/resizer:1.0.0"))
	r = u.run("diff", "-f", f)
	// The API server already defaulted replicas to 1; only the Deployment's
	// content hash changes, and the ScaledObject goes.
	expect(t, r, exitDiffFound, []string{
		"+++ desired/" + ref("Deployment") + "\n", "-    tinyctl.io/content-hash: ",
		"+++ desired/" + ref("ScaledObject") + "\n@@ -1,", "-kind: ScaledObject\n",
	}, nil)
}

func TestDiffErrorsExitAboveOne(t *testing.T) {
	u := newUser(t)
	u.env = append(u.env, "KUBECONFIG="+kube.Kubeconfig)
	good := u.file("good.yaml", component("default", "resizer", "acme/resizer:1.0.0"))
	bad := u.file("bad.yaml", component("default", "resizer", "acme/resizer"))
	missing := u.file("missing.yaml", component("no-such-ns", "resizer", "acme/resizer:1.0.0"))
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"invalid component", []string{"diff", "-f", bad}, exitDiffError, "Error: 1 problem in 1 document; nothing was compared\n"},
		{"unknown kube context", []string{"diff", "-f", good, "--context", "nope"}, exitDiffError, `Error: kubeconfig: context "nope" does not exist`},
		{"namespace missing in the cluster", []string{"diff", "-f", missing}, exitDiffError,
			`Error: component no-such-ns.resizer: NetworkPolicy/no-such-ns/resizer dry-run failed: namespaces "no-such-ns" not found`},
		{"no -f", []string{"diff"}, exitUsage, "Error: give at least one -f FILE, DIR or - (stdin)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, u.run(tt.args...), tt.code, nil, []string{tt.stderr})
		})
	}
}
