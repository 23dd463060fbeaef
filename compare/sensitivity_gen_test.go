package compare

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

var updateSensitivity = flag.Bool("update-sensitivity", false, "rewrite FALLBACK.md's sensitivity table from the hold-out sets")

// sensitivitySteps are the changes tried, as fractions: a rate is
// multiplied by 1 − step, a time by 1 + step.
var sensitivitySteps = []float64{0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7}

// sensitivitySets are the five-run sets the table is measured on: the
// hold-outs of the floors (FALLBACK.md).
var sensitivitySets = []struct{ machine, dir string }{
	{"2× H200", "testdata/reference/h200x2/2026-11-26-ag"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25-e"},
}

// headline is a family at one size: its figures of that size, or, for a
// family whose figures have one size each (latencies, atomics), all of
// them.
type headline struct {
	family string
	size   uint64 // 0: every size
}

// headlines are the sizes each family is gated at: the largest it has (a
// transfer size of 512 MiB, a chase's working set); for the size sweeps of
// the copies between GPUs also 16 and 64 MiB, 1 MiB and 4 KiB.
func headlines(run *results.Run) []headline {
	sizes := map[string][]uint64{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if len(f.Samples) == 0 || f.FailureLabel() != "" {
			continue
		}
		fam := familyOf(f)
		if !slices.Contains(sizes[fam], f.Size) {
			sizes[fam] = append(sizes[fam], f.Size)
		}
	}
	var out []headline
	for fam, ss := range sizes {
		slices.Sort(ss)
		if results.Test(fam).Info().Unit != results.UnitGBps && !strings.HasPrefix(fam, "ipc_") {
			out = append(out, headline{fam, 0})
			continue
		}
		out = append(out, headline{fam, ss[len(ss)-1]})
		for _, s := range []uint64{4 << 10, 1 << 20, 16 << 20, 64 << 20} {
			if slices.Contains(ss, s) && s != ss[len(ss)-1] {
				out = append(out, headline{fam, s})
			}
		}
	}
	slices.SortFunc(out, func(a, b headline) int {
		if c := strings.Compare(a.family, b.family); c != 0 {
			return c
		}
		return int(int64(a.size>>10) - int64(b.size>>10))
	})
	return out
}

func (h headline) has(f *results.Figure) bool {
	return familyOf(f) == h.family && (h.size == 0 || f.Size == h.size)
}

func (h headline) String() string {
	if h.size == 0 {
		return h.family
	}
	return h.family + " at " + results.FormatBytes(h.size)
}

// onlyFamily is a copy of run with the figures of h's family alone (the
// classes that pool the noise are within a test, so the family's rows come
// out as in the whole comparison), those of h made worse by step.
func onlyFamily(run *results.Run, h headline, step float64) *results.Run {
	out := *run
	out.Figures = nil
	for _, f := range run.Figures {
		if familyOf(&f) != h.family {
			continue
		}
		if h.has(&f) && len(f.Samples) > 0 && step != 0 {
			factor := 1 - step
			if f.LowerIsBetter() {
				factor = 1 + step
			}
			s := make([]float64, len(f.Samples))
			for i, x := range f.Samples {
				s[i] = x * factor
			}
			f.Samples, f.Stats = s, figstats.ComputeRoundStats(s, f.Rounds)
		}
		out.Figures = append(out.Figures, f)
	}
	return &out
}

// sensitivityRow is a headline's smallest change caught on a set, beside
// the spread of its figures between the set's processes.
type sensitivityRow struct {
	h      headline
	caught float64 // the smallest step caught in 9 of 10 pairings; +Inf for none
	spread float64 // the largest change of a figure between two of the runs
}

// sensitivity measures h on runs: for each step, the pairings (each two
// runs, a copy of the second made worse) where a figure of h is flagged as
// a regression and nothing else is flagged. family are the runs with h's
// family alone, as they are (onlyFamily at step 0, made once for the
// family's headlines: Compare changes none of them); memo keeps the sides
// of them and of the copies made worse (each made once a step), which
// nothing changes either.
func sensitivity(t *testing.T, family []*results.Run, h headline, memo *sideMemo) sensitivityRow {
	row := sensitivityRow{h: h, caught: math.Inf(1)}
	compare := func(a, b *results.Run) *Result {
		t.Helper()
		res, err := compareMemo([]Input{{Name: "a", Runs: []*results.Run{a}}, {Name: "b", Runs: []*results.Run{b}}}, Options{Threshold: 0.01}, true, memo)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range family {
		for j := i + 1; j < len(family); j++ {
			res := compare(family[i], family[j])
			// The runs hold the family alone.
			for _, r := range res.Rows {
				if c := r.Changes[0]; c.Valid && (h.size == 0 || r.Size == h.size) {
					row.spread = max(row.spread, math.Abs(c.Pct)/100)
				}
			}
		}
	}
	for _, step := range sensitivitySteps {
		caught := 0
		// worse[j] is family[j] made worse by step, made once for the
		// pairings it is the later run of.
		worse := make([]*results.Run, len(family))
		for j := 1; j < len(family); j++ {
			worse[j] = onlyFamily(family[j], h, step)
		}
		for i := range family {
			for j := i + 1; j < len(family); j++ {
				res := compare(family[i], worse[j])
				hit, other := false, false
				for _, r := range res.Rows {
					c := r.Changes[0]
					in := h.size == 0 || r.Size == h.size
					switch {
					case in && c.Regression:
						hit = true
					case !in && (c.Regression || c.Improvement), in && c.Improvement:
						other = true
					}
				}
				if hit && !other {
					caught++
				}
			}
		}
		if caught >= 9 {
			row.caught = step
			break
		}
	}
	return row
}

// TestSensitivityTable measures, per family at its headline sizes, the
// smallest change the gate (compare's default threshold, 1%) catches in 9
// of the 10 pairings of each hold-out set, a copy of the later run of each
// pairing made worse (samples, rounds and statistics alike), beside the
// largest change of those figures between two of the set's runs as they
// are, and holds FALLBACK.md's table to it (-update-sensitivity rewrites
// it).
func TestSensitivityTable(t *testing.T) {
	type cell struct{ caught, spread []string }
	var order []headline
	cells := map[headline]*cell{}
	for k, set := range sensitivitySets {
		runs := readAll(t, filepath.Join("..", set.dir), numbered("all", 5, ".json.gz"))
		families := map[string][]*results.Run{}
		var memo sideMemo
		for _, h := range headlines(runs[0]) {
			family := families[h.family]
			if family == nil {
				family = make([]*results.Run, len(runs))
				for i, r := range runs {
					family[i] = onlyFamily(r, h, 0)
				}
				families[h.family] = family
			}
			r := sensitivity(t, family, h, &memo)
			c := cells[h]
			if c == nil {
				c = &cell{caught: make([]string, len(sensitivitySets)), spread: make([]string, len(sensitivitySets))}
				cells[h] = c
				order = append(order, h)
			}
			c.caught[k], c.spread[k] = stepText(r.caught), pct(r.spread)
		}
	}
	slices.SortFunc(order, func(a, b headline) int {
		if c := strings.Compare(a.family, b.family); c != 0 {
			return c
		}
		return int(int64(a.size>>10) - int64(b.size>>10))
	})
	var b strings.Builder
	b.WriteString("| family | size |")
	for _, s := range sensitivitySets {
		fmt.Fprintf(&b, " %s: caught in 9 of 10 | spread between its runs |", s.machine)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|---:|", len(sensitivitySets)) + "\n")
	for _, h := range order {
		size := "all"
		if h.size != 0 {
			size = results.FormatBytes(h.size)
		}
		fmt.Fprintf(&b, "| %s | %s |", h.family, size)
		for k := range sensitivitySets {
			caught, spread := cells[h].caught[k], cells[h].spread[k]
			if caught == "" {
				caught, spread = "—", "—"
			}
			fmt.Fprintf(&b, " %s | %s |", caught, spread)
		}
		b.WriteString("\n")
	}
	doc, err := os.ReadFile("FALLBACK.md")
	if err != nil {
		t.Fatal(err)
	}
	newDoc := replaceSection(t, string(doc), "sensitivity", b.String())
	if *updateSensitivity {
		if err := os.WriteFile("FALLBACK.md", []byte(newDoc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if newDoc != string(doc) {
		t.Error("FALLBACK.md's sensitivity table is not what the hold-outs give: go test ./compare -run TestSensitivityTable -update-sensitivity")
	}
}

func readAll(t *testing.T, dir string, files []string) []*results.Run {
	var runs []*results.Run
	for _, f := range files {
		runs = append(runs, readShared(t, filepath.Join(dir, f)))
	}
	return runs
}

func stepText(s float64) string {
	if math.IsInf(s, 1) {
		return fmt.Sprintf("not at %s", pct(sensitivitySteps[len(sensitivitySteps)-1]))
	}
	return pct(s)
}
