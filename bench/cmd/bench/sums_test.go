package main

import (
	"strings"
	"testing"
	"time"
)

// TestSumsTableRatiosAreOfTheSums: the ratio to the floor is the sum of a
// variant's rounds over the floor's sum in the same rounds, not a mean of
// each round's ratio, and a count measured once gets no row.
func TestSumsTableRatiosAreOfTheSums(t *testing.T) {
	run := func(n, round int, variant string, s float64) coldResult {
		return coldResult{N: n, Round: round, Variant: variant, Time: time.Duration(s * float64(time.Second))}
	}
	cold := []coldResult{
		run(1000, 1, "floor", 10), run(1000, 1, "serve", 12), run(1000, 1, "controller-runtime B1", 30),
		run(100, 1, "floor", 1), run(100, 1, "serve", 2),
		run(1000, 2, "controller-runtime B1", 40), run(1000, 2, "serve", 26), run(1000, 2, "floor", 20),
	}
	var b strings.Builder
	sumsTable(&b, cold)
	out := b.String()
	for _, want := range []string{
		"| 1000 | `floor` | 2 | 30.00 s |  |  |",
		"| 1000 | `serve` | 2 | 38.00 s | 1.27 |  |",
		"| 1000 | `controller-runtime B1` | 2 | 70.00 s | 2.33 | 1.84 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want the row %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "| 100 |") {
		t.Errorf("a count measured in one round got a row:\n%s", out)
	}
}
