package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"codeberg.org/go-pdf/fpdf"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
)

// The PDF is laid out by go-pdf/fpdf (text flow, fonts, images), in
// points, A4 landscape: wide tables and figures fit better across than
// down. Its font is Liberation Sans embedded as UTF-8, so arrows and ≥
// print as themselves.
const (
	pageW  = 841.89
	pageH  = 595.28
	margin = 36.0
	// bottom is the lowest y (from the top) content may reach, above the
	// footer.
	bottom = pageH - margin - 16
	textW  = pageW - 2*margin
	family = "Liberation"
)

var (
	black     = color.Gray{0}
	darkGrey  = color.Gray{90}
	ruleGrey  = color.Gray{170}
	headGrey  = color.Gray{222}
	stripe    = color.Gray{245}
	alertRed  = color.RGBA{R: 190, G: 25, B: 25, A: 255}
	bannerRed = color.RGBA{R: 255, G: 232, B: 232, A: 255}
)

// statusColors are a verdict status's colours: a light one for table cells
// and a strong one for the verdict in large.
var statusColors = map[results.Status][2]color.Color{
	results.StatusPass:      {color.RGBA{R: 214, G: 240, B: 214, A: 255}, color.RGBA{R: 30, G: 125, B: 50, A: 255}},
	results.StatusWarn:      {color.RGBA{R: 255, G: 236, B: 179, A: 255}, color.RGBA{R: 190, G: 120, B: 0, A: 255}},
	results.StatusFail:      {color.RGBA{R: 255, G: 205, B: 205, A: 255}, alertRed},
	results.StatusNote:      {color.RGBA{R: 222, G: 234, B: 250, A: 255}, color.RGBA{R: 40, G: 80, B: 150, A: 255}},
	results.StatusNotJudged: {color.Gray{235}, darkGrey},
}

// WritePDF writes the document as a multi-page PDF: A4 landscape, its
// title and author in the PDF's information, the footer and page number on
// every page, and SIMULATED across every page of a simulated run.
func (d *Document) WritePDF(w io.Writer) error {
	f := fpdf.New("L", "pt", "A4", "")
	f.AddUTF8FontFromBytes(family, "", liberationsansregular.TTF)
	f.AddUTF8FontFromBytes(family, "B", liberationsansbold.TTF)
	f.SetMargins(margin, margin, margin)
	f.SetAutoPageBreak(false, 0)
	f.SetCellMargin(0)
	f.SetTitle(d.title(), true)
	f.SetAuthor("p2pbench", true)
	f.SetCreator("p2pbench", true)
	f.AliasNbPages("{nb}")
	p := &pdfPages{doc: d, f: f, pngs: map[string][]byte{}}
	// The figures are drawn first, on every CPU at once (one after the
	// other they were half of a 72-GPU report's time).
	var figs []plot.Chart
	for _, b := range d.blocks {
		if b.kind == figureBlock {
			figs = append(figs, b.figure)
		}
	}
	pngs, err := plot.PNGs(figs)
	if err != nil {
		return err
	}
	for i, fig := range figs {
		p.pngs[fig.Name] = pngs[i]
	}
	f.SetFooterFunc(p.footer)
	p.newPage()
	for i, b := range d.blocks {
		p.render(b, d.blocks[i+1:])
		if err := f.Error(); err != nil {
			return err
		}
	}
	return f.Output(w)
}

// title is the document's first heading, the PDF's title.
func (d *Document) title() string {
	for _, b := range d.blocks {
		if b.kind == headingBlock {
			return b.text
		}
	}
	return "p2pbench"
}

// pdfPages flows blocks down pages.
type pdfPages struct {
	doc *Document
	f   *fpdf.Fpdf
	// pngs are the figures, drawn, by name.
	pngs map[string][]byte
	y    float64 // top of the free space, from the page's top
	// fresh is true while nothing but headings is on the page.
	fresh bool
	// hasFigure is true when the page holds a figure, which carries its
	// own SIMULATED watermark.
	hasFigure bool
	// cur is the font text is drawn in, set again after the footer of a
	// page break has drawn in its own.
	cur struct {
		bold  bool
		size  float64
		color color.Color
	}
}

