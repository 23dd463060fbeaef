package fleet

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/p2pbench/p2pbench/internal/units"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/verdict"
)

// Document is the fleet as a document of package report: what was read,
// the verdicts, the nodes that need attention, and for each machine type
// its outlier nodes, links and figures and every class's distribution.
// With figures, each type's plots follow its tables (for Markdown and PDF).
func (f *Fleet) Document(figures bool) *report.Document {
	d := report.NewDocument(fmt.Sprintf("p2pbench fleet: %d nodes", len(f.Nodes)), fmt.Sprintf("fleet of %d nodes", len(f.Nodes)))
	if f.Simulated > 0 {
		d.Simulated(fmt.Sprintf("SIMULATED: %d of the %d nodes' runs are simulated, not measurements. Do not use them to judge hardware.", f.Simulated, len(f.Nodes)))
	}
	counts := map[Verdict]int{}
	incomplete := 0
	for _, n := range f.Nodes {
		counts[n.Verdict]++
		if !n.Complete {
			incomplete++
		}
	}
	d.Para(fmt.Sprintf("%d inputs: %d nodes of %d machine type%s, %d unreadable, %d incomplete. Verdicts: %d OK, %d OUTLIER, %d FAILED, %d NOT JUDGED.",
		f.Files, len(f.Nodes), len(f.Types), units.Plural(len(f.Types), "", "s"), len(f.Unreadable), incomplete, counts[OK], counts[Outlier], counts[Failed], counts[NotJudged]))
	d.Para(fmt.Sprintf("An outlier is a figure at least %g robust z-scores (|x − median| / (1.4826 · MAD)) and at least %g%% worse than the median of its class (a better figure is none): the same figure on the same link class across the nodes of one machine type. Machine types are never compared with each other. A node with outliers in at least half its figures is off as a whole.",
		f.Options.Z, 100*f.Options.Threshold))
	var unreadable [][]string
	for _, u := range f.Unreadable {
		unreadable = append(unreadable, []string{u.Path, u.Error})
	}
	d.Table("Unreadable inputs", []string{"input", "error"}, unreadable, "ll")
	var types [][]string
	for _, t := range f.Types {
		types = append(types, []string{t.ID, strconv.Itoa(t.Nodes), t.GPUs, t.Links, t.Note})
	}
	d.Table("Machine types", []string{"type", "nodes", "GPUs", "links (ordered pairs)", "note"}, types, "lrlll")
	var attention [][]string
	for _, n := range f.Nodes {
		if n.Verdict != OK {
			attention = append(attention, []string{n.Name, n.Type, string(n.Verdict), strconv.Itoa(n.Figures),
				strconv.Itoa(n.Failed), strconv.Itoa(n.Outliers), strings.Join(n.Reasons, "; ")})
		}
	}
	if len(attention) == 0 && len(f.Nodes) > 0 {
		d.Para("Every node is OK, as far as its judged figures go (each type says what it could not judge).")
	}
	d.Table("Nodes that need attention", []string{"node", "type", "verdict", "figures", "failed", "outliers", "why"}, attention, "lllrrrl")
	for _, t := range f.Types {
		var figs []plot.Chart
		if figures {
			figs = f.figuresOf(t)
		}
		f.typeSection(d, t, figs)
	}
	return d
}

