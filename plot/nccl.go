package plot

import (
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p2pbench/p2pbench/results"
)

// ncclChart is an imported nccl-tests collective's bandwidth against size:
// bus and algorithm bandwidth, out of place and in place, as nccl-tests
// prints them.
type ncclChart struct {
	name, title, subtitle string
	series                []ncclSeries
}

type ncclSeries struct {
	label  string
	color  int
	dashed bool
	xys    plotter.XYs
	// bws and places are what the series stands for: its bandwidths
	// (busbw, algbw) and placements (out of place, in place), more than
	// one where they read the same.
	bws, places []string
}

// sameCurve is the relative difference within which two series of an
// nccl-tests chart are one line: nccl-tests prints two decimals, and for
// 2 ranks busbw = algbw.
const sameCurve = 0.005

// same reports whether a and b hold the same sizes at the same bandwidth,
// within sameCurve.
func (a *ncclSeries) same(b []plotter.XY) bool {
	if len(a.xys) != len(b) {
		return false
	}
	for i := range b {
		x, y := a.xys[i], b[i]
		if x.X != y.X || math.Abs(x.Y-y.Y) > sameCurve*math.Max(math.Abs(x.Y), math.Abs(y.Y)) {
			return false
		}
	}
	return true
}

// addSeries adds a series to c, or names its bandwidth and placement in the
// series it draws over.
func (c *ncclChart) addSeries(bw, place string, color int, dashed bool, xys plotter.XYs) {
	for i := range c.series {
		s := &c.series[i]
		if s.same(xys) {
			if !slices.Contains(s.bws, bw) {
				s.bws = append(s.bws, bw)
			}
			if !slices.Contains(s.places, place) {
				s.places = append(s.places, place)
			}
			s.label = strings.Join(s.bws, " = ") + ", " + strings.Join(s.places, " and ")
			return
		}
	}
	c.series = append(c.series, ncclSeries{label: bw + ", " + place, color: color, dashed: dashed, xys: xys,
		bws: []string{bw}, places: []string{place}})
}

// ncclCharts returns one chart per collective of nccl-tests the run holds
// bandwidths of (results.EngineNCCL), in catalogue order.
func ncclCharts(ix *index) []*ncclChart {
	var out []*ncclChart
	for _, coll := range results.NCCLCollectives() {
		bw, _, _ := results.NCCLTests(coll)
		figs := ix.byTest[bw]
		if len(figs) == 0 {
			continue
		}
		type key struct{ bw, inPlace string }
		by := map[key]plotter.XYs{}
		ranks := ""
		for _, f := range figs {
			v, ok := f.Value()
			if !ok {
				continue
			}
			k := key{f.Params[results.ParamNCCLBandwidth], f.Params[results.ParamNCCLInPlace]}
			by[k] = append(by[k], plotter.XY{X: float64(f.Size), Y: v})
			ranks = f.Params["ranks"]
		}
		c := &ncclChart{name: "nccl_" + coll, title: "NCCL " + coll + " (nccl-tests): bandwidth against size"}
		c.subtitle = "decimal GB/s as nccl-tests prints them: busbw (bus bandwidth, held against the links' peak) and algbw (size / time); one value per size: the mean over nccl-tests' timed iterations"
		if ranks != "" {
			c.subtitle += "; " + ranks + " ranks"
		}
		// Series that read the same (busbw and algbw for 2 ranks, in
		// place and out of place where they agree) are one line, its
		// legend naming each.
		for _, s := range []struct {
			k         key
			bw, place string
			color     int
			dashed    bool
		}{
			{key{results.NCCLBusBW, "false"}, "busbw", "out of place", 0, false},
			{key{results.NCCLBusBW, "true"}, "busbw", "in place", 0, true},
			{key{results.NCCLAlgBW, "false"}, "algbw", "out of place", 1, false},
			{key{results.NCCLAlgBW, "true"}, "algbw", "in place", 1, true},
		} {
			xys := by[s.k]
			if len(xys) == 0 {
				continue
			}
			slices.SortFunc(xys, func(a, b plotter.XY) int { return int(math.Copysign(1, a.X-b.X)) })
			c.addSeries(s.bw, s.place, s.color, s.dashed, xys)
		}
		if len(c.series) > 0 {
			out = append(out, c)
		}
	}
	return out
}

func (c *ncclChart) draw(cv draw.Canvas) {
	p := newPlot("", "size (bytes, log scale)", "GB/s")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{}
	gridLines(p)
	var legend []legendEntry
	ymax := 0.0
	for _, s := range c.series {
		for _, xy := range s.xys {
			ymax = math.Max(ymax, xy.Y)
		}
		line, err := plotter.NewLine(s.xys)
		if err != nil {
			continue
		}
		line.LineStyle = draw.LineStyle{Color: seriesColor(s.color), Width: vg.Points(1.8)}
		if s.dashed {
			line.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(line)
		legend = append(legend, legendEntry{s.label, line})
	}
	p.Y.Min, p.Y.Max = 0, math.Max(ymax*1.12, 1)
	body := drawHeader(cv, c.title, c.subtitle, "")
	p.Draw(drawLegend(body, legend))
}