func (p *pdfPages) newPage() {
	cur := p.cur
	p.f.AddPage()
	if cur.size > 0 {
		p.font(cur.bold, cur.size, cur.color)
	}
	p.y = margin
	p.fresh = true
	p.hasFigure = false
}

// footer draws the footer and, for a simulated run, the watermark; fpdf
// calls it as each page closes.
func (p *pdfPages) footer() {
	f := p.f
	setDraw(f, ruleGrey)
	f.SetLineWidth(0.5)
	f.Line(margin, pageH-margin-12, pageW-margin, pageH-margin-12)
	p.font(false, 8, darkGrey)
	f.SetXY(margin, pageH-margin-8)
	f.CellFormat(textW, 8, p.doc.footer, "", 0, "L", false, 0, "")
	f.SetXY(margin, pageH-margin-8)
	f.CellFormat(textW, 8, fmt.Sprintf("page %d of {nb}", f.PageNo()), "", 0, "R", false, 0, "")
	if p.doc.sim && !p.hasFigure {
		p.font(true, 96, alertRed)
		f.SetAlpha(0.12, "Normal")
		angle := math.Atan2(pageH, pageW) * 180 / math.Pi
		f.TransformBegin()
		f.TransformRotate(angle, pageW/2, pageH/2)
		w := f.GetStringWidth("SIMULATED")
		f.Text(pageW/2-w/2, pageH/2+32, "SIMULATED")
		f.TransformEnd()
		f.SetAlpha(1, "Normal")
	}
}

func (p *pdfPages) font(bold bool, size float64, c color.Color) {
	style := ""
	if bold {
		style = "B"
	}
	p.f.SetFont(family, style, size)
	p.cur.bold, p.cur.size, p.cur.color = bold, size, c
	r, g, b := rgb(c)
	p.f.SetTextColor(r, g, b)
}

func rgb(c color.Color) (int, int, int) {
	r, g, b, _ := c.RGBA()
	return int(r >> 8), int(g >> 8), int(b >> 8)
}

func setFill(f *fpdf.Fpdf, c color.Color) { r, g, b := rgb(c); f.SetFillColor(r, g, b) }
func setDraw(f *fpdf.Fpdf, c color.Color) { r, g, b := rgb(c); f.SetDrawColor(r, g, b) }

// lineH is the height of a line of text of a size.
func lineH(size float64) float64 { return size * 1.3 }

// left is the height left on the page.
func (p *pdfPages) left() float64 { return bottom - p.y }

// need starts a new page unless h points fit.
func (p *pdfPages) need(h float64) {
	if h > p.left() && !p.fresh {
		p.newPage()
	}
}

// wrap breaks txt into lines no wider than w in the current font.
func (p *pdfPages) wrap(txt string, w float64) []string {
	var out []string
	for _, para := range strings.Split(txt, "\n") {
		if strings.TrimSpace(para) == "" {
			out = append(out, "")
			continue
		}
		out = append(out, p.f.SplitText(para, w)...)
	}
	return out
}

// render draws block b; rest are the blocks after it, which a heading is
// kept with.
func (p *pdfPages) render(b block, rest []block) {
	if b.pageBreak && !p.fresh {
		p.newPage()
	}
	switch b.kind {
	case headingBlock:
		size := 16.0
		if b.level > 1 {
			size = 12.5
		}
		p.font(true, size, black)
		lines := p.wrap(b.text, textW)
		h := lineH(size)*float64(len(lines)) + 10
		// A heading stays with the start of what follows it.
		p.need(h + p.startHeight(rest))
		p.font(true, size, black) // measuring what follows set others
		p.y += 2
		for _, l := range lines {
			p.f.Text(margin, p.y+size, l)
			p.y += lineH(size)
		}
		p.y += 8
	case paraBlock:
		size := 10.0
		if b.small {
			size = 8.5
		}
		// A paragraph that introduces a table stays with it.
		if len(rest) > 0 && rest[0].kind == tableBlock && rest[0].table.title == "" {
			p.font(false, size, black)
			p.need(lineH(size)*float64(len(p.wrap(b.text, textW))) + 6 + p.tableStart(rest[0].table))
		}
		p.paragraph(b.text, false, size, black)
		p.fresh = false
	case bannerBlock:
		p.banner(b.text)
		p.fresh = false
	case verdictBlock:
		p.verdict(b)
		p.fresh = false
	case tableBlock:
		p.table(b.table)
		p.fresh = false
	case figureBlock:
		p.figure(b.figure)
		p.fresh = false
	}
}

