package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// step is one unit of work of the plan (a test on one pair, say), with
// what one round of it is estimated to take (see cost.go).
type step struct {
	name string
	run  func(ctx context.Context)
	cost time.Duration
}

func (e *Engine) needsBandwidthBuffers() bool {
	for _, t := range e.opt.Tests {
		if t.Info().Command == results.CommandBW {
			return true
		}
	}
	return false
}

// plan turns the selected tests into the steps of one round: the tests of
// each device alone, the matrices of every pair (in groups of pairs that
// share no device, where their link class allows), the size sweeps of the
// detail pairs, the tests of groups of pairs, then latency and atomics.
// Every round repeats them, each step taking its share of every figure's
// samples (Engine.share); the tuning (tuneSteps) and the interference check
// run once, before the first round.
func (e *Engine) plan() []step {
	steps := e.deviceSteps()
	steps = append(steps, e.matrixSteps()...)
	steps = append(steps, e.sweepSteps()...)
	steps = append(steps, e.aggregateSteps()...)
	if e.sched.Mode != results.PlanSampled {
		// A sampled plan's domain spans hosts (an NVL72 rack has four GPUs
		// a host): copies to and from one host's memory from all its GPUs
		// at once would measure no real machine (see sampledHostNote).
		steps = append(steps, e.hostSteps(true, e.devices(), "every device at once")...)
	}
	steps = append(steps, e.latencySteps()...)
	steps = append(steps, e.hostChaseSteps()...)
	return append(steps, e.atomicSteps()...)
}

// orderedPairs lists every ordered pair of distinct selected devices.
func (e *Engine) orderedPairs() [][2]*measure.Device {
	var out [][2]*measure.Device
	for _, s := range e.order {
		for _, d := range e.order {
			if s != d {
				out = append(out, [2]*measure.Device{e.devs[s], e.devs[d]})
			}
		}
	}
	return out
}

// detailPairs lists the pairs the plan measures in detail.
func (e *Engine) detailPairs() [][2]*measure.Device {
	var out [][2]*measure.Device
	for _, q := range e.sched.Detail {
		if s, d := e.devs[q[0]], e.devs[q[1]]; s != nil && d != nil {
			out = append(out, [2]*measure.Device{s, d})
		}
	}
	return out
}

// stagedPairs are the pairs of the copies without peer access: these go
// through host memory whatever the link, so the detail pairs, and every
// pair without peer access, where they are the only way.
func (e *Engine) stagedPairs() [][2]*measure.Device {
	out := e.detailPairs()
	for _, c := range e.sched.Classes {
		for _, q := range c.Pairs {
			if c.Name == noPeerClass && !slices.Contains(e.sched.Detail, q) {
				out = append(out, [2]*measure.Device{e.devs[q[0]], e.devs[q[1]]})
			}
		}
	}
	return out
}

// localAndDetailPairs lists each device with itself, then the detail
// pairs, for the tests that also run within one device (chase, atomics).
func (e *Engine) localAndDetailPairs() [][2]*measure.Device {
	var out [][2]*measure.Device
	for _, dv := range e.devices() {
		out = append(out, [2]*measure.Device{dv, dv})
	}
	return append(out, e.detailPairs()...)
}

// deviceSteps are the bandwidth tests of one device: host copies and the
// copy within its memory.
func (e *Engine) deviceSteps() []step {
	var steps []step
	size := e.opt.Size
	for _, dv := range e.devices() {
		steps = append(steps, e.hostSteps(false, []*measure.Device{dv}, fmt.Sprintf("device %d", dv.Index))...)
		for _, t := range e.localTests() {
			steps = append(steps, step{fmt.Sprintf("%s device %d", t.Info().Short, dv.Index), func(ctx context.Context) { e.localCopy(ctx, t, dv, size) }, e.copyCost(1, float64(size)/localGBps)})
		}
	}
	return steps
}

// localTests are the selected copies within one device's memory by the
// copy engine, in catalogue order.
func (e *Engine) localTests() []results.Test {
	return e.selected(func(info results.TestInfo) bool {
		return info.Shape.Ends == results.EndsLocal && info.Shape.Engine == results.EngineCopy
	})
}

// stagedTests are the selected copies between two devices without peer
// access (staged through the host), in catalogue order.
func (e *Engine) stagedTests() []results.Test {
	return e.selected(func(info results.TestInfo) bool {
		return info.Shape.Ends == results.EndsPair && info.Shape.Engine == results.EngineStaged
	})
}

// selected are the selected tests of the measuring command bw whose shape
// keep accepts, in catalogue order.
func (e *Engine) selected(keep func(results.TestInfo) bool) []results.Test {
	return results.Shaped(func(info results.TestInfo) bool {
		return info.Command == results.CommandBW && e.opt.Selected(info.Name) && keep(info)
	})
}

// peerTests are the selected bandwidth tests of one pair at a time with
// peer access (the matrices' peer tests), in catalogue order.
func (e *Engine) peerTests() []results.Test {
	var want []results.Test
	for _, info := range results.Catalogue() {
		if sh := info.Shape; info.Command == results.CommandBW && sh.Ends == results.EndsPair && sh.NeedsPeer && e.opt.Selected(info.Name) {
			want = append(want, info.Name)
		}
	}
	return want
}

