package fleet

import (
	"fmt"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// What a fleet says to a gate (fleet --fail-on-outlier): each of these is
// "" when there is nothing to say, and the command gives each its exit
// status.

// NothingJudged says that no node was read, or none could be judged:
// nothing done is no PASS.
func (f *Fleet) NothingJudged() string {
	judged := 0
	for _, n := range f.Nodes {
		if n.Verdict != results.StatusNotJudged {
			judged++
		}
	}
	switch {
	case len(f.Nodes) == 0:
		return fmt.Sprintf("no node's results could be read (%d input%s unreadable)", len(f.Unreadable), units.Plural(len(f.Unreadable), "", "s"))
	case judged == 0:
		return fmt.Sprintf("none of the %d node%s could be judged: no run records a verdict that judged it, and each class needs figures of %d or more pairs or nodes of a machine type", len(f.Nodes), units.Plural(len(f.Nodes), "", "s"), MinJudged)
	}
	return ""
}

// NeedAttention counts the nodes that need attention (Node.Attention: a
// node that FAILed, or is below its peers or of another topology), naming
// the first, and the inputs that could not be read.
func (f *Fleet) NeedAttention() string {
	var first string
	bad := 0
	for _, n := range f.Nodes {
		if n.Attention() {
			if bad == 0 {
				first = fmt.Sprintf(" (first: %s %s, peers %s)", n.Name, Label(n.Verdict), Label(n.Peers))
			}
			bad++
		}
	}
	if bad == 0 && len(f.Unreadable) == 0 {
		return ""
	}
	return fmt.Sprintf("%d node%s need%s attention%s, %d input%s unreadable",
		bad, units.Plural(bad, "", "s"), units.Plural(bad, "s", ""), first, len(f.Unreadable), units.Plural(len(f.Unreadable), "", "s"))
}
