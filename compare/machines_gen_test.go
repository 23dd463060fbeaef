package compare

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// machineSource is one machine of a kind: runs of `all` on it (the first
// three of its set), by its set's build.
type machineSource struct {
	kind, dir string
}

// machineRuns are the runs of each machine the table is made of.
var machineRuns = []string{"all1.json.gz", "all2.json.gz", "all3.json.gz"}

// machineSources are one run of every VM of a kind that the repository
// holds a set of default `all` runs of, but the hold-outs
// (machineHoldOuts). Pairs of them give the spread between machines of one
// kind, on the figures their builds measure alike (a figure whose method
// changed between the two builds is left out).
var machineSources = []machineSource{
	{"2× H200", "testdata/reference/h200x2/2026-11-25"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-n"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-t"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-w"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-x"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-y"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-ab"},
	{"2× H200", "testdata/reference/h200x2/2026-11-26-ad"},
	{"2× H200", "testdata/reference/h200x2/2026-11-26-ae"},
	{"2× H100", "compare/testdata/evidence/h100x2-2026-11-25"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25-b"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25-c"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25-c/callD"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25-d"},
}

// machineHoldOuts are the VMs the machine table is tested on, never
// measured on: the last 2× H200 set and the last 2× H100 set.
var machineHoldOuts = []string{"testdata/reference/h200x2/2026-11-26-ag", "testdata/reference/h100x2/2026-11-25-e"}

// measureMachines compares every two machines of a kind, without the
// fallback and with no threshold, and keeps per family and band the
// largest change beyond the floor the runs' own data gave it, over the
// figures both builds measure alike.
func measureMachines(t *testing.T) []measured {
	runs := make([][]*results.Run, len(machineSources))
	for i, s := range machineSources {
		for _, f := range machineRuns {
			runs[i] = append(runs[i], readShared(t, filepath.Join("..", s.dir, f)))
		}
	}
	byKey := map[*results.Run]map[string]*results.Figure{}
	for _, rs := range runs {
		for _, r := range rs {
			byKey[r] = figuresByKey(r)
		}
	}
	cells := map[fallbackCell]*measured{}
	// Each run is compared with every run of each other machine of its
	// kind (some twenty times): its side is made once (the shared runs
	// are never changed).
	var memo sideMemo
	for a := range runs {
		for b := a + 1; b < len(runs); b++ {
			sa, sb := machineSources[a], machineSources[b]
			if sa.kind != sb.kind {
				continue
			}
			for ka, ra := range runs[a] {
				for kb, rb := range runs[b] {
					measureMachinePair(t, cells, sa, sb, machineRuns[ka], machineRuns[kb], ra, rb, byKey[ra], &memo)
				}
			}
		}
	}
	out := make([]measured, 0, len(cells))
	for _, m := range cells {
		if m.Beyond == 0 {
			m.Where = "every change within its runs' own floor; the largest: " + m.largestWhere
		}
		out = append(out, *m)
	}
	slices.SortFunc(out, cmpMeasured)
	return out
}

// figuresByKey is run's figure of each key, the first of a key (a row's
// Key is its baseline figure's): made once a run, where looking a row's
// figure up among them all (a Key built for each) was most of the
// table's time.
func figuresByKey(run *results.Run) map[string]*results.Figure {
	m := make(map[string]*results.Figure, len(run.Figures))
	for i := range run.Figures {
		if k := run.Figures[i].Key(); m[k] == nil {
			m[k] = &run.Figures[i]
		}
	}
	return m
}

