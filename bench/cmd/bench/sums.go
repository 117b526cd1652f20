package main

import (
	"fmt"
	"io"
	"slices"
)

// sumsTable writes, for each N measured in more than one round, every
// variant's times summed over the rounds that measured it and the floor,
// and the ratio of those sums to the floor's and to serve's. One round's
// ratio moves with the machine (the floor alone by half from one round to
// the next); the sums of rounds that ran the variants in both orders
// (measure) are the figure to compare.
func sumsTable(w io.Writer, cold []coldResult) {
	type sum struct {
		variant string
		rounds  int
		time    float64 // seconds
		floor   float64 // the floor's seconds in the same rounds
	}
	wrote := false
	for _, n := range countsIn(cold, func(c coldResult) int { return c.N }) {
		var sums []*sum
		for _, c := range cold {
			f, ok := floorOf(cold, c)
			if c.N != n || !ok {
				continue
			}
			i := slices.IndexFunc(sums, func(s *sum) bool { return s.variant == c.Variant })
			if i < 0 {
				sums, i = append(sums, &sum{variant: c.Variant}), len(sums)
			}
			s := sums[i]
			s.rounds++
			s.time += c.Time.Seconds()
			s.floor += f.Time.Seconds()
		}
		if len(sums) == 0 || sums[0].rounds < 2 {
			continue
		}
		if !wrote {
			fmt.Fprintln(w, "\nSummed over the rounds (even rounds run the variants in the reverse order):")
			fmt.Fprintln(w, "\n| N | run | rounds | time | × floor | × serve |")
			fmt.Fprintln(w, "|---|---|---|---|---|---|")
			wrote = true
		}
		serve := slices.IndexFunc(sums, func(s *sum) bool { return s.variant == "serve" })
		for _, s := range sums {
			vsServe := ""
			if serve >= 0 && s.variant != "serve" && s.variant != "floor" && sums[serve].rounds == s.rounds {
				vsServe = fmt.Sprintf("%.2f", s.time/sums[serve].time)
			}
			ratio := ""
			if s.variant != "floor" {
				ratio = fmt.Sprintf("%.2f", s.time/s.floor)
			}
			fmt.Fprintf(w, "| %d | `%s` | %d | %.2f s | %s | %s |\n", n, s.variant, s.rounds, s.time, ratio, vsServe)
		}
	}
}

// countsIn returns the counts (N) of all, in the order first measured.
func countsIn[T any](all []T, n func(T) int) []int {
	var ns []int
	for _, r := range all {
		if !slices.Contains(ns, n(r)) {
			ns = append(ns, n(r))
		}
	}
	return ns
}
