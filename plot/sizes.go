package plot

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// maxPairLines is the most pairs drawn as lines of their own; beyond, a
// median line with a min–max band summarises the pairs.
const maxPairLines = 4

// sizeCurve is bandwidth against transfer size for one direction.
type sizeCurve struct {
	name, title, subtitle string
	series                []sizeSeries
	link                  float64 // the pairs' common link limit, 0 if none
}

type sizeSeries struct {
	label    string
	color    color.RGBA
	dashes   []vg.Length
	sizes    []float64
	values   []float64 // median (of the pair, or over pairs)
	lo, hi   []float64 // the band: over pairs, or a pair's interval over rounds; nil for none
	halfPeak float64   // n½ in bytes, 0 if unknown
	halfVal  float64
}

// sizeCurves builds one figure per direction that has a size sweep.
func sizeCurves(ix *index) []*sizeCurve {
	var out []*sizeCurve
	figs := ix.oneWayFigures()
	for _, dir := range []results.Direction{results.DirRead, results.DirWrite} {
		// engine -> pair -> size -> figure with a value
		curves := map[results.Engine]map[[2]int]map[uint64]*results.Figure{}
		var engines []results.Engine
		rounds := false
		for _, f := range figs {
			if _, ok := f.Value(); f.Direction != dir || !ok {
				continue
			}
			byPair := curves[f.Engine]
			if byPair == nil {
				byPair = map[[2]int]map[uint64]*results.Figure{}
				curves[f.Engine] = byPair
				engines = append(engines, f.Engine)
			}
			p := [2]int{f.Src, f.Dst}
			if byPair[p] == nil {
				byPair[p] = map[uint64]*results.Figure{}
			}
			byPair[p][f.Size] = f
			rounds = rounds || f.Stats.Rounds != nil
		}
		sc := &sizeCurve{name: "size_" + string(dir)}
		pairs := map[[2]int]bool{}
		for ei, e := range engines {
			sizes := map[uint64]bool{}
			for p, bySize := range curves[e] {
				for z := range bySize {
					sizes[z] = true
				}
				pairs[p] = true
			}
			if len(sizes) < 3 {
				continue // a matrix, not a sweep
			}
			sc.series = append(sc.series, buildSeries(ix, e, curves[e], ei)...)
		}
		if len(sc.series) == 0 {
			continue
		}
		sc.title = "Bandwidth against transfer size, " + directionLabel(dir)
		np := len(pairs)
		switch {
		case np <= maxPairLines && rounds:
			sc.subtitle = "decimal GB/s of one direction, median of samples, one line per engine and pair (source→destination); band: the median's interval over rounds"
		case np <= maxPairLines:
			sc.subtitle = "decimal GB/s of one direction, median of samples, one line per engine and pair (source→destination)"
		case ix.ranksDiffer():
			sc.subtitle = fmt.Sprintf("decimal GB/s of one direction, %d pairs grouped by the driver's performance rank; line: median of the pairs' medians; band: min–max", np)
		default:
			sc.subtitle = fmt.Sprintf("decimal GB/s of one direction; line: median over %d pairs of each pair's median; band: min–max over pairs", np)
		}
		// A common link limit is worth a reference line; mixed limits are
		// the rank figure's business.
		sc.link = -1
		for p := range pairs {
			l := ix.linkOf(p[0], p[1])
			if sc.link == -1 {
				sc.link = l
			} else if sc.link != l {
				sc.link = 0
			}
		}
		sc.link = math.Max(sc.link, 0)
		out = append(out, sc)
	}
	return out
}

