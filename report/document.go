// Package report turns a results.Run into documents people read. Each
// document is built once, as one model of headings, paragraphs, banners,
// tables and figures, and rendered as plain text (WriteText), Markdown
// (WriteMarkdown) or PDF (WritePDF), so the formats cannot say different
// things:
//
//   - Report: the report a buyer reads, about a dozen pages, opening with
//     the answer (the run's verdict: PASS, WARN or FAIL in large, the
//     machine's identity, one line per check, the headline matrix against
//     expectation, what failed and what to do next; verdict.go), then
//     system, topology, headline bandwidth against the limit of the path
//     each figure crosses, the NVLink counters, the findings (one line
//     each), the key figures and the headline tests' methods; Full adds
//     the verdict in detail, every finding in full, every figure of
//     package plot and every test's method;
//   - Verdict: the report's first page alone, for p2pbench check;
//   - Topology: the devices, pairs, links and driver conformance (topo);
//   - Tables: the result tables of a measuring command or of show;
//   - Summary: the summary that ends show (and all --tables);
//   - Where: where the rest of a run is, under the one screen of all.
//
// The PDF is laid out by go-pdf/fpdf (pdf.go): text flow, tables kept
// whole or split with their header repeated, headings kept with what
// follows, figures as PNG images of package plot.
//
// The report judges nothing: package verdict owns every rule, and the
// report renders the run's verdict (results.Verdict: its checks, items and
// figure verdicts) as it is. Headlines only picks the figures a buyer
// holds against the links' limits, for the tables. A simulated run says
// SIMULATED at the top of every document.
//
// The package reads results (and the verdict's exported thresholds and
// helpers), and draws through plot: it never imports cuda, gpu, bench or
// ipc.
package report

import (
	"fmt"
	"strings"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
)

// Document is a document about one run, ready to render.
type Document struct {
	// Findings are what the verdict's checks found, where the document
	// shows them (Report), so that a caller that also prints them need not
	// look through the verdict again.
	Findings []Finding
	// firstPageFindings is how many of Findings (the first) page 1 lists
	// under What failed, in full.
	firstPageFindings int
	// footer is on every page of a PDF.
	footer string
	sim    bool
	// tool names another tool whose figures an imported run holds
	// ("nvbandwidth v0.8"): table titles and the footer say so.
	tool string
	// compact keeps sections flowing on from the page before (the buyer's
	// report); pageSection still starts a page.
	compact bool
	// width, where set, is the most columns a text rendering takes (a
	// screen's): longer lines are wrapped.
	width  int
	blocks []block
}

type blockKind int

const (
	headingBlock blockKind = iota
	paraBlock
	bannerBlock // a warning that must not be missed (simulated, incomplete)
	tableBlock
	figureBlock
	verdictBlock // the verdict, in large: text is its status's label, line what it rests on
)

type block struct {
	kind blockKind
	// pageBreak starts the block on a new page (in formats with pages).
	pageBreak bool
	level     int // headings: 1 or 2
	// text is a heading's, paragraph's or banner's text; a paragraph's
	// lines are separated by "\n".
	text   string
	table  *table
	figure plot.Chart
	// status is a verdict block's (results.StatusNotJudged for none); line
	// the sentence under it.
	status results.Status
	line   string
	// small sets a paragraph in a smaller type (facts under the verdict).
	small bool
}

// table is a table with an optional title above it and notes below it;
// align holds 'l' or 'r' per column. shade colours cells (row, column) by
// a verdict's status, in formats with colour; the cells' text says the
// same in words.
type table struct {
	title  string
	header []string
	rows   [][]string
	align  string
	notes  []string
	shade  map[[2]int]results.Status
}

// newDocument starts a document about run with its title as the first
// heading (none when title is ""), and under it the banner of a simulated
// or incomplete run.
func newDocument(run *results.Run, title string) *Document {
	host := run.Host
	if host == "" {
		host = "unknown host"
	}
	d := &Document{sim: run.Simulated}
	d.footer = fmt.Sprintf("p2pbench  ·  %s  ·  %s", host, run.GPUSummary())
	if title != "" {
		d.Heading(1, title)
	}
	if run.Imported != nil {
		d.tool = strings.TrimSpace(run.Tool.Name + " " + run.Tool.Version)
		d.footer += "  ·  " + possessive(d.tool) + " figures, imported"
	}
	if run.Simulated {
		d.footer += "  ·  SIMULATED"
		machine := ""
		if run.SimMachine != "" {
			machine = " of the machine " + run.SimMachine
		}
		d.Banner("SIMULATED RUN: every figure here comes from p2pbench's simulator" + machine + ", not from GPUs. Do not use it to judge hardware.")
	}
	if !run.Complete {
		stop := "the run did not complete"
		if run.Stopped != "" {
			stop = "the run stopped early: " + run.Stopped
		}
		d.Banner("INCOMPLETE RUN: " + stop + ". Figures after the stop are missing.")
	}
	return d
}

// Heading adds a heading of level 1 or 2.
func (d *Document) Heading(level int, text string) {
	d.blocks = append(d.blocks, block{kind: headingBlock, level: level, text: text})
}

// Section starts a major section (a level-1 heading) on a page of its own,
// or, in a compact document, under what came before.
func (d *Document) Section(text string) {
	d.blocks = append(d.blocks, block{kind: headingBlock, level: 1, text: text, pageBreak: !d.compact})
}

// pageSection starts a major section on a page of its own.
func (d *Document) pageSection(text string) {
	d.blocks = append(d.blocks, block{kind: headingBlock, level: 1, text: text, pageBreak: true})
}

func (d *Document) para(format string, args ...any) {
	d.blocks = append(d.blocks, block{kind: paraBlock, text: fmt.Sprintf(format, args...)})
}

// Banner adds a warning that must not be missed.
func (d *Document) Banner(text string) {
	d.blocks = append(d.blocks, block{kind: bannerBlock, text: text})
}

// table adds t unless it has no rows. A simulated run's tables say so in
// their titles, so that no table copied out of a document loses it.
func (d *Document) table(t *table) {
	if len(t.rows) == 0 {
		return
	}
	if d.tool != "" && t.title != "" {
		t.title = d.tool + ": " + t.title
	}
	if d.sim && t.title != "" {
		t.title = "SIMULATED: " + t.title
	}
	d.blocks = append(d.blocks, block{kind: tableBlock, table: t})
}

// verdict adds the verdict in large: its status and the line under it.
func (d *Document) verdict(status results.Status, line string) {
	d.blocks = append(d.blocks, block{kind: verdictBlock, status: status, text: status.Label(), line: line})
}

// Figure adds a figure of package plot.
func (d *Document) Figure(f plot.Chart) {
	d.blocks = append(d.blocks, block{kind: figureBlock, figure: f, text: f.Title})
}
