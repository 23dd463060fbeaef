package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// cellKind says what a heatmap cell shows.
type cellKind int

const (
	cellMissing cellKind = iota // no figure for the pair
	cellValue                   // a measured median
	cellError                   // the figure has an error
	cellBadData                 // the data did not verify
	cellSelf                    // src == dst: not a peer pair
)

type cell struct {
	kind  cellKind
	value float64
}

// heatmap is a source × destination matrix of one bandwidth test.
type heatmap struct {
	name, title, subtitle string
	devs                  []int
	cells                 [][]cell // [row = source][column = destination]
	lo, hi                float64  // colour scale
	// scaleNote says what the colour scale runs between, under the title.
	scaleNote string
	unit      results.Unit
}

// heatmapSpec says how to draw one test's matrix.
type heatmapSpec struct {
	test      results.Test
	direction results.Direction
	part      results.Part
	title     string
}

// heatmapSpecs lists the matrices in catalogue order: the matrix tests
// (both-ways tests as each direction's total), every pair's share of
// each test of every ordered pair at once, and the one-direction bandwidth tests across processes (IPC
// latency and both-way figures have figures of their own kinds).
func heatmapSpecs(ix *index) []heatmapSpec {
	var specs []heatmapSpec
	for _, info := range results.Catalogue() {
		switch twin := info.SameProcess.Info(); {
		case info.Matrix && info.BothWays:
			specs = append(specs,
				heatmapSpec{test: info.Name, direction: results.DirRead, part: results.PartTotal, title: info.Title + ", both pulling: total"},
				heatmapSpec{test: info.Name, direction: results.DirWrite, part: results.PartTotal, title: info.Title + ", both pushing: total"})
		case info.Matrix:
			specs = append(specs, heatmapSpec{test: info.Name, title: info.Title})
		case info.Shape.Ends == results.EndsAllPairs:
			specs = append(specs, heatmapSpec{test: info.Name, part: results.PartPair, title: info.Title + ": each pair's share"})
		case twin.Matrix && !twin.BothWays && len(ix.byTest[info.Name]) > 0:
			specs = append(specs, heatmapSpec{test: info.Name, title: info.Title})
		}
	}
	return specs
}

