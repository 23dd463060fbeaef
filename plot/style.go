package plot

import (
	"image/color"
	"math"
	"strconv"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Font sizes, in points. They are chosen for figures printed at their natural
// size (7–10 inches wide) and still legible when a report scales a figure
// down to fit an A4 page.
const (
	titleSize   = 12
	labelSize   = 10
	tickSize    = 9
	legendSize  = 9
	captionSize = 7.5
)

// sans is the typeface of every figure: a sans-serif reads better than
// gonum/plot's default serif at small sizes.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// textStyle returns a plain-text style of the given size and colour.
func textStyle(size float64, clr color.Color) text.Style {
	f := sans
	f.Size = font.Length(size)
	return text.Style{Color: clr, Font: f, Handler: text.Plain{Fonts: font.DefaultCache}}
}

// boldStyle is textStyle in bold.
func boldStyle(size float64, clr color.Color) text.Style {
	s := textStyle(size, clr)
	s.Font.Weight = xfont.WeightBold
	return s
}

// Colours. The qualitative ones are the Okabe–Ito palette, which stays
// distinguishable for the common forms of colour blindness.
var (
	black     = color.Gray{0}
	darkGrey  = color.Gray{80}
	midGrey   = color.Gray{150}
	lightGrey = color.Gray{215}
	paleGrey  = color.Gray{238}
	white     = color.White
	alertRed  = color.RGBA{R: 200, G: 30, B: 30, A: 255}

	qualitative = []color.RGBA{
		{R: 0x00, G: 0x72, B: 0xB2, A: 255}, // blue
		{R: 0xD5, G: 0x5E, B: 0x00, A: 255}, // vermillion
		{R: 0x00, G: 0x9E, B: 0x73, A: 255}, // bluish green
		{R: 0xCC, G: 0x79, B: 0xA7, A: 255}, // reddish purple
		{R: 0xE6, G: 0x9F, B: 0x00, A: 255}, // orange
		{R: 0x56, G: 0xB4, B: 0xE9, A: 255}, // sky blue
		{R: 0x00, G: 0x00, B: 0x00, A: 255}, // black
		{R: 0xF0, G: 0xE4, B: 0x42, A: 255}, // yellow
	}
)

// seriesColor returns the i-th qualitative colour.
func seriesColor(i int) color.RGBA { return qualitative[i%len(qualitative)] }

// withAlpha returns c with opacity a (0..1), premultiplied as color.RGBA wants.
func withAlpha(c color.RGBA, a float64) color.RGBA {
	return color.RGBA{R: uint8(float64(c.R) * a), G: uint8(float64(c.G) * a), B: uint8(float64(c.B) * a), A: uint8(255 * a)}
}

// viridisStops are control points of the viridis colour map: perceptually
// uniform, readable in grey scale, and free of the red–green confusion of
// rainbow maps.
var viridisStops = []color.RGBA{
	{68, 1, 84, 255}, {72, 40, 120, 255}, {62, 74, 137, 255}, {49, 104, 142, 255},
	{38, 130, 142, 255}, {31, 158, 137, 255}, {53, 183, 121, 255}, {109, 205, 89, 255},
	{180, 222, 44, 255}, {253, 231, 37, 255},
}

// viridis maps t in [0, 1] to a colour.
func viridis(t float64) color.RGBA {
	t = math.Max(0, math.Min(1, t))
	x := t * float64(len(viridisStops)-1)
	i := int(x)
	if i >= len(viridisStops)-1 {
		return viridisStops[len(viridisStops)-1]
	}
	f := x - float64(i)
	a, b := viridisStops[i], viridisStops[i+1]
	mix := func(p, q uint8) uint8 { return uint8(math.Round(float64(p) + f*(float64(q)-float64(p)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
}

// textOn returns black or white, whichever reads better on background c.
func textOn(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	// Relative luminance (Rec. 709 weights) on 16-bit channels.
	l := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 65535
	if l > 0.45 {
		return black
	}
	return white
}

// newPlot returns a plot with p2pbench's fonts and a title. Only fonts and
// colours change: the alignments gonum/plot sets for each text stay.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	setFont(&p.Title.TextStyle, titleSize, true)
	p.Title.Padding = vg.Points(8)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Tick.Marker = linearTicks{}
		setFont(&ax.Label.TextStyle, labelSize, false)
		setFont(&ax.Tick.Label, tickSize, false)
		ax.Label.Padding = vg.Points(4)
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	setFont(&p.Legend.TextStyle, legendSize, false)
	p.Legend.ThumbnailWidth = vg.Points(22)
	// No background: the figure's page shows through (filling it with
	// transparent paint rasterised the whole plot for nothing, 0.17 s of a
	// 72-GPU run's plots).
	p.BackgroundColor = nil
	return p
}

// setFont gives a text style p2pbench's typeface at size.
func setFont(s *text.Style, size float64, bold bool) {
	s.Font = sans
	s.Font.Size = font.Length(size)
	if bold {
		s.Font.Weight = xfont.WeightBold
	}
	s.Color = black
	s.Handler = text.Plain{Fonts: font.DefaultCache}
}

// gridLines adds light horizontal grid lines behind the data.
func gridLines(p *plot.Plot) {
	g := &horizontalGrid{style: draw.LineStyle{Color: paleGrey, Width: vg.Points(0.6)}}
	p.Add(g)
}

// horizontalGrid draws a line at each major Y tick; plotter.Grid would also
// draw vertical lines, which only clutter nominal X axes.
type horizontalGrid struct{ style draw.LineStyle }

func (g *horizontalGrid) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.IsMinor() || t.Value < p.Y.Min || t.Value > p.Y.Max {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(g.style, c.Min.X, y, c.Max.X, y)
	}
}

// formatValue formats a figure value with three significant digits or as a
// whole number, which is as much as a cell or label can show.
func formatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// tickLabel formats a round tick value without trailing zeros.
func tickLabel(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// linearTicks puts about six major ticks at round values (1, 2 or 5 times a
// power of ten) with a minor tick between each, labelled without trailing
// zeros: gonum's default labels every tick with a fixed number of decimals.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo)}}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / step * 2); i*step/2 <= hi*(1+1e-12); i++ {
		v := i * step / 2
		// Round away the binary noise of i*step/2 before labelling.
		v = math.Round(v/mag*1e6) / 1e6 * mag
		t := plot.Tick{Value: v}
		if int64(i)%2 == 0 {
			t.Label = tickLabel(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// legendEntry is one item of a header legend.
type legendEntry struct {
	label string
	thumb plot.Thumbnailer
}

// legendHeight is the height drawLegend needs for entries across width w.
func legendRows(entries []legendEntry, w vg.Length) [][]legendEntry {
	sty := textStyle(legendSize, black)
	var rows [][]legendEntry
	var row []legendEntry
	var used vg.Length
	for _, e := range entries {
		ew := legendThumbW + vg.Points(4) + sty.Width(e.label) + vg.Points(14)
		if len(row) > 0 && used+ew > w {
			rows = append(rows, row)
			row, used = nil, 0
		}
		row = append(row, e)
		used += ew
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

const legendThumbW = 20

// drawLegend draws entries in centred rows from the top of c and returns the
// canvas below them. A legend above the plot never hides data, which one
// inside the plot area can.
func drawLegend(c draw.Canvas, entries []legendEntry) draw.Canvas {
	if len(entries) == 0 {
		return c
	}
	sty := textStyle(legendSize, black)
	sty.YAlign = draw.YCenter
	lineH := sty.Height("Mg") * 1.5
	y := c.Max.Y - lineH/2
	for _, row := range legendRows(entries, c.Max.X-c.Min.X) {
		var total vg.Length
		for _, e := range row {
			total += legendThumbW + vg.Points(4) + sty.Width(e.label) + vg.Points(14)
		}
		x := (c.Min.X+c.Max.X)/2 - total/2
		for _, e := range row {
			th := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - lineH*0.28},
				Max: vg.Point{X: x + legendThumbW, Y: y + lineH*0.28},
			}}
			e.thumb.Thumbnail(&th)
			c.FillText(sty, vg.Point{X: x + legendThumbW + vg.Points(4), Y: y}, e.label)
			x += legendThumbW + vg.Points(4) + sty.Width(e.label) + vg.Points(14)
		}
		y -= lineH
	}
	return draw.Crop(c, 0, 0, 0, -(c.Max.Y-y-lineH/2)-vg.Points(2))
}
