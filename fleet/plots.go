package fleet

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/plot"
)

// The most nodes and classes a type's figures show: the furthest from
// their medians, and the classes with the most figures below their peers
// and the widest spread.
const (
	maxRows    = 50
	maxColumns = 48
)

// Figures returns each machine type's plots: a node × figure heatmap of how
// far each node lies from its class medians, and every class's spread
// across the nodes with its figures below their peers marked.
func (f *Fleet) Figures() []plot.Chart {
	var out []plot.Chart
	for _, t := range f.Types {
		out = append(out, f.figuresOf(t)...)
	}
	return out
}

// cellOf is one node's figures of one class, as a heatmap cell shows them.
type cellOf struct {
	perf    float64 // the furthest from the median, percent better
	flagged bool
	seen    bool
}

func (f *Fleet) figuresOf(t *Type) []plot.Chart {
	cols := t.plotClasses()
	if len(cols) == 0 {
		return nil
	}
	pos := make(map[int32]int, len(cols))
	for i, c := range cols {
		pos[c] = i
	}
	spread := make([]plot.FleetColumn, len(cols))
	cells := make([][]cellOf, len(t.nodes))
	for r, n := range t.nodes {
		cells[r] = make([]cellOf, len(cols))
		for _, p := range n.points {
			i, ok := pos[p.class]
			if !ok {
				continue
			}
			class := t.Classes[p.class]
			perf := class.perf(p.value)
			c := &cells[r][i]
			if !c.seen || math.Abs(perf) > math.Abs(c.perf) {
				c.perf = perf
			}
			c.seen = true
			c.flagged = c.flagged || p.below
			if p.below {
				spread[i].Below = append(spread[i].Below, plot.FleetPoint{Deviation: perf, Label: n.Name + " " + devices(int(p.src), int(p.dst), class.Link)})
			}
		}
	}
	for i, ci := range cols {
		c := t.Classes[ci]
		lo, hi := c.perf(c.Min), c.perf(c.Max)
		spread[i].Label, spread[i].Min, spread[i].Max, spread[i].Band = c.Label, math.Min(lo, hi), math.Max(lo, hi), 100*f.Options.Threshold
	}
	rows := rowOrder(t.nodes, cells)
	grid := plot.FleetGrid{Columns: make([]string, len(cols))}
	for i, c := range cols {
		grid.Columns[i] = t.Classes[c].Label
	}
	for _, r := range rows {
		grid.Rows = append(grid.Rows, t.nodes[r].Name)
		vals, flags := make([]float64, len(cols)), make([]bool, len(cols))
		for i, c := range cells[r] {
			vals[i], flags[i] = c.perf, c.flagged
			if !c.seen {
				vals[i] = math.NaN()
			}
		}
		grid.Cells, grid.Flagged = append(grid.Cells, vals), append(grid.Flagged, flags)
	}
	caption := []string{fmt.Sprintf("p2pbench fleet  ·  %s: %d nodes of %s  ·  marked: below their peers (≥ %g%% worse than the class median, significant, Holm %g%%)",
		t.ID, t.Nodes, t.GPUs, 100*f.Options.Threshold, 100*f.Options.Alpha)}
	if t.Simulated {
		caption = append(caption, "SIMULATED nodes: synthetic figures, not measurements")
	}
	rowsNote := fmt.Sprintf("all %d nodes", t.Nodes)
	if len(rows) < t.Nodes {
		rowsNote = fmt.Sprintf("the %d of %d nodes furthest from their medians", len(rows), t.Nodes)
	}
	colsNote := ""
	if len(cols) < len(t.Classes) {
		colsNote = fmt.Sprintf(", %d of %d figures", len(cols), len(t.Classes))
	}
	id := strings.ToLower(t.ID)
	return []plot.Chart{
		plot.FleetHeatmap("fleet_heatmap_"+id, fmt.Sprintf("%s: each node against the fleet", t.ID), rowsNote+colsNote, grid, caption, t.Simulated),
		plot.FleetSpread("fleet_spread_"+id, fmt.Sprintf("%s: each figure across the nodes", t.ID), fmt.Sprintf("%d nodes%s", t.Nodes, colsNote), spread, caption, t.Simulated),
	}
}

// perf is how much better x is than the class median, in percent
// (negative: worse).
func (c *Class) perf(x float64) float64 { return -100 * deficit(x, c.Median, c.Unit) }

// plotClasses picks the judged classes the figures show, in class order:
// all of them, or those with the most figures below their peers and then
// the widest spread.
func (t *Type) plotClasses() []int32 {
	var out []int32
	for i, c := range t.Classes {
		if c.Judged {
			out = append(out, int32(i))
		}
	}
	if len(out) <= maxColumns {
		return out
	}
	width := func(c *Class) float64 { return (c.Max - c.Min) / c.Median }
	slices.SortStableFunc(out, func(a, b int32) int {
		ca, cb := t.Classes[a], t.Classes[b]
		return cmp.Or(cb.Below-ca.Below, cmp.Compare(width(cb), width(ca)))
	})
	out = out[:maxColumns]
	slices.Sort(out)
	return out
}

// rowOrder picks the nodes the heatmap shows, flagged nodes first, then by
// how far their furthest figure lies from its median.
func rowOrder(nodes []*Node, cells [][]cellOf) []int {
	type row struct {
		i       int
		flagged bool
		far     float64
	}
	rows := make([]row, len(nodes))
	for i := range nodes {
		rows[i].i = i
		for _, c := range cells[i] {
			rows[i].flagged = rows[i].flagged || c.flagged
			rows[i].far = math.Max(rows[i].far, math.Abs(c.perf))
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		if a.flagged != b.flagged {
			if a.flagged {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.far, a.far)
	})
	out := make([]int, 0, min(len(rows), maxRows))
	for _, r := range rows[:min(len(rows), maxRows)] {
		out = append(out, r.i)
	}
	return out
}