// matrixSteps are the peer tests at the matrix size of every ordered pair,
// each step a group of pairs measured at once (groups), then the copies
// without peer access, one pair at a time, on the pairs of stagedPairs. A
// plan that measures some tests on the detail pairs only (Plan.EveryPair)
// measures those in the same groups, cut down to the detail pairs.
func (e *Engine) matrixSteps() []step {
	var every, detail []results.Test
	for _, t := range e.peerTests() {
		if len(e.sched.EveryPair) == 0 || slices.Contains(e.sched.EveryPair, t) {
			every = append(every, t)
		} else {
			detail = append(detail, t)
		}
	}
	var steps []step
	add := func(g []results.PairID, tests []results.Test) {
		if len(g) == 0 || len(tests) == 0 {
			return
		}
		pairs := make([][2]*measure.Device, len(g))
		names := make([]string, len(g))
		for i, q := range g {
			pairs[i] = [2]*measure.Device{e.devs[q[0]], e.devs[q[1]]}
			names[i] = fmt.Sprintf("%d→%d", q[0], q[1])
		}
		steps = append(steps, step{"pair " + strings.Join(names, ", "), func(ctx context.Context) { e.matrices(ctx, pairs, tests) }, e.matrixCost(g[0], tests)})
	}
	gs := groups(e.order, e.sched.Classes)
	for _, g := range gs {
		add(g, every)
	}
	for _, g := range gs {
		add(slices.DeleteFunc(slices.Clone(g), func(q results.PairID) bool { return !slices.Contains(e.sched.Detail, q) }), detail)
	}
	for _, t := range e.stagedTests() {
		for _, p := range e.stagedPairs() {
			s, d := p[0], p[1]
			steps = append(steps, step{fmt.Sprintf("%s %d→%d", t.Info().Short, s.Index, d.Index), func(ctx context.Context) {
				// Without peer access: the copy goes through the host.
				e.disableIdle()
				e.uniPair(ctx, t, s, d, e.opt.Size)
			}, e.copyCost(1, float64(e.opt.Size)/(stagedShare*e.hostGBps()))})
		}
	}
	return steps
}

// matrices measures peer tests want at the matrix size on pairs at once
// (they share no device).
func (e *Engine) matrices(ctx context.Context, pairs [][2]*measure.Device, want []results.Test) {
	var ok [][2]*measure.Device
	for _, p := range pairs {
		if err := e.enablePair(p[0], p[1]); err != nil {
			// Unsupported (or failing) pairs are recorded as such; nop2p_copy
			// still measures them through the host.
			for _, t := range want {
				for _, f := range e.pairTemplates(t, p[0], p[1]) {
					e.add(measure.Fail(f, err))
				}
			}
			continue
		}
		ok = append(ok, p)
	}
	defer func() {
		for _, p := range ok {
			e.releasePair(p[0], p[1])
		}
	}()
	if len(ok) == 0 {
		return
	}
	for _, t := range want {
		if ctx.Err() != nil {
			return
		}
		if t.Info().BothWays {
			e.bothWays(ctx, t, results.DirRead, ok, e.opt.Size)
			e.bothWays(ctx, t, results.DirWrite, ok, e.opt.Size)
			continue
		}
		_, dir := measure.CopyOf(t)
		flows := make([]flow, len(ok))
		for i, p := range ok {
			flows[i] = e.pairFlow(t, dir, p[0], p[1], e.opt.Size, p[0].Send, p[1].Recv)
		}
		e.measureFlows(ctx, flows)
	}
}

// sweepSteps are the size sweeps of the one-way peer tests on the detail
// pairs (on a sampled plan, the representatives').
func (e *Engine) sweepSteps() []step {
	var want []results.Test
	for _, t := range e.peerTests() {
		if !t.Info().BothWays {
			want = append(want, t)
		}
	}
	var sizes []uint64
	for _, z := range e.opt.Sweep {
		if z != e.opt.Size {
			sizes = append(sizes, z)
		}
	}
	if len(want) == 0 || len(sizes) == 0 {
		return nil
	}
	pairs := e.detailPairs()
	if e.sched.Mode == results.PlanSampled {
		pairs = nil
		for _, c := range e.sched.Classes {
			for _, q := range c.Representatives {
				pairs = append(pairs, [2]*measure.Device{e.devs[q[0]], e.devs[q[1]]})
			}
		}
	}
	var steps []step
	for _, p := range pairs {
		s, d := p[0], p[1]
		steps = append(steps, step{fmt.Sprintf("size sweep %d→%d", s.Index, d.Index), func(ctx context.Context) {
			if e.enablePair(s, d) != nil {
				return // the matrices recorded why
			}
			defer e.releasePair(s, d)
			for _, t := range want {
				for _, z := range sizes {
					if ctx.Err() != nil {
						return
					}
					e.uniPair(ctx, t, s, d, z)
				}
			}
		}, e.sweepCost(len(want), sizes, s.Index, d.Index)})
	}
	return steps
}

