package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// stepNames are the round trips a new component waits for, one after the
// other, as serve names them (tinyctl_reconcile_step_duration_seconds).
// The floor makes all but the guard's read.
var stepNames = []string{"guard", "jetstream", "kubernetes", "status"}

// stepTimes are the mean milliseconds of each step in one cold run.
type stepTimes map[string]float64

// stepClock sums the floor's steps as its writers make them.
type stepClock struct {
	mu  sync.Mutex
	sum map[string]time.Duration
	n   map[string]int
}

func newStepClock() *stepClock {
	return &stepClock{sum: map[string]time.Duration{}, n: map[string]int{}}
}

// since adds the time from start to now to step.
func (s *stepClock) since(step string, start time.Time) {
	d := time.Since(start)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum[step] += d
	s.n[step]++
}

func (s *stepClock) means() stepTimes {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := stepTimes{}
	for step, d := range s.sum {
		out[step] = float64(d.Microseconds()) / 1000 / float64(s.n[step])
	}
	return out
}

// serveSteps reads serve's mean step times from its histograms.
func serveSteps(p *proc) (stepTimes, error) {
	out := stepTimes{}
	for _, step := range stepNames {
		label := fmt.Sprintf(`step=%q`, step)
		sum, err := p.metric("tinyctl_reconcile_step_duration_seconds_sum", label)
		if err != nil {
			return nil, err
		}
		n, err := p.metric("tinyctl_reconcile_step_duration_seconds_count", label)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out[step] = sum * 1000 / n
		}
	}
	return out, nil
}

// stepsTable writes where a component's time went in each cold run that
// timed its steps: the mean of each step and their sum.
func stepsTable(w io.Writer, cold []coldResult) {
	if !slices.ContainsFunc(cold, func(c coldResult) bool { return len(c.Steps) > 0 }) {
		return
	}
	fmt.Fprintln(w, "\nWhere a new component's time went (mean ms per round trip; the steps follow each other):")
	fmt.Fprintln(w, "\n| N | round | run | "+strings.Join(stepNames, " | ")+" | sum |")
	fmt.Fprintln(w, "|---|---|---|"+strings.Repeat("---|", len(stepNames)+1))
	for _, c := range cold {
		if len(c.Steps) == 0 {
			continue
		}
		var sum float64
		cells := make([]string, 0, len(stepNames))
		for _, step := range stepNames {
			ms, ok := c.Steps[step]
			if !ok {
				cells = append(cells, "")
				continue
			}
			sum += ms
			cells = append(cells, fmt.Sprintf("%.1f", ms))
		}
		fmt.Fprintf(w, "| %d | %d | `%s` | %s | %.1f |\n", c.N, c.Round, c.Variant, strings.Join(cells, " | "), sum)
	}
}
