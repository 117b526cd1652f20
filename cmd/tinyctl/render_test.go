package main

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

func TestRenderPrintsObjectsAndJetStreamConfigsOffline(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.env = []string{"TINYCTL_NATS_URL=nats://127.0.0.1:1"} // nothing listens there: render is offline
	scaled := strings.Replace(component("media", "resizer", "acme/resizer:1.0.0"), "  jobs:", "  scaling: {maxReplicas: 3}\n  jobs:", 1)
	f := u.file("c.yaml", scaled)

	out := u.must("render", "-f", f).stdout
	docs := strings.Split(out, "---\n")[1:]
	headers := []string{
		"# component media.resizer: NetworkPolicy\n",
		"# component media.resizer: Deployment\n",
		"# component media.resizer: PodDisruptionBudget\n", // up to 3 pods
		"# component media.resizer: ScaledObject\n",
		"# component media.resizer: JetStream stream tinyctl_media_resizer (JetStream API JSON, not a Kubernetes object; the controller creates it)\n",
		"# component media.resizer: JetStream consumer tinyctl_media_resizer_worker (JetStream API JSON, not a Kubernetes object; the controller creates it)\n",
	}
	if len(docs) != len(headers) {
		t.Fatalf("render printed %d documents, want %d:\n%s", len(docs), len(headers), out)
	}
	for i, h := range headers {
		if !strings.HasPrefix(docs[i], h) {
			t.Errorf("document %d starts %q, want %q", i+1, strings.SplitN(docs[i], "\n", 2)[0], h)
		}
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &d); err != nil || d.Name != "resizer" || d.Spec.Template.Spec.Containers[0].Image != "acme/resizer:1.0.0" {
		t.Errorf("Deployment document does not read back (%v):\n%s", err, docs[1])
	}
	if !strings.Contains(docs[4], "retention: workqueue\n") || !strings.Contains(docs[4], "- media.resizer.>\n") {
		t.Errorf("stream document:\n%s", docs[4])
	}

	var list struct {
		Kind  string
		Items []struct {
			Key     string
			Objects []map[string]any
			Stream  struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(u.must("render", "-f", f, "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "RenderList" || len(list.Items) != 1 || len(list.Items[0].Objects) != 4 || list.Items[0].Stream.Name != "tinyctl_media_resizer" {
		t.Errorf("render -o json = %+v", list)
	}
}

func TestRenderRefusesInvalidComponents(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	f := u.file("c.yaml", component("media", "resizer", "acme/resizer"))
	r := u.run("render", "-f", f)
	expect(t, r, 1, nil, []string{f + `: document 1 (line 1): spec.image: Invalid value: "acme/resizer"`, "Error: 1 problem in 1 document; nothing was rendered\n"})
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
	expect(t, u.run("render", "-f", f, "-o", "table"), 2, nil, []string{`Error: unknown output format "table": use one of yaml, json`})
}
