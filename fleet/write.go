package fleet

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// Document is the fleet as a document of package report: what was read,
// the verdicts, the nodes that need attention, and for each machine type
// the nodes, links and figures below their peers and every class's
// distribution. With figures, each type's plots follow its tables (for
// Markdown and PDF). Tables that hold a simulated node say so in their
// titles; the others do not.
func (f *Fleet) Document(figures bool) *report.Document {
	nodes := fmt.Sprintf("%d node%s", len(f.Nodes), units.Plural(len(f.Nodes), "", "s"))
	d := report.NewDocument("p2pbench fleet: "+nodes, "fleet of "+nodes)
	switch {
	case f.Simulated > 0 && len(f.Nodes) == 1:
		d.SimulatedPart("SIMULATED: the node's run is simulated, not a measurement. Do not use it to judge hardware.")
	case f.Simulated > 0:
		d.SimulatedPart(fmt.Sprintf("SIMULATED: %d of the %s' runs are simulated, not measurements; simulated nodes are compared only with each other. Do not use them to judge hardware.",
			f.Simulated, nodes))
	}
	sim := map[string]bool{}
	for _, n := range f.Nodes {
		sim[n.Name] = n.Simulated
	}
	counts := map[results.Status]int{}
	incomplete, below := 0, 0
	for _, n := range f.Nodes {
		counts[n.Verdict]++
		if !n.Complete {
			incomplete++
		}
		if n.Below > 0 {
			below++
		}
	}
	d.Para(fmt.Sprintf("%d input%s: %s of %d machine type%s, %d unreadable, %d incomplete. Verdicts: %d PASS, %d WARN, %d FAIL, %d NOT JUDGED; %d node%s below %s peers.",
		f.Files, units.Plural(f.Files, "", "s"), nodes, len(f.Types), units.Plural(len(f.Types), "", "s"), len(f.Unreadable), incomplete,
		counts[results.StatusPass], counts[results.StatusWarn], counts[results.StatusFail], counts[results.StatusNotJudged],
		below, units.Plural(below, "", "s"), units.Plural(below, "its", "their")))
	if again, changed := f.judgedAgain(); again > 0 {
		d.Para(fmt.Sprintf("Judged again: %d node%s run%s record%s a verdict another build gave by its expectation table; this build (%s) judged %s again, as check and report do, and counts its own verdict as the node's. %d of them differ%s from the file's verdict (a node's why names the file's; the JSON keeps it as judged_again_from).",
			again, units.Plural(again, "'s", "s'"), units.Plural(again, "", "s"), units.Plural(again, "s", ""), f.Options.Build, units.Plural(again, "it", "them"),
			changed, units.Plural(changed, "s", "")))
	}
	d.Para(fmt.Sprintf("A node's verdict is the worst of its own (the verdict its run records), the run's failures, and its peers': its figures held to the same figure on the same link class across the nodes of its machine type (machine types, and simulated and measured runs, are never compared). A figure is below its peers when it is at least %g%% worse than their median and significant beyond their spread and its own rounds' noise (Holm over the fleet's %d comparisons, family-wise %g%%); %g%% or more below fails. A node with half its figures below its peers is below them as a whole. Nodes whose own verdict failed on their health are not held to their peers.",
		100*f.Options.Threshold, f.Comparisons, 100*f.Options.Alpha, 100*verdict.SlowPairFraction))
	var unreadable [][]string
	for _, u := range f.Unreadable {
		unreadable = append(unreadable, []string{u.Path, u.Error})
	}
	d.Table("Unreadable inputs", []string{"input", "error"}, unreadable, "ll")
	var types [][]string
	anySim := false
	for _, t := range f.Types {
		types = append(types, []string{t.ID, strconv.Itoa(t.Nodes), t.GPUs + map[bool]string{true: " (simulated)"}[t.Simulated], t.Links, t.Note})
		anySim = anySim || t.Simulated
	}
	d.Table(simTitle(anySim, "Machine types"), []string{"type", "nodes", "GPUs", "links (ordered pairs)", "note"}, types, "lrlll")
	var attention, warned, unjudged [][]string
	var simAttention, simWarned, simUnjudged bool
	for _, n := range f.Nodes {
		switch {
		case n.Attention():
			attention = append(attention, []string{n.Name, n.Type, Label(n.Verdict), ownLabel(n), Label(n.Peers), strconv.Itoa(n.Figures),
				strconv.Itoa(n.Failed), strconv.Itoa(n.Below), strings.Join(n.Reasons, "; ")})
			simAttention = simAttention || n.Simulated
		case n.Verdict == results.StatusWarn:
			warned = append(warned, []string{n.Name, n.Type, Label(n.Peers), strings.Join(n.Reasons, "; ")})
			simWarned = simWarned || n.Simulated
		case n.Verdict == results.StatusNotJudged:
			unjudged = append(unjudged, []string{n.Name, n.Type, strings.Join(n.Reasons, "; ")})
			simUnjudged = simUnjudged || n.Simulated
		}
	}
	if len(attention) == 0 && len(f.Nodes) > len(unjudged) {
		d.Para("No node needs attention: none failed, none is below its peers, as far as its judged figures go (each type says what it could not judge).")
	}
	d.Table(simTitle(simAttention, "Nodes that need attention"), []string{"node", "type", "verdict", "own verdict", "peers", "figures", "failed", "below peers", "why"},
		attention, "lllllrrrl")
	d.Table(simTitle(simWarned, "Nodes that warned on their own (their peers find nothing)"), []string{"node", "type", "peers", "why"}, warned, "llll")
	d.Table(simTitle(simUnjudged, "Nodes not judged"), []string{"node", "type", "why"}, unjudged, "lll")
	for _, t := range f.Types {
		var figs []plot.Chart
		if figures {
			figs = f.figuresOf(t)
		}
		f.typeSection(d, t, figs)
	}
	return d
}

