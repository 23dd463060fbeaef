package compare

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/synth"
)

// refSection, refSections, refWriteText and refTextTable are the text
// output as it was before WriteText formatted into bytes and sections()
// stopped building a title for every row: the reference
// TestWriteTextAgreesWithReference holds the faster code to, byte for byte.
type refSection struct {
	title string
	rows  []*Row
	// params[i] is row i's params less those every row of the section
	// shares, which go in the title.
	params    []string
	hasParams bool
}

func refSections(r *Result) []*refSection {
	var out []*refSection
	byTitle := map[string]*refSection{}
	for i := range r.Rows {
		row := &r.Rows[i]
		parts := []string{row.Test, row.Engine}
		if row.Direction != "" {
			parts = append(parts, row.Direction)
		}
		if row.Part != "" {
			parts = append(parts, row.Part)
		}
		better := "higher is better"
		if row.LowerIsBetter {
			better = "lower is better"
		}
		title := strings.Join(parts, " · ") + "  [" + row.Unit + ", " + better + "]"
		s := byTitle[title]
		if s == nil {
			s = &refSection{title: title}
			byTitle[title] = s
			out = append(out, s)
		}
		s.rows = append(s.rows, row)
	}
	for _, s := range out {
		s.splitParams()
	}
	return out
}

// splitParams moves the params every row shares into the title.
func (s *refSection) splitParams() {
	count := map[string]int{}
	for _, row := range s.rows {
		if row.Params == "" {
			continue
		}
		for _, kv := range strings.Split(row.Params, ",") {
			count[kv]++
		}
	}
	var common []string
	for kv, n := range count {
		if n == len(s.rows) {
			common = append(common, kv)
		}
	}
	sort.Strings(common)
	if len(common) > 0 {
		s.title += "  " + strings.Join(common, ",")
	}
	s.params = make([]string, len(s.rows))
	for i, row := range s.rows {
		var rest []string
		if row.Params != "" {
			for _, kv := range strings.Split(row.Params, ",") {
				if count[kv] != len(s.rows) {
					rest = append(rest, kv)
				}
			}
		}
		s.params[i] = strings.Join(rest, ",")
		s.hasParams = s.hasParams || s.params[i] != ""
	}
}

// refWriteText writes the comparison as aligned text tables, one per section.
func refWriteText(w io.Writer, r *Result) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for _, l := range headerLines(r) {
		fmt.Fprintln(bw, l)
	}
	names := shortNames(r)
	for _, s := range refSections(r) {
		fmt.Fprintf(bw, "\n%s\n", s.title)
		var head refTextTable
		head.cell("pair")
		head.cell("size")
		if s.hasParams {
			head.cell("params")
		}
		head.cell(names[0])
		for i := 1; i < len(names); i++ {
			head.cell(names[i])
			head.cell("vs " + names[0])
			head.cell("")
		}
		head.endRow()
		// Formatting hundreds of thousands of rows is worth every
		// processor: each formats a range, then the widths are merged.
		parts := parallel(len(s.rows), func(lo, hi int) *refTextTable {
			t := &refTextTable{}
			for ri := lo; ri < hi; ri++ {
				row := s.rows[ri]
				t.cell(pairText(row.Src, row.Dst))
				t.cell(results.FormatBytes(row.Size))
				if s.hasParams {
					t.cell(s.params[ri])
				}
				t.cell(cellText(row.Cells[0]))
				for i := 1; i < len(row.Cells); i++ {
					c := row.Changes[i-1]
					t.cell(cellText(row.Cells[i]))
					t.cell(changeText(c))
					t.cell(pText(c, row.Cells[0].N, row.Cells[i].N))
				}
				t.endRow()
			}
			return t
		})
		widths := head.widths
		for _, p := range parts {
			for i, w := range p.widths {
				widths[i] = max(widths[i], w)
			}
		}
		head.write(bw, widths)
		for _, p := range parts {
			p.write(bw, widths)
		}
	}
	fmt.Fprintf(bw, "\n%s\n", summaryLine(r))
	for _, warn := range r.Warnings {
		fmt.Fprintf(bw, "note: %s\n", warn)
	}
	return bw.Flush()
}

// refTextTable aligns columns two spaces apart (text/tabwriter does the same,
// but slower than a table of hundreds of thousands of rows can afford).
type refTextTable struct {
	cells  []string
	ends   []int // the end of each row in cells
	widths []int
}

func (t *refTextTable) cell(s string) {
	col := len(t.cells)
	if len(t.ends) > 0 {
		col -= t.ends[len(t.ends)-1]
	}
	w := utf8.RuneCountInString(s)
	if col == len(t.widths) {
		t.widths = append(t.widths, w)
	} else if w > t.widths[col] {
		t.widths[col] = w
	}
	t.cells = append(t.cells, s)
}

func (t *refTextTable) endRow() { t.ends = append(t.ends, len(t.cells)) }