// buildSeries makes the series of one engine: a line per pair when there
// are few pairs, with a band of each median's interval over rounds where
// every figure of the line has rounds, else a median line with a min–max
// band per group of pairs of the same performance rank (one group when
// ranks are alike): pairs of different paths mixed in one band would hide
// both.
func buildSeries(ix *index, engine results.Engine, byPair map[[2]int]map[uint64]*results.Figure, engineIdx int) []sizeSeries {
	pairs := make([][2]int, 0, len(byPair))
	for p := range byPair {
		pairs = append(pairs, p)
	}
	sort.Slice(pairs, func(i, j int) bool {
		return pairs[i][0] < pairs[j][0] || pairs[i][0] == pairs[j][0] && pairs[i][1] < pairs[j][1]
	})
	clr := seriesColor(engineIdx)
	dashes := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}
	var out []sizeSeries
	if len(pairs) <= maxPairLines {
		for i, p := range pairs {
			s := sizeSeries{label: fmt.Sprintf("%s %d→%d", engineLabel(engine), p[0], p[1]), color: clr, dashes: dashes[i%len(dashes)]}
			band := true
			for _, z := range sortedKeys(byPair[p]) {
				st := byPair[p][z].Stats
				s.sizes = append(s.sizes, float64(z))
				s.values = append(s.values, st.Median)
				if band = band && st.Rounds != nil; band {
					s.lo, s.hi = append(s.lo, st.Rounds.MedianLo), append(s.hi, st.Rounds.MedianHi)
				}
			}
			if !band {
				s.lo, s.hi = nil, nil
			}
			s.setHalfPeak()
			out = append(out, s)
		}
		return out
	}
	groups := map[int][][2]int{}
	differ := ix.ranksDiffer()
	for _, p := range pairs {
		r := 0
		if differ {
			if rank, ok := ix.rankOf(p[0], p[1]); ok {
				r = rank
			} else {
				r = noRank
			}
		}
		groups[r] = append(groups[r], p)
	}
	for gi, r := range sortedKeys(groups) {
		perSize := map[uint64][]float64{}
		for _, p := range groups[r] {
			for z, f := range byPair[p] {
				perSize[z] = append(perSize[z], f.Stats.Median)
			}
		}
		label := engineLabel(engine)
		if differ {
			rank := fmt.Sprintf("rank %d", r)
			if r == noRank {
				rank = "no rank"
			}
			label = fmt.Sprintf("%s, %s (%d pairs)", label, rank, len(groups[r]))
		}
		s := sizeSeries{label: label, color: clr, dashes: dashes[gi%len(dashes)]}
		for _, z := range sortedKeys(perSize) {
			vs := perSize[z]
			sort.Float64s(vs)
			s.sizes = append(s.sizes, float64(z))
			s.values = append(s.values, figstats.Median(vs))
			s.lo = append(s.lo, vs[0])
			s.hi = append(s.hi, vs[len(vs)-1])
		}
		s.setHalfPeak()
		out = append(out, s)
	}
	return out
}

// setHalfPeak finds n½ by figstats.HalfPeak's rule: none where the curve
// does not reach below half its peak.
func (s *sizeSeries) setHalfPeak() {
	if i, ok := figstats.HalfPeak(s.sizes64(), s.values); ok {
		s.halfPeak, s.halfVal = s.sizes[i], s.values[i]
	}
}

// sizes64 is the series' sizes in bytes.
func (s *sizeSeries) sizes64() []uint64 {
	out := make([]uint64, len(s.sizes))
	for i, z := range s.sizes {
		out[i] = uint64(z)
	}
	return out
}

// sizeTicks labels powers of 16 times 4 (4 B, 64 B, 1 KiB, ...) and puts
// minor ticks at every other power of two: labels at every power of two
// would collide.
type sizeTicks struct{}

