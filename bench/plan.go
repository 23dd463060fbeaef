package bench

import (
	"context"
	"fmt"

	"github.com/p2pbench/p2pbench/internal/measure"
	"github.com/p2pbench/p2pbench/results"
)

// step is one unit of work of the plan (a test on one pair, say).
type step struct {
	name string
	run  func(ctx context.Context)
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
// each device alone, of each pair, of groups of pairs, then latency and
// atomics. Every round repeats them, each step taking its share of every
// figure's samples (Engine.share); the tuning (tuneSteps) runs once, before
// the first round, as the SM tests use what it found.
func (e *Engine) plan() []step {
	steps := e.deviceSteps()
	steps = append(steps, e.pairSteps()...)
	steps = append(steps, e.aggregateSteps()...)
	steps = append(steps, e.hostSteps(true, e.devices(), "every device at once")...)
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

// deviceSteps are the bandwidth tests of one device: host copies and the
// copy within its memory.
func (e *Engine) deviceSteps() []step {
	var steps []step
	size := e.opt.Size
	for _, dv := range e.devices() {
		steps = append(steps, e.hostSteps(false, []*measure.Device{dv}, fmt.Sprintf("device %d", dv.Index))...)
		if e.opt.Selected(results.LocalCopy) {
			steps = append(steps, step{fmt.Sprintf("local copy device %d", dv.Index), func(ctx context.Context) { e.localCopy(ctx, dv, size) }})
		}
	}
	return steps
}

// pairSteps are the peer tests of every ordered pair, then the copies
// without peer access.
func (e *Engine) pairSteps() []step {
	var steps []step
	for _, p := range e.orderedPairs() {
		s, d := p[0], p[1]
		steps = append(steps, step{fmt.Sprintf("pair %d→%d", s.Index, d.Index), func(ctx context.Context) { e.pairTests(ctx, s, d) }})
	}
	if e.opt.Selected(results.NoP2PCopy) {
		for _, p := range e.orderedPairs() {
			s, d := p[0], p[1]
			steps = append(steps, step{fmt.Sprintf("no-P2P copy %d→%d", s.Index, d.Index), func(ctx context.Context) {
				e.uniPair(ctx, results.NoP2PCopy, s, d, e.opt.Size)
			}})
		}
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
	add := func(test results.Test, name string, keep func(s, d int) bool, dirs ...results.Direction) {
		var pairs [][2]int
		for _, p := range e.orderedPairs() {
			if keep(p[0].Index, p[1].Index) {
				pairs = append(pairs, [2]int{p[0].Index, p[1].Index})
			}
		}
		steps = append(steps, step{name, func(ctx context.Context) {
			for _, dir := range dirs {
				e.aggregate(ctx, test, dir, pairs, e.opt.Size)
			}
		}})
	}
	for _, g := range []struct {
		test results.Test
		name string
		keep func(x, s, d int) bool
	}{
		{results.AllToOne, "all to %d", func(x, _, d int) bool { return d == x }},
		{results.OneToAll, "%d to all", func(x, s, _ int) bool { return s == x }},
		{results.SMAllToOne, "SM all to %d", func(x, _, d int) bool { return d == x }},
		{results.SMOneToAll, "SM %d to all", func(x, s, _ int) bool { return s == x }},
	} {
		if e.opt.Selected(g.test) {
			for _, x := range e.order {
				add(g.test, fmt.Sprintf(g.name, x), func(s, d int) bool { return g.keep(x, s, d) }, results.DirWrite, results.DirRead)
			}
		}
	}
	if e.opt.Selected(results.AllPairs) {
		add(results.AllPairs, "all pairs at once", func(int, int) bool { return true }, results.DirWrite)
	}
	return steps
}

// pairPeerTests are the tests that need peer access between the pair.
var pairPeerTests = []results.Test{results.CERead, results.CEWrite, results.CEBidir, results.SMRead, results.SMWrite, results.SMBidir}

// pairTests runs every selected peer test on s → d: the matrices at the
// matrix size, then the size sweep (one-way tests only).
func (e *Engine) pairTests(ctx context.Context, s, d *measure.Device) {
	var want []results.Test
	for _, t := range pairPeerTests {
		if e.opt.Selected(t) {
			want = append(want, t)
		}
	}
	if len(want) == 0 {
		return
	}
	if err := e.enablePair(s, d); err != nil {
		// Unsupported (or failing) pairs are recorded as such; nop2p_copy
		// still measures them through the host.
		for _, t := range want {
			for _, f := range e.pairTemplates(t, s, d) {
				e.add(measure.Fail(f, err))
			}
		}
		e.disableIdle()
		return
	}
	defer func() {
		e.releasePair(s, d)
		e.disableIdle()
	}()
	sizes := []uint64{e.opt.Size}
	for _, z := range e.opt.Sweep {
		if z != e.opt.Size {
			sizes = append(sizes, z)
		}
	}
	for _, t := range want {
		for i, z := range sizes {
			if ctx.Err() != nil {
				return
			}
			switch {
			case !t.Info().BothWays:
				e.uniPair(ctx, t, s, d, z)
			case i == 0:
				e.bidirPair(ctx, t, results.DirRead, s, d, z)
				e.bidirPair(ctx, t, results.DirWrite, s, d, z)
			}
		}
	}
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