// write writes the rows padded to widths (every table of a section has the
// same columns).
func (t *refTextTable) write(w *bufio.Writer, widths []int) {
	start := 0
	for _, end := range t.ends {
		row := t.cells[start:end]
		// Trailing empty cells are not padded.
		last := len(row) - 1
		for last >= 0 && row[last] == "" {
			last--
		}
		for col, c := range row[:last+1] {
			w.WriteString(c)
			if col < last {
				for n := utf8.RuneCountInString(c); n < widths[col]+2; n++ {
					w.WriteByte(' ')
				}
			}
		}
		w.WriteByte('\n')
		start = end
	}
}

// TestWriteTextAgreesWithReference writes comparisons of synthetic runs
// (two and three runs, failures, regressions, params) and of a made-up
// result with every kind of cell and change, and compares the text with
// the reference's.
func TestWriteTextAgreesWithReference(t *testing.T) {
	base := synth.New(synth.Options{GPUs: 4, Faults: true, Samples: 10})
	slow := synth.New(synth.Options{GPUs: 4, Seed: 3, Samples: 12})
	for i := range slow.Figures {
		f := &slow.Figures[i]
		if f.Src == 1 && len(f.Samples) > 0 {
			for j := range f.Samples {
				f.Samples[j] *= 0.8
			}
		}
	}
	third := synth.New(synth.Options{GPUs: 3, NoSweep: true, Seed: 4})
	var made []*Result
	for _, in := range [][]Input{
		{{"base.json", base}, {"new.json", slow}},
		{{"a/run.json", base}, {"b/run.json", slow}, {"c.json", third}},
	} {
		res, err := Compare(in, Options{Threshold: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, res)
	}
	made = append(made, oddResult())
	for i, res := range made {
		var got, want bytes.Buffer
		if err := WriteText(&got, res); err != nil {
			t.Fatal(err)
		}
		if err := refWriteText(&want, res); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.Bytes(), want.Bytes()
			at := 0
			for at < len(g) && at < len(w) && g[at] == w[at] {
				at++
			}
			t.Errorf("result %d: text differs from the reference at byte %d:\ngot:  %q\nwant: %q", i, at, g[max(0, at-80):min(len(g), at+80)], w[max(0, at-80):min(len(w), at+80)])
		}
	}
}

// oddResult has rows with every kind of cell and change, odd percentages
// included, and params some rows share.
func oddResult() *Result {
	r := &Result{Names: []string{"x/a.json", "y/a.json"}, OnlyInBase: []int{1}, OnlyInOther: []int{2}, Alpha: 0.05, Threshold: 0.05, Confidence: 0.95,
		Warnings: []string{"need >= 6 samples"}}
	cells := []Cell{{}, {Present: true, Failed: "ERR TIMEOUT"}, {Present: true, N: 20, Center: 1234.5, Lo: 1200, Hi: 1300, Spread: "5.3%"},
		{Present: true, N: 3, Center: 0.000123456, Spread: "∞"}, {Present: true, N: 20, Center: 99.99, Spread: "0.0%"}, {Present: true, N: 1, Center: 15, Spread: "?"}}
	changes := []Change{{}, {Valid: true, Pct: 3.14159}, {Valid: true, Tested: true, Pct: -0.004, P: 0.5},
		{Valid: true, Tested: true, Significant: true, Regression: true, Pct: -12.345, P: 0.0001},
		{Valid: true, Tested: true, Significant: true, Improvement: true, Pct: 7, P: 0.02},
		{Valid: true, Tested: true, Significant: true, Pct: math.Copysign(0, -1), P: 0.049},
		{Valid: true, Tested: true, Significant: true, Pct: math.Inf(1), P: 0},
		{Valid: true, Tested: true, Significant: true, Pct: math.NaN(), P: 1},
		{Valid: true, Tested: true, Significant: true, Pct: 0, P: 0.04}}
	params := []string{"", "op=add_u32", "op=add_u32,contended=true", "op=cas_u64,contended=true", "stride=128,working_set=1 MiB"}
	for i := 0; i < 200; i++ {
		test := []string{"ce_read", "atomic_tput", "lat_chase"}[i%3]
		p := params[i%len(params)]
		if test == "atomic_tput" {
			p = params[1+(i/3)%2] // op=add_u32 goes in the title
		}
		row := Row{Test: test, Engine: "sm", Direction: []string{"", "read"}[i%2], Part: []string{"", "total"}[i/100], Src: i%7 - 1, Dst: i % 5,
			Size: []uint64{4, 1 << 20, 3 << 29, 1536}[i%4], Params: p, Unit: results.UnitGBps, LowerIsBetter: i%3 == 2,
			Cells: []Cell{cells[i%len(cells)], cells[(i/3)%len(cells)]}, Changes: []Change{changes[i%len(changes)]}}
		if i%11 == 0 {
			row.Cells[0].N = 21
		}
		r.Rows = append(r.Rows, row)
	}
	return r
}
