package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// MaxNotes bounds the notes (and other lists of sentences read from a
// results file) a document prints: a run has a handful, and a file may hold
// millions, which would make a report of 50,000 pages.
const MaxNotes = 20

// BoundedNotes is at most MaxNotes of notes and, when it cut, a last line
// saying how many more the results file holds.
func BoundedNotes(notes []string) []string {
	if len(notes) <= MaxNotes {
		return notes
	}
	return append(notes[:MaxNotes:MaxNotes], fmt.Sprintf("… and %d more in the results file", len(notes)-MaxNotes))
}

// pairIndex looks up topology pairs.
type pairIndex struct {
	pairs map[[2]int]results.Pair
}

func newPairIndex(run *results.Run) *pairIndex {
	return &pairIndex{pairs: run.Topology.PairIndex()}
}

func (ix *pairIndex) rank(src, dst int) (int, bool) {
	p, ok := ix.pairs[[2]int{src, dst}]
	if !ok {
		return 0, false
	}
	return p.PerformanceRank()
}

// pairName names an ordered pair of devices: "0→1".
func pairName(src, dst int) string { return fmt.Sprintf("%d→%d", src, dst) }

func fmtGBps(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// sameProcessIndex indexes by Key the usable figures of runs (the first
// of a key wins) that the IPC figures of ipc repeat within one process.
// Only tests and sizes with an IPC figure are keyed: keys cost time on runs
// of hundreds of thousands of figures.
func sameProcessIndex(ipc *results.Run, runs ...*results.Run) map[string]*results.Figure {
	type testSize struct {
		test results.Test
		size uint64
	}
	twins := map[testSize]bool{}
	for i := range ipc.Figures {
		f := &ipc.Figures[i]
		if t := f.Test.Info().SameProcess; t != "" {
			twins[testSize{t, f.Size}] = true
		}
	}
	idx := map[string]*results.Figure{}
	for _, r := range runs {
		for i := range r.Figures {
			f := &r.Figures[i]
			if !twins[testSize{f.Test, f.Size}] {
				continue
			}
			if v, ok := f.Value(); ok && v != 0 {
				if k := f.Key(); idx[k] == nil {
					idx[k] = f
				}
			}
		}
	}
	return idx
}

// possessive is a name's possessive as English writes it: "nvbandwidth's",
// "nccl-tests'" (a name ending in s takes the apostrophe alone).
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}

// dropBlankColumns removes from t the columns blank in every row (t
// without shading or a first column to keep: the first column names the
// row and stays).
func dropBlankColumns(t *table) {
	if len(t.rows) == 0 || t.shade != nil {
		return
	}
	for c := len(t.header) - 1; c > 0; c-- {
		if slices.ContainsFunc(t.rows, func(row []string) bool { return row[c] != "" }) {
			continue
		}
		t.header = slices.Delete(t.header, c, c+1)
		t.align = t.align[:c] + t.align[c+1:]
		for i := range t.rows {
			t.rows[i] = slices.Delete(t.rows[i], c, c+1)
		}
	}
}
