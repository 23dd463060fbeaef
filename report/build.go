package report

// NewDocument starts a document that is about more than one run (a fleet's,
// say), for a package that builds it block by block: title as its first
// heading, footer on every page of a PDF.
func NewDocument(title, footer string) *Document {
	d := &Document{footer: "p2pbench  ·  " + footer}
	d.Heading(1, title)
	return d
}

// Simulated marks the document as showing simulated figures: banner under
// the title, SIMULATED in the PDF footer and in the title of every table
// added after it.
func (d *Document) Simulated(banner string) {
	d.sim = true
	d.footer += "  ·  SIMULATED"
	d.Banner(banner)
}

// SimulatedPart marks a document about several runs, some of them
// simulated, as Simulated does but for its tables: its builder says in the
// title of each table whether its rows hold simulated figures.
func (d *Document) SimulatedPart(banner string) {
	d.footer += "  ·  SIMULATED"
	d.Banner(banner)
}

// Para adds a paragraph; "\n" separates its lines.
func (d *Document) Para(text string) { d.para("%s", text) }

// Table adds a table (nothing when rows is empty): align holds 'l' or 'r'
// per column, notes are lines below it.
func (d *Document) Table(title string, header []string, rows [][]string, align string, notes ...string) {
	d.table(&table{title: title, header: header, rows: rows, align: align, notes: notes})
}
