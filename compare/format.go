package compare

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/results"
)

// Formats returns the output formats Write knows.
func Formats() []string { return []string{"text", "markdown", "csv", "json"} }

// Write writes the comparison in a format of Formats.
func Write(w io.Writer, r *Result, format string) error {
	switch format {
	case "text", "":
		return WriteText(w, r)
	case "markdown", "md":
		return WriteMarkdown(w, r)
	case "csv":
		return WriteCSV(w, r)
	case "json":
		return WriteJSON(w, r)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats(), ", "))
}

// section is the rows of one test, engine, direction, part and unit: the
// rows of a section differ only by pair, size and params.
type section struct {
	title string
	rows  []*Row
	// params[i] is row i's params less those every row of the section
	// shares, which go in the title.
	params    []string
	hasParams bool
}

// sectionKey is what puts rows in one section.
type sectionKey struct {
	test, engine, direction, part, unit string
	lowerIsBetter                       bool
}

func sections(r *Result) []*section {
	var out []*section
	byKey := map[sectionKey]*section{}
	byTitle := map[string]*section{}
	for i := range r.Rows {
		row := &r.Rows[i]
		k := sectionKey{row.Test, row.Engine, row.Direction, row.Part, row.Unit, row.LowerIsBetter}
		s := byKey[k]
		if s == nil {
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
			// Different fields can make the same title: one section.
			title := strings.Join(parts, " · ") + "  [" + row.Unit + ", " + better + "]"
			if s = byTitle[title]; s == nil {
				s = &section{title: title}
				byTitle[title] = s
				out = append(out, s)
			}
			byKey[k] = s
		}
		s.rows = append(s.rows, row)
	}
	for _, s := range out {
		s.splitParams()
	}
	return out
}

// splitParams moves the params every row shares into the title. Rows of a
// section mostly have the same few params: each different one is split
// once.
func (s *section) splitParams() {
	distinct := map[string]int{} // rows with each params
	for _, row := range s.rows {
		distinct[row.Params]++
	}
	count := map[string]int{}
	for params, n := range distinct {
		if params == "" {
			continue
		}
		for _, kv := range strings.Split(params, ",") {
			count[kv] += n
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
	rest := map[string]string{}
	for params := range distinct {
		var kept []string
		if params != "" {
			for _, kv := range strings.Split(params, ",") {
				if count[kv] != len(s.rows) {
					kept = append(kept, kv)
				}
			}
		}
		rest[params] = strings.Join(kept, ",")
		s.hasParams = s.hasParams || rest[params] != ""
	}
	s.params = make([]string, len(s.rows))
	for i, row := range s.rows {
		s.params[i] = rest[row.Params]
	}
}

// shortNames are the column names of the runs: file names without their
// directory, or letters when those clash.
func shortNames(r *Result) []string {
	names := make([]string, len(r.Names))
	seen := map[string]bool{}
	clash := false
	for i, n := range r.Names {
		names[i] = filepath.Base(n)
		clash = clash || seen[names[i]]
		seen[names[i]] = true
	}
	if clash {
		for i := range names {
			names[i] = string(rune('A' + i%26))
		}
	}
	return names
}

// appendPair appends pairText(src, dst).
func appendPair(b []byte, src, dst int) []byte {
	end := func(b []byte, d int) []byte {
		if d < 0 {
			return append(b, '*')
		}
		return strconv.AppendInt(b, int64(d), 10)
	}
	return end(append(end(b, src), "→"...), dst)
}

func pairText(src, dst int) string {
	end := func(d int) string {
		if d < 0 {
			return "*"
		}
		return strconv.Itoa(d)
	}
	return end(src) + "→" + end(dst)
}

// cellText is "393.9 ±0%", or why there is no value.
func cellText(c Cell) string {
	switch {
	case !c.Present:
		return "—"
	case c.Failed != "":
		return c.Failed
	}
	return formatValue(c.Center) + " ±" + c.Spread
}

// appendSpread appends the confidence interval's half-width relative to
// the center, as benchmath's Summary.PctRangeString defines it, with one
// decimal below 10%: bandwidth intervals are often a few tenths of a
// percent, which whole percents would all show as 0%.
func appendSpread(b []byte, center, lo, hi float64) []byte {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return append(b, "∞"...)
	}
	if center == 0 {
		return append(b, "0%"...)
	}
	if (center > 0) != (lo > 0) || (center > 0) != (hi > 0) {
		return append(b, '?')
	}
	v := 100 * math.Max(hi/center-1, 1-lo/center)
	if v < 10 {
		return append(strconv.AppendFloat(b, v, 'f', 1, 64), '%')
	}
	return append(strconv.AppendFloat(b, v, 'f', 0, 64), '%')
}

// appendCell appends cellText(c).
func appendCell(b []byte, c Cell) []byte {
	switch {
	case !c.Present:
		return append(b, "—"...)
	case c.Failed != "":
		return append(b, c.Failed...)
	}
	b = appendValue(b, c.Center)
	b = append(b, " ±"...)
	return append(b, c.Spread...)
}

func formatValue(v float64) string { return string(appendValue(nil, v)) }

// appendValue appends a median, with more decimals the smaller it is.
func appendValue(b []byte, v float64) []byte {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1000:
		return strconv.AppendFloat(b, v, 'f', 0, 64)
	case a >= 100:
		return strconv.AppendFloat(b, v, 'f', 1, 64)
	case a >= 10:
		return strconv.AppendFloat(b, v, 'f', 2, 64)
	}
	return strconv.AppendFloat(b, v, 'g', 4, 64)
}

