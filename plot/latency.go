package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// fewDevices is the most devices for which latency figures show each pair's
// own samples; beyond, each box is a group's distribution of pair medians.
const fewDevices = 3

// latencyFigure is one distribution figure: latency boxes or atomic bars.
type latencyFigure struct {
	name, title string
	width       vg.Length
	draw        func(c draw.Canvas)
}

// distribution is a box (or bar) chart: categories along X, one series per
// colour within each category.
type distribution struct {
	title, subtitle string
	yLabel          string
	categories      []string
	series          []string
	// values[category][series] are the values of one box; empty = absent.
	values [][][]float64
	bars   bool // draw bars of the median with a min–max whisker
}

func newDistribution(categories, series []string) *distribution {
	d := &distribution{categories: categories, series: series, values: make([][][]float64, len(categories))}
	for i := range d.values {
		d.values[i] = make([][]float64, len(series))
	}
	return d
}

func (d *distribution) empty() bool {
	for _, row := range d.values {
		for _, v := range row {
			if len(v) > 0 {
				return false
			}
		}
	}
	return true
}

// latencyFigures builds the latency and atomic figures the run has data for.
func latencyFigures(ix *index) []latencyFigure {
	var out []latencyFigure
	add := func(name string, width vg.Length, panels ...*distribution) {
		var keep []*distribution
		for _, p := range panels {
			if p != nil && !p.empty() {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			return
		}
		title := keep[0].title
		out = append(out, latencyFigure{name: name, title: title, width: width, draw: func(c draw.Canvas) { drawPanels(c, keep) }})
	}
	add("latency_chase", 9*vg.Inch, chaseDistribution(ix))
	add("latency_pingpong", 9*vg.Inch, pingPongDistribution(ix))
	add("latency_copy", 10*vg.Inch, copyLatencyDistribution(ix))
	distinct, contended := atomicThroughput(ix)
	add("atomic_throughput", 10*vg.Inch, distinct, contended)
	add(string(results.AtomicLatency), 9*vg.Inch, atomicLatency(ix))
	return out
}

// pairGroup names where a figure's pair belongs: the pair itself for few
// devices, else local or peer (with the peer's rank when ranks differ).
func (ix *index) pairGroup(f *results.Figure, perPair, ranksDiffer bool) string {
	if perPair {
		if f.Src == f.Dst {
			return fmt.Sprintf("%d (local)", f.Src)
		}
		return fmt.Sprintf("%d→%d", f.Src, f.Dst)
	}
	if f.Src == f.Dst {
		return "local"
	}
	if ranksDiffer {
		if r, ok := ix.rankOf(f.Src, f.Dst); ok {
			return fmt.Sprintf("peer, rank %d", r)
		}
	}
	return "peer"
}

// ranksDiffer reports whether the topology's pairs have several ranks.
func (ix *index) ranksDiffer() bool {
	seen := map[int]bool{}
	for _, p := range ix.pairs {
		if r, ok := p.PerformanceRank(); ok {
			seen[r] = true
		}
	}
	return len(seen) > 1
}

// groupOrder sorts group labels: local first, then peers by rank, pairs in
// numeric order.
func groupOrder(labels map[string]bool) []string {
	out := make([]string, 0, len(labels))
	for l := range labels {
		out = append(out, l)
	}
	key := func(s string) (int, int, int, string) {
		var a, b int
		switch {
		case s == "local":
			return 0, 0, 0, s
		case strings.HasSuffix(s, "(local)"):
			fmt.Sscanf(s, "%d", &a)
			return 0, a, 0, s
		case strings.HasPrefix(s, "peer, rank "):
			fmt.Sscanf(s, "peer, rank %d", &a)
			return 1, a, 0, s
		}
		if n, _ := fmt.Sscanf(s, "%d→%d", &a, &b); n == 2 {
			return 1, a, b, s
		}
		return 2, 0, 0, s
	}
	sort.Slice(out, func(i, j int) bool {
		a1, a2, a3, a4 := key(out[i])
		b1, b2, b3, b4 := key(out[j])
		if a1 != b1 {
			return a1 < b1
		}
		if a2 != b2 {
			return a2 < b2
		}
		if a3 != b3 {
			return a3 < b3
		}
		return a4 < b4
	})
	return out
}

// collect files figure values into a distribution: category and series
// name each figure's box; each box gets the figure's samples when perPair,
// else the figure's median (one point per pair).
func collect(figs []*results.Figure, perPair bool, category, series func(f *results.Figure) (string, bool),
	catOrder func(map[string]bool) []string, serOrder func(map[string]bool) []string) *distribution {
	type key struct{ c, s string }
	vals := map[key][]float64{}
	cats, sers := map[string]bool{}, map[string]bool{}
	for _, f := range figs {
		c, ok := category(f)
		if !ok {
			continue
		}
		s, ok := series(f)
		if !ok {
			continue
		}
		if _, ok := f.Value(); !ok {
			continue
		}
		k := key{c, s}
		if perPair {
			vals[k] = append(vals[k], f.Samples...)
		} else {
			vals[k] = append(vals[k], f.Stats.Median)
		}
		cats[c], sers[s] = true, true
	}
	if len(vals) == 0 {
		return nil
	}
	d := newDistribution(catOrder(cats), serOrder(sers))
	for ci, c := range d.categories {
		for si, s := range d.series {
			d.values[ci][si] = vals[key{c, s}]
		}
	}
	return d
}

func sortedStrings(m map[string]bool) []string { return sortedKeys(m) }

// chaseDistribution: pointer-chase latency per pair (or group), one box per
// working set.
func chaseDistribution(ix *index) *distribution {
	figs := ix.byTest[results.LatChase]
	perPair := len(ix.devs) <= fewDevices
	differ := ix.ranksDiffer()
	wsLabel := map[string]uint64{}
	d := collect(figs, perPair,
		func(f *results.Figure) (string, bool) { return ix.pairGroup(f, perPair, differ), true },
		func(f *results.Figure) (string, bool) {
			label := workingSetLabel(f)
			wsLabel[label] = f.Size
			return label, true
		},
		groupOrder,
		func(m map[string]bool) []string {
			out := sortedStrings(m)
			sort.SliceStable(out, func(i, j int) bool { return wsLabel[out[i]] < wsLabel[out[j]] })
			return out
		})
	if d == nil {
		return nil
	}
	d.title = "Pointer-chase latency: local and peer memory, in and beyond L2"
	d.yLabel = "ns per dependent load"
	d.subtitle = boxSubtitle(perPair, "label a→b: chain in GPU a's memory, followed by GPU b")
	return d
}

// workingSetLabel names a chase figure's working set and where it lives.
func workingSetLabel(f *results.Figure) string {
	ws := f.Params["working_set"]
	if ws == "" {
		ws = results.FormatBytes(f.Size)
	}
	switch f.Params["cache"] {
	case "in_l2":
		return ws + " (in L2)"
	case "beyond_l2":
		return ws + " (beyond L2)"
	}
	return ws
}

func boxSubtitle(perPair bool, extra string) string {
	s := "boxes: quartiles and median of each pair's samples, whiskers 1.5 IQR, dots outliers"
	if !perPair {
		s = "boxes: distribution over pairs of each pair's median (quartiles, whiskers 1.5 IQR)"
	}
	if extra != "" {
		s += "; " + extra
	}
	return s
}

func pingPongDistribution(ix *index) *distribution {
	perPair := len(ix.devs) <= fewDevices
	differ := ix.ranksDiffer()
	d := collect(ix.byTest[results.LatPingPong], perPair,
		func(f *results.Figure) (string, bool) { return ix.pairGroup(f, perPair, differ), true },
		func(f *results.Figure) (string, bool) {
			switch m := f.Params["measure"]; m {
			case "", "round_trip":
				return "round trip", true
			case "one_way":
				return "one way (half a round trip)", true
			default:
				return m, true
			}
		},
		groupOrder, func(m map[string]bool) []string {
			out := sortedStrings(m)
			sort.SliceStable(out, func(i, j int) bool { return out[i] == "round trip" })
			return out
		})
	if d == nil {
		return nil
	}
	d.title = "Flag ping-pong latency between GPUs"
	d.yLabel = "ns"
	d.subtitle = boxSubtitle(perPair, "label a→b: a initiates, b answers")
	return d
}

// copyLatencyDistribution: one small copy's latency against its size, one
// box per kind of figure (host, back to back, device) and way (pull, push).
func copyLatencyDistribution(ix *index) *distribution {
	var figs []*results.Figure
	for _, k := range copyLatKinds {
		figs = append(figs, ix.byTest[k.test]...)
	}
	perPair := len(ix.devs) <= fewDevices
	sizes := map[string]uint64{}
	order := map[string]int{}
	d := collect(figs, perPair,
		func(f *results.Figure) (string, bool) {
			l := results.FormatBytes(f.Size)
			sizes[l] = f.Size
			return l, true
		},
		func(f *results.Figure) (string, bool) {
			i := slices.IndexFunc(copyLatKinds, func(k copyLatKind) bool { return k.test == f.Test })
			l := copyLatKinds[i].label
			if way := map[results.Direction]string{results.DirRead: "pull", results.DirWrite: "push"}[f.Direction]; way != "" {
				l += ", " + way
			}
			order[l] = 2 * i
			if f.Direction == results.DirWrite {
				order[l]++
			}
			return l, true
		},
		func(m map[string]bool) []string {
			out := sortedStrings(m)
			sort.Slice(out, func(i, j int) bool { return sizes[out[i]] < sizes[out[j]] })
			return out
		},
		func(m map[string]bool) []string {
			out := sortedStrings(m)
			sort.SliceStable(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
			return out
		})
	if d == nil {
		return nil
	}
	d.title = "Latency of a small peer copy (cuMemcpyPeerAsync) against its size"
	d.yLabel = "ns per copy"
	if perPair {
		d.subtitle = "boxes: every pair's samples together, over every round (quartiles, median, whiskers 1.5 IQR)"
	} else {
		d.subtitle = boxSubtitle(false, "")
	}
	return d
}

// copyLatKind is a small-copy test and its name in the plot.
type copyLatKind struct {
	test  results.Test
	label string
}

// copyLatKinds are the small-copy tests in the order of their boxes.
var copyLatKinds = []copyLatKind{
	{results.LatCopyHost, "host end to end"}, {results.LatCopyB2B, "back to back, per copy"}, {results.LatCopyDevice, "device time, one copy"},
}

// atomicThroughput returns bars per operation: distinct addresses and one
// contended address.
func atomicThroughput(ix *index) (distinct, contended *distribution) {
	differ := ix.ranksDiffer()
	ops := opOrder(ix.byTest[results.AtomicTput])
	build := func(want bool) *distribution {
		d := collect(ix.byTest[results.AtomicTput], false,
			func(f *results.Figure) (string, bool) {
				return f.Params["op"], truthy(f.Params["contended"]) == want
			},
			func(f *results.Figure) (string, bool) { return ix.pairGroup(f, false, differ), true },
			func(map[string]bool) []string { return ops }, groupOrder)
		if d == nil {
			return nil
		}
		d.bars = true
		d.yLabel = "Gop/s"
		return d
	}
	distinct, contended = build(false), build(true)
	if distinct != nil {
		distinct.title = "Atomic throughput: every thread on its own address"
		distinct.subtitle = "bars: median over pairs of each pair's median Gop/s; whiskers: min–max over pairs"
	}
	if contended != nil {
		contended.title = "Atomic throughput: every thread on one address"
		contended.subtitle = "bars: median over pairs of each pair's median Gop/s; whiskers: min–max over pairs"
		if distinct == nil {
			distinct = contended
			contended = nil
		}
	}
	return distinct, contended
}

// opOrder lists the atomic operations in the order the run measured them.
func opOrder(figs []*results.Figure) []string {
	var ops []string
	seen := map[string]bool{}
	for _, f := range figs {
		if op := f.Params["op"]; op != "" && !seen[op] {
			seen[op] = true
			ops = append(ops, op)
		}
	}
	return ops
}

func atomicLatency(ix *index) *distribution {
	perPair := len(ix.devs) <= fewDevices
	differ := ix.ranksDiffer()
	ops := opOrder(ix.byTest[results.AtomicLatency])
	d := collect(ix.byTest[results.AtomicLatency], perPair,
		func(f *results.Figure) (string, bool) { return f.Params["op"], f.Params["op"] != "" },
		func(f *results.Figure) (string, bool) {
			if f.Src == f.Dst {
				return "local", true
			}
			return ix.pairGroup(f, false, differ), true
		},
		func(map[string]bool) []string { return ops }, groupOrder)
	if d == nil {
		return nil
	}
	d.title = "Atomic latency: a chain of dependent atomics from one thread"
	d.yLabel = "ns per atomic"
	if perPair {
		d.subtitle = "boxes: the samples of every pair of the group (quartiles, median, whiskers 1.5 IQR)"
	} else {
		d.subtitle = boxSubtitle(false, "")
	}
	return d
}

// drawPanels draws distributions side by side under one header and one
// legend (the first panel's series).
func drawPanels(c draw.Canvas, panels []*distribution) {
	title, _, _ := strings.Cut(panels[0].title, ":")
	if len(panels) == 1 {
		title = panels[0].title
	}
	body := drawHeader(c, title, panels[0].subtitle, "")
	var legend []legendEntry
	if len(panels[0].series) > 1 {
		for si, s := range panels[0].series {
			legend = append(legend, legendEntry{s, &swatch{color: seriesColor(si)}})
		}
	}
	body = drawLegend(body, legend)
	w := (body.Max.X - body.Min.X) / vg.Length(len(panels))
	for i, p := range panels {
		sub := draw.Crop(body, w*vg.Length(i), -(w * vg.Length(len(panels)-1-i)), 0, 0)
		panelTitle := ""
		if len(panels) > 1 {
			_, panelTitle, _ = strings.Cut(p.title, ": ")
		}
		p.draw(sub, panelTitle)
	}
}

// draw draws one distribution panel into c.
func (d *distribution) draw(c draw.Canvas, title string) {
	p := newPlot("", "", d.yLabel)
	if title != "" {
		p.Title.Text = title
		setFont(&p.Title.TextStyle, labelSize+1, false)
	}
	gridLines(p)
	nc, ns := len(d.categories), len(d.series)
	ticks := make(plot.ConstantTicks, nc)
	var labelsW vg.Length
	for i, cat := range d.categories {
		ticks[i] = plot.Tick{Value: float64(i), Label: cat}
		labelsW += p.X.Tick.Label.Width(cat) + vg.Points(8)
	}
	p.X.Tick.Marker = ticks
	// Each category's slot (width 1) holds its series side by side.
	dataW := (c.Max.X - c.Min.X) - vg.Inch
	if labelsW > dataW {
		// Labels that would collide are turned.
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	p.X.Min, p.X.Max = -0.6, float64(nc)-0.4
	slotW := dataW / (vg.Length(nc) + 0.2)
	boxW := slotW * 0.8 / vg.Length(ns)
	if boxW > vg.Points(40) {
		boxW = vg.Points(40)
	}
	ymax := 0.0
	for si := range d.series {
		clr := seriesColor(si)
		for ci := range d.categories {
			vals := d.values[ci][si]
			if len(vals) == 0 {
				continue
			}
			loc := float64(ci)
			off := (vg.Length(si) - vg.Length(ns-1)/2) * boxW
			ymax = math.Max(ymax, maxOf(vals))
			if d.bars {
				p.Add(&barPlotter{loc: loc, offset: off, width: boxW * 0.9, values: vals, color: clr})
				continue
			}
			box, err := plotter.NewBoxPlot(boxW*0.8, loc, plotter.Values(vals))
			if err != nil {
				continue
			}
			box.Offset = off
			box.FillColor = withAlpha(clr, 0.35)
			box.BoxStyle = draw.LineStyle{Color: clr, Width: vg.Points(1)}
			box.MedianStyle = draw.LineStyle{Color: clr, Width: vg.Points(2)}
			box.WhiskerStyle = draw.LineStyle{Color: clr, Width: vg.Points(1)}
			box.GlyphStyle = draw.GlyphStyle{Color: clr, Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
			p.Add(box)
		}
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.15
	p.Draw(c)
}

func maxOf(vs []float64) float64 {
	m := math.Inf(-1)
	for _, v := range vs {
		m = math.Max(m, v)
	}
	return m
}

// swatch is a legend thumbnail: a filled square.
type swatch struct{ color color.RGBA }

func (s *swatch) Thumbnail(c *draw.Canvas) {
	c.SetColor(withAlpha(s.color, 0.6))
	c.Fill(c.Rectangle.Path())
	c.SetLineStyle(draw.LineStyle{Color: s.color, Width: vg.Points(1)})
	c.Stroke(c.Rectangle.Path())
}

// barPlotter draws one bar: the median of values, a min–max whisker when
// there are several, and the median's value above.
type barPlotter struct {
	loc    float64
	offset vg.Length
	width  vg.Length
	values []float64
	color  color.RGBA
}

func (b *barPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	vs := append([]float64(nil), b.values...)
	sort.Float64s(vs)
	m := figstats.Median(vs)
	x := trX(b.loc) + b.offset
	y0, y1 := trY(0), trY(m)
	rect := vg.Rectangle{Min: vg.Point{X: x - b.width/2, Y: y0}, Max: vg.Point{X: x + b.width/2, Y: y1}}
	c.SetColor(withAlpha(b.color, 0.75))
	c.Fill(rect.Path())
	top := y1
	if len(vs) > 1 && vs[len(vs)-1] > vs[0] {
		ws := draw.LineStyle{Color: darkGrey, Width: vg.Points(1)}
		lo, hi := trY(vs[0]), trY(vs[len(vs)-1])
		c.StrokeLine2(ws, x, lo, x, hi)
		c.StrokeLine2(ws, x-b.width/4, lo, x+b.width/4, lo)
		c.StrokeLine2(ws, x-b.width/4, hi, x+b.width/4, hi)
		top = max(top, hi)
	}
	sty := textStyle(7, black)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	label := formatValue(m)
	if sty.Width(label) > b.width*1.15 {
		// Wider than its bar, a label would run into its neighbour's:
		// it stands up instead.
		sty.Rotation = math.Pi / 2
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	}
	c.FillText(sty, vg.Point{X: x, Y: top + vg.Points(2)}, label)
}

func (b *barPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.loc, b.loc, 0, maxOf(b.values)
}

func (b *barPlotter) Thumbnail(c *draw.Canvas) { (&swatch{color: b.color}).Thumbnail(c) }
