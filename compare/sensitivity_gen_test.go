package compare

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

var updateSensitivity = flag.Bool("update-sensitivity", false, "measure the sensitivity table on the 2× H100 evidence and the 2× H200 reference and rewrite FALLBACK.md's")

// sensitivitySteps are the changes tried, as fractions: a rate is
// multiplied by 1 − step, a time by 1 + step.
var sensitivitySteps = []float64{0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 0.9}

// worse returns a copy of run with the figures of family fam in band b made
// worse by step, and the figures of every other family left out (the
// classes that pool the noise are within a test, so the family's rows come
// out as in the whole comparison).
func worse(run *results.Run, fam string, b band, step float64) *results.Run {
	out := *run
	out.Figures = nil
	for _, f := range run.Figures {
		if familyOf(&f) != fam {
			continue
		}
		if bandOf(f.Size) == b && len(f.Samples) > 0 {
			factor := 1 - step
			if f.LowerIsBetter() {
				factor = 1 + step
			}
			s := make([]float64, len(f.Samples))
			for i, x := range f.Samples {
				s[i] = x * factor
			}
			f.Samples, f.Stats = s, results.ComputeRoundStats(s, f.Rounds)
		}
		out.Figures = append(out.Figures, f)
	}
	return &out
}

// caught is, per figure of a cell, the smallest step flagged as a
// regression in a comparison of base with a copy of other made worse (+Inf
// where none is).
func caught(t *testing.T, base, other *results.Run, fam string, b band) []float64 {
	only := worse(base, fam, b, 0)
	first := map[string]float64{}
	for _, step := range sensitivitySteps {
		res, err := Compare([]Input{{Name: "base", Runs: []*results.Run{only}}, {Name: "worse", Runs: []*results.Run{worse(other, fam, b, step)}}}, Options{Threshold: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Rows {
			if bandOf(row.Size) != b || !row.Changes[0].Valid {
				continue
			}
			if _, ok := first[row.Key]; !ok {
				first[row.Key] = -1
			}
			if row.Changes[0].Regression && first[row.Key] < 0 {
				first[row.Key] = step
			}
		}
	}
	var out []float64
	for _, s := range first {
		if s < 0 {
			s = 2 // beyond every step
		}
		out = append(out, s)
	}
	return out
}

// sensitivityRow is one cell's smallest changes caught.
type sensitivityRow struct {
	cell                fallbackCell
	h100Figs, h100Pairs int
	h100Med, h100Worst  float64
	h200                []float64
}

func readAll(t *testing.T, dir string, files []string) []*results.Run {
	var runs []*results.Run
	for _, f := range files {
		r, err := results.Read(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return runs
}

func stepText(s float64) string {
	if s > 1 {
		return "not caught"
	}
	return pct(s)
}

// TestSensitivityTable measures, per family and band, the smallest change
// compare flags with its default threshold: on the 2× H100 evidence (rounds
// within each process), a copy of each run made worse against each other
// run (the ten pairings, each way), and on the 2× H200 reference (no
// rounds), a copy of all-repeat.json against all.json; it rewrites
// FALLBACK.md's table. A generator, run with -update-sensitivity (it takes
// a minute).
func TestSensitivityTable(t *testing.T) {
	if !*updateSensitivity {
		t.Skip("a generator: go test ./compare -run TestSensitivityTable -update-sensitivity")
	}
	h100 := readAll(t, filepath.Join("testdata", "evidence", "h100x2-2026-11-25"), numbered("all", 5, ".json.gz"))
	h200 := readAll(t, filepath.Join("..", "testdata", "reference", "h200x2"), []string{"all.json", "all-repeat.json"})
	cells := map[fallbackCell]bool{}
	for _, f := range h100[0].Figures {
		if len(f.Samples) > 0 && f.FailureLabel() == "" {
			cells[fallbackCell{familyOf(&f), bandOf(f.Size)}] = true
		}
	}
	var rows []sensitivityRow
	for cell := range cells {
		row := sensitivityRow{cell: cell}
		var all []float64
		for i := range h100 {
			for j := range h100 {
				if i == j {
					continue
				}
				c := caught(t, h100[i], h100[j], cell.family, cell.band)
				all = append(all, c...)
				row.h100Figs = len(c)
				row.h100Pairs++
			}
		}
		if len(all) == 0 {
			continue
		}
		slices.Sort(all)
		row.h100Med, row.h100Worst = all[len(all)/2], all[len(all)-1]
		row.h200 = caught(t, h200[0], h200[1], cell.family, cell.band)
		slices.Sort(row.h200)
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(x, y sensitivityRow) int {
		if c := strings.Compare(x.cell.family, y.cell.family); c != 0 {
			return c
		}
		return int(x.cell.band) - int(y.cell.band)
	})
	var b strings.Builder
	b.WriteString("| family | size | 2× H100: figures × pairings | median | worst | 2× H200 without rounds: figures | median | worst |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		h200 := "| — | — | — |"
		if n := len(r.h200); n > 0 {
			h200 = fmt.Sprintf("| %d | %s | %s |", n, stepText(r.h200[n/2]), stepText(r.h200[n-1]))
		}
		fmt.Fprintf(&b, "| %s | %s | %d × %d | %s | %s %s\n", r.cell.family, r.cell.band, r.h100Figs, r.h100Pairs,
			stepText(r.h100Med), stepText(r.h100Worst), h200)
	}
	doc, err := os.ReadFile("FALLBACK.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("FALLBACK.md", []byte(replaceSection(t, string(doc), "sensitivity", b.String())), 0o644); err != nil {
		t.Fatal(err)
	}
}
