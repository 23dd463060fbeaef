package verdict

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/montanaflynn/stats"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// TestTableFromReferenceRuns recomputes every figure of the table that a
// reference run gives from the run's files: the median over the files and
// their pairs (or GPUs) of the kind's 512 MiB figures in one process, with
// their least and most; and checks that the source's GPUs are the files'.
func TestTableFromReferenceRuns(t *testing.T) {
	runs := map[string][]*results.Run{}
	for _, s := range sources {
		for _, f := range s.files {
			run, err := resultstest.ReadShared(filepath.Join("..", "testdata", "reference", f))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range run.Environment.Devices {
				if !slices.Contains(s.gpus, d.UUID) {
					t.Errorf("%s: %s measured GPU %s, which the source does not list", s.id, f, d.UUID)
				}
			}
			runs[s.id] = append(runs[s.id], run)
		}
	}
	checked := 0
	for _, e := range table {
		for _, v := range e.values {
			rs := runs[v.src]
			if len(rs) == 0 {
				continue // a publication
			}
			var vs []float64
			for _, run := range rs {
				for _, f := range run.Figures {
					part := results.PartNone
					if f.Test.Info().BothWays {
						part = results.PartTotal
					}
					x, ok := f.Value()
					if !ok || f.Size != 512<<20 || f.Test != e.kind.test || e.kind.dir != "" && f.Direction != e.kind.dir || f.Part != part ||
						f.Params["same_gpu"] == "true" {
						continue
					}
					vs = append(vs, x)
				}
			}
			med, _ := stats.Median(vs)
			if len(vs) == 0 || !near(med, v.gbps) || !near(slices.Min(vs), v.lo) || !near(slices.Max(vs), v.hi) {
				t.Errorf("%s %s from %s: the files give %.2f (%.2f–%.2f) of %d figures, the table %v", e.path, e.kind, v.src, med, minOr(vs), maxOr(vs), len(vs), v)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d figures of the table recomputed", checked)
	}
}

// near: the table keeps a figure to a tenth of a GB/s.
func near(a, b float64) bool { return math.Abs(a-b) <= 0.051 }

func minOr(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return slices.Min(vs)
}

func maxOr(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return slices.Max(vs)
}

// TestTableHasNoHoldOutSource: the hold-out (testdata/README.md) sets no
// figure: none of its GPUs is a source's, and a run on them leaves nothing
// out.
func TestTableHasNoHoldOutSource(t *testing.T) {
	for _, f := range []string{"h100x2-2026-11-25/all1.json.gz", "h100x1-2026-11-25/all1.json.gz"} {
		run, err := resultstest.ReadShared(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if held := heldOut(run, sources); len(held) != 0 {
			t.Errorf("%s: sources of its machine: %v", f, held)
		}
	}
	for _, s := range sources {
		if strings.Contains(s.what, "2026-11-25") || strings.Contains(s.what, "evidence") {
			t.Errorf("source %s cites the hold-out: %s", s.id, s.what)
		}
	}
	// And the reference H200's own sources do not judge it.
	run, err := resultstest.ReadShared(filepath.Join("..", "testdata", "reference", "h200x2", "all.json"))
	if err != nil {
		t.Fatal(err)
	}
	if held := heldOut(run, sources); !held["h200x2"] || len(held) != 1 {
		t.Errorf("the 2× H200 reference leaves out %v, want h200x2", held)
	}
	if x, ok := lookup(nv4x18, copyKind{results.CEWrite, ""}, heldOut(run, sources)); !ok || len(x.values) != 1 || x.values[0].src != "hgx-h100-p2p" {
		t.Errorf("ce_write on NVLink 4 ×18 for the H200 reference: %+v", x)
	}
}

// TestExpectationsDocHoldsTheTable: EXPECTATIONS.md prints the table as
// TableMarkdown writes it.
func TestExpectationsDocHoldsTheTable(t *testing.T) {
	doc, err := os.ReadFile("EXPECTATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), TableMarkdown()) {
		t.Errorf("EXPECTATIONS.md does not hold the table; regenerate its table with:\n%s", TableMarkdown())
	}
	for _, want := range []string{"DCGM_LIMIT_MAX_NVLINK_CRC_ERROR", "DCGM_FR_NVLINK_ERROR_CRITICAL", "DCGM_FR_NVLINK_ERROR_THRESHOLD", "DcgmHealthWatch.cpp"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("EXPECTATIONS.md does not cite %s", want)
		}
	}
}

// TestMargins: the margins follow the sources' spread.
func TestMargins(t *testing.T) {
	x, _ := lookup(nv4x18, copyKind{results.CERead, ""}, nil)
	if x.warn != minWarn || x.fail != minWarn+failBeyondWarn || x.machines != 1 {
		t.Errorf("ce_read, one machine that agrees with itself: %+v", x)
	}
	x, _ = lookup(gen4Host, copyKind{results.H2D, ""}, nil)
	if want := 2 * (1 - 23.90/26.19); math.Abs(x.warn-want) > 1e-9 {
		t.Errorf("h2d over PCIe Gen4: warn %.4f, want twice the spread of its one source, %.4f", x.warn, want)
	}
}

// TableMarkdown writes the expectation table and its sources as Markdown,
// as EXPECTATIONS.md holds them.
func TableMarkdown() string {
	var b strings.Builder
	b.WriteString("| path | copy (512 MiB; both ways: total) | sources: GB/s (least–most) | typical GB/s | spread | warn below | fail below |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|\n")
	for _, e := range table {
		x, _ := lookup(e.path, e.kind, nil)
		var vs []string
		for _, v := range e.values {
			s := fmt.Sprintf("%s: %s", v.src, fmtValue(v.gbps))
			if v.lo != v.gbps || v.hi != v.gbps {
				s += fmt.Sprintf(" (%s–%s)", fmtValue(v.lo), fmtValue(v.hi))
			}
			vs = append(vs, s)
		}
		switch {
		case len(x.values) == 1:
			vs = append(vs, "**one source only**")
		case x.machines == 1:
			vs = append(vs, "**one machine only**")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f%% | %s | %s |\n", e.path, e.kind, strings.Join(vs, "; "), fmtValue(x.typical),
			100*x.spread, fmtValue(x.typical*(1-x.warn)), fmtValue(x.typical*(1-x.fail)))
	}
	b.WriteString("\n| source | what |\n|---|---|\n")
	for _, s := range sources {
		fmt.Fprintf(&b, "| %s | %s |\n", s.id, s.what)
	}
	return b.String()
}