// startHeight is how much of what follows a heading must fit under it:
// the next heading's and, after it, a table whole (up to a third of a
// page), a paragraph's first three lines, a figure's least size.
func (p *pdfPages) startHeight(rest []block) float64 {
	h := 0.0
	for i, b := range rest {
		switch b.kind {
		case headingBlock:
			h += lineH(12.5) + 10
			continue
		case tableBlock:
			return h + p.tableStart(b.table)
		case figureBlock:
			return h + 0.6*(bottom-margin)
		case paraBlock:
			p.font(false, 10, black)
			n := len(p.wrap(b.text, textW))
			if i+1 < len(rest) && rest[i+1].kind == tableBlock && rest[i+1].table.title == "" {
				// The paragraph keeps with its table: so does the heading.
				return h + lineH(10)*float64(n) + 6 + p.tableStart(rest[i+1].table)
			}
			return h + lineH(10)*float64(min(3, n))
		}
		return h + 40
	}
	return h
}

// paragraph writes wrapped text, keeping at least two lines together on
// either side of a page break, and a paragraph of up to five lines whole.
func (p *pdfPages) paragraph(txt string, bold bool, size float64, c color.Color) {
	p.font(bold, size, c)
	lines := p.wrap(txt, textW)
	lh := lineH(size)
	if len(lines) <= 5 {
		p.need(lh * float64(len(lines)))
	} else {
		p.need(2 * lh)
	}
	for i, l := range lines {
		if p.y+lh > bottom && len(lines)-i >= 2 {
			p.newPage()
			p.fresh = false
			p.font(bold, size, c)
		}
		p.f.Text(margin, p.y+size, l)
		p.y += lh
	}
	p.y += 6
}

func (p *pdfPages) banner(txt string) {
	f := p.f
	p.font(true, 11, alertRed)
	lines := p.wrap(txt, textW-16)
	h := lineH(11)*float64(len(lines)) + 10
	p.need(h)
	setFill(f, bannerRed)
	setDraw(f, alertRed)
	f.SetLineWidth(1.5)
	f.Rect(margin, p.y, textW, h, "FD")
	y := p.y + 5
	for _, l := range lines {
		f.Text(margin+8, y+11, l)
		y += lineH(11)
	}
	p.y += h + 10
}

// verdict draws the verdict in large: its status in a box of the status's
// colour, the line beside it on the light colour.
func (p *pdfPages) verdict(b block) {
	f := p.f
	p.font(true, 26, color.White)
	boxW := max(f.GetStringWidth("WARN"), f.GetStringWidth(b.text)) + 40
	p.font(true, 12, black)
	lines := p.wrap(b.line, textW-boxW-24)
	h := max(26+14, lineH(12)*float64(len(lines))+10)
	p.need(h)
	cols := statusColors[b.status]
	setFill(f, cols[1])
	f.Rect(margin, p.y, boxW, h, "F")
	setFill(f, cols[0])
	f.Rect(margin+boxW, p.y, textW-boxW, h, "F")
	p.font(true, 26, color.White)
	f.Text(margin+(boxW-f.GetStringWidth(b.text))/2, p.y+h/2+9, b.text)
	p.font(true, 12, black)
	y := p.y + (h-lineH(12)*float64(len(lines)))/2
	for _, l := range lines {
		f.Text(margin+boxW+12, y+12, l)
		y += lineH(12)
	}
	p.y += h + 8
}

// pdfTable is a table laid out for the page: its font size and column
// widths.
type pdfTable struct {
	*table
	size   float64
	widths []float64
}

// cellPad is the space around a cell's text.
const cellPad = 8