func (sizeTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := 0; e <= 62; e++ {
		v := math.Ldexp(1, e)
		if v < min*0.999 || v > max*1.001 {
			continue
		}
		t := plot.Tick{Value: v}
		if e%4 == 2 {
			t.Label = results.FormatBytes(uint64(v))
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func (sc *sizeCurve) draw(c draw.Canvas) {
	body := drawHeader(c, sc.title, sc.subtitle, "")
	sc.drawPanel(body, sc.ymax())
}

// ymax is the highest the curve's values, bands and link limit reach.
func (sc *sizeCurve) ymax() float64 {
	ymax := 0.0
	for _, s := range sc.series {
		for i := range s.values {
			ymax = math.Max(ymax, s.values[i])
			if s.hi != nil {
				ymax = math.Max(ymax, s.hi[i])
			}
		}
	}
	return math.Max(ymax, sc.link)
}

// sizePanels is the read and the write curve side by side, on one scale:
// one figure where two would each take a page.
type sizePanels struct{ read, write *sizeCurve }

const sizePanelsTitle = "Bandwidth against transfer size, read (pull) and write (push)"

func (sp sizePanels) draw(c draw.Canvas) {
	body := drawHeader(c, sizePanelsTitle, sp.read.subtitle, "")
	ymax := math.Max(sp.read.ymax(), sp.write.ymax())
	gap := vg.Points(18)
	mid := (body.Min.X + body.Max.X) / 2
	for i, sc := range []*sizeCurve{sp.read, sp.write} {
		half := draw.Crop(body, 0, -(body.Max.X - mid + gap/2), 0, 0)
		if i == 1 {
			half = draw.Crop(body, mid-body.Min.X+gap/2, 0, 0, 0)
		}
		t := boldStyle(labelSize, black)
		t.XAlign, t.YAlign = draw.XCenter, draw.YTop
		_, dir, _ := strings.Cut(sc.title, ", ")
		c.FillText(t, vg.Point{X: (half.Min.X + half.Max.X) / 2, Y: half.Max.Y}, dir)
		sc.drawPanel(draw.Crop(half, 0, 0, 0, -(t.Height(dir)+vg.Points(4))), ymax)
	}
}

// drawPanel draws the curve's plot and legend into c, its y axis up to
// ymax.
func (sc *sizeCurve) drawPanel(c draw.Canvas, ymax float64) {
	p := newPlot("", "transfer size (bytes, log scale)", "GB/s")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	gridLines(p)
	var legend []legendEntry
	for _, s := range sc.series {
		if s.lo != nil {
			ring := make(plotter.XYs, 0, 2*len(s.sizes))
			for i := range s.sizes {
				ring = append(ring, plotter.XY{X: s.sizes[i], Y: s.lo[i]})
			}
			for i := len(s.sizes) - 1; i >= 0; i-- {
				ring = append(ring, plotter.XY{X: s.sizes[i], Y: s.hi[i]})
			}
			if poly, err := plotter.NewPolygon(ring); err == nil {
				poly.Color = withAlpha(s.color, 0.22)
				poly.LineStyle.Width = 0
				p.Add(poly)
			}
		}
	}
	for _, s := range sc.series {
		xys := make(plotter.XYs, len(s.sizes))
		for i := range s.sizes {
			xys[i] = plotter.XY{X: s.sizes[i], Y: s.values[i]}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		line.LineStyle = draw.LineStyle{Color: s.color, Width: vg.Points(1.8), Dashes: s.dashes}
		p.Add(line)
		label := s.label
		if s.halfPeak > 0 {
			label += ", n½ = " + results.FormatBytes(uint64(s.halfPeak))
			// The half-peak point: a dashed drop line and a diamond.
			drop, _ := plotter.NewLine(plotter.XYs{{X: s.halfPeak, Y: 0}, {X: s.halfPeak, Y: s.halfVal}})
			drop.LineStyle = draw.LineStyle{Color: s.color, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
			p.Add(drop)
			mark, _ := plotter.NewScatter(plotter.XYs{{X: s.halfPeak, Y: s.halfVal}})
			mark.GlyphStyle = draw.GlyphStyle{Color: s.color, Radius: vg.Points(4), Shape: draw.PyramidGlyph{}}
			p.Add(mark)
		}
		legend = append(legend, legendEntry{label, line})
	}
	if sc.link > 0 {
		ref := &hLine{y: sc.link, label: fmt.Sprintf("link limit %s GB/s", formatValue(sc.link)),
			style: draw.LineStyle{Color: darkGrey, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}}
		p.Add(ref)
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.12
	p.Draw(drawLegend(c, legend))
}

// hLine is a labelled horizontal reference line across the plot.
type hLine struct {
	y     float64
	label string
	style draw.LineStyle
}

func (h *hLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.y)
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
	sty := textStyle(tickSize, darkGrey)
	sty.XAlign, sty.YAlign = draw.XRight, draw.YBottom
	c.FillText(sty, vg.Point{X: c.Max.X - vg.Points(4), Y: y + vg.Points(2)}, h.label)
}
