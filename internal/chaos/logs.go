package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
)

// appliedLine is the part of the controller's JSON log line for a child
// write that invariant I4 reads.
type appliedLine struct {
	Message   string `json:"message"`
	Component string `json:"component"`
	Revision  uint64 `json:"revision"`
	Object    string `json:"object"`
	Action    string `json:"action"`
}

// AppliedBackwards reads one controller process's JSON log and returns,
// for every component, each Deployment write whose revision is lower than
// an earlier one's (invariant I4), and how many writes it read. Deletes
// are writes too: a re-creation after a delete must carry a later
// revision than the delete marker's. A recreated spec bucket (the
// controller logs it) starts the count again.
func AppliedBackwards(output string) (problems []string, writes int) {
	last := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l appliedLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		if strings.HasPrefix(l.Message, "spec bucket was recreated") {
			clear(last) // revisions start again in the new bucket
		}
		if l.Message != "applied" || !strings.HasPrefix(l.Object, "Deployment/") {
			continue
		}
		writes++
		if prev, ok := last[l.Component]; ok && l.Revision < prev {
			problems = append(problems, fmt.Sprintf("%s: %s %s at revision %d after %d", l.Component, l.Action, l.Object, l.Revision, prev))
		}
		last[l.Component] = l.Revision
	}
	return problems, writes
}
