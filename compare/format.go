package compare

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/p2pbench/p2pbench/internal/units"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/p2pbench/p2pbench/results"
)

// Formats returns the output formats Write knows.
func Formats() []string { return []string{"text", "markdown", "csv", "json"} }

// CheckFormat fails for a format that Write does not know.
func CheckFormat(format string) error {
	if !slices.Contains(Formats(), format) && format != "md" {
		return fmt.Errorf("unknown format %q; the formats are %s", format, strings.Join(Formats(), ", "))
	}
	return nil
}

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

// WriteText writes the comparison as text: the runs, what was flagged and
// why, then aligned tables, one per section.
func WriteText(w io.Writer, r *Result) error {
	var b bytes.Buffer
	for _, l := range runLines(r) {
		fmt.Fprintln(&b, l)
	}
	b.WriteByte('\n')
	flaggedText(&b, r)
	b.WriteByte('\n')
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, l := range legendLines(r) {
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
	md := &mdWriter{bw: bufio.NewWriter(w), esc: strings.NewReplacer("|", `\|`, "_", `\_`, "*", `\*`)}
	fmt.Fprint(md.bw, "# p2pbench comparison\n\n")
	for _, l := range runLines(r) {
		// The differences get a table of their own below.
		if !strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "What differs") {
			fmt.Fprintf(md.bw, "%s\n\n", md.esc.Replace(l))
		}
	}
	names := shortNames(r)
	md.flagged(r)
	for _, l := range notMeasuredLines(r) {
		if strings.HasPrefix(l, "  ") {
			l = "- " + strings.TrimSpace(l)
		} else {
			l += "\n"
		}
		fmt.Fprintf(md.bw, "%s\n", md.esc.Replace(l))
	}
	for _, l := range legendLines(r) {
		fmt.Fprintf(md.bw, "%s\n\n", md.esc.Replace(l))
	}
	if len(r.Differences) > 0 {
		fmt.Fprint(md.bw, "What differs between the runs:\n\n")
		md.row(append([]string{""}, md.escAll(names)...))
		md.row(slices.Repeat([]string{"---"}, len(names)+1))
		for _, d := range r.Differences {
			md.row(md.escAll(append([]string{d.What}, d.Values...)))
		}
	}
	for _, s := range sections(r) {
		md.section(s, names)
	}
	fmt.Fprintf(md.bw, "\n%s\n", summaryLine(r))
	for _, warn := range r.Warnings {
		fmt.Fprintf(md.bw, "\n> note: %s\n", md.esc.Replace(warn))
	}
	return md.bw.Flush()
}

// mdWriter writes Markdown, escaping what the files hold.
type mdWriter struct {
	bw  *bufio.Writer
	esc *strings.Replacer
}

func (md *mdWriter) escAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = md.esc.Replace(s)
	}
	return out
}

// row writes a table's row.
func (md *mdWriter) row(cells []string) { fmt.Fprintf(md.bw, "| %s |\n", strings.Join(cells, " | ")) }

// flagged writes what was flagged and why, in a table.
func (md *mdWriter) flagged(r *Result) {
	fmt.Fprint(md.bw, "## Flagged\n\n")
	head, flagged, more := flaggedRows(r)
	fmt.Fprintf(md.bw, "%s\n\n", md.esc.Replace(head))
	if len(flagged) == 0 {
		return
	}
	md.row([]string{"", "figure", "change", "why", "method"})
	md.row([]string{"---", "---", "---:", "---", "---"})
	for _, f := range flagged {
		md.row(md.escAll([]string{f.verdict, f.figure, f.change, f.why, f.method}))
	}
	if more > 0 {
		fmt.Fprintf(md.bw, "\n… and %d more, marked in the tables below.\n", more)
	}
	fmt.Fprintln(md.bw)
}

