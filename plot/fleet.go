package plot

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FleetGrid is a node × figure matrix for FleetHeatmap: each cell is how
// far one node's figure of a kind lies from the kind's median across the
// nodes of its machine type, in percent, positive = better (a higher rate, a
// shorter time).
type FleetGrid struct {
	Rows, Columns []string
	// Cells[row][column] is the deviation; NaN where the node has no figure
	// of the kind. Flagged marks the figures below their peers.
	Cells   [][]float64
	Flagged [][]bool
}

// FleetColumn is one figure kind's spread across the nodes of a machine
// type, for FleetSpread: deviations from the kind's median in percent,
// positive = better.
type FleetColumn struct {
	Label    string
	Min, Max float64
	// Band is the half-width of the range within which no figure is
	// below its peers (the least deficit).
	Band  float64
	Below []FleetPoint
}

// FleetPoint is one figure below its peers: its deviation and whose it is.
type FleetPoint struct {
	Deviation float64
	Label     string
}

// fleetColorLimit is the deviation, in percent, at which heatmap colours
// saturate (unless the band is wider).
const fleetColorLimit = 20

// FleetHeatmap draws the grid with a diverging colour scale: red worse, blue
// better, white at the median; figures below their peers framed in black. caption and
// simulated are as a run's figures have them.
func FleetHeatmap(name, title, subtitle string, g FleetGrid, caption []string, simulated bool) Chart {
	h := vg.Length(math.Min(13, math.Max(5, 3.2+0.17*float64(len(g.Rows))))) * vg.Inch
	return Chart{Name: name, Title: title, Width: 11 * vg.Inch, Height: h, caption: caption, simulated: simulated,
		body: func(c draw.Canvas) { drawFleetHeatmap(c, title, subtitle, g) }}
}

// diverging maps a deviation in [-limit, limit] to red (worse) through
// white to blue (better).
func diverging(v, limit float64) color.RGBA {
	t := math.Max(-1, math.Min(1, v/limit))
	end := color.RGBA{R: 0x21, G: 0x66, B: 0xAC, A: 255} // blue
	if t < 0 {
		end, t = color.RGBA{R: 0xB2, G: 0x18, B: 0x2B, A: 255}, -t // red
	}
	mix := func(e uint8) uint8 { return uint8(math.Round(255 + t*(float64(e)-255))) }
	return color.RGBA{R: mix(end.R), G: mix(end.G), B: mix(end.B), A: 255}
}

func drawFleetHeatmap(c draw.Canvas, title, subtitle string, g FleetGrid) {
	body := drawHeader(c, title, subtitle, "red: worse than the median, blue: better; framed: below its peers; hatched: no figure")
	p := newPlot("", "", "")
	p.X.Tick.Marker = labelTicks(g.Columns)
	p.Y.Tick.Marker = labelTicks(g.Rows)
	slantLabels(&p.X)
	p.X.Min, p.X.Max = -0.5, float64(len(g.Columns))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.Rows))-0.5
	p.Y.Scale = plot.InvertedScale{Normalizer: plot.LinearScale{}}
	p.X.Padding, p.Y.Padding = 0, 0
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		setFont(&ax.Tick.Label, math.Min(tickSize, 500/float64(max(len(g.Rows), len(g.Columns), 1))+3), false)
	}
	p.Add(&fleetCells{g: g})
	scaleW := vg.Inch
	area := slantRoom(draw.Crop(body, 0, -scaleW, 0, 0), &p.X, g.Columns)
	p.Draw(area)
	dc := p.DataCanvas(area)
	bar := vg.Rectangle{Min: vg.Point{X: dc.Max.X + vg.Points(18), Y: dc.Min.Y}, Max: vg.Point{X: dc.Max.X + vg.Points(32), Y: dc.Max.Y}}
	drawColorScale(c, bar, -fleetColorLimit, fleetColorLimit, "deviation from the median (%)",
		func(t float64) color.RGBA { return diverging((2*t-1)*fleetColorLimit, fleetColorLimit) })
}

// slantLabels slants an axis's tick labels, so that long ones fit.
func slantLabels(ax *plot.Axis) {
	ax.Tick.Label.Rotation = math.Pi / 6
	ax.Tick.Label.XAlign, ax.Tick.Label.YAlign = draw.XRight, draw.YTop
}

// slantRoom crops c on the left by what the first slanted label of ax
// needs beyond the inch that the Y axis takes.
func slantRoom(c draw.Canvas, ax *plot.Axis, labels []string) draw.Canvas {
	if len(labels) == 0 {
		return c
	}
	w := ax.Tick.Label.Width(labels[0]) * vg.Length(math.Cos(ax.Tick.Label.Rotation))
	return draw.Crop(c, max(0, w-vg.Inch), 0, 0, 0)
}

// labelTicks labels positions 0, 1, ... with labels.
func labelTicks(labels []string) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		ticks[i] = plot.Tick{Value: float64(i), Label: l}
	}
	return ticks
}

