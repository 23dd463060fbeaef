package plot

import (
	"math"
	"slices"

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
		c.subtitle = "decimal GB/s as nccl-tests prints them: busbw (bus bandwidth, held against the links' peak) and algbw (size / time); median of its runs"
		if ranks != "" {
			c.subtitle += "; " + ranks + " ranks"
		}
		for _, s := range []struct {
			k      key
			label  string
			color  int
			dashed bool
		}{
			{key{results.NCCLBusBW, "false"}, "busbw, out of place", 0, false},
			{key{results.NCCLBusBW, "true"}, "busbw, in place", 0, true},
			{key{results.NCCLAlgBW, "false"}, "algbw, out of place", 1, false},
			{key{results.NCCLAlgBW, "true"}, "algbw, in place", 1, true},
		} {
			xys := by[s.k]
			if len(xys) == 0 {
				continue
			}
			slices.SortFunc(xys, func(a, b plotter.XY) int { return int(math.Copysign(1, a.X-b.X)) })
			c.series = append(c.series, ncclSeries{label: s.label, color: s.color, dashed: s.dashed, xys: xys})
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