// heatmaps builds the matrices the run has figures for, at the matrix size.
func heatmaps(ix *index) []*heatmap {
	if len(ix.devs) < 2 {
		return nil
	}
	pos := map[int]int{}
	for i, d := range ix.devs {
		pos[d] = i
	}
	var out []*heatmap
	for _, spec := range heatmapSpecs(ix) {
		if m := ix.heatmap(spec, pos); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// matches reports whether f has the spec's direction and part.
func (s heatmapSpec) matches(f *results.Figure) bool {
	return f.Part == s.part && (s.direction == "" || f.Direction == s.direction)
}

// sizeAndEngine picks what a matrix of figs shows: the matrix size, or for
// tests that shrink transfers to share buffers (all_pairs) their most
// common size; and of several engines (a tuning run's variants), which
// would fight over the cells, the most common.
func (ix *index) sizeAndEngine(spec heatmapSpec, figs []*results.Figure) (uint64, results.Engine) {
	size := ix.matrixSize
	sizes := map[uint64]int{}
	for _, f := range figs {
		if spec.matches(f) && f.Src >= 0 && f.Dst >= 0 {
			sizes[f.Size]++
		}
	}
	if sizes[size] == 0 {
		for _, z := range sortedKeys(sizes) {
			if sizes[z] >= sizes[size] {
				size = z
			}
		}
	}
	engines := map[results.Engine]int{}
	for _, f := range figs {
		if f.Size == size && spec.matches(f) {
			engines[f.Engine]++
		}
	}
	engine, best := results.Engine(""), -1
	for _, e := range sortedKeys(engines) {
		if engines[e] > best {
			engine, best = e, engines[e]
		}
	}
	return size, engine
}

// heatmap builds the matrix of one spec, nil when the run has no figure
// for it (or, across processes, too few pairs to be worth a matrix).
func (ix *index) heatmap(spec heatmapSpec, pos map[int]int) *heatmap {
	figs := ix.byTest[spec.test]
	size, engine := ix.sizeAndEngine(spec, figs)
	n := len(ix.devs)
	m := &heatmap{devs: ix.devs, cells: make([][]cell, n), unit: results.UnitGBps}
	for i := range m.cells {
		m.cells[i] = make([]cell, n)
		m.cells[i][i].kind = cellSelf
	}
	filled := 0
	var sc scaleRefs
	for _, f := range figs {
		r, rok := pos[f.Src]
		c, cok := pos[f.Dst]
		if f.Size != size || !spec.matches(f) || f.Engine != engine || f.Unit != results.UnitGBps || !rok || !cok || r == c {
			continue
		}
		filled++
		switch v, ok := f.Value(); {
		case f.Error != "":
			m.cells[r][c] = cell{kind: cellError}
		case f.Verify == results.VerifyFailed:
			m.cells[r][c] = cell{kind: cellBadData}
		case ok:
			m.cells[r][c] = cell{kind: cellValue, value: v}
			sc.add(ix.figureVerdicts[f.Key()])
		}
	}
	// A few IPC pairs make a matrix of dashes: the report's tables show
	// them better.
	if filled == 0 || spec.test.IsIPC() && filled < n*(n-1)/2 {
		return nil
	}
	m.name = "heatmap_" + string(spec.test)
	m.subtitle = "row = source, column = destination, " + transferText(size, ix.matrixSize, len(ix.devs)) + ", median of samples"
	if spec.test.Info().BothWays {
		m.mirrorBidir()
		m.name += "_" + string(spec.direction)
		m.subtitle = "both directions' bytes, " + m.subtitle
	}
	m.title = spec.title
	if v := engine.Variant(); v != "" {
		m.title += ", kernel " + v
	}
	m.title += ", " + string(m.unit)
	m.scale(sc)
	return m
}

// transferText says a matrix's transfer size as a buyer reads it: "512 MiB
// per transfer", or for a size that is the matrix size shared among a
// device's peers (all_pairs) "512 MiB from each GPU, 1/7 to each peer".
func transferText(size, matrixSize uint64, gpus int) string {
	if size != matrixSize && matrixSize > 0 && gpus > 2 {
		if k := float64(matrixSize) / float64(size); math.Abs(k-float64(gpus-1)) < 0.01*k {
			return fmt.Sprintf("%s from each GPU, 1/%d to each peer", results.FormatBytes(matrixSize), gpus-1)
		}
	}
	return results.FormatBytes(size) + " per transfer"
}

// scaleRefs gathers what a matrix's colour scale runs between: the least
// its judged figures must reach to pass (the verdict's bound) and what
// they are expected to reach.
type scaleRefs struct {
	bound, expected float64 // lowest bound, highest expectation
}

func (sc *scaleRefs) add(fv results.FigureVerdict) {
	if fv.Bound > 0 && (sc.bound == 0 || fv.Bound < sc.bound) {
		sc.bound = fv.Bound
	}
	sc.expected = max(sc.expected, fv.Expected)
}

// mirrorBidir fills a missing cell (d, s) from (s, d): a bidirectional
// measurement of the pair is the same whichever end it is filed under.
func (m *heatmap) mirrorBidir() {
	for r := range m.cells {
		for c := range m.cells[r] {
			if m.cells[r][c].kind == cellMissing && m.cells[c][r].kind != cellMissing {
				m.cells[r][c] = m.cells[c][r]
			}
		}
	}
}

// scale sets the colour scale. Of judged figures it runs from the least
// they must reach to pass (the verdict's bound) to what they are expected
// to reach, or where the verdict has no expectation to the best pair's: a
// pair 5% below its class then stands a sixth of the scale or more below
// it (half of it where pass-at figures lie 10% under the expected ones),
// in another colour, and one that fails is the darkest. (The link limit,
// 10-15% above the best a copy reaches, would squeeze the pairs into the
// scale's top.) Without a
// verdict it runs from 85% of the median (or the lowest value, where lower)
// to the highest, so that a uniform matrix does not look varied and a pair
// 5% slow still stands out.
func (m *heatmap) scale(sc scaleRefs) {
	var vs []float64
	for _, row := range m.cells {
		for _, c := range row {
			if c.kind == cellValue {
				vs = append(vs, c.value)
			}
		}
	}
	if len(vs) == 0 {
		m.lo, m.hi = 0, 1
		return
	}
	slices.Sort(vs)
	top, what := sc.expected, "expected"
	if top <= sc.bound {
		top, what = vs[len(vs)-1], "the best pair"
	}
	unit := " " + string(m.unit)
	switch {
	case sc.bound > 0 && top > sc.bound:
		m.lo, m.hi = sc.bound, top
		// The ends as the cells and the report's tables round them: a
		// pass-at figure is a product (0.9 × 393.45) with float tails.
		m.scaleNote = fmt.Sprintf("colour from %s%s (the least to pass) to %s%s (%s)", formatValue(m.lo), unit, formatValue(m.hi), unit, what)
	default:
		m.lo, m.hi = min(vs[0], 0.85*figstats.Median(vs)), vs[len(vs)-1]
		if m.hi-m.lo < 1e-9 {
			m.lo, m.hi = m.hi-1, m.hi+1
		}
	}
}

func (m *heatmap) size() (vg.Length, vg.Length) {
	switch n := len(m.devs); {
	case n <= 4:
		return 7 * vg.Inch, 5.6 * vg.Inch
	case n <= 8:
		return 8 * vg.Inch, 6.8 * vg.Inch
	case n <= 16:
		return 9 * vg.Inch, 8 * vg.Inch
	}
	return 10 * vg.Inch, 9.2 * vg.Inch
}

// color maps a value to the viridis scale, a value beyond the scale to
// its end.
func (m *heatmap) color(v float64) color.RGBA {
	return viridis(min(max((v-m.lo)/(m.hi-m.lo), 0), 1))
}

func (m *heatmap) draw(c draw.Canvas) {
	body := drawHeader(c, m.title, m.subtitle, m.key())
	n := len(m.devs)
	scaleW := vg.Inch
	p := newPlot("", "destination GPU", "source GPU")
	p.Add(&cellsPlotter{m: m})
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	// Row 0 at the top, as in a table.
	p.Y.Scale = plot.InvertedScale{Normalizer: plot.LinearScale{}}
	p.X.Tick.Marker = deviceTicks(m.devs)
	p.Y.Tick.Marker = deviceTicks(m.devs)
	p.X.Padding, p.Y.Padding = 0, 0
	area := draw.Crop(body, 0, -scaleW, 0, 0)
	// Square cells: shrink the longer side of the plot area.
	dc := p.DataCanvas(area)
	dw, dh := dc.Max.X-dc.Min.X, dc.Max.Y-dc.Min.Y
	if dw > dh {
		area = draw.Crop(area, 0, -(dw - dh), 0, 0)
	} else if dh > dw {
		area = draw.Crop(area, 0, 0, 0, -(dh - dw))
	}
	p.Draw(area)
	dc = p.DataCanvas(area)
	bar := vg.Rectangle{
		Min: vg.Point{X: dc.Max.X + vg.Points(18), Y: dc.Min.Y},
		Max: vg.Point{X: dc.Max.X + vg.Points(32), Y: dc.Max.Y},
	}
	drawColorScale(c, bar, m.lo, m.hi, string(m.unit), viridis)
}

// bigMatrix is the device count beyond which cells are too small for text:
// failed cells are then filled red to stand out without a label.
const bigMatrix = 16

// key explains the marks used for cells without a value, if any appear.
func (m *heatmap) key() string {
	seen := map[cellKind]bool{}
	for _, row := range m.cells {
		for _, c := range row {
			seen[c.kind] = true
		}
	}
	var parts []string
	if seen[cellError] {
		parts = append(parts, "ERR = the measurement failed")
	}
	if seen[cellBadData] {
		parts = append(parts, "BAD DATA = the data moved did not verify")
	}
	if seen[cellMissing] {
		parts = append(parts, "— = not measured")
	}
	if len(parts) == 0 {
		return m.scaleNote
	}
	if len(m.devs) > bigMatrix {
		var big []string
		if seen[cellError] || seen[cellBadData] {
			big = append(big, "red cells: the measurement failed or its data did not verify")
		}
		if seen[cellMissing] {
			big = append(big, "grey cells: not measured")
		}
		return joinNonEmpty(append(big, m.scaleNote), "; ")
	}
	return joinNonEmpty([]string{"hatched cells: " + strings.Join(parts, "; "), m.scaleNote}, "; ")
}

// joinNonEmpty joins the non-empty of parts with sep.
func joinNonEmpty(parts []string, sep string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), sep)
}

