package compare

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

var updateFallback = flag.Bool("update-fallback", false, "rewrite fallback_table.go and FALLBACK.md's fallback table from the runs fallbackSources names")

// fallbackSource is a set of runs of one command, by one build, on one
// machine, each in a process of its own: what the fallback is measured on.
// Each figure counts for its method (the method history, results.MethodOf):
// a floor holds figures measured one way.
type fallbackSource struct {
	machine string
	dir     string // relative to the repository's root
	files   []string
	what    string
}

// numbered is name1.ext … nameN.ext.
func numbered(name string, n int, ext string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d%s", name, i+1, ext)
	}
	return out
}

// fallbackSources are every set of runs in separate processes of p2pbench's
// default settings that the repository holds, but the hold-outs
// (fallbackHoldOuts), which the fallback is tested on. Left out too: the `--renew` experiments with other
// settings than the default (second-call/renew, renew), the reverted builds
// of the sixth and seventh calls and the older build beside the fourth
// (p2pold), whose rounds are not taken as p2pbench takes them, and sets
// whose files are each another command (sens, probe/smhost-*).
var fallbackSources = []fallbackSource{
	{"2× H200", "testdata/reference/h200x2", []string{"all.json", "all-repeat.json"}, "`all` twice, back to back, no rounds"},
	{"1× H200", "testdata/reference/h200x1", []string{"all.json", "all-repeat.json"}, "`all` twice, no rounds"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-b", []string{"all.json", "all-repeat.json"}, "`all` twice, no rounds"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-b/processes", numbered("atomic", 5, ".json"), "`atomic` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-b/processes", numbered("lat", 5, ".json"), "`lat --tests lat_chase,lat_host_chase` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-b/processes", numbered("small", 5, ".json"), "the small copies at 64 KiB in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/all5", numbered("all", 5, ".json"), "`all` in five processes, rounds"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/processes", numbered("atomic", 5, ".json"), "`atomic` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/processes", numbered("lat", 5, ".json"), "`lat --tests lat_chase,lat_host_chase` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/processes", numbered("small", 5, ".json"), "the small copies at 64 KiB in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/probe", numbered("ipc", 6, ".json"), "`ipc --tests ipc_ce_read,ipc_ce_write --handles legacy,vmm` in six processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c", []string{"ipc-vmm-1.json", "ipc-vmm-2.json"}, "`ipc --handles legacy,vmm` twice"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/second-call/all5", numbered("all", 5, ".json"), "`all` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/third-call/all5", numbered("all", 5, ".json"), "`all` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/third-call/processes", numbered("small", 5, ".json"), "the small copies at 64 KiB in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/fourth-call", numbered("all", 3, ".json"), "`all` in three processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/fourth-call", numbered("bw", 2, ".json"), "the host copies (`bw`) twice"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/fourth-call/old-vs-new", numbered("p2pbench-", 3, ".json"), "`bw --tests host_bidir,host_all_bidir,h2d` in three processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/fifth-call/all5", numbered("all", 5, ".json"), "`all` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/fifth-call/processes", numbered("atomic", 5, ".json"), "`atomic` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/fifth-call/processes", numbered("lat", 5, ".json"), "`lat --tests lat_chase,lat_host_chase` in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/fifth-call/processes", numbered("small", 5, ".json"), "the small copies at 64 KiB in five processes"},
	{"1× H200", "testdata/reference/h200x1/2026-11-23-c/fifth-call", []string{"ipc-vmm-1.json", "ipc-vmm-2.json"}, "`ipc --handles legacy,vmm` twice"},
	{"1× H200", "testdata/reference/h200x1/2026-11-29/tenth-call", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"1× H100", "testdata/reference/h100x1/2026-11-23", numbered("all", 2, ".json"), "`all` twice"},
	{"1× H100", "compare/testdata/evidence/h100x1-2026-11-25", numbered("all", 3, ".json.gz"), "`all` in three processes"},
	{"2× H100", "compare/testdata/evidence/h100x2-2026-11-25", numbered("all", 5, ".json.gz"), "`all` in five processes (the first 2× H100 evidence)"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25", numbered("all", 5, ".json.gz"), "`all` in five processes (the first session's set)"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25-c", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25-c/callD", numbered("all", 5, ".json.gz"), "`all` in five processes (another machine)"},
	{"2× H100", "testdata/reference/h100x2/2026-11-25-d", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-n", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-t", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-w", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-x", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-y", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-25-ab", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-26-ad", numbered("all", 5, ".json.gz"), "`all` in five processes"},
	{"2× H200", "testdata/reference/h200x2/2026-11-26-ae", numbered("all", 5, ".json.gz"), "`all` in five processes"},
}

// The 2× H200 sets h200x2/2026-11-25-t, -w and -x say they have process
// replicates, which the builds after them no longer claim (their runs'
// small copy-engine copies keep a time per process); the generator
// compares them as they are, the floors from their rounds alone, and keeps
// what lies beyond.

// Of the 2× H100 sets, h100x2/2026-11-25-b and another took four
// samples a round, before --samples defaulted to three (66ed323): their
// rounds are not taken as p2pbench takes them, and they are no source.

// fallbackHoldOuts are the sets the fallback is tested on, never measured
// on: the last set of each kind of machine, each of a build no source ran
// and of a fresh VM. Each set of record was a hold-out until the next one
// was measured (FALLBACK.md). Every set is a source for the figures of its
// own methods alone (results.MethodLabel): the 2× H100 evidence's copies
// across processes, of a build before whole 2 MiB pages, took one of two
// rates per process (291 or 237 GB/s), which no later method shows.
var fallbackHoldOuts = []string{
	"testdata/reference/h100x2/2026-11-25-e",
	"testdata/reference/h200x2/2026-11-26-ag",
}

// measured is what the fallback's sources showed of one cell.
type measured struct {
	fallbackEntry
	largestWhere string // where the largest change itself was
}

// sourcePass is what every two runs of every source show, each comparison
// made once and judged two ways: without the fallback and with no
// threshold, for the fallback's table (TestFallbackTable); as `compare`
// judges them by default, for its gate (TestRerunsOfOneMachineAreQuiet).
type sourcePass struct {
	cells []measured
	// gate says what the gate got wrong on a pairing (gateFindings).
	gate     []string
	pairings int
	done     bool
}

var (
	sourcePassOnce sync.Once
	sourcePassOut  sourcePass
)

// passSources is the pass over the sources, made by the first test that
// asks.
func passSources(t *testing.T) sourcePass {
	t.Helper()
	sourcePassOnce.Do(func() { sourcePassOut = measureSources(t) })
	if !sourcePassOut.done {
		t.Fatal("the pass over the fallback's sources did not finish: the test that made it failed")
	}
	return sourcePassOut
}

// measureSources compares every two runs of every source. Without the
// fallback and with no threshold it keeps, per family and band, the
// largest change beyond the floor the runs' own data gave it: the part of
// the change between two processes that the runs could not show. With
// both, as Compare's defaults with compare's threshold judge it, it keeps
// what the gate got wrong.
func measureSources(t *testing.T) sourcePass {
	var pass sourcePass
	cells := map[fallbackCell]*measured{}
	for _, src := range fallbackSources {
		// Each run of a source is compared with every other: its side is
		// made once (the shared runs are never changed).
		var memo sideMemo
		var runs []*results.Run
		for _, f := range src.files {
			runs = append(runs, readShared(t, filepath.Join("..", src.dir, f)))
		}
		// The figures' methods: a floor holds figures measured one way.
		method := map[string]string{}
		for i := range runs[0].Figures {
			f := &runs[0].Figures[i]
			if m, ok := runs[0].MethodOf(f); ok {
				method[f.Key()] = results.MethodLabel(m)
			}
		}
		for a := range runs {
			for b := a + 1; b < len(runs); b++ {
				in := []Input{{Name: src.files[a], Runs: runs[a : a+1]}, {Name: src.files[b], Runs: runs[b : b+1]}}
				opt, err := Options{}.withDefaults()
				if err != nil {
					t.Fatal(err)
				}
				p, err := prepareMemo(in, opt, &memo)
				if err != nil {
					t.Fatal(err)
				}
				pass.pairings++
				pass.gate = append(pass.gate, gateFindings(p.judged(Options{Threshold: gateThreshold}, true), src.dir, src.files[a], src.files[b])...)
				res := p.judged(Options{}, false)
				for _, row := range res.Rows {
					ch := row.Changes[0]
					if !ch.Valid || method[row.Key] == "" || ch.Paired && !ch.Consistent {
						// Rounds paired by number that moved both ways are
						// never flagged: they are no change to measure.
						continue
					}
					r := changeRatio(row)
					change := math.Max(r-1, 1/r-1)
					cell := fallbackCell{row.Family, bandOf(row.Size), method[row.Key]}
					m := cells[cell]
					if m == nil {
						m = &measured{fallbackEntry: fallbackEntry{Family: cell.family, Band: cell.band, Method: cell.method, Unit: row.Unit}}
						cells[cell] = m
					}
					if m.Unit != row.Unit {
						t.Fatalf("family %s has figures in %s and %s", m.Family, m.Unit, row.Unit)
					}
					m.Figures++
					// Said only of a change that becomes a cell's largest.
					where := func() string {
						return fmt.Sprintf("%s %s %s: %s against %s (%.2f%% apart, data floor %.2f%%; %s %s: %s, %s)",
							row.Test, PairText(row.Src, row.Dst), results.FormatBytes(row.Size),
							valueText(row.Cells[0].Center), valueText(row.Cells[1].Center), 100*change, 100*ch.Floor,
							src.machine, src.dir, src.files[a], src.files[b])
					}
					if change > m.Largest {
						m.Largest, m.largestWhere = change, where()
					}
					if beyond := change - ch.Floor; beyond > m.Beyond {
						m.Beyond, m.Where = beyond, where()
					}
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
	pass.cells, pass.done = out, true
	return pass
}

// changeRatio is the new median over the baseline's, or, for rounds
// paired by their number, the median of their ratios (Change.Paired).
func changeRatio(row Row) float64 {
	if ch := row.Changes[0]; ch.Paired {
		return 1 + ch.Pct/100
	}
	return row.Cells[1].Center / row.Cells[0].Center
}

// cmpMeasured orders cells by family, band and method.
func cmpMeasured(x, y measured) int {
	if c := strings.Compare(x.Family, y.Family); c != 0 {
		return c
	}
	if c := int(x.Band) - int(y.Band); c != 0 {
		return c
	}
	return strings.Compare(x.Method, y.Method)
}

// fallbackSource renders fallback_table.go.
func fallbackGoSource(t *testing.T, cells []measured) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by TestFallbackTable (go test ./compare -run TestFallbackTable -update-fallback); DO NOT EDIT.\n\n")
	b.WriteString("package compare\n\n")
	b.WriteString("// fallbackTable is what separate processes on real machines showed beyond their\n")
	b.WriteString("// own data, per family and band (FALLBACK.md says from which runs).\n")
	b.WriteString("var fallbackTable = []fallbackEntry{\n")
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

var bandConst = [...]string{"bandSmall", "bandMedium", "bandLarge", "bandLarger", "bandHuge"}

// fallbackMarkdown renders FALLBACK.md's fallback table.
func fallbackMarkdown(cells []measured) string {
	var b strings.Builder
	b.WriteString("| family | size | method since | figure-pairs | largest change | beyond the runs' own floor | fallback (× " + fmt.Sprint(FallbackMargin) + ") | the largest beyond it, where |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---|\n")
	for _, m := range cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s |\n", m.Family, m.Band, m.Method, m.Figures, pct(m.Largest), pct(m.Beyond),
			pct(FallbackMargin*m.Beyond), strings.ReplaceAll(m.Where, "|", `\|`))
	}
	b.WriteString("\nThe sources (paths from the repository's root; each file a separate process):\n\n")
	b.WriteString("| machine | runs | what |\n|---|---|---|\n")
	for _, s := range fallbackSources {
		fmt.Fprintf(&b, "| %s | `%s/` %s | %s |\n", s.machine, s.dir, strings.Join(s.files, ", "), s.what)
	}
	return b.String()
}

func pct(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }

// replaceSection replaces what lies between FALLBACK.md's markers
// "<!-- begin NAME -->" and "<!-- end NAME -->".
func replaceSection(t *testing.T, doc, name, body string) string {
	begin, end := "<!-- begin "+name+" -->\n", "<!-- end "+name+" -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("FALLBACK.md has no section %q between %q and %q", name, begin, end)
	}
	return doc[:i+len(begin)] + body + doc[j:]
}

// TestFallbackTable derives the fallback table from its sources and holds
// fallback_table.go and FALLBACK.md to it: the table is what those runs
// show, and changes only with them (-update-fallback rewrites both).
func TestFallbackTable(t *testing.T) {
	cells := passSources(t).cells
	if len(cells) == 0 {
		t.Fatal("no cell measured")
	}
	src := fallbackGoSource(t, cells)
	doc, err := os.ReadFile("FALLBACK.md")
	if err != nil {
		t.Fatal(err)
	}
	newDoc := replaceSection(t, string(doc), "fallback", fallbackMarkdown(cells))
	if *updateFallback {
		if err := os.WriteFile("fallback_table.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("FALLBACK.md", []byte(newDoc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("fallback_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, src) {
		t.Error("fallback_table.go is not what its sources give: go test ./compare -run TestFallbackTable -update-fallback")
	}
	if newDoc != string(doc) {
		t.Error("FALLBACK.md's fallback table is not what its sources give: go test ./compare -run TestFallbackTable -update-fallback")
	}
	// The hold-outs are no source (h100x2/2026-11-25-d, a set under the
	// reference set's folder, is another lease, on another machine).
	for _, s := range fallbackSources {
		for _, h := range fallbackHoldOuts {
			if s.dir == h || (strings.HasPrefix(s.dir, h+"/") && !strings.HasPrefix(s.dir, h+"/call")) {
				t.Errorf("%s is a source of the fallback; %s is its hold-out", s.dir, h)
			}
		}
	}
}