// layoutTable fits t to the page's width: it wraps the widest column into
// what the others leave, if that leaves it a useful width, or else tries a
// smaller font.
func (p *pdfPages) layoutTable(t *table) *pdfTable {
	lt := &pdfTable{table: t}
	for size := 8.0; ; size -= 0.5 {
		lt.size = size
		lt.widths = make([]float64, len(t.header))
		p.font(true, size, black)
		for i, h := range t.header {
			lt.widths[i] = p.f.GetStringWidth(h) + cellPad
		}
		p.font(false, size, black)
		for _, row := range t.rows {
			for i, cell := range row {
				if i < len(lt.widths) {
					lt.widths[i] = max(lt.widths[i], p.f.GetStringWidth(cell)+cellPad)
				}
			}
		}
		total := sum(lt.widths)
		if total <= textW {
			return lt
		}
		wi := 0
		for i := range lt.widths {
			if lt.widths[i] > lt.widths[wi] {
				wi = i
			}
		}
		if rest := total - lt.widths[wi]; textW-rest >= 140 || size <= 6 {
			lt.widths[wi] = max(textW-rest, 60)
			return lt
		}
	}
}

// cells wraps a row's cells into their columns and returns how many lines
// the row takes.
func (p *pdfPages) cells(lt *pdfTable, row []string, bold bool) ([][]string, int) {
	p.font(bold, lt.size, black)
	out := make([][]string, len(lt.widths))
	n := 1
	for i := range lt.widths {
		cell := ""
		if i < len(row) {
			cell = row[i]
		}
		out[i] = p.wrap(cell, lt.widths[i]-cellPad)
		n = max(n, len(out[i]))
	}
	return out, n
}

func (lt *pdfTable) rowHeight(n int) float64 { return lt.size*1.2*float64(n) + 2.5 }

// tableStart is how much of a table must fit where it starts: all of it
// when it fits on a page, unless more than a third of a page is left here
// (a long table then starts here and goes on, its header repeated, rather
// than leave a third of a page or more empty); else a third of a page.
func (p *pdfPages) tableStart(t *table) float64 {
	h := p.tableHeight(t)
	switch {
	case h <= p.left():
		return h
	case h <= bottom-margin && p.left() < (bottom-margin)/3:
		return h
	}
	return min(h, (bottom-margin)/3)
}

// tableHeight is the height of a whole table: title, header, rows, notes.
func (p *pdfPages) tableHeight(t *table) float64 {
	lt := p.layoutTable(t)
	h := 0.0 // the space after it may fall off the page
	if t.title != "" {
		p.font(true, 10, black)
		h += lineH(10)*float64(len(p.wrap(t.title, textW))) + 6
	}
	_, n := p.cells(lt, t.header, true)
	h += lt.rowHeight(n)
	for _, r := range t.rows {
		_, n := p.cells(lt, r, false)
		h += lt.rowHeight(n)
	}
	p.font(false, 8.5, darkGrey)
	for _, n := range t.notes {
		h += lineH(8.5)*float64(len(p.wrap(n, textW))) + 6
	}
	return h
}

// drawRow draws one row at the top of the free space, on fill if not nil,
// the cells of shade (by column) on their status's colour.
func (p *pdfPages) drawRow(lt *pdfTable, row []string, bold bool, fill color.Color, shade map[int]results.Status) {
	f := p.f
	lines, n := p.cells(lt, row, bold)
	h := lt.rowHeight(n)
	if fill != nil {
		setFill(f, fill)
		f.Rect(margin, p.y, sum(lt.widths), h, "F")
	}
	x := margin
	for i, w := range lt.widths {
		if st, ok := shade[i]; ok {
			setFill(f, statusColors[st][0])
			f.Rect(x+1, p.y+1, w-2, h-2, "F")
		}
		x += w
	}
	p.font(bold, lt.size, black)
	x = margin
	for i, w := range lt.widths {
		for j, l := range lines[i] {
			tx := x + cellPad/2
			if i < len(lt.align) && lt.align[i] == 'r' {
				tx = x + w - cellPad/2 - f.GetStringWidth(l)
			}
			f.Text(tx, p.y+1+lt.size+lt.size*1.2*float64(j), l)
		}
		x += w
	}
	p.y += h
}