// deviceTicks labels every device, or every k-th when there are too many to
// read (the others get minor ticks).
func deviceTicks(devs []int) plot.ConstantTicks {
	step := 1
	if len(devs) > 24 {
		step = int(math.Ceil(float64(len(devs)) / 18))
	}
	ticks := make(plot.ConstantTicks, len(devs))
	for i, d := range devs {
		ticks[i].Value = float64(i)
		if i%step == 0 {
			ticks[i].Label = strconv.Itoa(d)
		}
	}
	return ticks
}

// cellsPlotter draws the matrix cells with their annotations.
type cellsPlotter struct{ m *heatmap }

func (cp *cellsPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	n := float64(len(cp.m.devs))
	return -0.5, n - 0.5, -0.5, n - 0.5
}

func (cp *cellsPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	m := cp.m
	trX, trY := p.Transforms(&c)
	n := len(m.devs)
	l := cellsLayout{n: n, cellW: trX(0.5) - trX(-0.5), border: n <= 24}
	cellH := vg.Length(math.Abs(float64(trY(0.5) - trY(-0.5))))
	// Annotations shrink with the cells and are dropped when they would be
	// smaller than 5 points: a 72-GPU matrix is read by its colours.
	l.fontSize = math.Min(9, math.Min(float64(l.cellW)/3.3, float64(cellH)/1.6))
	l.annotate = l.fontSize >= 5 && n <= bigMatrix
	for r := 0; r < n; r++ {
		y0, y1 := trY(float64(r)-0.5), trY(float64(r)+0.5)
		if y0 > y1 {
			y0, y1 = y1, y0
		}
		for col := 0; col < n; col++ {
			// Plain cells (a fill alone) of one colour side by side in a
			// row are filled as one rectangle: a big matrix of a sampled
			// plan is mostly missing cells, and filling 5,184 cells one by
			// one was most of a heatmap's drawing.
			lk := l.look(m, m.cells[r][col])
			last := col
			for l.plain(lk) && last+1 < n {
				next := l.look(m, m.cells[r][last+1])
				if !l.plain(next) || !sameColor(next.fill, lk.fill) {
					break
				}
				last++
			}
			rect := vg.Rectangle{Min: vg.Point{X: trX(float64(col) - 0.5), Y: y0}, Max: vg.Point{X: trX(float64(last) + 0.5), Y: y1}}
			l.draw(c, rect, lk)
			col = last
		}
	}
}