// changeText is benchstat's: "~" for no significant change, else the
// percentage, flagged when beyond the threshold.
func changeText(c Change) string {
	switch {
	case !c.Valid:
		return ""
	case !c.Tested:
		return fmt.Sprintf("%+.2f%% (untested)", c.Pct)
	case !c.Significant:
		return "~"
	case c.Regression:
		return fmt.Sprintf("%+.2f%% REGRESSION", c.Pct)
	case c.Improvement:
		return fmt.Sprintf("%+.2f%% better", c.Pct)
	}
	return fmt.Sprintf("%+.2f%%", c.Pct)
}

// appendChange appends changeText(c).
func appendChange(b []byte, c Change) []byte {
	switch {
	case !c.Valid:
		return b
	case !c.Tested:
		return append(appendPct(b, c.Pct), " (untested)"...)
	case !c.Significant:
		return append(b, '~')
	case c.Regression:
		return append(appendPct(b, c.Pct), " REGRESSION"...)
	case c.Improvement:
		return append(appendPct(b, c.Pct), " better"...)
	}
	return appendPct(b, c.Pct)
}

// appendPct appends pct as fmt's %+.2f%% does.
func appendPct(b []byte, pct float64) []byte {
	if math.IsInf(pct, 0) || math.IsNaN(pct) {
		return fmt.Appendf(b, "%+.2f%%", pct)
	}
	if !math.Signbit(pct) {
		b = append(b, '+')
	}
	return append(strconv.AppendFloat(b, pct, 'f', 2, 64), '%')
}

func pText(c Change, nBase, nOther int) string {
	return string(appendP(make([]byte, 0, 20), c, nBase, nOther))
}

// appendP appends pText(c, nBase, nOther).
func appendP(b []byte, c Change, nBase, nOther int) []byte {
	if !c.Valid || !c.Tested {
		return b
	}
	b = append(b, "p="...)
	b = strconv.AppendFloat(b, c.P, 'f', 3, 64)
	b = append(b, " n="...)
	b = strconv.AppendInt(b, int64(nBase), 10)
	if nBase != nOther {
		b = append(b, '+')
		b = strconv.AppendInt(b, int64(nOther), 10)
	}
	return b
}

// header lines: the runs, what differs, and what was compared.
func headerLines(r *Result) []string {
	names := shortNames(r)
	var lines []string
	for i, n := range r.Names {
		role := "base"
		if i > 0 {
			role = "new"
		}
		if names[i] != filepath.Base(n) {
			lines = append(lines, fmt.Sprintf("%s: %s (%s)", names[i], n, role))
		} else {
			lines = append(lines, fmt.Sprintf("%s (%s)", n, role))
		}
	}
	if len(r.Differences) == 0 {
		lines = append(lines, "The runs' machines and software are the same (host, GPUs, driver, CUDA, p2pbench, topology).")
	} else {
		lines = append(lines, "What differs between the runs:")
		for _, d := range r.Differences {
			lines = append(lines, fmt.Sprintf("  %-10s %s", d.What+":", strings.Join(d.Values, "  |  ")))
		}
	}
	for i := range r.OnlyInBase {
		if r.OnlyInBase[i]+r.OnlyInOther[i] > 0 {
			lines = append(lines, fmt.Sprintf("Compared on the %d figures the runs share; %d only in %s, %d only in %s.",
				countShared(r, i), r.OnlyInBase[i], names[0], r.OnlyInOther[i], names[i+1]))
		}
	}
	lines = append(lines, fmt.Sprintf("Medians with their %.0f%% confidence intervals; changes tested with the Mann–Whitney U test at alpha %g (~: no significant change); REGRESSION/better: significant and at least %g%%.",
		100*r.Confidence, r.Alpha, 100*r.Threshold))
	return lines
}

