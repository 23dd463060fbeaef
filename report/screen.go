package report

import (
	"strings"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/results"
)

// ScreenWidth is the most columns the screen that ends all takes: lines
// longer than it are wrapped, a table's last column under itself.
const ScreenWidth = 100

// Screen returns the one screen that ends all, the verdict first: the
// verdict and what it rests on, the machine, one short line per check,
// the headline matrix, what to do next and where the rest is (the results
// file at path). It fits ScreenWidth columns; the reasons in full are in
// the report and in show.
func Screen(run *results.Run, path string) *Document {
	d := newDocument(run, "")
	d.width = ScreenWidth
	v := run.Verdict
	if v == nil {
		d.verdict(results.StatusNotJudged, "This run has no verdict: p2pbench check judges its results file.")
	} else {
		d.verdict(v.Status, verdictLine(v))
	}
	facts := []string{machineLine(run)}
	if v != nil {
		// The expectations' name without what it says of them in brackets,
		// which the report gives.
		name, _, _ := strings.Cut(v.Expectations.Name, " (")
		judged := "Judged against: " + name
		if v.Expectations.Conservative {
			judged += ", loosely in part (see the report)"
		}
		facts = append(facts, judged)
	}
	d.para("%s", strings.Join(facts, "\n"))
	if v != nil {
		d.table(checksTable(v, true))
		if t := headlineMatrix(Headlines(run), v); t != nil {
			t.title, _, _ = strings.Cut(t.title, ", against")
			d.table(t)
		}
		failedLines(d, v)
	}
	d.blocks = append(d.blocks, Where(path).blocks...)
	return d
}

// wrap breaks a line longer than width columns at spaces, each further line
// indented as the first; a word longer than the width stays whole, and so
// does a line indented as a command to copy ("  p2pbench show …").
func wrap(line string, width int) []string {
	body := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(body)]
	if width <= 0 || utf8.RuneCountInString(line) <= width || strings.HasPrefix(body, "p2pbench ") && indent != "" {
		return []string{line}
	}
	var out []string
	cur := indent
	for _, w := range strings.Fields(body) {
		switch {
		case cur == indent:
			cur += w
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) <= width:
			cur += " " + w
		default:
			out = append(out, cur)
			cur = indent + w
		}
	}
	return append(out, cur)
}

// Wrap breaks every line of s longer than width columns at spaces (see
// wrap), for messages printed beside the screen.
func Wrap(s string, width int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		out = append(out, wrap(l, width)...)
	}
	return strings.Join(out, "\n")
}