// cellsLayout is how a matrix of n devices is drawn: the cells' width, the
// annotations' font size, whether cells are annotated and bordered.
type cellsLayout struct {
	n                int
	cellW            vg.Length
	fontSize         float64
	annotate, border bool
}

// cellLook is how a cell is drawn: its fill and label, whether it failed
// and whether it is hatched.
type cellLook struct {
	fill            color.Color
	label           string
	failed, hatched bool
}

// look is how cell cl of matrix m is drawn.
func (l cellsLayout) look(m *heatmap, cl cell) cellLook {
	var lk cellLook
	switch cl.kind {
	case cellValue:
		lk.fill, lk.label = m.color(cl.value), formatValue(cl.value)
	case cellSelf:
		lk.fill = paleGrey
	case cellError:
		lk.fill, lk.label = lightGrey, "ERR"
	case cellBadData:
		lk.fill, lk.label = lightGrey, "BAD DATA"
	default:
		lk.fill, lk.label = lightGrey, "—"
	}
	lk.failed = cl.kind == cellError || cl.kind == cellBadData
	if lk.failed && !l.annotate {
		lk.fill = alertRed
	}
	// A big matrix's missing cells are plain grey: hatching thousands of
	// cells a few points wide (a sampled plan's matrices are mostly
	// missing) took longer than the rest.
	lk.hatched = cl.kind == cellMissing && l.n <= bigMatrix || lk.failed && l.annotate
	return lk
}

// plain reports whether a cell that looks like lk is a fill alone.
func (l cellsLayout) plain(lk cellLook) bool {
	return !l.border && !lk.hatched && !(l.annotate && lk.label != "")
}

// draw draws the cells of rect, which look like lk: the fill, the hatching,
// the border and the label.
func (l cellsLayout) draw(c draw.Canvas, rect vg.Rectangle, lk cellLook) {
	c.SetColor(lk.fill)
	c.Fill(rect.Path())
	if lk.hatched {
		hatchRect(c, rect, draw.LineStyle{Color: midGrey, Width: vg.Points(0.5)}, vg.Length(math.Max(3, math.Min(6, float64(l.cellW)/4))))
	}
	if l.border {
		c.SetLineStyle(draw.LineStyle{Color: white, Width: vg.Points(1)})
		c.Stroke(rect.Path())
	}
	if !l.annotate || lk.label == "" {
		return
	}
	sty := textStyle(l.fontSize, textOn(lk.fill))
	if lk.failed {
		sty = boldStyle(l.fontSize, alertRed)
	}
	if w := sty.Width(lk.label); w > l.cellW*0.9 {
		// A failure label is longer than a value: it shrinks to fit.
		sty.Font.Size *= font.Length(l.cellW * 0.9 / w)
	}
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, vg.Point{X: (rect.Min.X + rect.Max.X) / 2, Y: (rect.Min.Y + rect.Max.Y) / 2}, lk.label)
}

