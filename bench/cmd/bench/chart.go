package main

import (
	"fmt"
	"slices"
	"strings"
)

// coldChart draws the cold runs as an SVG bar chart: one group per N and
// round, one bar per variant, bar height the milliseconds per component
// (so groups of different N compare), the time and the ratio to that
// round's floor written on top.
func coldChart(cold []coldResult) string {
	type group struct{ n, round int }
	var groups []group
	var variants []string
	byKey := map[string]coldResult{}
	top := 0.0
	for _, c := range cold {
		if g := (group{c.N, c.Round}); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		if !slices.Contains(variants, c.Variant) {
			variants = append(variants, c.Variant)
		}
		byKey[fmt.Sprint(c.N, c.Round, c.Variant)] = c
		top = max(top, perComponent(c))
	}
	const (
		barW, groupGap = 66, 40
		left, bottom   = 40, 300
		plotTop        = 50
	)
	w := left + 20 + len(groups)*(len(variants)*barW+groupGap)
	colors := []string{"#9aa5b1", "#2f6fb0", "#d9822b", "#6a9a3a"}
	scale := float64(bottom-plotTop) / top
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="370" font-family="sans-serif" font-size="12">`+"\n", w)
	fmt.Fprintf(&b, `<rect width="%d" height="370" fill="white"/>`+"\n", w)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14">Cold convergence: milliseconds per component (lower is better); on top, seconds and × the floor of the same round</text>`+"\n", left)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, bottom, w-20, bottom)
	x := left + 20
	for _, g := range groups {
		floor := byKey[fmt.Sprint(g.n, g.round, "floor")]
		x0 := x
		for i, v := range variants {
			c, ok := byKey[fmt.Sprint(g.n, g.round, v)]
			if ok {
				bh := perComponent(c) * scale
				fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"/>`+"\n",
					x, float64(bottom)-bh, barW-6, bh, colors[i%len(colors)])
				label := fmt.Sprintf("%.1f s", c.Time.Seconds())
				if v != "floor" && floor.Time > 0 {
					label += fmt.Sprintf(" %.1f×", c.Time.Seconds()/floor.Time.Seconds())
				}
				fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n",
					x+(barW-6)/2, float64(bottom)-bh-4, label)
			}
			x += barW
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">N = %d, round %d</text>`+"\n", (x0+x-6)/2, bottom+18, g.n, g.round)
		x += groupGap
	}
	for i, v := range variants {
		lx := left + i*260
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			lx, bottom+40, colors[i%len(colors)], lx+16, bottom+50, escape(v))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func perComponent(c coldResult) float64 { return float64(c.Time.Microseconds()) / 1000 / float64(c.N) }

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
