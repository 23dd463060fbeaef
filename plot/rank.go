package plot

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p2pbench/p2pbench/results"
)

// rankFigure is measured bandwidth against the driver's performance rank.
type rankFigure struct {
	title, subtitle string
	note            string // the pairs without peer access, under the subtitle
	ranks           []int  // in order; math.MaxInt stands for "no rank"
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

// rankScatter is measured bandwidth against the driver's performance rank,
// nil where every pair with a figure shares one rank: a chart of one
// column tells nothing the heatmaps do not (the report says so in a
// sentence). Each rank's slot carries the limits of the paths its pairs
// cross (results.PathLimits: NVLinks, else the slower GPU's PCIe link),
// and the pairs without peer access, which have no figure, are named.
func rankScatter(ix *index) *rankFigure {
	type point struct {
		src, dst, rank int
		v              float64
	}
	byTest := map[results.Test][]point{}
	ranks := map[int]bool{}
	pairLimit := map[[2]int]float64{} // a pair's one-way limit, 0 unknown
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
		pairLimit[[2]int{f.Src, f.Dst}] = ix.limits.Of(f)
	}
	if len(tests) == 0 || len(ranks) < 2 {
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
	limits := map[[2]int]int{} // (slot, limit in mGB/s) -> pairs
	for p, gbps := range pairLimit {
		if gbps <= 0 {
			continue
		}
		r, ok := ix.rankOf(p[0], p[1])
		if !ok {
			r = noRank
		}
		limits[[2]int{slot[r], int(math.Round(gbps * 1000))}]++
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
		rf.subtitle += "; link limits unknown (no NVLink count or PCIe reading)"
	}
	var noPeer []string
	for _, p := range sortedPairs(ix.pairs) {
		if !ix.pairs[p].CanAccessPeer {
			noPeer = append(noPeer, fmt.Sprintf("%d→%d", p[0], p[1]))
		}
	}
	if len(noPeer) > 0 {
		rf.note = "no peer access, so no figure here: " + strings.Join(noPeer, ", ")
	}
	return rf
}

// sortedPairs are the pairs of m in order.
func sortedPairs(m map[[2]int]results.Pair) [][2]int {
	out := make([][2]int, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] || out[i][0] == out[j][0] && out[i][1] < out[j][1] })
	return out
}

// jitter is a deterministic offset in [-0.5, 0.5) for a pair, so figures of
// the same run always look the same.
func jitter(src, dst int) float64 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%d>%d", src, dst)
	return float64(h.Sum32()%1000)/1000 - 0.5
}

func (rf *rankFigure) draw(c draw.Canvas) {
	p := newPlot("", "the pair's performance rank, as the driver reports it (CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)", "GB/s")
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
		legend = append(legend, legendEntry{"path's theoretical limit (NVLinks × link speed, else the slower PCIe link: generation × width)", ref})
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.15
	body := drawHeader(c, rf.title, rf.subtitle, rf.note)
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
