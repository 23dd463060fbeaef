package report

import (
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
)

// A4 landscape: wide tables and figures fit better across than down.
const (
	pageW  = 841.89 // points
	pageH  = 595.28
	margin = 36
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

func style(variant font.Variant, size float64, bold bool, clr color.Color) text.Style {
	f := font.Font{Typeface: "Liberation", Variant: variant, Size: font.Length(size)}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{Color: clr, Font: f, Handler: text.Plain{Fonts: font.DefaultCache}, XAlign: draw.XLeft, YAlign: draw.YTop}
}

// WritePDF writes the document as a multi-page PDF: A4 landscape, the
// footer on every page, and SIMULATED across every page of a simulated run.
func (d *Document) WritePDF(w io.Writer) error {
	p := &pdfPages{doc: d, c: plot.NewPDFCanvas(pageW, pageH), page: 1}
	p.top()
	for _, b := range d.blocks {
		p.render(b)
	}
	p.finishPage()
	_, err := p.c.WriteTo(w)
	return err
}

// pdfPages flows blocks down pages.
type pdfPages struct {
	doc  *Document
	c    plot.PDFCanvas
	page int
	y    vg.Length // top of the free space
	// fresh is true while nothing but headings is on the page.
	fresh bool
	// hasFigure is true when the page holds a figure, which carries its
	// own SIMULATED watermark.
	hasFigure bool
}

func (p *pdfPages) canvas() draw.Canvas {
	return draw.Canvas{Canvas: p.c, Rectangle: vg.Rectangle{Max: vg.Point{X: pageW, Y: pageH}}}
}

// text draws one line of text on the current page.
func (p *pdfPages) text(s text.Style, pt vg.Point, txt string) {
	c := p.canvas()
	c.FillText(s, pt, txt)
}

// line strokes a line on the current page.
func (p *pdfPages) line(s draw.LineStyle, x0, y0, x1, y1 vg.Length) {
	c := p.canvas()
	c.StrokeLine2(s, x0, y0, x1, y1)
}

func (p *pdfPages) top() {
	p.y = pageH - margin
	p.fresh = true
	p.hasFigure = false
}

// bottom is the lowest y content may use, above the footer.
const bottom = margin + 18

func (p *pdfPages) newPage() {
	p.finishPage()
	p.c.NextPage()
	p.page++
	p.top()
}

// finishPage draws the footer and, for a simulated run, the watermark.
func (p *pdfPages) finishPage() {
	c := p.canvas()
	c.StrokeLine2(draw.LineStyle{Color: ruleGrey, Width: 0.5}, margin, margin+12, pageW-margin, margin+12)
	s := style("Sans", 8, false, darkGrey)
	s.YAlign = draw.YBottom
	c.FillText(s, vg.Point{X: margin, Y: margin}, p.doc.footer)
	s.XAlign = draw.XRight
	c.FillText(s, vg.Point{X: pageW - margin, Y: margin}, "page "+strconv.Itoa(p.page))
	if p.doc.sim && !p.hasFigure {
		w := style("Sans", 96, false, color.RGBA{R: 24, G: 4, B: 4, A: 31}) // alertRed at 12% opacity, premultiplied
		w.Rotation = math.Atan2(pageH, pageW)
		w.XAlign, w.YAlign = draw.XCenter, draw.YCenter
		c.FillText(w, vg.Point{X: pageW / 2, Y: pageH / 2}, "SIMULATED")
	}
}

// need starts a new page unless h points fit.
func (p *pdfPages) need(h vg.Length) {
	if p.y-h < bottom && !p.fresh {
		p.newPage()
	}
}

func (p *pdfPages) render(b block) {
	if b.pageBreak && !p.fresh {
		p.newPage()
	}
	switch b.kind {
	case headingBlock:
		size := 16.0
		if b.level > 1 {
			size = 12.5
		}
		s := style("Sans", size, true, black)
		// Keep a heading with at least a few lines of what follows.
		p.need(s.Height(b.text) + 60)
		p.y -= 4
		p.text(s, vg.Point{X: margin, Y: p.y}, b.text)
		p.y -= s.Height(b.text) + 8
	case paraBlock:
		p.paragraph(b.text, style("Sans", 10, false, black), 0)
		p.fresh = false
	case bannerBlock:
		p.banner(b.text)
		p.fresh = false
	case verdictBlock:
		p.verdict(b)
		p.fresh = false
	case tableBlock:
		if b.table.title != "" {
			s := style("Sans", 10, true, black)
			lineH := s.Height("Mg") * 1.3
			// Keep the title with the table's first rows.
			p.need(lineH*vg.Length(len(wrap(b.table.title, pageW-2*margin, s))) + 60)
			p.paragraph(b.table.title, s, 0)
		}
		p.table(b.table)
		for _, n := range b.table.notes {
			p.paragraph(n, style("Sans", 8.5, false, darkGrey), 0)
		}
		p.fresh = false
	case figureBlock:
		p.figure(b.figure)
		p.fresh = false
	}
}

// paragraph writes wrapped text indented by indent.
func (p *pdfPages) paragraph(txt string, s text.Style, indent vg.Length) {
	lineH := s.Height("Mg") * 1.3
	for _, line := range wrap(txt, pageW-2*margin-indent, s) {
		p.need(lineH)
		p.text(s, vg.Point{X: margin + indent, Y: p.y}, line)
		p.y -= lineH
	}
	p.y -= 6
}

func (p *pdfPages) banner(txt string) {
	s := style("Sans", 11, true, alertRed)
	lines := wrap(txt, pageW-2*margin-16, s)
	lineH := s.Height("Mg") * 1.3
	h := lineH*vg.Length(len(lines)) + 12
	p.need(h)
	c := p.canvas()
	r := vg.Rectangle{Min: vg.Point{X: margin, Y: p.y - h}, Max: vg.Point{X: pageW - margin, Y: p.y}}
	c.SetColor(bannerRed)
	c.Fill(r.Path())
	c.SetLineStyle(draw.LineStyle{Color: alertRed, Width: 1.5})
	c.Stroke(r.Path())
	y := p.y - 6
	for _, l := range lines {
		c.FillText(s, vg.Point{X: margin + 8, Y: y}, l)
		y -= lineH
	}
	p.y -= h + 10
}

// verdict draws the verdict in large: its status in a box of the status's
// colour, the line beside it on the light colour.
func (p *pdfPages) verdict(b block) {
	big := style("Sans", 28, true, color.White)
	line := style("Sans", 12, true, black)
	boxW := max(big.Width("WARN"), big.Width(b.text)) + 48
	lines := wrap(b.line, pageW-2*margin-boxW-16, line)
	lineH := line.Height("Mg") * 1.3
	h := max(big.Height("M")+16, lineH*vg.Length(len(lines))+16)
	p.need(h)
	c := p.canvas()
	cols := statusColors[b.status]
	r := vg.Rectangle{Min: vg.Point{X: margin, Y: p.y - h}, Max: vg.Point{X: margin + boxW, Y: p.y}}
	c.SetColor(cols[1])
	c.Fill(r.Path())
	big.XAlign, big.YAlign = draw.XCenter, draw.YCenter
	c.FillText(big, vg.Point{X: margin + boxW/2, Y: p.y - h/2}, b.text)
	rest := vg.Rectangle{Min: vg.Point{X: margin + boxW, Y: p.y - h}, Max: vg.Point{X: pageW - margin, Y: p.y}}
	c.SetColor(cols[0])
	c.Fill(rest.Path())
	y := p.y - (h-lineH*vg.Length(len(lines)))/2
	for _, l := range lines {
		c.FillText(line, vg.Point{X: margin + boxW + 12, Y: y}, l)
		y -= lineH
	}
	p.y -= h + 12
}

// wrap breaks txt into lines no wider than w.
func wrap(txt string, w vg.Length, s text.Style) []string {
	var lines []string
	for _, para := range strings.Split(txt, "\n") {
		words := strings.Fields(para)
		if len(words) == 0 {
			lines = append(lines, "")
			continue
		}
		line := words[0]
		for _, word := range words[1:] {
			if s.Width(line+" "+word) > w {
				lines = append(lines, line)
				line = word
				continue
			}
			line += " " + word
		}
		// A single word longer than the line is cut, so nothing overflows.
		for s.Width(line) > w && len(line) > 1 {
			cut := len(line) * int(w) / int(s.Width(line))
			if cut < 1 {
				cut = 1
			}
			lines = append(lines, line[:cut])
			line = line[cut:]
		}
		lines = append(lines, line)
	}
	return lines
}

// pdfTable is a table laid out for the page: its styles and column widths.
type pdfTable struct {
	*table
	body, head text.Style
	widths     []vg.Length
	lineH      vg.Length
}

// cellPad is the space around a cell's text.
const cellPad = 8

// layoutTable fits t to the page's width: it wraps the widest column into
// what the others leave, if that leaves it a useful width, or else tries a
// smaller font.
func layoutTable(t *table) *pdfTable {
	avail := vg.Length(pageW - 2*margin)
	lt := &pdfTable{table: t}
	for size := 8.5; ; size -= 0.5 {
		lt.body = style("Sans", size, false, black)
		lt.head = style("Sans", size, true, black)
		lt.lineH = lt.body.Height("Mg") * 1.25
		lt.widths = make([]vg.Length, len(t.header))
		for i, h := range t.header {
			lt.widths[i] = lt.head.Width(h) + cellPad
		}
		for _, row := range t.rows {
			for i, cell := range row {
				if i < len(lt.widths) {
					lt.widths[i] = max(lt.widths[i], lt.body.Width(cell)+cellPad)
				}
			}
		}
		total := sum(lt.widths)
		if total <= avail {
			return lt
		}
		wi := 0
		for i := range lt.widths {
			if lt.widths[i] > lt.widths[wi] {
				wi = i
			}
		}
		if rest := total - lt.widths[wi]; avail-rest >= 140 || size <= 6 {
			lt.widths[wi] = max(avail-rest, 60)
			return lt
		}
	}
}

// cells wraps a row's cells into their columns and returns how many lines
// the row takes.
func (lt *pdfTable) cells(row []string, s text.Style) ([][]string, int) {
	out := make([][]string, len(lt.widths))
	n := 1
	for i := range lt.widths {
		cell := ""
		if i < len(row) {
			cell = row[i]
		}
		out[i] = wrap(cell, lt.widths[i]-cellPad, s)
		n = max(n, len(out[i]))
	}
	return out, n
}

// drawRow draws one row at the top of the free space, on fill if not nil,
// the cells of shade (by column) on their status's colour.
func (p *pdfPages) drawRow(lt *pdfTable, row []string, s text.Style, fill color.Color, shade map[int]results.Status) {
	lines, n := lt.cells(row, s)
	h := lt.lineH*vg.Length(n) + 3
	c := p.canvas()
	if fill != nil {
		c.SetColor(fill)
		c.Fill(vg.Rectangle{Min: vg.Point{X: margin, Y: p.y - h}, Max: vg.Point{X: margin + sum(lt.widths), Y: p.y}}.Path())
	}
	x := vg.Length(margin)
	for i, w := range lt.widths {
		if st, ok := shade[i]; ok {
			c.SetColor(statusColors[st][0])
			c.Fill(vg.Rectangle{Min: vg.Point{X: x + 1, Y: p.y - h + 1}, Max: vg.Point{X: x + w - 1, Y: p.y - 1}}.Path())
		}
		x += w
	}
	x = vg.Length(margin)
	for i, w := range lt.widths {
		for j, l := range lines[i] {
			ts := s
			tx := x + cellPad/2
			if i < len(lt.align) && lt.align[i] == 'r' {
				ts.XAlign = draw.XRight
				tx = x + w - cellPad/2
			}
			c.FillText(ts, vg.Point{X: tx, Y: p.y - 1.5 - lt.lineH*vg.Length(j)}, l)
		}
		x += w
	}
	p.y -= h
}

// table draws t, striped, repeating the header on each new page.
func (p *pdfPages) table(t *table) {
	lt := layoutTable(t)
	header := func() {
		p.drawRow(lt, t.header, lt.head, headGrey, nil)
		p.line(draw.LineStyle{Color: ruleGrey, Width: 0.6}, margin, p.y, margin+sum(lt.widths), p.y)
	}
	_, hn := lt.cells(t.header, lt.head)
	_, fn := lt.cells(t.rows[0], lt.body)
	p.need(lt.lineH*vg.Length(hn+fn) + 8)
	header()
	for i, row := range t.rows {
		if _, n := lt.cells(row, lt.body); p.y-(lt.lineH*vg.Length(n)+3) < bottom {
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
		p.drawRow(lt, row, lt.body, fill, shade)
	}
	p.y -= 12
}

func sum(ws []vg.Length) vg.Length {
	var t vg.Length
	for _, w := range ws {
		t += w
	}
	return t
}

// figure draws a figure scaled to fit the rest of the page (a new page if
// little is left), keeping its proportions and so its design.
func (p *pdfPages) figure(f plot.Figure) {
	if !p.fresh && p.y-bottom < 0.6*(pageH-margin-bottom) {
		p.newPage()
	}
	availW, availH := vg.Length(pageW-2*margin), p.y-bottom-4
	scale := math.Min(float64(availW/f.Width), float64(availH/f.Height))
	w, h := f.Width*vg.Length(scale), f.Height*vg.Length(scale)
	x0, y0 := margin+(availW-w)/2, p.y-h
	c := p.c
	c.Push()
	c.Translate(vg.Point{X: x0, Y: y0})
	c.Scale(scale, scale)
	f.Draw(draw.Canvas{Canvas: c, Rectangle: vg.Rectangle{Max: vg.Point{X: f.Width, Y: f.Height}}})
	c.Pop()
	// One figure per page reads best: what follows starts a new page.
	p.y = bottom
	p.fresh = false
	p.hasFigure = true
}