// typeSection adds one machine type's outliers and distributions.
func (f *Fleet) typeSection(d *report.Document, t *Type, figs []plot.Chart) {
	d.Section(fmt.Sprintf("%s: %d node%s of %s", t.ID, t.Nodes, units.Plural(t.Nodes, "", "s"), t.GPUs))
	d.Para("Links: " + t.Links + ".")
	if t.Note != "" {
		d.Para("Note: " + t.Note + ".")
	}
	if s := t.notJudged(); s != "" {
		d.Para(s)
	}
	var nodes, links, others [][]string
	for _, n := range f.OutlierNodes {
		if n.Type == t.ID {
			nodes = append(nodes, []string{n.Node, fmt.Sprintf("%d of %d", n.Outliers, n.Judged), perfText(n.PerfPct)})
		}
	}
	linked := map[string]bool{}
	for _, l := range f.OutlierLinks {
		if l.Type == t.ID {
			links = append(links, []string{l.Node, fmt.Sprintf("%d↔%d", l.A, l.B), l.Link, strconv.Itoa(l.Figures), perfText(l.PerfPct)})
			linked[l.Node] = true
		}
	}
	whole := map[string]bool{}
	for _, n := range f.OutlierNodes {
		whole[n.Node] = true
	}
	for _, o := range f.Outliers {
		if o.Type == t.ID && !whole[o.Node] && (o.Src < 0 || o.Dst < 0 || o.Src == o.Dst) {
			others = append(others, []string{o.Node, o.Figure, devices(o.Src, o.Dst, o.Link), number(o.Value) + " " + string(o.Unit),
				number(o.Median), fmt.Sprintf("%+.1f%%", o.DeviationPct), fmt.Sprintf("%.0f", o.Z)})
		}
	}
	d.Table(t.ID+": outlier nodes (the whole node is off)", []string{"node", "outlier figures", "median figure"}, nodes, "lrr")
	d.Table(t.ID+": outlier links", []string{"node", "link", "class", "outlier figures", "furthest"}, links, "lllrr")
	d.Table(t.ID+": other outlier figures", []string{"node", "figure", "devices", "value", "class median", "deviation", "z"}, others, "lllrrrr")
	var classes [][]string
	for _, c := range t.Classes {
		judged := strconv.Itoa(c.Outliers)
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
	d.Table(t.ID+": figures across nodes", []string{"figure", "unit", "nodes", "figures", "median", "MAD", "min", "max", "outliers"}, classes, "llrrrrrrr",
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
var csvHeader = []string{"record", "node", "path", "machine_type", "verdict", "figures", "failed", "outliers",
	"figure", "src", "dst", "link", "unit", "value", "class_median", "deviation_pct", "robust_z", "detail"}

// WriteCSV writes one table of records, the record column saying what a
// row is: "node" (one per node: its verdict, counts and reasons),
// "outlier" (an outlier figure), "failed" (a figure that failed) and
// "unreadable" (an input that could not be read, with its error).
func (f *Fleet) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, u := range f.Unreadable {
		cw.Write([]string{"unreadable", "", u.Path, "", "", "", "", "", "", "", "", "", "", "", "", "", "", u.Error})
	}
	for _, n := range f.Nodes {
		cw.Write([]string{"node", n.Name, n.Path, n.Type, string(n.Verdict), strconv.Itoa(n.Figures), strconv.Itoa(n.Failed),
			strconv.Itoa(n.Outliers), "", "", "", "", "", "", "", "", "", strings.Join(n.Reasons, "; ")})
		for _, fl := range n.Failures {
			cw.Write([]string{"failed", n.Name, n.Path, n.Type, "", "", "", "", fl.Figure, strconv.Itoa(fl.Src), strconv.Itoa(fl.Dst),
				fl.Link, "", "", "", "", "", fl.Label + ": " + fl.Error})
		}
	}
	paths := make(map[string]string, len(f.Nodes))
	for _, n := range f.Nodes {
		paths[n.Name] = n.Path
	}
	for _, o := range f.Outliers {
		cw.Write([]string{"outlier", o.Node, paths[o.Node], o.Type, "", "", "", "", o.Figure, strconv.Itoa(o.Src), strconv.Itoa(o.Dst),
			o.Link, string(o.Unit), g(o.Value), g(o.Median), g(o.DeviationPct), g(o.Z), ""})
	}
	cw.Flush()
	return cw.Error()
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
		parts = append(parts, fmt.Sprintf("%d with fewer than %d figures (too few nodes or pairs of this type to tell an outlier)", small, minJudged))
	}
	for _, test := range tests {
		parts = append(parts, fmt.Sprintf("those of %s (%s)", test, why[test]))
	}
	return s + ": " + strings.Join(parts, "; ") + "."
}
