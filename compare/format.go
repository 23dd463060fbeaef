package compare

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Formats returns the output formats Write knows.
func Formats() []string { return []string{"text", "markdown", "csv", "json"} }

// Write writes the comparison in a format of Formats ("md" is markdown).
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

// WriteText writes the comparison as aligned text tables, one per section.
func WriteText(w io.Writer, r *Result) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, l := range headerLines(r) {
		fmt.Fprintln(tw, l)
	}
	names := shortNames(r)
	for _, s := range sections(r) {
		fmt.Fprintf(tw, "\n%s\n%s\n", s.title, strings.Join(s.header(names, ""), "\t"))
		for i := range s.rows {
			fmt.Fprintln(tw, strings.Join(s.cells(i), "\t"))
		}
	}
	fmt.Fprintf(tw, "\n%s\n", summaryLine(r))
	for _, warn := range r.Warnings {
		fmt.Fprintf(tw, "note: %s\n", warn)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// tabwriter pads a row's empty last cells too: lines end with their text.
	bw := bufio.NewWriter(w)
	for line := range bytes.Lines(b.Bytes()) {
		bw.Write(bytes.TrimRight(line, " \n"))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// WriteMarkdown writes the comparison as Markdown tables.
func WriteMarkdown(w io.Writer, r *Result) error {
	bw := bufio.NewWriter(w)
	esc := strings.NewReplacer("|", `\|`, "_", `\_`, "*", `\*`)
	escAll := func(ss []string) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = esc.Replace(s)
		}
		return out
	}
	tableRow := func(cells []string) { fmt.Fprintf(bw, "| %s |\n", strings.Join(cells, " | ")) }
	fmt.Fprint(bw, "# p2pbench comparison\n\n")
	for _, l := range headerLines(r) {
		// The differences get a table of their own below.
		if !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "What differs") {
			fmt.Fprintf(bw, "%s\n\n", esc.Replace(l))
		}
	}
	names := shortNames(r)
	if len(r.Differences) > 0 {
		fmt.Fprint(bw, "What differs between the runs:\n\n")
		tableRow(append([]string{""}, escAll(names)...))
		tableRow(slices.Repeat([]string{"---"}, len(names)+1))
		for _, d := range r.Differences {
			tableRow(escAll(append([]string{d.What}, d.Values...)))
		}
	}
	for _, s := range sections(r) {
		fmt.Fprintf(bw, "\n## %s\n\n", esc.Replace(s.title))
		head := escAll(s.header(names, "p"))
		align := slices.Repeat([]string{"---:"}, len(head))
		align[0] = "---"
		for k := range len(names) - 1 {
			align[s.changeColumn(k)+1] = "---" // p
		}
		if s.hasParams {
			align[2] = "---"
		}
		tableRow(head)
		tableRow(align)
		for i, row := range s.rows {
			cells := escAll(s.cells(i))
			for k, c := range row.Changes {
				if c.Regression {
					cells[s.changeColumn(k)] = "**" + cells[s.changeColumn(k)] + "**"
				}
			}
			tableRow(cells)
		}
	}
	fmt.Fprintf(bw, "\n%s\n", summaryLine(r))
	for _, warn := range r.Warnings {
		fmt.Fprintf(bw, "\n> note: %s\n", esc.Replace(warn))
	}
	return bw.Flush()
}

