package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tinyctl/tinyctl/api/action"
)

// A publish of more than progressOver components reports its progress on
// standard error every progressEvery components, and at least once a
// second.
const (
	progressOver  = 500
	progressEvery = 1000
)

// publishProgress counts what apply did to each component and tells a user
// waiting on a long publish how far it got.
type publishProgress struct {
	w     io.Writer
	now   func() time.Time
	total int
	done  int
	count map[action.Action]int
	last  time.Time // when progress was last printed
}

func newPublishProgress(w io.Writer, now func() time.Time, total int) *publishProgress {
	return &publishProgress{w: w, now: now, total: total, count: map[action.Action]int{}, last: now()}
}

// add counts one component's action and prints progress when it is due.
func (p *publishProgress) add(a action.Action) {
	p.done++
	p.count[a]++
	if p.total <= progressOver || p.done == p.total {
		return
	}
	if t := p.now(); p.done%progressEvery == 0 || t.Sub(p.last) >= time.Second {
		p.last = t
		fmt.Fprintf(p.w, "%d of %d components (%d%%)...\n", p.done, p.total, 100*p.done/p.total)
	}
}

// summary counts the components by action, in a fixed order:
// "2 created, 1 unchanged".
func (p *publishProgress) summary() string {
	var parts []string
	for _, a := range []action.Action{action.Created, action.Configured, action.Unchanged} {
		if p.count[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.count[a], a))
		}
	}
	return strings.Join(parts, ", ")
}
