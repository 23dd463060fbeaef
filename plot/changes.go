package plot

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Change is one figure's relative change between two runs, for ChangeChart.
type Change struct {
	// Group gathers changes on the chart (the test); Label names the figure.
	Group, Label string
	// Pct is the change in percent.
	Pct float64
	// Significant: the change passed the significance test. Regression and
	// Improvement: significant, at least the threshold, and worse or better.
	Significant, Regression, Improvement bool
}

// maxBarChanges is the most changes drawn as labelled bars; more are drawn
// as a strip of points per group.
const maxBarChanges = 40

// ChangeChart draws relative changes: labelled bars for a few, points per
// group for many. Significant changes are coloured (regressions red,
// improvements green, smaller significant changes blue), the rest grey;
// dashed lines mark ±threshold (percent). caption and simulated are as a
// run's figures have them (CaptionLines, Run.Simulated).
func ChangeChart(title, subtitle string, changes []Change, threshold float64, caption []string, simulated bool) Chart {
	f := Chart{Name: "changes", Title: title, Width: 10 * vg.Inch, Height: 6.5 * vg.Inch, caption: caption, simulated: simulated}
	if len(changes) <= maxBarChanges {
		f.Height = vg.Length(2.2+0.24*float64(len(changes))) * vg.Inch
		f.body = func(c draw.Canvas) { drawChangeBars(c, title, subtitle, changes, threshold) }
	} else {
		f.body = func(c draw.Canvas) { drawChangeStrip(c, title, subtitle, changes, threshold) }
	}
	return f
}

var (
	regressionColor  = alertRed
	improvementColor = seriesColor(2)
	significantColor = seriesColor(0)
)

// changeColor colours a change by its verdict.
func changeColor(ch Change) (clr color.RGBA, significant bool) {
	switch {
	case ch.Regression:
		return regressionColor, true
	case ch.Improvement:
		return improvementColor, true
	case ch.Significant:
		return significantColor, true
	}
	return color.RGBA{midGrey.Y, midGrey.Y, midGrey.Y, 255}, false
}

func changeLegend() []legendEntry {
	return []legendEntry{
		{"regression ≥ threshold", &swatch{color: regressionColor}},
		{"improvement ≥ threshold", &swatch{color: improvementColor}},
		{"significant, below threshold", &swatch{color: significantColor}},
		{"not significant", &swatch{color: color.RGBA{midGrey.Y, midGrey.Y, midGrey.Y, 255}}},
	}
}

// changeRange is the X (or Y) range: every change and both threshold lines.
func changeRange(changes []Change, threshold float64) (float64, float64) {
	lo, hi := -threshold, threshold
	for _, ch := range changes {
		lo, hi = math.Min(lo, ch.Pct), math.Max(hi, ch.Pct)
	}
	pad := 0.08 * (hi - lo)
	if pad == 0 {
		pad = 1
	}
	return lo - pad, hi + pad
}

func drawChangeBars(c draw.Canvas, title, subtitle string, changes []Change, threshold float64) {
	body := drawLegend(drawHeader(c, title, subtitle, ""), changeLegend())
	p := newPlot("", "change (%)", "")
	n := len(changes)
	ticks := make(plot.ConstantTicks, n)
	for i, ch := range changes {
		// The first change at the top.
		ticks[i] = plot.Tick{Value: float64(n - 1 - i), Label: ch.Group + " " + ch.Label}
	}
	p.Y.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3
	p.X.Min, p.X.Max = changeRange(changes, threshold)
	p.Add(&changeBars{changes: changes, threshold: threshold})
	p.Draw(body)
}

// changeBars draws one horizontal bar per change, with the threshold lines.
type changeBars struct {
	changes   []Change
	threshold float64
}

