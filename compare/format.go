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

func sections(r *Result) []*section {
	var out []*section
	byTitle := map[string]*section{}
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
			s = &section{title: title}
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
func (s *section) splitParams() {
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

func formatValue(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
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

func pText(c Change, nBase, nOther int) string {
	if !c.Valid || !c.Tested {
		return ""
	}
	b := make([]byte, 0, 20)
	b = append(b, "p="...)
	b = strconv.AppendFloat(b, c.P, 'f', 3, 64)
	b = append(b, " n="...)
	b = strconv.AppendInt(b, int64(nBase), 10)
	if nBase != nOther {
		b = append(b, '+')
		b = strconv.AppendInt(b, int64(nOther), 10)
	}
	return string(b)
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
		var head textTable
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
		parts := parallel(len(s.rows), func(lo, hi int) *textTable {
			t := &textTable{}
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

// textTable aligns columns two spaces apart (text/tabwriter does the same,
// but slower than a table of hundreds of thousands of rows can afford).
type textTable struct {
	cells  []string
	ends   []int // the end of each row in cells
	widths []int
}

func (t *textTable) cell(s string) {
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

func (t *textTable) endRow() { t.ends = append(t.ends, len(t.cells)) }

// write writes the rows padded to widths (every table of a section has the
// same columns).
func (t *textTable) write(w *bufio.Writer, widths []int) {
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