// table draws t, striped: whole on one page when it fits on one (a new
// page when it does not fit on this one), else across pages with the
// header repeated and no page holding fewer than three of its rows.
func (p *pdfPages) table(t *table) {
	lt := p.layoutTable(t)
	p.need(p.tableStart(t))
	if t.title != "" {
		p.paragraph(t.title, true, 10, black)
	}
	header := func() {
		p.drawRow(lt, t.header, true, headGrey, nil)
		setDraw(p.f, ruleGrey)
		p.f.SetLineWidth(0.6)
		p.f.Line(margin, p.y, margin+sum(lt.widths), p.y)
	}
	header()
	heights := make([]float64, len(t.rows))
	for i, row := range t.rows {
		_, n := p.cells(lt, row, false)
		heights[i] = lt.rowHeight(n)
	}
	for i, row := range t.rows {
		// Break before a row that does not fit, or before the last two
		// rows when they do not both fit, so that no page holds one row
		// of a table alone.
		if p.y+heights[i] > bottom || (i >= 3 && len(heights)-i == 2 && p.y+sumAll(heights[i:]) > bottom) {
			p.newPage()
			p.fresh = false
			header()
		}
		var fill color.Color
		if i%2 == 1 {
			fill = stripe
		}
		var shade map[int]results.Status
		for k, st := range t.shade {
			if k[0] == i {
				if shade == nil {
					shade = map[int]results.Status{}
				}
				shade[k[1]] = st
			}
		}
		p.drawRow(lt, row, false, fill, shade)
	}
	p.y += 6
	for _, n := range t.notes {
		p.paragraph(n, false, 8.5, darkGrey)
	}
	p.y += 6
}

func sum(ws []float64) float64 { return sumAll(ws) }

func sumAll(ws []float64) float64 {
	t := 0.0
	for _, w := range ws {
		t += w
	}
	return t
}

// figure draws a figure, as a PNG of package plot at its natural size,
// scaled to fit the rest of the page (a new page if little is left),
// keeping its proportions and so its design.
func (p *pdfPages) figure(fig plot.Chart) {
	if !p.fresh && p.left() < 0.6*(bottom-margin) {
		p.newPage()
	}
	img, ok := p.pngs[fig.Name]
	if !ok {
		var buf bytes.Buffer
		if err := fig.WriteTo(&buf, "png"); err != nil {
			p.f.SetError(fmt.Errorf("figure %s: %w", fig.Name, err))
			return
		}
		img = buf.Bytes()
	}
	p.f.RegisterImageOptionsReader(fig.Name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(img))
	availW, availH := textW, p.left()-4
	fw, fh := float64(fig.Width.Points()), float64(fig.Height.Points())
	scale := math.Min(availW/fw, availH/fh)
	w, h := fw*scale, fh*scale
	p.f.ImageOptions(fig.Name, margin+(availW-w)/2, p.y, w, h, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	// One figure per page reads best: what follows starts a new page.
	p.y = bottom
	p.fresh = false
	p.hasFigure = true
}

// FormatOf is the report format ("pdf" or "md") that the extension of the
// file out names, "" for none.
func FormatOf(out string) string {
	switch strings.ToLower(filepath.Ext(out)) {
	case ".pdf":
		return "pdf"
	case ".md", ".markdown":
		return "md"
	}
	return ""
}

// Output is the file and format ("pdf" or "md") of the report of the
// results file in, from -o and --format: a PDF beside the input by default, the format from the file's
// extension unless given.
func Output(in, out, format string) (string, string, error) {
	if format == "markdown" {
		format = "md"
	}
	if out == "" {
		ext := ".pdf"
		if format == "md" {
			ext = ".md"
		}
		out = results.Stem(in) + "-report" + ext
	}
	if format == "" {
		if format = FormatOf(out); format == "" {
			return "", "", fmt.Errorf("cannot tell the report format from %q: name a .pdf or .md file, or give --format pdf|md", out)
		}
	}
	if format != "pdf" && format != "md" {
		return "", "", fmt.Errorf("unknown report format %q; the formats are pdf and md", format)
	}
	// A file named for one format and asked in the other would be misnamed.
	switch ext := strings.ToLower(filepath.Ext(out)); {
	case format == "pdf" && (ext == ".md" || ext == ".markdown"), format == "md" && ext == ".pdf":
		return "", "", fmt.Errorf("--format %s, but -o %s names a %s file: give a name that fits, or leave --format out", format, results.QuoteShort(out), strings.TrimPrefix(ext, "."))
	}
	return out, format, nil
}