func (b *changeBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(b.changes)
	drawThresholds(c, b.threshold, func(x float64) (vg.Length, vg.Length, vg.Length, vg.Length) {
		return trX(x), c.Min.Y, trX(x), c.Max.Y
	})
	h := (trY(1) - trY(0)) * 0.6
	for i, ch := range b.changes {
		y := trY(float64(n - 1 - i))
		clr, _ := changeColor(ch)
		x0, x1 := trX(0), trX(ch.Pct)
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		c.SetColor(clr)
		c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: y - h/2}, Max: vg.Point{X: max(x1, x0+vg.Points(1)), Y: y + h/2}}.Path())
		sty := textStyle(8, darkGrey)
		sty.YAlign = draw.YCenter
		label := fmt.Sprintf("%+.2f%%", ch.Pct)
		if !ch.Significant {
			label += " ~"
		}
		if ch.Pct < 0 {
			sty.XAlign = draw.XRight
			c.FillText(sty, vg.Point{X: x0 - vg.Points(3), Y: y}, label)
		} else {
			c.FillText(sty, vg.Point{X: x1 + vg.Points(3), Y: y}, label)
		}
	}
}

func (b *changeBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	lo, hi := changeRange(b.changes, b.threshold)
	return lo, hi, 0, float64(len(b.changes) - 1)
}

// drawThresholds strokes the zero line and the ±threshold lines; at maps a
// value to a line's end points.
func drawThresholds(c draw.Canvas, threshold float64, at func(v float64) (x0, y0, x1, y1 vg.Length)) {
	zero := draw.LineStyle{Color: darkGrey, Width: vg.Points(0.8)}
	dash := draw.LineStyle{Color: alertRed, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	x0, y0, x1, y1 := at(0)
	c.StrokeLine2(zero, x0, y0, x1, y1)
	if threshold > 0 {
		for _, v := range []float64{-threshold, threshold} {
			x0, y0, x1, y1 := at(v)
			c.StrokeLine2(dash, x0, y0, x1, y1)
		}
	}
}

func drawChangeStrip(c draw.Canvas, title, subtitle string, changes []Change, threshold float64) {
	body := drawLegend(drawHeader(c, title, subtitle, ""), changeLegend())
	var groups []string
	index := map[string]int{}
	for _, ch := range changes {
		if _, ok := index[ch.Group]; !ok {
			index[ch.Group] = len(groups)
			groups = append(groups, ch.Group)
		}
	}
	p := newPlot("", "", "change (%)")
	ticks := make(plot.ConstantTicks, len(groups))
	for i, g := range groups {
		ticks[i] = plot.Tick{Value: float64(i), Label: g}
	}
	p.X.Tick.Marker = ticks
	if len(groups) > 8 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	p.X.Min, p.X.Max = -0.6, float64(len(groups))-0.4
	p.Y.Min, p.Y.Max = changeRange(changes, threshold)
	gridLines(p)
	p.Add(&changeStrip{changes: changes, index: index, threshold: threshold})
	p.Draw(body)
}

// changeStrip draws every change as a point in its group's column,
// insignificant ones first so that significant ones stay on top.
type changeStrip struct {
	changes   []Change
	index     map[string]int
	threshold float64
}

func (s *changeStrip) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	drawThresholds(c, s.threshold, func(y float64) (vg.Length, vg.Length, vg.Length, vg.Length) {
		return c.Min.X, trY(y), c.Max.X, trY(y)
	})
	order := make([]int, len(s.changes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		_, sa := changeColor(s.changes[order[a]])
		_, sb := changeColor(s.changes[order[b]])
		return !sa && sb
	})
	// Many points: small and translucent, so density shows.
	radius, alpha := vg.Points(2.2), 0.8
	if len(s.changes) > 2000 {
		radius, alpha = vg.Points(1.2), 0.35
	}
	for k, i := range order {
		ch := s.changes[i]
		clr, sig := changeColor(ch)
		a := alpha
		if sig {
			a = 0.9
		}
		// A deterministic spread across the column, so dense groups show
		// their distribution.
		x := float64(s.index[ch.Group]) + 0.7*jitter(k, i)
		sty := draw.GlyphStyle{Color: withAlpha(clr, a), Radius: radius, Shape: draw.CircleGlyph{}}
		c.DrawGlyph(sty, vg.Point{X: trX(x), Y: trY(ch.Pct)})
	}
}

func (s *changeStrip) DataRange() (xmin, xmax, ymin, ymax float64) {
	lo, hi := changeRange(s.changes, s.threshold)
	return -0.5, float64(len(s.index)) - 0.5, lo, hi
}
