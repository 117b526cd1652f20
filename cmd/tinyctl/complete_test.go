package main

import (
	"strings"
	"testing"
)

func TestCompletion(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	expect(t, u.run("completion", "bash"), 0, []string{"# bash completion V2 for tinyctl"}, nil)
	expect(t, u.run("completion", "nosh"), 2, nil, []string{`Error: unknown command "nosh" for "tinyctl completion"` + "\n"})
	u.must("apply", "-f", u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0")+"---\n"+component("media", "cropper", "acme/cropper:1.0.0")))
	r := u.must("__complete", "get", "-n", "media", "re")
	if lines := strings.Split(r.stdout, "\n"); lines[0] != "resizer" || lines[1] != ":4" {
		t.Errorf("completing get -n media re:\n%s", r.stdout)
	}
	r = u.must("__complete", "get", "-o", "")
	// jsonpath= is followed by its template: no space (directive 2|4).
	if r.stdout != "yaml\njson\njsonpath=\ntable\nwide\nname\n:6\n" {
		t.Errorf("completing -o:\n%s", r.stdout)
	}
}