// judgedAgain counts the nodes whose runs this build judged again and
// those of them whose verdict differs from their file's.
func (f *Fleet) judgedAgain() (again, changed int) {
	for _, n := range f.Nodes {
		if n.Own != nil && n.Own.Was != nil {
			again++
			if n.Own.Was.Status != n.Own.Status {
				changed++
			}
		}
	}
	return again, changed
}

// simTitle is a table's title, saying SIMULATED when the table holds a
// simulated node.
func simTitle(simulated bool, title string) string {
	if simulated {
		return "SIMULATED: " + title
	}
	return title
}

// ownLabel is a node's own verdict for a table: its status, or "none"
// where its run records none.
func ownLabel(n *Node) string {
	if n.Own == nil {
		return "none"
	}
	return Label(n.Own.Status)
}

// typeSection adds one machine type's nodes, links and figures below their
// peers and its classes' distributions.
func (f *Fleet) typeSection(d *report.Document, t *Type, figs []plot.Chart) {
	d.Section(fmt.Sprintf("%s: %d node%s of %s%s", t.ID, t.Nodes, units.Plural(t.Nodes, "", "s"), t.GPUs,
		map[bool]string{true: " (simulated)"}[t.Simulated]))
	d.Para("Links: " + t.Links + ".")
	if t.Note != "" {
		d.Para("Note: " + t.Note + ".")
	}
	if s := t.notJudged(); s != "" {
		d.Para(s)
	}
	var nodes, links, others [][]string
	for _, n := range f.BelowNodes {
		if n.Type == t.ID {
			nodes = append(nodes, []string{n.Node, fmt.Sprintf("%d of %d", n.Below, n.Judged), perfText(n.PerfPct)})
		}
	}
	for _, l := range f.BelowLinks {
		if l.Type == t.ID {
			links = append(links, []string{l.Node, fmt.Sprintf("%d↔%d", l.A, l.B), l.Link, strconv.Itoa(l.Figures), fmt.Sprintf("%.1f%% worse", l.DeficitPct)})
		}
	}
	whole := map[string]bool{}
	for _, n := range f.BelowNodes {
		whole[n.Node] = true
	}
	for _, o := range f.Below {
		if o.Type == t.ID && !whole[o.Node] && (o.Src < 0 || o.Dst < 0 || o.Src == o.Dst) {
			others = append(others, []string{o.Node, o.Figure, devices(o.Src, o.Dst, o.Link), number(o.Value) + " " + string(o.Unit),
				number(o.Median), fmt.Sprintf("%.1f%% worse", o.DeficitPct), fmt.Sprintf("%.1f", o.Sigma), Label(o.Status)})
		}
	}
	title := func(s string) string { return simTitle(t.Simulated, t.ID+": "+s) }
	d.Table(title("nodes below their peers as a whole"), []string{"node", "figures below peers", "median figure"}, nodes, "lrr")
	d.Table(title("links below their peers"), []string{"node", "link", "class", "figures below peers", "furthest"}, links, "lllrr")
	d.Table(title("other figures below their peers"), []string{"node", "figure", "devices", "value", "peers' median", "deficit", "σ", "status"}, others, "lllrrrrl")
	var classes [][]string
	for _, c := range t.Classes {
		judged := strconv.Itoa(c.Below)
		if !c.Judged {
			judged = "not judged"
		}
		mad := "—"
		if c.Median > 0 {
			mad = fmt.Sprintf("%.2f%%", 100*c.MAD/c.Median)
		}
		classes = append(classes, []string{c.Label, string(c.Unit), strconv.Itoa(c.Nodes), strconv.Itoa(c.Figures),
			number(c.Median), mad, number(c.Min), number(c.Max), judged})
	}
	d.Table(title("figures across nodes"), []string{"figure", "unit", "nodes", "figures", "median", "MAD", "min", "max", "below peers"}, classes, "llrrrrrrr",
		"MAD: median absolute deviation, relative to the median.")
	for _, fig := range figs {
		d.Figure(fig)
	}
}

