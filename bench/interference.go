package bench

import (
	"context"
	"fmt"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// interferenceChecks is how many times the interference check measures a
// pair alone and in its group, alternately, as rounds of its own.
const interferenceChecks = 3

// interferenceSteps check, once before the rounds, each link class whose
// pairs the plan measures at once: its largest group of pairs measured
// together against its first pair alone, by the first selected one-way
// peer test at the matrix size.
func (e *Engine) interferenceSteps() []step {
	var test results.Test
	for _, t := range e.peerTests() {
		if !t.Info().BothWays {
			test = t
			break
		}
	}
	if test == "" {
		return nil
	}
	class := map[results.PairID]int{}
	for i, c := range e.sched.Classes {
		for _, q := range c.Pairs {
			class[q] = i
		}
	}
	largest := map[int][]results.PairID{}
	for _, g := range groups(e.order, e.sched.Classes) {
		if c := class[g[0]]; len(g) > len(largest[c]) {
			largest[c] = g
		}
	}
	var steps []step
	for i, c := range e.sched.Classes {
		if g := largest[i]; c.Concurrent && len(g) > 1 {
			steps = append(steps, step{"interference check, " + c.Name, func(ctx context.Context) { e.interference(ctx, i, test, g) }, 2 * interferenceChecks * e.copyCost(1, float64(e.opt.Size)/e.pairGBps(g[0]))})
		}
	}
	return steps
}

// interference measures group g's first pair alone and in the group,
// interferenceChecks times each, and, when the group is slower beyond the
// spread between those checks, measures the class one pair at a time and
// says so (the class's Interference and a note).
func (e *Engine) interference(ctx context.Context, class int, test results.Test, g []results.PairID) {
	pairs := make([][2]*measure.Device, 0, len(g))
	for _, q := range g {
		s, d := e.devs[q[0]], e.devs[q[1]]
		if e.enablePair(s, d) != nil {
			continue // the matrices record why
		}
		defer e.releasePair(s, d)
		pairs = append(pairs, [2]*measure.Device{s, d})
	}
	if len(pairs) < 2 {
		return
	}
	_, dir := measure.CopyOf(test)
	flows := func(ps [][2]*measure.Device) []flow {
		out := make([]flow, len(ps))
		for i, p := range ps {
			out[i] = e.pairFlow(test, dir, p[0], p[1], e.opt.Size, p[0].Send, p[1].Recv)
		}
		return out
	}
	samples := func(measure.Timing) int { return max(3, e.opt.Samples/max(1, e.rounds)) }
	var alone, together []float64
	var counts []int
	for range interferenceChecks {
		a := e.flowFigures(ctx, flows(pairs[:1]), samples)
		t := e.flowFigures(ctx, flows(pairs), samples)
		if len(a) == 0 || len(t) == 0 || a[0].Error != "" || t[0].Error != "" {
			return // cancelled, or the matrices will record the failure
		}
		alone, together = append(alone, a[0].Samples...), append(together, t[0].Samples...)
		counts = append(counts, len(a[0].Samples))
	}
	sa, st := figstats.ComputeRoundStats(alone, counts), figstats.ComputeRoundStats(together, counts)
	if sa.Rounds == nil || st.Rounds == nil || st.Rounds.MedianHi >= sa.Rounds.MedianLo || st.Median >= sa.Median*(1-interferenceFloor) {
		return
	}
	c := &e.sched.Classes[class]
	c.Concurrent = false
	c.Interference = fmt.Sprintf("%s %d→%d: %.1f %s with %d pairs at once (%s), %.1f alone (%s): %.0f%% slower; the class is measured one pair at a time",
		test, g[0][0], g[0][1], st.Median, results.UnitGBps, len(pairs), figstats.SpreadText(st.Median, st.Rounds.MedianLo, st.Rounds.MedianHi),
		sa.Median, figstats.SpreadText(sa.Median, sa.Rounds.MedianLo, sa.Rounds.MedianHi), 100*(1-st.Median/sa.Median))
	e.note("interference in link class %q: %s", c.Name, c.Interference)
}

// interferenceFloor is the least slowdown the check calls interference,
// whatever the spread: a fabric that carries disjoint pairs 2% slower
// together is not worth measuring one pair at a time.
const interferenceFloor = 0.02
