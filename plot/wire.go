package plot

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p2pbench/p2pbench/results"
)

// wireFigure shows, for each kind of bandwidth figure with NVLink counters,
// the payload it moved and the rest of what the links carried in the data's
// direction (headers, requests, responses): the bar's full length is the
// wire rate, and the link's payload limit is drawn across.
type wireFigure struct {
	title, subtitle string
	rows            []results.Efficiency
	limit           float64 // the link's payload limit, one direction (0: unknown)
}

func wireChart(ix *index) *wireFigure {
	rows := results.LinkEfficiency(ix.run, ix.matrixSize)
	if len(rows) == 0 {
		return nil
	}
	// The most common link limit among the pairs (one direction).
	count := map[float64]int{}
	for _, p := range ix.pairs {
		if p.LinkGBps > 0 {
			count[p.LinkGBps]++
		}
	}
	limit, n := 0.0, 0
	for l, c := range count {
		if c > n || c == n && l > limit {
			limit, n = l, c
		}
	}
	return &wireFigure{
		title: "Where the link's bytes go (NVLink counters)",
		subtitle: fmt.Sprintf("%s, medians over pairs; dark: payload GB/s of one direction; light: what else the links carried in that direction (×wire bytes per payload byte)",
			results.FormatBytes(ix.matrixSize)),
		rows: rows, limit: limit,
	}
}

// wireColor: copy engine blue, SM kernels vermillion.
func wireColor(e results.Efficiency) color.RGBA {
	if strings.HasPrefix(string(e.Engine), "sm") {
		return seriesColor(1)
	}
	return seriesColor(0)
}

func (wf *wireFigure) height() vg.Length {
	return vg.Length(2.4+0.28*float64(len(wf.rows))) * vg.Inch
}

func (wf *wireFigure) draw(c draw.Canvas) {
	legend := []legendEntry{
		{"copy engine: payload", &swatch{color: seriesColor(0)}},
		{"SM kernel: payload", &swatch{color: seriesColor(1)}},
		{"headers, requests, responses (raw − payload)", &swatch{color: color.RGBA{R: 190, G: 190, B: 190, A: 255}}},
	}
	if wf.limit > 0 {
		ref := &lineThumb{style: limitStyle}
		legend = append(legend, legendEntry{fmt.Sprintf("link payload limit %s GB/s", formatValue(wf.limit)), ref})
	}
	body := drawLegend(drawHeader(c, wf.title, wf.subtitle, ""), legend)
	p := newPlot("", "GB/s in the data's direction", "")
	n := len(wf.rows)
	ticks := make(plot.ConstantTicks, n)
	xmax := wf.limit
	for i, e := range wf.rows {
		ticks[i] = plot.Tick{Value: float64(n - 1 - i), Label: e.Label()}
		xmax = math.Max(xmax, e.WireGBps)
	}
	p.Y.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = -0.7, float64(n)-0.3
	p.X.Min, p.X.Max = 0, xmax*1.45
	p.Add(&wireBars{fig: wf})
	p.Draw(body)
}

type wireBars struct{ fig *wireFigure }

func (b *wireBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	rows := b.fig.rows
	n := len(rows)
	h := (trY(1) - trY(0)) * 0.62
	// Labels start right of the limit line, so it never crosses them.
	labelX := c.Min.X
	if l := b.fig.limit; l > 0 {
		labelX = trX(l)
		c.StrokeLine2(limitStyle, labelX, c.Min.Y, labelX, c.Max.Y)
	}
	for i, e := range rows {
		y := trY(float64(n - 1 - i))
		clr := wireColor(e)
		x0, x1, x2 := trX(0), trX(e.GBps), trX(e.WireGBps)
		c.SetColor(clr)
		c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: y - h/2}, Max: vg.Point{X: x1, Y: y + h/2}}.Path())
		c.SetColor(withAlpha(clr, 0.3))
		c.Fill(vg.Rectangle{Min: vg.Point{X: x1, Y: y - h/2}, Max: vg.Point{X: max(x2, x1), Y: y + h/2}}.Path())
		sty := textStyle(8, darkGrey)
		sty.YAlign = draw.YCenter
		c.FillText(sty, vg.Point{X: max(x2, x1, labelX) + vg.Points(4), Y: y},
			fmt.Sprintf("%.1f + %.1f = %.1f  (×%.3f)", e.GBps, e.WireGBps-e.GBps, e.WireGBps, e.Wire))
	}
}

func (b *wireBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmax = b.fig.limit
	for _, e := range b.fig.rows {
		xmax = math.Max(xmax, e.WireGBps)
	}
	return 0, xmax, 0, float64(len(b.fig.rows) - 1)
}

// lineThumb is a legend thumbnail of a line style.
type lineThumb struct{ style draw.LineStyle }

func (l *lineThumb) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(l.style, c.Min.X, y, c.Max.X, y)
}
