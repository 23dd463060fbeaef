package report

import (
	"cmp"
	"slices"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// Headline is one pair's large-transfer bandwidth on one test, against the
// link's theoretical limit.
type Headline struct {
	// Test, Direction and Part name the figure: sm_bidir, write, total.
	Test      results.Test
	Direction results.Direction
	Part      results.Part
	Engine    results.Engine
	// Key is the figure's key (results.Figure.Key), to find its verdict.
	Key      string
	Src, Dst int
	Size     uint64
	// Stats of the figure; nil when it failed (Failed says why, as
	// Figure.FailureLabel does).
	Stats  *figstats.Stats
	Failed string
	// NoPeer marks a failure the pair explains: it has no peer access
	// (results.Run.ExplainedFailure), so the test could not run on it.
	NoPeer bool
	// LinkGBps is the limit the figure is held against, from the path it
	// crosses: the pair's theoretical bandwidth (Pair.LinkLimit), doubled
	// for totals of both directions; for a copy staged through the host
	// the slower of the two GPUs' PCIe links; 0 if unknown.
	LinkGBps float64
	// Method names, for an imported run's SM figure, whose kernel made it
	// ("nvbandwidth's kernel"): another method than p2pbench's SM rows of
	// the same name; "" for p2pbench's own.
	Method string
	// CEGBps is, for an SM figure, the median of the copy-engine figure of
	// the same pair, direction and part (0 when there is none): the SM path
	// is judged against the copy engine as well as against the link.
	CEGBps float64
}

// Label names the headline's kind of figure: "CE read", "SM both ways,
// writing (total)".
func (h Headline) Label() string {
	l := results.KindLabel(h.Test, h.Direction, h.Part, "")
	if h.Method != "" {
		l += " [" + h.Method + "]"
	}
	return l
}

// PercentOfCE is an SM figure's median as a percentage of CEGBps, 0 if unknown.
func (h Headline) PercentOfCE() float64 {
	if h.CEGBps <= 0 || h.Stats == nil {
		return 0
	}
	return 100 * h.Stats.Median / h.CEGBps
}

// PercentOfLink is the median as a percentage of LinkGBps, 0 if either is unknown.
func (h Headline) PercentOfLink() float64 {
	if h.LinkGBps <= 0 || h.Stats == nil {
		return 0
	}
	return 100 * h.Stats.Median / h.LinkGBps
}

// Headlines returns the figures a buyer holds against the links' limits:
// every pair's figure of each matrix test of the catalogue (copy engine,
// SM kernels and staged copies; for tests both ways, each direction's
// total) at the run's matrix size, in catalogue order, then by direction
// and pair. The report's headline table and the summary read them.
func Headlines(run *results.Run) []Headline {
	size := run.MatrixSize()
	limits := run.PathLimits()
	// The headlines' figures first, then the headlines made at once (a
	// 72-GPU run has 11,000, of some 170 bytes each: grown one by one,
	// they were copied again and again).
	var figs []int
	for i := range run.Figures {
		f := &run.Figures[i]
		info := f.Test.Info()
		whole := results.PartNone
		if info.BothWays {
			whole = results.PartTotal
		}
		if info.Matrix && f.Part == whole && f.Size == size && f.Src >= 0 && f.Dst >= 0 && f.Src != f.Dst {
			figs = append(figs, i)
		}
	}
	out := make([]Headline, 0, len(figs))
	for _, i := range figs {
		f := &run.Figures[i]
		h := Headline{Test: f.Test, Direction: f.Direction, Part: f.Part, Engine: f.Engine, Key: f.Key(), Src: f.Src, Dst: f.Dst, Size: f.Size,
			LinkGBps: limits.Of(f), Failed: f.FailureLabel()}
		if h.Failed == "" {
			h.Stats = f.Stats
		} else if p, ok := run.Topology.Pair(f.Src, f.Dst); ok && !p.CanAccessPeer && run.ExplainedFailure(f) != "" {
			h.NoPeer = true
		}
		if run.Imported != nil && f.Engine.IsSM() {
			h.Method = possessive(run.Tool.Name) + " kernel"
		}
		out = append(out, h)
	}
	// Each SM figure's copy-engine counterpart: the same kind of copy (one
	// way or both ways), direction, part and pair.
	type kind struct {
		bothWays bool
		dir      results.Direction
		part     results.Part
		src, dst int
	}
	kindOf := func(h Headline) kind { return kind{h.Test.Info().BothWays, h.Direction, h.Part, h.Src, h.Dst} }
	ce := map[kind]float64{}
	for _, h := range out {
		if h.Stats != nil && h.Engine == results.EngineCopy {
			ce[kindOf(h)] = h.Stats.Median
		}
	}
	for i, h := range out {
		if h.Engine.IsSM() {
			out[i].CEGBps = ce[kindOf(h)]
		}
	}
	order := catalogueOrder()
	slices.SortStableFunc(out, func(a, b Headline) int {
		if a.Test != b.Test {
			return cmp.Compare(order[a.Test], order[b.Test])
		}
		return cmp.Or(cmp.Compare(a.Direction, b.Direction), cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
	})
	return out
}

// catalogueOrder maps each test of the catalogue to its place in it.
func catalogueOrder() map[results.Test]int {
	order := map[results.Test]int{}
	for i, info := range results.Catalogue() {
		order[info.Name] = i
	}
	return order
}
