package report

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/p2pbench/p2pbench/plot"
)

// WriteMarkdown writes the document as Markdown (GitHub-flavoured: pipe
// tables) to w, linking each figure as figLink/FILE.png, where FILE.png is
// the figure's plot.Chart.FileName: figLink is the directory of the
// figures (see Figures) as seen from the Markdown file, for example
// "report_files".
func (d *Document) WriteMarkdown(w io.Writer, figLink string) error {
	bw := bufio.NewWriter(w)
	for _, b := range d.blocks {
		switch b.kind {
		case headingBlock:
			fmt.Fprintf(bw, "%s %s\n\n", strings.Repeat("#", b.level), b.text)
		case paraBlock:
			fmt.Fprintf(bw, "%s\n\n", mdLines(b.text))
		case bannerBlock:
			fmt.Fprintf(bw, "> **%s**\n\n", mdEscape(b.text))
		case verdictBlock:
			fmt.Fprintf(bw, "## Verdict: **%s**\n\n%s\n\n", mdEscape(strings.ToUpper(b.text)), mdLines(b.line))
		case tableBlock:
			writeMDTable(bw, b.table)
		case figureBlock:
			fmt.Fprintf(bw, "![%s](%s)\n\n", mdEscape(b.figure.Title), path.Join(figLink, b.figure.FileName("png")))
		}
	}
	return bw.Flush()
}

// Figures returns the document's figures, which its Markdown links to as
// PNG files (plot.WriteAll writes them).
func (d *Document) Figures() []plot.Chart {
	var figs []plot.Chart
	for _, b := range d.blocks {
		if b.kind == figureBlock {
			figs = append(figs, b.figure)
		}
	}
	return figs
}

// mdLines keeps a paragraph's line breaks (Markdown's hard break is two
// spaces before the newline).
func mdLines(s string) string { return strings.ReplaceAll(mdEscape(s), "\n", "  \n") }

func writeMDTable(w io.Writer, t *table) {
	if t.title != "" {
		fmt.Fprintf(w, "**%s**\n\n", mdEscape(t.title))
	}
	cell := func(s string) string { return strings.ReplaceAll(mdEscape(s), "|", `\|`) }
	fmt.Fprint(w, "|")
	for _, h := range t.header {
		fmt.Fprintf(w, " %s |", cell(h))
	}
	fmt.Fprint(w, "\n|")
	for i := range t.header {
		if i < len(t.align) && t.align[i] == 'r' {
			fmt.Fprint(w, "---:|")
		} else {
			fmt.Fprint(w, "---|")
		}
	}
	fmt.Fprintln(w)
	for _, row := range t.rows {
		fmt.Fprint(w, "|")
		for i := range t.header {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			fmt.Fprintf(w, " %s |", cell(v))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, n := range t.notes {
		fmt.Fprintf(w, "%s\n\n", mdLines(n))
	}
}

// mdEscape keeps text literal where Markdown would read markup into it
// (kernel names like sm_read_v4 contain underscores, sizes contain *).
var mdEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;")

func mdEscape(s string) string { return mdEscaper.Replace(s) }