// aggregateSteps are the tests of many pairs copying at once: into each
// device from every other and out of each device to every other, pushed
// and pulled, by the copy engine and by SM kernels; and every ordered pair
// together, pushed.
func (e *Engine) aggregateSteps() []step {
	if len(e.order) < 2 {
		return nil
	}
	var steps []step
	var alone []string
	add := func(test results.Test, name string, keep func(s, d int) bool, dirs ...results.Direction) {
		var pairs [][2]int
		for _, p := range e.orderedPairs() {
			if keep(p[0].Index, p[1].Index) {
				pairs = append(pairs, [2]int{p[0].Index, p[1].Index})
			}
		}
		if by := e.measuredAlone(test, pairs, dirs); by != "" {
			if s := fmt.Sprintf("%s (%s)", test, by); !slices.Contains(alone, s) {
				alone = append(alone, s)
			}
			return
		}
		steps = append(steps, step{name, func(ctx context.Context) {
			for _, dir := range dirs {
				e.aggregate(ctx, test, dir, pairs, e.opt.Size)
			}
		}, e.aggregateCost(len(dirs), pairs)})
	}
	for _, info := range results.Catalogue() {
		test, sh := info.Name, info.Shape
		if !e.opt.Selected(test) {
			continue
		}
		// A group test copies as its shape's direction says, else pushed
		// and pulled.
		dirs := []results.Direction{results.DirWrite, results.DirRead}
		if sh.Direction != "" {
			dirs = []results.Direction{sh.Direction}
		}
		sm := ""
		if sh.Engine == results.EngineSM {
			sm = "SM "
		}
		switch sh.Ends {
		case results.EndsIntoOne:
			for _, x := range e.order {
				add(test, fmt.Sprintf("%sall to %d", sm, x), func(_, d int) bool { return d == x }, dirs...)
			}
		case results.EndsOutOfOne:
			for _, x := range e.order {
				add(test, fmt.Sprintf("%s%d to all", sm, x), func(s, _ int) bool { return s == x }, dirs...)
			}
		case results.EndsAllPairs:
			add(test, sm+"all pairs at once", func(int, int) bool { return true }, dirs...)
		}
	}
	if len(alone) > 0 {
		e.note("plan: not measured, as each group is one pair, whose copies the pair tests measure alone: %s", strings.Join(alone, ", "))
	}
	return steps
}

// measuredAlone says which pair tests measure what the group test test
// would on pairs in directions dirs, when its group is one pair: an
// aggregate into or out of a device with one peer is that pair's copy by
// the same engine in the same direction (ce_read or ce_write, sm_read or
// sm_write, which read within 0.5% of them: docs/methods.md, "The plan"),
// and every pair of two devices at once is both ways at once by the same
// engine (ce_bidir, whose figures hold both directions). It returns "" when
// the group is more than one pair, or the pair tests that would stand for
// it do not measure that pair.
func (e *Engine) measuredAlone(test results.Test, pairs [][2]int, dirs []results.Direction) string {
	sh := test.Info().Shape
	var by []string
	switch {
	case sh.Ends == results.EndsAllPairs && len(pairs) == 2 && pairs[0] == [2]int{pairs[1][1], pairs[1][0]}:
		t, ok := results.PairTest(sh.Engine, "")
		if !ok {
			return ""
		}
		for _, q := range pairs {
			if !e.pairMeasured(t, q[0], q[1]) && !e.pairMeasured(t, q[1], q[0]) {
				return ""
			}
		}
		by = []string{string(t)}
	case (sh.Ends == results.EndsIntoOne || sh.Ends == results.EndsOutOfOne) && len(pairs) == 1:
		for _, dir := range dirs {
			t, ok := results.PairTest(sh.Engine, dir)
			if !ok || !e.pairMeasured(t, pairs[0][0], pairs[0][1]) {
				return ""
			}
			by = append(by, string(t))
		}
	default:
		return ""
	}
	return strings.Join(by, " and ")
}

// pairMeasured says whether the matrices measure pair test t on s → d.
func (e *Engine) pairMeasured(t results.Test, s, d int) bool {
	if !slices.Contains(e.peerTests(), t) {
		return false
	}
	return len(e.sched.EveryPair) == 0 || slices.Contains(e.sched.EveryPair, t) || slices.Contains(e.sched.Detail, results.PairID{s, d})
}

// pairTemplates returns the figures test would produce on s → d at the matrix size.
func (e *Engine) pairTemplates(test results.Test, s, d *measure.Device) []results.Figure {
	if !test.Info().BothWays {
		_, dir := measure.CopyOf(test)
		return []results.Figure{e.pairFlow(test, dir, s, d, e.opt.Size, 0, 0).fig}
	}
	var out []results.Figure
	for _, dir := range []results.Direction{results.DirRead, results.DirWrite} {
		for _, part := range []results.Part{results.PartForward, results.PartReverse, results.PartTotal} {
			f := e.pairFlow(test, dir, s, d, e.opt.Size, 0, 0).fig
			f.Part = part
			out = append(out, f)
		}
	}
	return out
}
