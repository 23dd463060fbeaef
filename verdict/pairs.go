package verdict

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/p2pbench/p2pbench/internal/units"

	"github.com/montanaflynn/stats"

	"github.com/p2pbench/p2pbench/results"
)

// Pairs alike: every pair's bandwidth figure is compared with the same
// figure of the other pairs of its link class (peer access, NVLinks,
// PCIe path and performance rank: pairs the driver and NVML cannot tell
// apart), and a pair is named only where it is low beyond what the class
// and the figure's own noise explain, with the chance of a false alarm
// held over every comparison the run makes:
//
//   - each figure's deficit d = 1 − value / class median (the median of
//     the others of the class, where the class has fewer than
//     PairLeaveOneOut pairs, so that one weak link's two directions
//     cannot pull the median to themselves);
//   - its spread σ = √(se² + s² + PairFloor²): se the figure's own
//     relative standard error (its rounds' run-to-run CV over √rounds, or
//     its samples'), s the class's robust spread (1.4826 × the median
//     absolute deviation over the median), PairFloor the least spread
//     assumed between pairs of a class;
//   - its one-sided p-value, the normal tail beyond d / σ;
//   - Holm's step-down procedure over all the comparisons of the run at
//     family-wise error rate PairAlpha: the k-th smallest p-value is
//     significant while it is at most PairAlpha / (m − k + 1);
//   - a significant deficit of PairMinEffect or more warns, of
//     SlowPairFraction or more fails.
//
// On a healthy 72-GPU run of tens of thousands of comparisons the chance
// that any healthy pair is named is at most PairAlpha; a pair 5% slow on
// an 8-GPU machine, whose class spreads by a few tenths of a percent,
// lies tens of σ out. Package fleet holds each node's figures to the other
// nodes' by the same rule.
const (
	pairMinSize      = 1 << 20
	pairMinClass     = 3
	PairLeaveOneOut  = 8
	PairFloor        = 0.005
	PairAlpha        = 0.01
	PairMinEffect    = 0.03
	SlowPairFraction = 0.10
)

// pairMember is one pair's figure in a group of alike figures.
type pairMember struct {
	f  *results.Figure
	v  float64
	se float64
}

// pairTest is one comparison: a figure against its class.
type pairTest struct {
	m        pairMember
	ref      float64 // the class median it is held to
	deficit  float64
	z, p     float64
	peers    int
	class    string
	judgedBy string
}

// pairItems compares every pair with its class; judged is false when no
// class has pairMinClass pairs with a figure to compare.
func pairItems(run *results.Run) (items []results.CheckItem, judged bool, summary string) {
	tests, comparisons, classes := pairTests(pairGroups(run))
	if comparisons == 0 {
		return nil, false, "no link class has " + fmt.Sprint(pairMinClass) + " pairs or more with a figure to compare: nothing to hold a pair against"
	}
	// Holm's step-down over every comparison made.
	sort.Slice(tests, func(i, j int) bool { return tests[i].p < tests[j].p })
	named := tests[:Holm(len(tests), func(k int) float64 { return tests[k].p }, comparisons, PairAlpha)]
	summary = fmt.Sprintf("%d comparisons of a pair with its link class (%d %s): no pair low beyond its class's spread (Holm, family-wise %.0f%%; %.0f%% below warns, %.0f%% fails)",
		comparisons, classes, units.Plural(classes, "class", "classes"), 100*PairAlpha, 100*PairMinEffect, 100*SlowPairFraction)
	return lowPairs(named, comparisons), true, summary
}

// pairGroupKey is what a pair's figure is compared on: what it measures
// and its link class.
type pairGroupKey struct {
	test   results.Test
	engine results.Engine
	dir    results.Direction
	part   results.Part
	params string
	size   uint64
	class  string
}

// pairGroups gathers the run's bandwidth figures between two devices (of
// pairMinSize and more, with a value) by what they measure and the link
// class of their pair.
func pairGroups(run *results.Run) map[pairGroupKey][]pairMember {
	classes := pairClasses(run)
	groups := map[pairGroupKey][]pairMember{}
	for i := range run.Figures {
		f := &run.Figures[i]
		v, ok := f.Value()
		if f.Unit != results.UnitGBps || f.Src < 0 || f.Dst < 0 || f.Src == f.Dst || f.Size < pairMinSize || !ok || v <= 0 {
			continue
		}
		class, ok := classes[[2]int{f.Src, f.Dst}]
		if !ok {
			continue
		}
		k := pairGroupKey{f.Test, f.Engine, f.Direction, f.Part, f.IdentityParams(), f.Size, class}
		groups[k] = append(groups[k], pairMember{f: f, v: v, se: RelativeError(f)})
	}
	return groups
}

