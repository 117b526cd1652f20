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
	Command string         `json:"command"`
	Workers int            `json:"workers"`
	Started time.Time      `json:"started"`
	Cold    []coldResult   `json:"cold"`
	Steady  []steadyResult `json:"steady"`
	// Churn is the sustained churn of each controller measured, beside
	// the floor's maximum update rate at the same N.
	Churn      []churnResult `json:"churn,omitempty"`
	ChurnFloor []churnFloor  `json:"churnFloor,omitempty"`
	// Failed says why the run stopped early (the rest is what it measured).
	Failed string `json:"failed,omitempty"`
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
	for name, svg := range map[string]string{"cold.svg": coldChart(r.Cold), "rss.svg": rssChart(r.Cold), "latency.svg": latencyChart(r.Steady)} {
		if svg == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	_, err = io.WriteString(w, md.String())
	return err
}

// markdown writes the cold table (each controller row with its ratio to
// the floor of the same round), the steady-state and the churn tables.
func (r results) markdown(w io.Writer) {
	fmt.Fprintf(w, "Machine: %s. Floor, serve and B1: %d writers / workers.\n", r.Machine, r.Workers)
	if r.Command != "" {
		fmt.Fprintf(w, "Command: `%s`.\n", r.Command)
	}
	if r.Failed != "" {
		fmt.Fprintf(w, "\n**The run stopped early:** %s\n", r.Failed)
	}
	fmt.Fprintln(w, "\n| N | round | run | time | ms per component | × floor | machine busy | CPU: API server, etcd, driver and NATS | controller CPU | controller peak RSS | APF: requests, mean queue wait, >20 ms, rejected |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range r.Cold {
		ratio, cpu, rss, apf := "", "", "", ""
		if f, ok := floorOf(r.Cold, c); ok && c.Variant != "floor" {
			ratio = fmt.Sprintf("%.2f", c.Time.Seconds()/f.Time.Seconds())
			cpu, rss = fmt.Sprintf("%.1f s", c.CPU.Seconds()), mib(c.PeakRSS)
			apf = fmt.Sprintf("%d, %s, %d, %d", c.APF.Dispatched, c.APF.MeanWait.Round(time.Microsecond), c.APF.Over20ms, c.APF.Rejected)
		}
		busy, parts := "", "" // not measured before these columns (an older results.json)
		if c.MachineBusy > 0 {
			busy = fmt.Sprintf("%.0f %%", 100*c.MachineBusy)
			parts = fmt.Sprintf("%.1f s, %.1f s, %.1f s", c.Parts.APIServer.Seconds(), c.Parts.Etcd.Seconds(), c.Parts.Driver.Seconds())
		}
		fmt.Fprintf(w, "| %d | %d | %s | %.2f s | %.2f | %s | %s | %s | %s | %s | %s |\n", c.N, c.Round, "`"+c.Variant+"`",
			c.Time.Seconds(), float64(c.Time.Microseconds())/1000/float64(c.N), ratio, busy, parts, cpu, rss, apf)
	}
	sumsTable(w, r.Cold)
	stepsTable(w, r.Cold)
	steadyTables(w, r.Steady)
	churnTables(w, r)
}

// steadyTables writes one table per N, a column per system.
func steadyTables(w io.Writer, all []steadyResult) {
	for _, n := range countsIn(all, func(s steadyResult) int { return s.N }) {
		var cols []steadyResult
		for _, s := range all {
			if s.N == n {
				cols = append(cols, s)
			}
		}
		steadyTable(w, n, cols)
	}
}

// steadyTable writes the steady-state table of count n, a column per
// system measured.
func steadyTable(w io.Writer, n int, cols []steadyResult) {
	fmt.Fprintf(w, "\nSteady state at N = %d:\n\n| measurement |", n)
	for _, s := range cols {
		fmt.Fprintf(w, " %s |", s.System)
	}
	fmt.Fprint(w, "\n|---|")
	for range cols {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	row := func(k string, cell func(s steadyResult) string) {
		fmt.Fprintf(w, "| %s |", k)
		for _, s := range cols {
			fmt.Fprintf(w, " %s |", cell(s))
		}
		fmt.Fprintln(w)
	}
	s0 := cols[0]
	row(fmt.Sprintf("idle CPU over %s", s0.IdleFor), func(s steadyResult) string {
		return fmt.Sprintf("%.2f s (%.2f%% of one core), %v reconciles", s.IdleCPU.Seconds(),
			100*s.IdleCPU.Seconds()/s.IdleFor.Seconds(), s.IdleReconciles)
	})
	row("idle RSS", func(s steadyResult) string { return mib(s.IdleRSS) })
	row(fmt.Sprintf("writes per no-op re-put (%d re-puts)", s0.NoOpPuts), func(s steadyResult) string { return per(s.NoOp, s.NoOpPuts) })
	row("writes for one changed component", func(s steadyResult) string {
		return fmt.Sprintf("%s; %d to other components' objects", per(s.Unrelated, 1), s.Unrelated.Others)
	})
	row(fmt.Sprintf("burst of %d puts to one key", s0.BurstPuts), func(s steadyResult) string {
		return fmt.Sprintf("%v reconciles; %s", s.BurstReconciles, per(s.Burst, 1))
	})
	row(fmt.Sprintf("put → Ready, one put every %s for %s", s0.Interval, s0.LatencyFor), func(s steadyResult) string {
		return fmt.Sprintf("p50 %s, p99 %s, max %s (%d puts)", ms(s.P50), ms(s.P99), ms(s.Max), s.Puts)
	})
	row("periodic resync: time, CPU, reconciles", resyncCell)
	row("periodic resync: writes", func(s steadyResult) string {
		if !s.ResyncMeasured {
			return "not measured"
		}
		return per(s.ResyncWrites, 1)
	})
	row("restart, nothing changed: start → ready", func(s steadyResult) string { return ms(s.RestartReady) })
	row("restart, nothing changed: writes", func(s steadyResult) string { return per(s.RestartWrites, 1) })
	row("restart → a new put Ready", func(s steadyResult) string { return ms(s.RestartToNewPut) })
}

// resyncCell says what a system's periodic resync took.
func resyncCell(s steadyResult) string {
	if s.ResyncMissing {
		return "none came"
	}
	if !s.ResyncMeasured {
		return "not measured (-resync 0)"
	}
	first := ""
	if s.ResyncFirstTime > 0 {
		first = fmt.Sprintf(" (the second after start; the first took %s)", ms(s.ResyncFirstTime))
	}
	return fmt.Sprintf("%s, %.2f s CPU, %v reconciles%s", ms(s.ResyncTime), s.ResyncCPU.Seconds(), s.ResyncReconciles, first)
}

func per(c writeCount, n int) string {
	return fmt.Sprintf("%.1f Kubernetes, %.1f JetStream API, %.1f status records", float64(c.Kube)/float64(n),
		float64(c.JetStream)/float64(n), float64(c.Status)/float64(n))
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