// sameColor reports whether a and b are one colour.
func sameColor(a, b color.Color) bool {
	ar, ag, ab, aa := a.RGBA()
	br, bg, bb, ba := b.RGBA()
	return ar == br && ag == bg && ab == bb && aa == ba
}

// hatchRect strokes 45° lines spaced step apart across r.
func hatchRect(c draw.Canvas, r vg.Rectangle, sty draw.LineStyle, step vg.Length) {
	w, h := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
	for d := -h + step/2; d < w; d += step {
		// The line u - v = d in the rectangle's own coordinates.
		u0 := max(0, d)
		u1 := min(w, h+d)
		if u1 <= u0 {
			continue
		}
		c.StrokeLine2(sty, r.Min.X+u0, r.Min.Y+u0-d, r.Min.X+u1, r.Min.Y+u1-d)
	}
}

// drawColorScale draws a vertical colour bar in rect with ticks and the
// unit; colors maps [0, 1] (lo to hi) to a colour.
func drawColorScale(c draw.Canvas, rect vg.Rectangle, lo, hi float64, unit string, colors func(float64) color.RGBA) {
	const steps = 64
	h := rect.Max.Y - rect.Min.Y
	for i := 0; i < steps; i++ {
		y0 := rect.Min.Y + h*vg.Length(i)/steps
		y1 := rect.Min.Y + h*vg.Length(i+1)/steps
		c.SetColor(colors((float64(i) + 0.5) / steps))
		// Overlap slightly so no hairline gaps show between steps.
		c.Fill(vg.Rectangle{Min: vg.Point{X: rect.Min.X, Y: y0}, Max: vg.Point{X: rect.Max.X, Y: y1 + vg.Points(0.3)}}.Path())
	}
	c.SetLineStyle(draw.LineStyle{Color: darkGrey, Width: vg.Points(0.5)})
	c.Stroke(rect.Path())
	tick := textStyle(tickSize, black)
	tick.YAlign = draw.YCenter
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.IsMinor() || t.Value < lo || t.Value > hi {
			continue
		}
		y := rect.Min.Y + h*vg.Length((t.Value-lo)/(hi-lo))
		c.StrokeLine2(draw.LineStyle{Color: darkGrey, Width: vg.Points(0.5)}, rect.Max.X, y, rect.Max.X+vg.Points(3), y)
		c.FillText(tick, vg.Point{X: rect.Max.X + vg.Points(5), Y: y}, tickLabel(t.Value))
	}
	// The unit runs up the right of the tick labels, where nothing else is.
	labelW := vg.Length(0)
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if !t.IsMinor() {
			labelW = max(labelW, tick.Width(tickLabel(t.Value)))
		}
	}
	u := boldStyle(labelSize, black)
	u.Rotation = math.Pi / 2
	u.XAlign, u.YAlign = draw.XCenter, draw.YTop
	c.FillText(u, vg.Point{X: rect.Max.X + vg.Points(9) + labelW + vg.Points(4), Y: (rect.Min.Y + rect.Max.Y) / 2}, unit)
}

// drawHeader writes a title, a subtitle and an optional note at the top of c
// and returns the canvas below them.
func drawHeader(c draw.Canvas, title, subtitle, note string) draw.Canvas {
	y := c.Max.Y
	t := boldStyle(titleSize, black)
	t.XAlign, t.YAlign = draw.XCenter, draw.YTop
	mid := (c.Min.X + c.Max.X) / 2
	c.FillText(t, vg.Point{X: mid, Y: y}, title)
	y -= t.Height(title) + vg.Points(3)
	for _, line := range []string{subtitle, note} {
		if line == "" {
			continue
		}
		s := textStyle(labelSize, darkGrey)
		s.XAlign, s.YAlign = draw.XCenter, draw.YTop
		c.FillText(s, vg.Point{X: mid, Y: y}, line)
		y -= s.Height(line) + vg.Points(2)
	}
	return draw.Crop(c, 0, 0, 0, -(c.Max.Y-y)-vg.Points(6))
}
