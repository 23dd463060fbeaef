package report_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

// Figures measured with VMM handles get a table of their own beside the
// legacy ones, and leave every other table as it was.
func TestVMMHandlesTable(t *testing.T) {
	run := readReference(t, "all.json")
	before := text(t, report.Tables(run, nil))
	n := len(run.Figures)
	for i := range n {
		f := run.Figures[i]
		if !f.Test.IsIPC() || f.Unit != results.UnitGBps || f.Stats == nil {
			continue
		}
		f.Params = maps.Clone(f.Params)
		f.Params[results.ParamIPCHandle] = results.IPCHandleVMM
		stats := *f.Stats
		stats.Median *= 0.99
		f.Stats = &stats
		run.Figures = append(run.Figures, f)
	}
	if len(run.Figures) == n {
		t.Fatal("the reference run has no IPC bandwidth figures")
	}
	after := text(t, report.Tables(run, nil))
	title := "VMM handles against legacy handles"
	i := strings.Index(after, title)
	if i < 0 {
		t.Fatalf("no table %q in:\n%s", title, after)
	}
	if !strings.Contains(after[i:], "-1.0%") {
		t.Errorf("the VMM table does not show the 1%% difference:\n%s", after[i:])
	}
	// The other tables are as they were, bar the VMM rows of those that
	// list figures (whose columns they may widen).
	table := after[i:]
	if end := strings.Index(table, "\n\n"); end >= 0 {
		table = table[:end]
	}
	if got, want := normalise(strings.Replace(after, table, "", 1)), normalise(before); got != want {
		t.Errorf("the VMM figures changed the other tables:\n%s\nwas\n%s", got, want)
	}
}

// normalise drops the lines of VMM figures, blank lines and the widths of
// columns.
func normalise(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" && !strings.Contains(l, "VMM handles") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
