package report

import "github.com/p2pbench/p2pbench/plot"

// NewDocument starts a document that is about more than one run (a fleet's,
// say), for a package that builds it block by block: title as its first
// heading, footer on every page of a PDF.
func NewDocument(title, footer string) *Document {
	d := &Document{footer: "p2pbench  ·  " + footer}
	d.heading(1, title)
	return d
}

// Simulated marks the document as showing simulated figures: banner under
// the title, SIMULATED in the PDF footer and in the title of every table
// added after it.
func (d *Document) Simulated(banner string) {
	d.sim = true
	d.footer += "  ·  SIMULATED"
	d.banner(banner)
}

// Heading adds a heading of level 1 or 2.
func (d *Document) Heading(level int, text string) { d.heading(level, text) }

// Section adds a level-1 heading that starts a page (in formats with pages).
func (d *Document) Section(text string) { d.section(text) }

// Para adds a paragraph; "\n" separates its lines.
func (d *Document) Para(text string) { d.para("%s", text) }

// Banner adds a warning that must not be missed.
func (d *Document) Banner(text string) { d.banner(text) }

// Table adds a table (nothing when rows is empty): align holds 'l' or 'r'
// per column, notes are lines below it.
func (d *Document) Table(title string, header []string, rows [][]string, align string, notes ...string) {
	d.table(&table{title: title, header: header, rows: rows, align: align, notes: notes})
}

// Figure adds a figure of package plot.
func (d *Document) Figure(f plot.Chart) { d.figure(f) }
