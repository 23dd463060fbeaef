package plot

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p2pbench/p2pbench/results"
)

// rankFigure is measured bandwidth against the driver's performance rank.
type rankFigure struct {
	title, subtitle string
	ranks           []int // in order; math.MaxInt stands for "no rank"
	series          []rankSeries
	limits          []rankLimit
}

type rankSeries struct {
	label  string
	points plotter.XYs
}

// rankLimit is a link's theoretical bandwidth, drawn across its rank's slot.
type rankLimit struct {
	slot  int
	gbps  float64
	pairs int
}

const noRank = math.MaxInt

func rankScatter(ix *index) *rankFigure {
	type point struct {
		src, dst, rank int
		v              float64
	}
	byTest := map[results.Test][]point{}
	ranks := map[int]bool{}
	var tests []results.Test
	for _, f := range ix.oneWayFigures() {
		v, ok := f.Value()
		if f.Size != ix.matrixSize || !ok {
			continue
		}
		r, ok := ix.rankOf(f.Src, f.Dst)
		if !ok {
			r = noRank
		}
		if len(byTest[f.Test]) == 0 {
			tests = append(tests, f.Test)
		}
		byTest[f.Test] = append(byTest[f.Test], point{f.Src, f.Dst, r, v})
		ranks[r] = true
	}
	if len(tests) == 0 {
		return nil
	}
	rf := &rankFigure{ranks: sortedKeys(ranks)}
	slot := map[int]int{}
	for i, r := range rf.ranks {
		slot[r] = i
	}
	// Each test gets its own lane within a rank's slot, and points jitter
	// within the lane so that equal values stay visible as a cloud.
	const lane = 0.18
	for ti, test := range tests {
		s := rankSeries{label: test.Title()}
		off := (float64(ti) - float64(len(tests)-1)/2) * lane
		for _, p := range byTest[test] {
			s.points = append(s.points, plotter.XY{X: float64(slot[p.rank]) + off + jitter(p.src, p.dst)*lane*0.7, Y: p.v})
		}
		rf.series = append(rf.series, s)
	}
	limits := map[[2]int]int{} // (slot, link in mGB/s) -> pairs
	for p, pair := range ix.pairs {
		if pair.LinkGBps <= 0 {
			continue
		}
		r, ok := ix.rankOf(p[0], p[1])
		if !ok {
			r = noRank
		}
		if s, ok := slot[r]; ok {
			limits[[2]int{s, int(math.Round(pair.LinkGBps * 1000))}]++
		}
	}
	for k, n := range limits {
		rf.limits = append(rf.limits, rankLimit{slot: k[0], gbps: float64(k[1]) / 1000, pairs: n})
	}
	sort.Slice(rf.limits, func(i, j int) bool {
		a, b := rf.limits[i], rf.limits[j]
		return a.slot < b.slot || a.slot == b.slot && a.gbps < b.gbps
	})
	rf.title = "Measured bandwidth against the driver's performance rank"
	rf.subtitle = fmt.Sprintf("every ordered pair at %s, median of samples, decimal GB/s of one direction; lower rank = better path per the driver",
		results.FormatBytes(ix.matrixSize))
	if len(rf.limits) == 0 {
		rf.subtitle += "; link limits unknown"
	}
	return rf
}

// jitter is a deterministic offset in [-0.5, 0.5) for a pair, so figures of
// the same run always look the same.
func jitter(src, dst int) float64 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%d>%d", src, dst)
	return float64(h.Sum32()%1000)/1000 - 0.5
}

func (rf *rankFigure) draw(c draw.Canvas) {
	p := newPlot("", "CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK", "GB/s")
	var legend []legendEntry
	gridLines(p)
	ticks := make(plot.ConstantTicks, len(rf.ranks))
	for i, r := range rf.ranks {
		label := fmt.Sprintf("rank %d", r)
		if r == noRank {
			label = "no rank"
		}
		ticks[i] = plot.Tick{Value: float64(i), Label: label}
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = -0.6, float64(len(rf.ranks))-0.4
	ymax := 0.0
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}}
	for i, s := range rf.series {
		sc, err := plotter.NewScatter(s.points)
		if err != nil {
			continue
		}
		// Small, translucent markers keep thousands of pairs legible.
		radius := vg.Points(3)
		alpha := 0.85
		if len(s.points) > 200 {
			radius, alpha = vg.Points(1.6), 0.35
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: withAlpha(seriesColor(i), alpha), Radius: radius, Shape: glyphs[i%len(glyphs)]}
		p.Add(sc)
		legendMark, _ := plotter.NewScatter(plotter.XYs{{}})
		legendMark.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(3), Shape: glyphs[i%len(glyphs)]}
		legend = append(legend, legendEntry{fmt.Sprintf("%s (%d pairs)", s.label, len(s.points)), legendMark})
		for _, pt := range s.points {
			ymax = math.Max(ymax, pt.Y)
		}
	}
	if len(rf.limits) > 0 {
		lim := &rankLimits{limits: rf.limits}
		p.Add(lim)
		for _, l := range rf.limits {
			ymax = math.Max(ymax, l.gbps)
		}
		ref, _ := plotter.NewLine(plotter.XYs{{}, {}})
		ref.LineStyle = limitStyle
		legend = append(legend, legendEntry{"link's theoretical limit (NVLinks × link speed)", ref})
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.15
	body := drawHeader(c, rf.title, rf.subtitle, "")
	p.Draw(drawLegend(body, legend))
}

var limitStyle = draw.LineStyle{Color: alertRed, Width: vg.Points(1.4), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}

// rankLimits draws each rank's link limits as labelled dashes across its slot.
type rankLimits struct{ limits []rankLimit }

func (rl *rankLimits) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(tickSize, alertRed)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	for _, l := range rl.limits {
		x0, x1 := trX(float64(l.slot)-0.45), trX(float64(l.slot)+0.45)
		y := trY(l.gbps)
		c.StrokeLine2(limitStyle, x0, y, x1, y)
		c.FillText(sty, vg.Point{X: x0, Y: y + vg.Points(2)}, fmt.Sprintf("%s GB/s (%d pairs)", formatValue(l.gbps), l.pairs))
	}
}
