package main

import (
	"fmt"
	"slices"
	"strings"
)

// coldChart draws round 1 of the cold runs as an SVG bar chart: one group
// per N, one bar per variant, bar height the milliseconds per component
// (so groups of different N compare), the time and ratio written on top.
func coldChart(cold []coldResult) string {
	var ns []int
	var variants []string
	byKey := map[string]coldResult{}
	for _, c := range cold {
		if c.Round != 1 {
			continue
		}
		if !slices.Contains(ns, c.N) {
			ns = append(ns, c.N)
		}
		if !slices.Contains(variants, c.Variant) {
			variants = append(variants, c.Variant)
		}
		byKey[fmt.Sprint(c.N, c.Variant)] = c
	}
	top := 0.0
	for _, c := range byKey {
		top = max(top, perComponent(c))
	}
	const (
		w, h           = 720, 360
		left, bottom   = 60, 300
		plotTop        = 40
		barW, groupGap = 70, 50
	)
	colors := []string{"#9aa5b1", "#2f6fb0", "#d9822b", "#6a9a3a"}
	scale := float64(bottom-plotTop) / top
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">Cold convergence, ms per component (lower is better)</text>`+"\n", left)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, bottom, w-20, bottom)
	x := left + 20
	for _, n := range ns {
		floor := byKey[fmt.Sprint(n, "floor")]
		for i, v := range variants {
			c, ok := byKey[fmt.Sprint(n, v)]
			if !ok {
				continue
			}
			bh := perComponent(c) * scale
			fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"/>`+"\n",
				x, float64(bottom)-bh, barW-6, bh, colors[i%len(colors)])
			label := fmt.Sprintf("%.1f s", c.Time.Seconds())
			if v != "floor" && floor.Time > 0 {
				label += fmt.Sprintf(" (%.1f×)", c.Time.Seconds()/floor.Time.Seconds())
			}
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n",
				x+(barW-6)/2, float64(bottom)-bh-4, label)
			x += barW
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">N = %d</text>`+"\n",
			x-len(variants)*barW/2-3, bottom+18, n)
		x += groupGap
	}
	for i, v := range variants {
		y := bottom + 38
		lx := left + i*200
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			lx, y, colors[i%len(colors)], lx+16, y+10, escape(v))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func perComponent(c coldResult) float64 { return float64(c.Time.Microseconds()) / 1000 / float64(c.N) }

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
