package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"testing"
)

// TestServeSetsTheGCTarget runs serve up to a usage error found after the
// garbage-collection target is set (a bad --subject-prefixes) and reads
// the target the runtime then has: the shipped default, the flag's value,
// its variable's, and GOGC's own when neither is given.
func TestServeSetsTheGCTarget(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	for _, tt := range []struct {
		name       string
		args       []string
		gogc, vars string
		want       int
	}{
		{"default", nil, "", "", defaultGCPercent},
		{"flag", []string{"--gc-percent", "30"}, "", "", 30},
		{"flag over GOGC", []string{"--gc-percent", "-1"}, "200", "", -1},
		{"variable", nil, "", "70", 70},
		{"GOGC alone", nil, "100", "", 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			t.Setenv("TINYCTL_GC_PERCENT", tt.vars)
			debug.SetGCPercent(100)
			args := append([]string{"serve", "--subject-prefixes", "media"}, tt.args...)
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != exitUsage {
				t.Fatalf("serve %v exited %d, want %d (usage): %s", args, code, exitUsage, errOut.String())
			}
			if got := debug.SetGCPercent(100); got != tt.want {
				t.Errorf("GC target after serve %v with GOGC=%q, TINYCTL_GC_PERCENT=%q: %d, want %d", args, tt.gogc, tt.vars, got, tt.want)
			}
		})
	}
}
