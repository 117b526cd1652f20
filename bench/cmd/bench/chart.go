package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// coldChart draws the cold runs as an SVG bar chart: one group per N and
// round, one bar per variant, bar height the milliseconds per component
// (so groups of different N compare), the time and the ratio to that
// round's floor written on top.
func coldChart(cold []coldResult) string {
	return barChart(cold, "Cold convergence, ms per component (lower is better); on top: seconds, × the floor of the round",
		perComponent, func(c, floor coldResult) string {
			label := fmt.Sprintf("%.1f s", c.Time.Seconds())
			if c.Variant != "floor" && floor.Time > 0 {
				label += fmt.Sprintf(" %.1f×", c.Time.Seconds()/floor.Time.Seconds())
			}
			return label
		})
}

// rssChart draws every controller's peak RSS at convergence, grouped like
// coldChart (the floor has no controller).
func rssChart(cold []coldResult) string {
	var ctl []coldResult
	for _, c := range cold {
		if c.Variant != "floor" {
			ctl = append(ctl, c)
		}
	}
	return barChart(ctl, "Controller peak RSS at convergence, MiB (lower is better)",
		func(c coldResult) float64 { return float64(c.PeakRSS) / (1 << 20) },
		func(c, _ coldResult) string { return fmt.Sprintf("%.0f MiB", float64(c.PeakRSS)/(1<<20)) })
}

// barChart draws value(c) for every run, one group per N and round, one
// bar per variant, label(c, floor of its round) on top.
func barChart(cold []coldResult, title string, value func(coldResult) float64, label func(c, floor coldResult) string) string {
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
		top = max(top, value(c))
	}
	const (
		barW, groupGap = 66, 40
		left, bottom   = 40, 300
		plotTop        = 50
	)
	w := max(left+20+len(groups)*(len(variants)*barW+groupGap), 820)
	scale := float64(bottom-plotTop) / top
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="380" font-family="sans-serif" font-size="12">`+"\n", w)
	fmt.Fprintf(&b, `<rect width="%d" height="380" fill="white"/>`+"\n", w)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14">%s</text>`+"\n", left, escape(title))
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, bottom, w-20, bottom)
	x := left + 20
	for _, g := range groups {
		floor := byKey[fmt.Sprint(g.n, g.round, "floor")]
		x0 := x
		for _, v := range variants {
			c, ok := byKey[fmt.Sprint(g.n, g.round, v)]
			if ok {
				bh := value(c) * scale
				fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"/>`+"\n",
					x, float64(bottom)-bh, barW-6, bh, colorOf(v))
				fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n",
					x+(barW-6)/2, float64(bottom)-bh-4, escape(label(c, floor)))
			}
			x += barW
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">N = %d, round %d</text>`+"\n", (x0+x-6)/2, bottom+18, g.n, g.round)
		x += groupGap
	}
	for i, v := range variants {
		lx, ly := left+(i%3)*260, bottom+34+(i/3)*18
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			lx, ly, colorOf(v), lx+16, ly+10, escape(v))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// colorOf gives every run the same color in every chart.
func colorOf(variant string) string {
	switch {
	case variant == "floor":
		return "#9aa5b1"
	case variant == "serve":
		return "#2f6fb0"
	case strings.HasPrefix(variant, "serve "):
		return "#d9822b"
	case strings.HasSuffix(variant, "B0"):
		return "#8e44ad"
	default:
		return "#6a9a3a"
	}
}

func perComponent(c coldResult) float64 { return float64(c.Time.Microseconds()) / 1000 / float64(c.N) }

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// latencyChart draws, for every steady-state run, the distribution of put
// → Ready latencies as a cumulative curve: the share of puts Ready within
// a time.
func latencyChart(steady []steadyResult) string {
	const (
		left, right, top, bottom = 60, 760, 50, 330
	)
	longest := time.Duration(0)
	for _, s := range steady {
		if len(s.Latencies) > 0 {
			longest = max(longest, s.Latencies[len(s.Latencies)-1])
		}
	}
	if longest == 0 {
		return ""
	}
	xmax := float64(longest.Milliseconds()+10) * 1.05
	var b strings.Builder
	height := bottom + 40 + 18*len(steady)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", right+40, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", right+40, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14">Put → Ready: share of puts Ready within a time (left and up is better)</text>`+"\n", left)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, bottom, right, bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, bottom)
	for i := 0; i <= 4; i++ {
		y := bottom - (bottom-top)*i/4
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%d%%</text>`+"\n", left-6, y+4, 25*i)
		ms := xmax * float64(i) / 4
		x := left + int(float64(right-left)*float64(i)/4)
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%.0f ms</text>`+"\n", x, bottom+18, ms)
	}
	for i, s := range steady {
		if len(s.Latencies) == 0 {
			continue
		}
		var pts []string
		for k, d := range s.Latencies {
			x := float64(left) + float64(right-left)*float64(d.Microseconds())/1000/xmax
			y := float64(bottom) - float64(bottom-top)*float64(k+1)/float64(len(s.Latencies))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		c := colorOf(s.System)
		dash := ""
		if i > 0 && s.System == steady[i-1].System || i > 1 && s.System == steady[i-2].System {
			dash = ` stroke-dasharray="6 3"` // the same system at another N
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", c, dash, strings.Join(pts, " "))
		ly := bottom + 30 + 18*i
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			left, ly, c, left+16, ly+10, escape(fmt.Sprintf("%s, N = %d: p50 %s, p99 %s", s.System, s.N, ms(s.P50), ms(s.P99))))
	}
	b.WriteString("</svg>\n")
	return b.String()
}
