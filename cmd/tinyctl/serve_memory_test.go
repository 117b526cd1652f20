package main

import (
	"bytes"
	"context"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TestServeSetsTheMemoryLimit runs serve up to a usage error found after
// the soft memory limit is set (a bad --subject-prefixes) and reads the
// limit the runtime then has, and what serve logged of it: by default 90%
// of the container's limit (a stand-in for the cgroup file), none without
// one, the flag's size, its variable's, and GOMEMLIMIT's own when neither
// is given.
func TestServeSetsTheMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	const mib = 1 << 20
	for _, tt := range []struct {
		name      string
		args      []string
		container int64 // 0: no limit
		gomem     string
		vars      string
		want      int64
		log       string
	}{
		{"default in a container", nil, 400 * mib, "", "", 360 * mib, "auto: 90% of the container's memory limit, 400 MiB"},
		{"default without a limit", nil, 0, "", "", math.MaxInt64, "auto: the container has no memory limit"},
		{"flag", []string{"--memory-limit", "300Mi"}, 400 * mib, "", "", 300 * mib, "--memory-limit 300Mi"},
		{"none", []string{"--memory-limit", "none"}, 400 * mib, "", "", math.MaxInt64, "--memory-limit none"},
		{"flag over GOMEMLIMIT", []string{"--memory-limit", "1Gi"}, 0, "200MiB", "", 1024 * mib, "--memory-limit 1Gi"},
		{"variable", nil, 400 * mib, "", "250Mi", 250 * mib, "--memory-limit 250Mi"},
		{"GOMEMLIMIT alone", nil, 400 * mib, "200MiB", "", 200 * mib, "GOMEMLIMIT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			containerMemoryLimit = func() (uint64, error) {
				if tt.container == 0 {
					return 0, memlimit.ErrNoLimit
				}
				return uint64(tt.container), nil
			}
			t.Cleanup(func() { containerMemoryLimit = memlimit.FromCgroup })
			t.Setenv("GOMEMLIMIT", tt.gomem)
			t.Setenv("TINYCTL_MEMORY_LIMIT", tt.vars)
			// The runtime reads GOMEMLIMIT when the process starts.
			debug.SetMemoryLimit(math.MaxInt64)
			if tt.gomem != "" {
				debug.SetMemoryLimit(200 * mib)
			}
			args := append([]string{"serve", "--log-format", "json", "--subject-prefixes", "media"}, tt.args...)
			var out, errOut bytes.Buffer
			if code := run(context.Background(), args, &out, &errOut); code != exitUsage {
				t.Fatalf("serve %v exited %d, want %d (usage): %s", args, code, exitUsage, errOut.String())
			}
			if got := debug.SetMemoryLimit(-1); got != tt.want {
				t.Errorf("memory limit after serve %v with GOMEMLIMIT=%q, TINYCTL_MEMORY_LIMIT=%q: %d, want %d", args, tt.gomem, tt.vars, got, tt.want)
			}
			if want := `"from":"` + tt.log + `"`; !strings.Contains(errOut.String(), want) {
				t.Errorf("serve %v logged no %s:\n%s", args, want, errOut.String())
			}
		})
	}
}
