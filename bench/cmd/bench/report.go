package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// results is everything one run measured.
type results struct {
	Machine string         `json:"machine"`
	Workers int            `json:"workers"`
	Started time.Time      `json:"started"`
	Cold    []coldResult   `json:"cold"`
	Steady  []steadyResult `json:"steady"`
}

// machine describes where the run happened: CPU model and count, memory,
// Go, and the load when it started (the machines are shared).
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			mem = f[1] + " kB RAM, "
		}
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = ", load " + strings.Join(strings.Fields(string(b))[:3], " ") + " at start"
	}
	return fmt.Sprintf("%d cores (%s), %s%s%s", runtime.NumCPU(), model, mem, runtime.Version(), load)
}

// write stores results.json, results.md and cold.svg in dir and prints the
// tables to w.
func (r results) write(dir string, w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		return err
	}
	var md strings.Builder
	r.markdown(&md)
	if err := os.WriteFile(filepath.Join(dir, "results.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cold.svg"), []byte(coldChart(r.Cold)), 0o644); err != nil {
		return err
	}
	_, err = io.WriteString(w, md.String())
	return err
}

// markdown writes the cold table (each serve row with its ratio to the
// floor of the same round) and the steady-state table.
func (r results) markdown(w io.Writer) {
	fmt.Fprintf(w, "Machine: %s. Floor, serve and the baseline: %d writers / workers.\n\n", r.Machine, r.Workers)
	fmt.Fprintln(w, "| N | round | run | time | ms per component | × floor | controller CPU | controller peak RSS |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, c := range r.Cold {
		ratio, cpu, rss := "", "", ""
		if f, ok := floorOf(r.Cold, c); ok && c.Variant != "floor" {
			ratio = fmt.Sprintf("%.2f", c.Time.Seconds()/f.Time.Seconds())
			cpu, rss = fmt.Sprintf("%.1f s", c.CPU.Seconds()), mib(c.PeakRSS)
		}
		fmt.Fprintf(w, "| %d | %d | %s | %.2f s | %.2f | %s | %s | %s |\n", c.N, c.Round, "`"+c.Variant+"`",
			c.Time.Seconds(), float64(c.Time.Microseconds())/1000/float64(c.N), ratio, cpu, rss)
	}
	for _, s := range r.Steady {
		s.markdown(w)
	}
}

func (s steadyResult) markdown(w io.Writer) {
	fmt.Fprintf(w, "\nSteady state at N = %d:\n\n| measurement | result |\n|---|---|\n", s.N)
	row := func(k, format string, args ...any) { fmt.Fprintf(w, "| %s | %s |\n", k, fmt.Sprintf(format, args...)) }
	row("idle CPU", "%.2f s over %s (%.2f%% of one core), %v reconciles", s.IdleCPU.Seconds(), s.IdleFor,
		100*s.IdleCPU.Seconds()/s.IdleFor.Seconds(), s.IdleReconciles)
	row("idle RSS", "%s", mib(s.IdleRSS))
	per := func(c writeCount, n int) string {
		return fmt.Sprintf("%.1f Kubernetes, %.1f JetStream API, %.1f status records", float64(c.Kube)/float64(n),
			float64(c.JetStream)/float64(n), float64(c.Status)/float64(n))
	}
	row("writes per no-op re-put", "%s (%d re-puts)", per(s.NoOp, s.NoOpPuts), s.NoOpPuts)
	row(fmt.Sprintf("burst of %d puts to one key", s.BurstPuts), "%v reconciles; %s", s.BurstReconciles, per(s.Burst, 1))
	row(fmt.Sprintf("put → Ready, one put every %s for %s", s.Interval, s.LatencyFor), "p50 %s, p99 %s, max %s (%d puts)",
		ms(s.P50), ms(s.P99), ms(s.Max), s.Puts)
	row("restart, nothing changed: start → ready", "%s; writes %s", ms(s.RestartReady), per(s.RestartWrites, 1))
	row("restart → a new put Ready", "%s", ms(s.RestartToNewPut))
}

// floorOf finds the floor measured with c (same N and round).
func floorOf(all []coldResult, c coldResult) (coldResult, bool) {
	for _, f := range all {
		if f.Variant == "floor" && f.N == c.N && f.Round == c.Round {
			return f, true
		}
	}
	return coldResult{}, false
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// rewrite renders results.md and cold.svg again from a results.json, for
// a chart or table changed after the run.
func rewrite(path, dir string, w io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return r.write(dir, w)
}