func countShared(r *Result, i int) int {
	n := 0
	for _, row := range r.Rows {
		if row.Cells[i+1].Present {
			n++
		}
	}
	return n
}

// summaryLine counts the flagged changes.
func summaryLine(r *Result) string {
	var sig, reg, imp int
	for _, row := range r.Rows {
		for _, c := range row.Changes {
			if c.Significant {
				sig++
			}
			if c.Regression {
				reg++
			}
			if c.Improvement {
				imp++
			}
		}
	}
	return fmt.Sprintf("%d figures compared: %d significant changes, %d regressions and %d improvements of %g%% or more.",
		len(r.Rows), sig, reg, imp, 100*r.Threshold)
}

// WriteText writes the comparison as aligned text tables, one per section.
func WriteText(w io.Writer, r *Result) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for _, l := range headerLines(r) {
		fmt.Fprintln(bw, l)
	}
	names := shortNames(r)
	for _, s := range sections(r) {
		fmt.Fprintf(bw, "\n%s\n", s.title)
		cols := 3 + 3*(len(names)-1)
		if s.hasParams {
			cols++
		}
		head := newTextTable(cols, 1)
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
		// Formatting hundreds of thousands of rows is worth every
		// processor: each formats a range, then the widths are merged.
		parts := parallel(len(s.rows), func(lo, hi int) *textTable {
			t := newTextTable(cols, hi-lo)
			sizes := map[uint64]string{}
			for ri := lo; ri < hi; ri++ {
				row := s.rows[ri]
				t.buf = appendPair(t.buf, row.Src, row.Dst)
				t.end()
				size, ok := sizes[row.Size]
				if !ok {
					size = results.FormatBytes(row.Size)
					sizes[row.Size] = size
				}
				t.cell(size)
				if s.hasParams {
					t.cell(s.params[ri])
				}
				t.buf = appendCell(t.buf, row.Cells[0])
				t.end()
				for i := 1; i < len(row.Cells); i++ {
					c := row.Changes[i-1]
					t.buf = appendCell(t.buf, row.Cells[i])
					t.end()
					t.buf = appendChange(t.buf, c)
					t.end()
					t.buf = appendP(t.buf, c, row.Cells[0].N, row.Cells[i].N)
					t.end()
				}
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

// textTable aligns columns two spaces apart (text/tabwriter does the same,
// but slower than a table of hundreds of thousands of rows can afford).
// Its cells' text is kept one after another in one buffer.
type textTable struct {
	cols   int
	buf    []byte
	ends   []int // where each cell's text ends in buf; rows have cols cells
	widths []int // of each column, in runes
}

// newTextTable makes a table of cols columns with room for rows rows of
// cells of about ten bytes.
func newTextTable(cols, rows int) *textTable {
	return &textTable{cols: cols, buf: make([]byte, 0, rows*cols*10), ends: make([]int, 0, rows*cols), widths: make([]int, cols)}
}

// end ends the cell whose text was appended to buf since the last.
func (t *textTable) end() {
	start := 0
	if len(t.ends) > 0 {
		start = t.ends[len(t.ends)-1]
	}
	col := len(t.ends) % t.cols
	t.widths[col] = max(t.widths[col], utf8.RuneCount(t.buf[start:]))
	t.ends = append(t.ends, len(t.buf))
}

func (t *textTable) cell(s string) {
	t.buf = append(t.buf, s...)
	t.end()
}

// spaces pads cells.
var spaces = []byte(strings.Repeat(" ", 256))

// write writes the rows padded to widths (every table of a section has the
// same columns).
func (t *textTable) write(w *bufio.Writer, widths []int) {
	start := 0
	for r := 0; r+t.cols <= len(t.ends); r += t.cols {
		ends := t.ends[r : r+t.cols]
		// Trailing empty cells are not padded.
		last := t.cols - 1
		for last >= 0 && ends[last] == cellStart(ends, last, start) {
			last--
		}
		for col := 0; col <= last; col++ {
			c := t.buf[cellStart(ends, col, start):ends[col]]
			w.Write(c)
			if col < last {
				for pad := widths[col] + 2 - utf8.RuneCount(c); pad > 0; pad -= len(spaces) {
					w.Write(spaces[:min(pad, len(spaces))])
				}
			}
		}
		w.WriteByte('\n')
		start = ends[t.cols-1]
	}
}

// cellStart is where cell col of a row starts, the row starting at start.
func cellStart(ends []int, col, start int) int {
	if col == 0 {
		return start
	}
	return ends[col-1]
}

// WriteMarkdown writes the comparison as Markdown tables.
func WriteMarkdown(w io.Writer, r *Result) error {
	bw := bufio.NewWriter(w)
	esc := strings.NewReplacer("|", `\|`, "_", `\_`, "*", `\*`)
	fmt.Fprintln(bw, "# p2pbench comparison")
	fmt.Fprintln(bw)
	for _, l := range headerLines(r) {
		// The differences get a table of their own below.
		if strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "What differs") {
			continue
		}
		fmt.Fprintf(bw, "%s\n\n", esc.Replace(l))
	}
	if len(r.Differences) > 0 {
		fmt.Fprintln(bw, "What differs between the runs:")
		fmt.Fprintln(bw)
		fmt.Fprintf(bw, "| | %s |\n|---|", strings.Join(escAll(esc, shortNames(r)), " | "))
		fmt.Fprintln(bw, strings.Repeat("---|", len(r.Names)))
		for _, d := range r.Differences {
			fmt.Fprintf(bw, "| %s | %s |\n", esc.Replace(d.What), strings.Join(escAll(esc, d.Values), " | "))
		}
	}
	names := shortNames(r)
	for _, s := range sections(r) {
		fmt.Fprintf(bw, "\n## %s\n\n", esc.Replace(s.title))
		head := []string{"pair", "size"}
		align := []string{"---", "---:"}
		if s.hasParams {
			head = append(head, "params")
			align = append(align, "---")
		}
		head = append(head, esc.Replace(names[0]))
		align = append(align, "---:")
		for i := 1; i < len(names); i++ {
			head = append(head, esc.Replace(names[i]), "vs "+esc.Replace(names[0]), "p")
			align = append(align, "---:", "---:", "---")
		}
		fmt.Fprintf(bw, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))
		for ri, row := range s.rows {
			cols := []string{pairText(row.Src, row.Dst), results.FormatBytes(row.Size)}
			if s.hasParams {
				cols = append(cols, esc.Replace(s.params[ri]))
			}
			cols = append(cols, cellText(row.Cells[0]))
			for i := 1; i < len(row.Cells); i++ {
				c := row.Changes[i-1]
				ct := changeText(c)
				if c.Regression {
					ct = "**" + ct + "**"
				}
				cols = append(cols, cellText(row.Cells[i]), ct, pText(c, row.Cells[0].N, row.Cells[i].N))
			}
			fmt.Fprintf(bw, "| %s |\n", strings.Join(cols, " | "))
		}
	}
	fmt.Fprintf(bw, "\n%s\n", summaryLine(r))
	for _, warn := range r.Warnings {
		fmt.Fprintf(bw, "\n> note: %s\n", esc.Replace(warn))
	}
	return bw.Flush()
}

func escAll(esc *strings.Replacer, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = esc.Replace(s)
	}
	return out
}

// WriteCSV writes one line per figure and run.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"test", "engine", "direction", "part", "src", "dst", "size_bytes", "params", "unit", "run",
		"n", "median", "ci_lo", "ci_hi", "failed", "change_pct", "p", "significant", "regression", "improvement"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, row := range r.Rows {
		for i, c := range row.Cells {
			rec := []string{row.Test, row.Engine, row.Direction, row.Part, strconv.Itoa(row.Src), strconv.Itoa(row.Dst),
				strconv.FormatUint(row.Size, 10), row.Params, row.Unit, r.Names[i]}
			if !c.Present {
				rec = append(rec, "", "", "", "", "absent")
			} else {
				rec = append(rec, strconv.Itoa(c.N), f(c.Center), f(c.Lo), f(c.Hi), c.Failed)
			}
			if i == 0 || !row.Changes[i-1].Valid {
				rec = append(rec, "", "", "", "", "")
			} else {
				ch := row.Changes[i-1]
				p := ""
				if ch.Tested {
					p = f(ch.P)
				}
				rec = append(rec, f(ch.Pct), p, strconv.FormatBool(ch.Significant), strconv.FormatBool(ch.Regression), strconv.FormatBool(ch.Improvement))
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the Result as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
