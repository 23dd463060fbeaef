package report_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

// A measuring command prints the tables of its run; all prints the one
// screen, or everything where --tables asks or the run was saved nowhere.
func TestMeasured(t *testing.T) {
	run := &results.Run{}
	for _, c := range []struct {
		all, tables bool
		savedTo     string
		want        int
	}{
		{false, false, "r.json", 1}, {false, false, "", 1},
		{true, false, "r.json", 1}, {true, true, "r.json", 3}, {true, false, "", 3},
	} {
		if got := report.Measured(run, nil, c.all, c.tables, c.savedTo); len(got) != c.want {
			t.Errorf("all %v, tables %v, saved to %q: %d documents, want %d", c.all, c.tables, c.savedTo, len(got), c.want)
		}
	}
}

// The line of where a run went says, for a simulated one alone, how long
// its tests were modelled to take; it wraps at the screen's width.
func TestSaved(t *testing.T) {
	run := &results.Run{Plan: &results.Plan{ModelledSeconds: 3.74}}
	if got := report.Saved(run, "d/results.json"); got != "results: d/results.json" {
		t.Errorf("a real run: %q", got)
	}
	run.Simulated = true
	want := "results: p2pbench-node-0/results.json (SIMULATED: the tests in this process modelled 3.7s of device\nand host time)"
	if got := report.Saved(run, "p2pbench-node-0/results.json"); got != want {
		t.Errorf("a simulated run: %q", got)
	}
}

// show prints a topology file's topology, and a run's tables, summary, link
// health and details.
func TestShown(t *testing.T) {
	if got := report.Shown(&results.Run{Topology: &results.Topology{}}); len(got) != 1 {
		t.Errorf("a topology file: %d documents", len(got))
	}
	if got := report.Shown(&results.Run{Figures: []results.Figure{{}}}); len(got) != 4 {
		t.Errorf("a run: %d documents", len(got))
	}
}
