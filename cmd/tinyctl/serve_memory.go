package main

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
)

// setRuntime sets Go's garbage-collection target (--gc-percent) and soft
// memory limit (--memory-limit), and logs the limit.
func (f *serveFlags) setRuntime(cmd *cobra.Command, o *options, log zerolog.Logger) error {
	if f.gcPercent < -1 {
		return usageError{fmt.Errorf("--gc-percent %d: want -1 (off) or a percentage of 0 or more", f.gcPercent)}
	}
	if cmd.Flags().Changed("gc-percent") || o.getenv("GOGC") == "" {
		debug.SetGCPercent(f.gcPercent)
	}
	limit, why, err := setMemoryLimit(f.memoryLimit, cmd.Flags().Changed("memory-limit"), o.getenv)
	if err != nil {
		return usageError{err}
	}
	log.Info().Int64("bytes", limit).Str("from", why).Msg("memory limit")
	return nil
}

// autoMemoryShare is the part of the container's memory limit that
// --memory-limit auto gives Go's runtime as its soft limit: the rest is
// what the runtime does not count (the binary's own pages: 39 MB resident
// at start, 49 MB at 10,000 components, which the kernel can drop and
// read again) and a margin before the kernel's OOM killer.
const autoMemoryShare = 0.9

// containerMemoryLimit reads the memory limit of the cgroup serve runs in
// (a pod's container): memlimit.ErrNoLimit when it has none. A variable,
// so that a unit test can stand in for the kernel.
var containerMemoryLimit = memlimit.FromCgroup

// setMemoryLimit sets Go's soft memory limit as --memory-limit (value;
// changed: given as a flag or its variable) asks, and says what it set
// and why, for the start-up log: 0 is none. GOMEMLIMIT in the environment
// wins when the flag is not given.
func setMemoryLimit(value string, changed bool, getenv func(string) string) (int64, string, error) {
	if !changed && getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1), "GOMEMLIMIT", nil
	}
	switch value {
	case "none":
		debug.SetMemoryLimit(math.MaxInt64)
		return 0, "--memory-limit none", nil
	case "auto":
		max, err := containerMemoryLimit()
		if err != nil {
			debug.SetMemoryLimit(math.MaxInt64)
			if errors.Is(err, memlimit.ErrNoLimit) {
				return 0, "auto: the container has no memory limit", nil
			}
			return 0, "auto: the container's memory limit cannot be read: " + err.Error(), nil
		}
		limit := int64(float64(max) * autoMemoryShare)
		debug.SetMemoryLimit(limit)
		return limit, fmt.Sprintf("auto: %.0f%% of the container's memory limit, %s", autoMemoryShare*100, sizeText(int64(max))), nil
	}
	q, err := resource.ParseQuantity(value)
	if err != nil || q.Sign() <= 0 {
		return 0, "", fmt.Errorf("--memory-limit %q: want auto, none or a size such as 300Mi", value)
	}
	debug.SetMemoryLimit(q.Value())
	return q.Value(), "--memory-limit " + value, nil
}

// sizeText writes n bytes in MiB.
func sizeText(n int64) string {
	return fmt.Sprintf("%d MiB", n>>20)
}