type fleetCells struct{ g FleetGrid }

func (f *fleetCells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(f.g.Columns)) - 0.5, -0.5, float64(len(f.g.Rows)) - 0.5
}

func (f *fleetCells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	hatch := draw.LineStyle{Color: midGrey, Width: vg.Points(0.5)}
	frame := draw.LineStyle{Color: black, Width: vg.Points(1.5)}
	for r, row := range f.g.Cells {
		for col, v := range row {
			y0, y1 := trY(float64(r)-0.5), trY(float64(r)+0.5)
			if y0 > y1 {
				y0, y1 = y1, y0
			}
			rect := vg.Rectangle{Min: vg.Point{X: trX(float64(col) - 0.5), Y: y0}, Max: vg.Point{X: trX(float64(col) + 0.5), Y: y1}}
			if math.IsNaN(v) {
				c.SetColor(paleGrey)
				c.Fill(rect.Path())
				hatchRect(c, rect, hatch, vg.Points(4))
				continue
			}
			c.SetColor(diverging(v, fleetColorLimit))
			c.Fill(rect.Path())
			if f.g.Flagged[r][col] {
				inner := vg.Rectangle{Min: rect.Min.Add(vg.Point{X: 1, Y: 1}), Max: rect.Max.Sub(vg.Point{X: 1, Y: 1})}
				c.SetLineStyle(frame)
				c.Stroke(inner.Path())
			}
		}
	}
}

// FleetSpread draws, for each column, the range of deviations across the
// nodes (a grey whisker from the lowest to the highest), the range within
// which no figure is below its peers (a pale band), the median (0) and
// every figure below its peers as a red point, named when a column has few.
func FleetSpread(name, title, subtitle string, cols []FleetColumn, caption []string, simulated bool) Chart {
	return Chart{Name: name, Title: title, Width: 11 * vg.Inch, Height: 7 * vg.Inch, caption: caption, simulated: simulated,
		body: func(c draw.Canvas) { drawFleetSpread(c, title, subtitle, cols) }}
}

// namedBelow is the most figures below their peers of a column that are
// named.
const namedBelow = 4

func drawFleetSpread(c draw.Canvas, title, subtitle string, cols []FleetColumn) {
	body := drawHeader(c, title, subtitle, "whisker: lowest to highest node; band: within the least deficit; red: below their peers")
	p := newPlot("", "", "deviation from the median (%), up = better")
	p.X.Tick.Marker = labelTicks(colLabels(cols))
	slantLabels(&p.X)
	p.X.Min, p.X.Max = -0.6, float64(len(cols))-0.4
	gridLines(p)
	p.Add(&fleetSpread{cols: cols})
	p.Draw(slantRoom(body, &p.X, colLabels(cols)))
}

func colLabels(cols []FleetColumn) []string {
	out := make([]string, len(cols))
	for i, col := range cols {
		out[i] = col.Label
	}
	return out
}

type fleetSpread struct{ cols []FleetColumn }

func (s *fleetSpread) DataRange() (xmin, xmax, ymin, ymax float64) {
	lo, hi := -1.0, 1.0
	for _, col := range s.cols {
		lo, hi = math.Min(lo, math.Min(col.Min, -col.Band)), math.Max(hi, math.Max(col.Max, col.Band))
	}
	pad := 0.06 * (hi - lo)
	return -0.6, float64(len(s.cols)) - 0.4, lo - pad, hi + pad
}

func (s *fleetSpread) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	whisker := draw.LineStyle{Color: darkGrey, Width: vg.Points(1.2)}
	median := draw.LineStyle{Color: black, Width: vg.Points(2)}
	dot := draw.GlyphStyle{Color: alertRed, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	label := textStyle(7, alertRed)
	label.YAlign = draw.YCenter
	halfW := (trX(1) - trX(0)) * 0.3
	for i, col := range s.cols {
		x := trX(float64(i))
		c.SetColor(withAlpha(seriesColor(5), 0.3))
		c.Fill(vg.Rectangle{Min: vg.Point{X: x - halfW, Y: trY(-col.Band)}, Max: vg.Point{X: x + halfW, Y: trY(col.Band)}}.Path())
		c.StrokeLine2(whisker, x, trY(col.Min), x, trY(col.Max))
		c.StrokeLine2(median, x-halfW, trY(0), x+halfW, trY(0))
		for k, o := range col.Below {
			pt := vg.Point{X: x, Y: trY(o.Deviation)}
			c.DrawGlyph(dot, pt)
			if len(col.Below) <= namedBelow {
				// Names right of the column, one under the other.
				c.FillText(label, pt.Add(vg.Point{X: vg.Points(5), Y: -vg.Points(8 * float64(k))}), o.Label)
			}
		}
		if n := len(col.Below); n > namedBelow {
			c.FillText(label, vg.Point{X: x + vg.Points(5), Y: trY(col.Min)}, fmt.Sprintf("%d below their peers", n))
		}
	}
}