// number formats a figure value for a table.
func number(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Formats are the formats Write writes.
func Formats() []string { return []string{"text", "markdown", "csv", "json"} }

// CheckFormat fails for a format of the fleet's view that is none of
// Formats.
func CheckFormat(format string) error {
	if !slices.Contains(Formats(), format) {
		return fmt.Errorf("unknown format %q; the formats are %s", format, strings.Join(Formats(), ", "))
	}
	return nil
}

// Write writes the fleet in a format of Formats ("md" is markdown). The
// Markdown has no figures: Document(true).WriteMarkdown links them, and
// plot.WriteAll writes its Figures.
func (f *Fleet) Write(w io.Writer, format string) error {
	switch format {
	case "text", "":
		return f.WriteText(w)
	case "markdown", "md":
		return f.Document(false).WriteMarkdown(w, "")
	case "csv":
		return f.WriteCSV(w)
	case "json":
		return f.WriteJSON(w)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats(), ", "))
}

// WriteText writes the fleet's document as text.
func (f *Fleet) WriteText(w io.Writer) error { return f.Document(false).WriteText(w) }

// WriteJSON writes the whole analysis as indented JSON.
func (f *Fleet) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(f)
}

// csvHeader are the columns of WriteCSV.
var csvHeader = []string{"record", "node", "path", "machine_type", "verdict", "own_verdict", "peers", "figures", "failed", "below_peers",
	"figure", "src", "dst", "link", "unit", "value", "class_median", "deficit_pct", "sigma", "detail"}

// WriteCSV writes one table of records, the record column saying what a
// row is: "node" (one per node: its verdict, own verdict, peers' outcome,
// counts and reasons), "below_peers" (a figure below its peers), "failed"
// (a figure that failed) and "unreadable" (an input that could not be
// read, with its error). Text that a spreadsheet would take for a formula
// (a host named "=HYPERLINK(…)") is written as text (csvText).
func (f *Fleet) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	write := func(cells ...string) {
		for i, c := range cells {
			cells[i] = csvText(c)
		}
		cw.Write(cells)
	}
	write(csvHeader...)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	verdictOf := func(s results.Status) string { return string(s) }
	for _, u := range f.Unreadable {
		write("unreadable", "", u.Path, "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", u.Error)
	}
	for _, n := range f.Nodes {
		own := ""
		if n.Own != nil {
			own = verdictOf(n.Own.Status)
		}
		write("node", n.Name, n.Path, n.Type, verdictOf(n.Verdict), own, verdictOf(n.Peers), strconv.Itoa(n.Figures), strconv.Itoa(n.Failed),
			strconv.Itoa(n.Below), "", "", "", "", "", "", "", "", "", strings.Join(n.Reasons, "; "))
		for _, fl := range n.Failures {
			write("failed", n.Name, n.Path, n.Type, "", "", "", "", "", "", fl.Figure, strconv.Itoa(fl.Src), strconv.Itoa(fl.Dst),
				fl.Link, "", "", "", "", "", fl.Label+": "+fl.Error)
		}
	}
	paths := make(map[string]string, len(f.Nodes))
	for _, n := range f.Nodes {
		paths[n.Name] = n.Path
	}
	for _, o := range f.Below {
		write("below_peers", o.Node, paths[o.Node], o.Type, verdictOf(o.Status), "", "", "", "", "", o.Figure, strconv.Itoa(o.Src), strconv.Itoa(o.Dst),
			o.Link, string(o.Unit), g(o.Value), g(o.Median), g(o.DeficitPct), g(o.Sigma), "")
	}
	cw.Flush()
	return cw.Error()
}

// csvText keeps a cell from being taken for a formula: a cell that starts
// with =, +, -, @, a tab or a carriage return, and is not a number this
// package writes, gets a leading apostrophe, as OWASP's advice on CSV
// injection has it (spreadsheets show the rest as text).
func csvText(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// notJudged says which of the type's classes were not judged, and why; ""
// when every class was judged.
func (t *Type) notJudged() string {
	n, small := 0, 0
	var tests []string
	why := map[string]string{}
	for _, c := range t.Classes {
		if c.Judged {
			continue
		}
		n++
		if u := verdict.Unjudged(c.Test); u != "" {
			if _, ok := why[string(c.Test)]; !ok {
				tests = append(tests, string(c.Test))
				why[string(c.Test)] = u
			}
			continue
		}
		small++
	}
	if n == 0 {
		return ""
	}
	s := fmt.Sprintf("Not judged: %d of the %d classes", n, len(t.Classes))
	var parts []string
	if small > 0 {
		parts = append(parts, fmt.Sprintf("%d with fewer than %d figures (too few nodes or pairs of this type to hold one to the others)", small, MinJudged))
	}
	for _, test := range tests {
		parts = append(parts, fmt.Sprintf("those of %s (%s)", test, why[test]))
	}
	return s + ": " + strings.Join(parts, "; ") + "."
}