// section writes a section's table, regressions in bold.
func (md *mdWriter) section(s *section, names []string) {
	fmt.Fprintf(md.bw, "\n## %s\n\n", md.esc.Replace(s.title))
	head := md.escAll(s.header(names, "p"))
	align := slices.Repeat([]string{"---:"}, len(head))
	align[0] = "---"
	for k := range len(names) - 1 {
		align[s.changeColumn(k)+1] = "---" // p
	}
	if s.hasParams {
		align[2] = "---"
	}
	if s.hasMethods {
		align[len(align)-1] = "---"
	}
	md.row(head)
	md.row(align)
	for i, row := range s.rows {
		cells := md.escAll(s.cells(i))
		for k, c := range row.Changes {
			if c.Regression {
				cells[s.changeColumn(k)] = "**" + cells[s.changeColumn(k)] + "**"
			}
		}
		md.row(cells)
	}
}

// WriteCSV writes one line per figure and run.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"test", "engine", "direction", "part", "src", "dst", "size_bytes", "params", "unit", "family", "run", "method",
		"n", "units", "median", "ci_lo", "ci_hi", "ci_confidence", "failed", "change_pct", "p", "tested_on", "process_units", "significant",
		"covered", "floor", "floor_from", "fallback", "fallback_from", "regression", "improvement", "lost", "not_measured"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, row := range r.Rows {
		for i, c := range row.Cells {
			rec := []string{string(row.Test), string(row.Engine), string(row.Direction), string(row.Part),
				strconv.Itoa(row.Src), strconv.Itoa(row.Dst), strconv.FormatUint(row.Size, 10), row.Params,
				string(row.Unit), row.Family, r.Names[i], row.Methods[i]}
			if !c.Present {
				rec = append(rec, "", "", "", "", "", "", "absent")
			} else {
				rec = append(rec, strconv.Itoa(c.N), strconv.Itoa(c.Units), f(c.Center), f(c.Lo), f(c.Hi), f(c.Confidence), c.Failed)
			}
			switch {
			case i > 0 && (row.Changes[i-1].Lost != "" || row.Changes[i-1].NotMeasured != ""):
				ch := row.Changes[i-1]
				rec = append(rec, "", "", "", "", "", "", "", "", "", "", strconv.FormatBool(ch.Regression), "false", ch.Lost, ch.NotMeasured)
			case i == 0 || !row.Changes[i-1].Valid:
				rec = append(rec, "", "", "", "", "", "", "", "", "", "", "", "", "", "")
			default:
				ch := row.Changes[i-1]
				p := ""
				if ch.Tested {
					p = f(ch.P)
				}
				rec = append(rec, f(ch.Pct), p, ch.TestedOn, strconv.FormatBool(ch.ProcessUnits), strconv.FormatBool(ch.Significant),
					strconv.FormatBool(ch.Covered), f(ch.Floor), ch.FloorFrom, f(ch.Fallback), ch.FallbackFrom,
					strconv.FormatBool(ch.Regression), strconv.FormatBool(ch.Improvement), "", "")
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

// runLines are the runs, what differs between them, what was compared, and
// which runs have no run-to-run estimate of their own.
func runLines(r *Result) []string {
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
	lines = append(lines, r.Caveats...)
	lines = append(lines, machineLines(r)...)
	if len(r.Differences) == 0 {
		lines = append(lines, "The runs' software and machine descriptions are the same (host name, GPU models, driver, CUDA, tool, topology).")
	} else {
		lines = append(lines, "What differs between the runs:")
		for _, d := range r.Differences {
			lines = append(lines, fmt.Sprintf("  %-10s %s", d.What+":", strings.Join(d.Values, "  |  ")))
		}
	}
	lines = append(lines, sharedLines(r, names)...)
	lines = append(lines, replicateLines(r, names)...)
	lines = append(lines, wideLines(r)...)
	lines = append(lines, methodLines(r)...)
	return append(lines, singleLines(r)...)
}

// sharedLines say, for each run whose figures differ from the baseline's,
// how many they share, how many only one of them has, and of the
// baseline's, how many the run lost and how many its plan left out.
func sharedLines(r *Result, names []string) []string {
	var lines []string
	for i := range r.OnlyInBase {
		if r.OnlyInBase[i]+r.OnlyInOther[i] == 0 {
			continue
		}
		shared, lost, omitted := 0, 0, 0
		for _, row := range r.Rows {
			shared += b2i(row.Cells[i+1].Present)
			lost += b2i(!row.Cells[i+1].Present && row.Changes[i].Lost != "")
		}
		for _, m := range r.NotMeasured {
			omitted += b2i(m.Side == i+1)
		}
		line := fmt.Sprintf("The runs share %d figures; %d only in %s", shared, r.OnlyInBase[i], names[0])
		if lost+omitted > 0 {
			line += fmt.Sprintf(" (%d missing from %s, %d its plan left out)", lost, names[i+1], omitted)
		}
		lines = append(lines, line+fmt.Sprintf(", %d only in %s.", r.OnlyInOther[i], names[i+1]))
	}
	return lines
}

// replicateLines name the runs with no run-to-run estimate of their own,
// whose floors add the fallback.
func replicateLines(r *Result, names []string) []string {
	var within, none []string
	for i, rep := range r.Replicates {
		switch rep {
		case ReplicatesWithin:
			within = append(within, names[i])
		case ReplicatesNone:
			none = append(none, names[i])
		}
	}
	if len(within)+len(none) == 0 {
		return nil
	}
	var what []string
	if len(within) > 0 {
		what = append(what, strings.Join(within, ", ")+" (rounds taken within one process)")
	}
	if len(none) > 0 {
		what = append(what, strings.Join(none, ", ")+" (no rounds)")
	}
	return []string{fmt.Sprintf("No run-to-run estimate of its own: %s. Nothing in such a run carries what differs between processes, "+
		"so each floor adds the fallback of the figure's family and size: %g × what separate processes moved beyond their own data "+
		"on other machines (compare/FALLBACK.md).", strings.Join(what, "; "), r.FallbackMargin)}
}

// methodLines say how many figures another method measured, and whether
// their changes are gated, and which runs' methods are not known.
func methodLines(r *Result) []string {
	var lines []string
	if n := methodChanges(r); n > 0 {
		gate := "not gated (--across-methods gates them): a build's new way of measuring is no change of the machine"
		if r.AcrossMethods {
			gate = "gated all the same (--across-methods)"
		}
		lines = append(lines, fmt.Sprintf("%d figures were measured by another method (another tool, SM kernel variant or grid, copy call, queue, or a change of how p2pbench measures): "+
			"compared on what they measure, each with what changed beside it; their changes %s.", n, gate))
	}
	return append(lines, unknownMethodLines(r)...)
}

// singleLines say how many figures are single values on a side: shown,
// never gated.
func singleLines(r *Result) []string {
	single := 0
	for _, row := range r.Rows {
		single += b2i(slices.ContainsFunc(row.Changes, func(c Change) bool { return c.Ungated == ungatedSingle }))
	}
	if single == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d figures are single values on a side (an import's, or one sample): shown, never gated: one value cannot tell noise from a change.", single)}
}

// wideLines name the families whose floors are wide (Result.WideFloors):
// the changes the gate cannot see.
func wideLines(r *Result) []string {
	if len(r.WideFloors) == 0 {
		return nil
	}
	p := func(f float64) string { return strconv.FormatFloat(100*f, 'g', 2, 64) + "%" }
	var fams []string
	fallback := false
	for _, w := range r.WideFloors {
		floor := p(w.Least)
		if p(w.Most) != floor {
			floor += "–" + p(w.Most)
		}
		fams = append(fams, fmt.Sprintf("%s %s %s", w.Family, results.FormatBytes(w.Size), floor))
		fallback = fallback || w.Fallback > 0
	}
	line := fmt.Sprintf("Wide floors, at each family's largest size: %s. A smaller change of these figures is not flagged: "+
		"their rounds spread that much, or separate processes of one machine (or machines of one kind) moved them that much beyond it "+
		"(compare/FALLBACK.md lists the smallest change caught, family by family).", strings.Join(fams, ", "))
	if fallback {
		line += " Three runs a side (compare a1 a2 a3 -- b1 b2 b3) hold them to those runs' own spread, without the fallback."
	}
	return []string{line}
}

// legendLines say how to read the tables.
func legendLines(r *Result) []string {
	return []string{
		fmt.Sprintf("Medians ± their intervals: where a figure has two rounds (or runs) or more, where another run's median is expected (95%%, from the spread of their medians); else the median's %.0f%% confidence interval from the samples of one run.", 100*r.Confidence),
		fmt.Sprintf("Changes tested with the Mann–Whitney U test at alpha %g (~: no significant change) on independent units only, never a run's samples: the rounds' medians (of every run of a side), or the runs' medians for runs without rounds, %d a side or more; with fewer than %d units a side, untested.", r.Alpha, MinUnits, MinUnits),
		fmt.Sprintf("REGRESSION/better: at least the noise floor, and significant where tested, the new median outside the base's units' range and the base's outside the new's. "+
			"The floor is %g × the CV of the units (pooled over both sides and the figure's pairs and neighbouring sizes) where they carry what differs between processes "+
			"(rounds of runs with process replicates, or %d separate runs a side or more); otherwise that of the rounds (or the runs' spread of samples) plus the fallback of the figure's family and size; never below the %g%% threshold.", r.FloorMultiple, MinUnits, 100*r.Threshold),
	}
}

// methodChanges counts the rows whose sides measured by different methods.
func methodChanges(r *Result) int {
	n := 0
	for _, row := range r.Rows {
		n += b2i(row.MethodChanged)
	}
	return n
}

// compared counts the rows with a change in some side: a change of the
// median, or a figure lost.
func compared(r *Result) int {
	n := 0
	for _, row := range r.Rows {
		n += b2i(slices.ContainsFunc(row.Changes, func(c Change) bool { return c.Valid || c.Lost != "" }))
	}
	return n
}

// summaryLine counts the flagged changes, and says what was not compared.
func summaryLine(r *Result) string {
	var sig, reg, imp, untested, lost int
	for _, row := range r.Rows {
		for _, c := range row.Changes {
			sig += b2i(c.Significant)
			reg += b2i(c.Regression)
			imp += b2i(c.Improvement)
			untested += b2i(c.Valid && !c.Tested)
			lost += b2i(c.Lost != "")
		}
	}
	n := compared(r)
	line := fmt.Sprintf("%d figures compared: %d significant changes, %d regressions and %d improvements beyond their noise floor (at least %g%%).",
		n, sig, reg, imp, 100*r.Threshold)
	if lost > 0 {
		line += fmt.Sprintf(" %d of the regressions are figures the baseline measured and a run failed or lacks.", lost)
	}
	if untested > 0 {
		line += fmt.Sprintf(" %d changes untested (a side without %d independent units): flagged on their floor alone.", untested, MinUnits)
	}
	if rest := len(r.Rows) - n; rest > 0 {
		line += fmt.Sprintf(" %d figures shared but not compared: no value on both sides, or a change beyond a percentage.", rest)
	}
	if len(r.NotMeasured) > 0 {
		line += fmt.Sprintf(" %d figures of the baseline not measured by a run whose plan differs: not gated.", len(r.NotMeasured))
	}
	return line
}

// cmpSize orders sizes as results.FormatBytes writes them.
func cmpSize(a, b string) int {
	x, errA := units.ParseSize(a)
	y, errB := units.ParseSize(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return cmp.Compare(x, y)
}

// notMeasuredLines name, per side, the baseline's figures the side's plan
// left out: "Not measured in b.json, its plan differs (not gated): 88
// figures of the baseline:", then the tests it did not measure at all,
// each test's sizes it did not measure, and each other reason with the
// tests it left out for it, with their counts.
func notMeasuredLines(r *Result) []string {
	names := shortNames(r)
	var lines []string
	for side := 1; side < len(r.Names); side++ {
		var whole []string
		var sizeTests []results.Test
		sizes := map[results.Test][]string{}
		sizeCount := map[results.Test]int{}
		var whys []string
		tests := map[string][]results.Test{}
		count := map[string]int{}
		total := 0
		for _, m := range r.NotMeasured {
			if m.Side != side {
				continue
			}
			total++
			if size, ok := strings.CutPrefix(m.Why, fmt.Sprintf("no %s at ", m.Test)); ok {
				if sizes[m.Test] == nil {
					sizeTests = append(sizeTests, m.Test)
				}
				if !slices.Contains(sizes[m.Test], size) {
					sizes[m.Test] = append(sizes[m.Test], size)
				}
				sizeCount[m.Test]++
				continue
			}
			k := m.Why + "\x00" + string(m.Test)
			if count[k] == 0 {
				if len(tests[m.Why]) == 0 {
					whys = append(whys, m.Why)
				}
				tests[m.Why] = append(tests[m.Why], m.Test)
			}
			count[k]++
		}
		if total == 0 {
			continue
		}
		lines = append(lines, fmt.Sprintf("Not measured in %s, its plan differs (not gated): %d figure%s of the baseline:", names[side], total, units.Plural(total, "", "s")))
		counted := func(why string) string {
			parts := make([]string, len(tests[why]))
			for i, t := range tests[why] {
				parts[i] = fmt.Sprintf("%s (%d)", t, count[why+"\x00"+string(t)])
			}
			return strings.Join(parts, ", ")
		}
		for _, why := range whys {
			if len(tests[why]) == 1 && why == wholeTest(tests[why][0]) {
				t := tests[why][0]
				whole = append(whole, fmt.Sprintf("%s (%d)", t, count[why+"\x00"+string(t)]))
			}
		}
		if len(whole) > 0 {
			lines = append(lines, "  tests not in its plan: "+strings.Join(whole, ", "))
		}
		for _, t := range sizeTests {
			slices.SortFunc(sizes[t], cmpSize)
			lines = append(lines, fmt.Sprintf("  %s: %d (sizes not in its plan: %s)", t, sizeCount[t], strings.Join(sizes[t], ", ")))
		}
		for _, why := range whys {
			if len(tests[why]) == 1 && why == wholeTest(tests[why][0]) {
				continue
			}
			lines = append(lines, fmt.Sprintf("  %s: %s", why, counted(why)))
		}
	}
	return lines
}

// maxFlaggedLines is how many flagged changes the lead of the text and
// Markdown outputs lists; the tables mark every one.
const maxFlaggedLines = 50

// flagged is one flagged change, in words.
type flagged struct {
	verdict, figure, change, why, method string
}

// flaggedRows are the lead's first line and its flagged changes, regressions
// first, each kind in the rows' order, with how many more there are.
func flaggedRows(r *Result) (head string, out []flagged, more int) {
	names := shortNames(r)
	var regs, imps []flagged
	for _, row := range r.Rows {
		for k, ch := range row.Changes {
			if !ch.Regression && !ch.Improvement {
				continue
			}
			f := flagged{verdict: "better", figure: rowText(row), change: fmt.Sprintf("%+.2f%%", ch.Pct), why: whyText(ch, row.Cells[0], row.Cells[k+1])}
			if ch.Lost != "" {
				f.change = ch.Lost
				f.why = "measured in the baseline (" + valueText(row.Cells[0].Center) + " " + string(row.Unit) + "): a lost figure is a regression whatever the noise"
			}
			if len(names) > 2 {
				f.figure += " (" + names[k+1] + ")"
			}
			if row.MethodChanged {
				f.method = methodText(row)
			}
			if ch.Regression {
				f.verdict = "REGRESSION"
				regs = append(regs, f)
			} else {
				imps = append(imps, f)
			}
		}
	}
	all := append(regs, imps...)
	n := compared(r)
	if len(all) == 0 {
		return fmt.Sprintf("Flagged: nothing. No change among the %d figures compared is beyond its noise floor, and no figure the baseline measured was lost.", n), nil, 0
	}
	head = fmt.Sprintf("Flagged: %d regression%s and %d improvement%s among the %d figures compared:", len(regs), units.Plural(len(regs), "", "s"), len(imps), units.Plural(len(imps), "", "s"), n)
	if len(all) > maxFlaggedLines {
		return head, all[:maxFlaggedLines], len(all) - maxFlaggedLines
	}
	return head, all, 0
}

// flaggedText writes the lead of the text output.
func flaggedText(b *bytes.Buffer, r *Result) {
	head, rows, more := flaggedRows(r)
	fmt.Fprintln(b, head)
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	for _, f := range rows {
		line := "  " + strings.Join([]string{f.verdict, f.figure, f.change, f.why}, "\t")
		if f.method != "" {
			line += "\tmethod " + f.method
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if more > 0 {
		fmt.Fprintf(b, "  … and %d more, marked in the tables below.\n", more)
	}
	for _, l := range notMeasuredLines(r) {
		fmt.Fprintln(b, l)
	}
}

// rowText names a row's figure in one line: "ce_write copy_engine write
// 0→1 512 MiB op=add".
func rowText(row Row) string {
	return strings.Join(strings.Fields(strings.Join([]string{string(row.Test), string(row.Engine), string(row.Direction), string(row.Part),
		PairText(row.Src, row.Dst), results.FormatBytes(row.Size), row.Params}, " ")), " ")
}

// whyText says why a change was flagged: its test and its floor.
func whyText(ch Change, base, other Cell) string {
	test := "untested (too few units)"
	if ch.Tested {
		test = fmt.Sprintf("p=%.3f on %d+%d rounds", ch.P, base.Units, other.Units)
		if ch.TestedOn == onRuns {
			test = fmt.Sprintf("p=%.3f on the runs' medians", ch.P)
		}
	}
	return test + ", floor " + floorText(ch)
}

// floorText is a floor and what set it: "2.1% (3 × the rounds' CV)".
func floorText(ch Change) string {
	p := func(f float64) string { return strconv.FormatFloat(100*f, 'g', 2, 64) + "%" }
	switch ch.FloorFrom {
	case fromRounds:
		return p(ch.Floor) + " (the rounds' CV, process replicates)"
	case fromRuns:
		return p(ch.Floor) + " (the runs' CV)"
	case fromThreshold:
		return p(ch.Floor) + " (the threshold)"
	case fromProcesses:
		return fmt.Sprintf("%s (what separate processes of its method moved, %s: its rounds are no units, paired by number)", p(ch.Floor), ch.FallbackFrom)
	case fromMachines:
		return fmt.Sprintf("%s (the runs' own %s + %s of %s)", p(ch.Floor), p(ch.Floor-ch.Fallback), p(ch.Fallback), ch.FallbackFrom)
	}
	return fmt.Sprintf("%s (the runs' own %s + fallback %s of %s)", p(ch.Floor), p(ch.Floor-ch.Fallback), p(ch.Fallback), ch.FallbackFrom)
}

// methodText says what changed of a row's method, per side where there
// are several: "variant=bulk → variant=v4_u4; since: …".
func methodText(row Row) string {
	var parts []string
	for k, c := range row.Changes {
		if c.MethodChange == "" {
			continue
		}
		if len(row.Changes) > 1 {
			parts = append(parts, fmt.Sprintf("run %d: %s", k+2, c.MethodChange))
		} else {
			parts = append(parts, c.MethodChange)
		}
	}
	return strings.Join(parts, " | ")
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

// PairText is "0→1", with "*" for the host or all devices.
func PairText(src, dst int) string {
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
// percentage, flagged when beyond the floor.
func changeText(c Change) string {
	switch {
	case c.Lost != "":
		return "REGRESSION: " + c.Lost
	case c.NotMeasured != "":
		return "not measured: " + c.NotMeasured
	case !c.Valid:
		return ""
	case c.Ungated != "":
		return fmt.Sprintf("%+.2f%% (%s: not gated)", c.Pct, c.Ungated)
	case c.Regression:
		return fmt.Sprintf("%+.2f%% REGRESSION", c.Pct)
	case c.Improvement:
		return fmt.Sprintf("%+.2f%% better", c.Pct)
	case c.Paired && !c.Consistent:
		return fmt.Sprintf("%+.2f%% (rounds paired by number moved both ways: no change)", c.Pct)
	case c.Paired:
		return fmt.Sprintf("%+.2f%% (rounds paired by number, every pair one way)", c.Pct)
	case !c.Tested:
		return fmt.Sprintf("%+.2f%% (untested)", c.Pct)
	case !c.Significant:
		return "~"
	case c.Covered:
		return fmt.Sprintf("%+.2f%% (within its units)", c.Pct)
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
		if c.Regression || c.Improvement {
			return "untested " + floor
		}
		return floor
	}
	if c.TestedOn == onRuns {
		return fmt.Sprintf("p=%.3f runs %s", c.P, floor)
	}
	nb, no := base.Units, other.Units
	n := strconv.Itoa(nb)
	if nb != no {
		n += "+" + strconv.Itoa(no)
	}
	return fmt.Sprintf("p=%.3f n=%s %s %s", c.P, n, c.TestedOn, floor)
}