// measureMachinePair adds to cells what run ra of machine sa and run rb of
// machine sb show beyond their own data; figureOf is ra's figure of each key,
// memo keeps the runs' sides.
func measureMachinePair(t *testing.T, cells map[fallbackCell]*measured, sa, sb machineSource, fa, fb string, ra, rb *results.Run, figureOf map[string]*results.Figure, memo *sideMemo) {
	in := []Input{{Name: sa.dir, Runs: []*results.Run{ra}}, {Name: sb.dir, Runs: []*results.Run{rb}}}
	res, err := compareMemo(in, Options{AcrossMachines: true}, false, memo)
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Machines[0]; m.Same != MachineDifferent || !m.Kind {
		t.Fatalf("%s and %s: %+v, want two machines of one kind", sa.dir, sb.dir, m)
	}
	for _, row := range res.Rows {
		ch := row.Changes[0]
		if !ch.Valid || ch.MethodChange != "" || ch.Paired && !ch.Consistent {
			continue
		}
		f := figureOf[row.Key]
		mth, known := ra.MethodOf(f)
		if !known {
			continue
		}
		r := changeRatio(row)
		change := math.Max(r-1, 1/r-1)
		cell := fallbackCell{row.Family, bandOf(row.Size), results.MethodLabel(mth)}
		m := cells[cell]
		if m == nil {
			m = &measured{fallbackEntry: fallbackEntry{Family: cell.family, Band: cell.band, Method: cell.method, Unit: row.Unit}}
			cells[cell] = m
		}
		m.Figures++
		// Said only of a change that becomes a cell's largest.
		where := func() string {
			return fmt.Sprintf("%s %s %s: %s against %s (%.2f%% apart, data floor %.2f%%; %s %s/%s against %s/%s)",
				row.Test, PairText(row.Src, row.Dst), results.FormatBytes(row.Size),
				valueText(row.Cells[0].Center), valueText(row.Cells[1].Center), 100*change, 100*ch.Floor, sa.kind, sa.dir, fa, sb.dir, fb)
		}
		if change > m.Largest {
			m.Largest, m.largestWhere = change, where()
		}
		if beyond := change - ch.Floor; beyond > m.Beyond {
			m.Beyond, m.Where = beyond, where()
		}
	}
}

// machineGoSource renders machines_table.go.
func machineGoSource(t *testing.T, cells []measured) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by TestMachineTable (go test ./compare -run TestMachineTable -update-fallback); DO NOT EDIT.\n\n")
	b.WriteString("package compare\n\n")
	b.WriteString("// machineTable is what runs of different machines of one kind showed beyond\n")
	b.WriteString("// their own data, per family and band (FALLBACK.md says from which runs).\n")
	b.WriteString("var machineTable = []fallbackEntry{\n")
	for _, m := range cells {
		fmt.Fprintf(&b, "\t{Family: %q, Band: %s, Method: %q, Unit: %q, Beyond: %s, Largest: %s, Figures: %d, Where: %q},\n",
			m.Family, bandConst[m.Band], m.Method, m.Unit, fmt.Sprintf("%.4g", m.Beyond), fmt.Sprintf("%.4g", m.Largest), m.Figures, m.Where)
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatalf("the generated table does not parse: %v\n%s", err, b.String())
	}
	return src
}

// machineMarkdown renders FALLBACK.md's table of machines.
func machineMarkdown(cells []measured) string {
	var b strings.Builder
	b.WriteString("| family | size | method since | figure-pairs | largest change | beyond the runs' own floor | floor added across machines (× " + fmt.Sprint(MachineMargin) + ") | the largest beyond it, where |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---|\n")
	for _, m := range cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s |\n", m.Family, m.Band, m.Method, m.Figures, pct(m.Largest), pct(m.Beyond),
			pct(MachineMargin*m.Beyond), strings.ReplaceAll(m.Where, "|", `\|`))
	}
	b.WriteString("\nThe machines (runs " + strings.Join(machineRuns, " and ") + " of each, every run of one machine against every run of another; paths from the repository's root):\n\n")
	b.WriteString("| kind | set |\n|---|---|\n")
	for _, s := range machineSources {
		fmt.Fprintf(&b, "| %s | `%s/` |\n", s.kind, s.dir)
	}
	return b.String()
}

// TestMachineTable derives the table of machines from its sources and
// holds machines_table.go and FALLBACK.md to it (-update-fallback rewrites
// both).
func TestMachineTable(t *testing.T) {
	cells := measureMachines(t)
	if len(cells) == 0 {
		t.Fatal("no cell measured")
	}
	src := machineGoSource(t, cells)
	doc, err := os.ReadFile("FALLBACK.md")
	if err != nil {
		t.Fatal(err)
	}
	newDoc := replaceSection(t, string(doc), "machines", machineMarkdown(cells))
	if *updateFallback {
		if err := os.WriteFile("machines_table.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("FALLBACK.md", []byte(newDoc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("machines_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, src) {
		t.Error("machines_table.go is not what its sources give: go test ./compare -run TestMachineTable -update-fallback")
	}
	if newDoc != string(doc) {
		t.Error("FALLBACK.md's table of machines is not what its sources give: go test ./compare -run TestMachineTable -update-fallback")
	}
	for _, s := range machineSources {
		for _, h := range machineHoldOuts {
			if s.dir == h {
				t.Errorf("%s is a source of the table of machines; it is a hold-out", s.dir)
			}
		}
	}
}