// WriteCSV writes one line per figure and run.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"test", "engine", "direction", "part", "src", "dst", "size_bytes", "params", "unit", "run",
		"n", "units", "median", "ci_lo", "ci_hi", "ci_confidence", "failed", "change_pct", "p", "tested_on", "significant", "floor", "floor_from", "regression", "improvement"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, row := range r.Rows {
		for i, c := range row.Cells {
			rec := []string{string(row.Test), string(row.Engine), string(row.Direction), string(row.Part),
				strconv.Itoa(row.Src), strconv.Itoa(row.Dst), strconv.FormatUint(row.Size, 10), row.Params,
				string(row.Unit), r.Names[i]}
			if !c.Present {
				rec = append(rec, "", "", "", "", "", "", "absent")
			} else {
				rec = append(rec, strconv.Itoa(c.N), strconv.Itoa(c.Units), f(c.Center), f(c.Lo), f(c.Hi), f(c.Confidence), c.Failed)
			}
			if i == 0 || !row.Changes[i-1].Valid {
				rec = append(rec, "", "", "", "", "", "", "", "")
			} else {
				ch := row.Changes[i-1]
				p := ""
				if ch.Tested {
					p = f(ch.P)
				}
				rec = append(rec, f(ch.Pct), p, ch.TestedOn, strconv.FormatBool(ch.Significant), f(ch.Floor), ch.FloorFrom,
					strconv.FormatBool(ch.Regression), strconv.FormatBool(ch.Improvement))
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

// headerLines are the runs, what differs between them, and what was
// compared.
func headerLines(r *Result) []string {
	names := shortNames(r)
	var lines []string
	for i, n := range r.Names {
		role := "base"
		if i > 0 {
			role = "new"
		}
		if r.Runs[i] > 1 {
			role += fmt.Sprintf(", %d runs", r.Runs[i])
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
			shared := 0
			for _, row := range r.Rows {
				if row.Cells[i+1].Present {
					shared++
				}
			}
			lines = append(lines, fmt.Sprintf("Compared on the %d figures the runs share; %d only in %s, %d only in %s.",
				shared, r.OnlyInBase[i], names[0], r.OnlyInOther[i], names[i+1]))
		}
	}
	return append(lines,
		fmt.Sprintf("Medians ± their intervals: where a figure has two rounds (or runs) or more, where another run's median is expected (95%%, from the spread of their medians); else the median's %.0f%% confidence interval from the samples.", 100*r.Confidence),
		fmt.Sprintf("Changes tested with the Mann–Whitney U test at alpha %g (~: no significant change): on the rounds' (or runs') medians where both sides have %d or more, else on the samples.", r.Alpha, MinUnits),
		fmt.Sprintf("REGRESSION/better: significant and at least the noise floor: %g × the run-to-run CV (pooled over both sides and the figure's pairs and neighbouring sizes), "+
			"or for runs without rounds what such a figure moved between processes on the 2× H200, or for figures known to keep a mode for a whole process (copy-engine copies between processes on one GPU through legacy handles) the modes' spread; never below the %g%% threshold.", r.FloorMultiple, 100*r.Threshold))
}

// summaryLine counts the flagged changes.
func summaryLine(r *Result) string {
	var sig, reg, imp int
	for _, row := range r.Rows {
		for _, c := range row.Changes {
			sig += b2i(c.Significant)
			reg += b2i(c.Regression)
			imp += b2i(c.Improvement)
		}
	}
	return fmt.Sprintf("%d figures compared: %d significant changes, %d regressions and %d improvements beyond their noise floor (at least %g%%).",
		len(r.Rows), sig, reg, imp, 100*r.Threshold)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shortNames are the column names of the sides: file names without their
// directory, or letters when those clash or a side has several runs.
func shortNames(r *Result) []string {
	names := make([]string, len(r.Names))
	seen := map[string]bool{}
	clash := false
	for i, n := range r.Names {
		names[i] = filepath.Base(n)
		clash = clash || seen[names[i]] || r.Runs[i] > 1
		seen[names[i]] = true
	}
	if clash {
		for i := range names {
			names[i] = string(rune('A' + i%26))
		}
	}
	return names
}

// The cells of the tables, each written once for every format that shows it.

// pairText is "0→1", with "*" for the host or all devices.
func pairText(src, dst int) string {
	end := func(d int) string {
		if d < 0 {
			return "*"
		}
		return strconv.Itoa(d)
	}
	return end(src) + "→" + end(dst)
}

// cellText is "393.9 ±0.1%", or why there is no value.
func cellText(c Cell) string {
	switch {
	case !c.Present:
		return "—"
	case c.Failed != "":
		return c.Failed
	}
	return valueText(c.Center) + " ±" + c.Spread
}

// valueText is a median with more decimals the smaller it is.
func valueText(v float64) string {
	switch a := max(v, -v); {
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

// pText is the U test's p-value, what it was tested on and how many, and
// the noise floor: "p=0.008 n=5 rounds floor 2.1%", "n=20+10 samples"
// when the sizes differ.
func pText(c Change, base, other Cell) string {
	if !c.Valid {
		return ""
	}
	floor := fmt.Sprintf("floor %s%%", strconv.FormatFloat(100*c.Floor, 'g', 2, 64))
	if !c.Tested {
		return floor
	}
	nb, no := base.N, other.N
	if unitsTest(c) {
		nb, no = base.Units, other.Units
	}
	n := strconv.Itoa(nb)
	if nb != no {
		n += "+" + strconv.Itoa(no)
	}
	return fmt.Sprintf("p=%.3f n=%s %s %s", c.P, n, c.TestedOn, floor)
}