// pairTests holds each figure of a group of pairMinClass or more to the
// group's median (of the others where the group is smaller than
// PairLeaveOneOut): the figures at least PairMinEffect below it, with
// their significance; it counts the comparisons made and the link classes
// compared.
func pairTests(groups map[pairGroupKey][]pairMember) (tests []pairTest, comparisons, classes int) {
	classSeen := map[string]bool{}
	for k, ms := range groups {
		if len(ms) < pairMinClass {
			continue
		}
		classSeen[k.class] = true
		all := make([]float64, len(ms))
		for i, m := range ms {
			all[i] = m.v
		}
		med, spread := robust(all)
		for i, m := range ms {
			comparisons++
			ref, s := med, spread
			if len(ms) < PairLeaveOneOut {
				ref, s = robust(slices.Delete(slices.Clone(all), i, i+1))
			}
			if ref <= 0 {
				continue
			}
			d := 1 - m.v/ref
			if d < PairMinEffect {
				continue
			}
			sigma := math.Sqrt(m.se*m.se + s*s + PairFloor*PairFloor)
			z := d / sigma
			tests = append(tests, pairTest{m: m, ref: ref, deficit: d, z: z, p: stats.NormSf(z, 0, 1), peers: len(ms), class: k.class})
		}
	}
	return tests, comparisons, len(classSeen)
}

// lowPairs are the items of the pairs named low: each pair once, by its
// figure furthest below its class (a WARN, SlowPairFraction or more a
// FAIL), saying how many more of its figures are low, in pair order.
func lowPairs(named []pairTest, comparisons int) []results.CheckItem {
	type pairKey [2]int
	worst := map[pairKey]*pairTest{}
	count := map[pairKey]int{}
	for i := range named {
		t := &named[i]
		k := pairKey{t.m.f.Src, t.m.f.Dst}
		count[k]++
		if w := worst[k]; w == nil || t.deficit > w.deficit {
			worst[k] = t
		}
	}
	keys := slices.SortedFunc(maps.Keys(worst), func(a, b pairKey) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	var items []results.CheckItem
	for _, k := range keys {
		t := worst[k]
		f := t.m.f
		st := results.StatusWarn
		if t.deficit >= SlowPairFraction {
			st = results.StatusFail
		}
		msg := fmt.Sprintf("%s: %s GB/s, %.1f%% below the median of its class (%s, %d pairs) %s GB/s; %.1f σ out, significant over the run's %d comparisons (Holm, family-wise %.0f%%)",
			results.FigureName(f), fmtValue(t.m.v), 100*t.deficit, t.class, t.peers, fmtValue(t.ref), t.z, comparisons, 100*PairAlpha)
		if n := count[k]; n > 1 {
			msg += fmt.Sprintf("; %d more of its figures are low too", n-1)
		}
		items = append(items, results.CheckItem{Status: st, Subject: fmt.Sprintf("%s %d→%d", f.Test, k[0], k[1]), Message: msg})
	}
	return items
}

// Holm is how many of n p-values, p(k) the k-th smallest, Holm's
// step-down procedure finds significant among m comparisons (m ≥ n: the
// others' p-values are larger) at family-wise error rate alpha: the k-th
// smallest is while it is at most alpha / (m − k).
func Holm(n int, p func(k int) float64, m int, alpha float64) int {
	for k := range n {
		if p(k) > alpha/float64(m-k) {
			return k
		}
	}
	return n
}

// robust is the median of vs and their robust relative spread, 1.4826 ×
// the median absolute deviation over the median.
func robust(vs []float64) (med, spread float64) {
	med, _ = stats.Median(vs)
	mad, _ := stats.MedianAbsoluteDeviationPopulation(vs)
	if med > 0 {
		spread = 1.4826 * mad / med
	}
	return med, spread
}

// RelativeError is a figure's relative standard error: its rounds'
// run-to-run CV over the square root of their number, or its samples' CV
// over the square root of theirs (× 1.25, a median's efficiency).
func RelativeError(f *results.Figure) float64 {
	if f.Stats == nil {
		return 0
	}
	if r := f.Stats.Rounds; r != nil && r.N >= 2 {
		return r.RunCV / math.Sqrt(float64(r.N))
	}
	if f.Stats.N > 1 {
		return 1.25 * f.Stats.CV / math.Sqrt(float64(f.Stats.N))
	}
	return 0
}

// pairClasses names the link class of every ordered pair: the plan's
// classes where the run has them, else what the topology says.
func pairClasses(run *results.Run) map[[2]int]string {
	out := map[[2]int]string{}
	if run.Plan != nil {
		for _, c := range run.Plan.Classes {
			for _, p := range c.Pairs {
				out[[2]int{p[0], p[1]}] = c.Name
			}
		}
	}
	if run.Topology == nil {
		return out
	}
	for _, p := range run.Topology.Pairs {
		k := [2]int{p.Src, p.Dst}
		if _, ok := out[k]; ok {
			continue
		}
		rank, _ := p.PerformanceRank()
		switch {
		case !p.CanAccessPeer:
			out[k] = "no peer access"
		case p.NVLinks > 0:
			out[k] = fmt.Sprintf("NV%d, performance rank %d", p.NVLinks, rank)
		default:
			out[k] = fmt.Sprintf("PCIe %s, performance rank %d", p.PCIePath, rank)
		}
	}
	return out
}
