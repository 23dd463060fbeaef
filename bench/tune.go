package bench

import (
	"context"
	"fmt"
	"sort"

	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// Tuning search space and effort.
var (
	tuneBlocksPerSM = []int{1, 2, 4, 8}
	tuneBlockSizes  = []int{256, 512, 1024}
	// The bulk variants drive the copy unit from one thread per block:
	// their search varies the blocks only.
	tuneBulkBlocksPerSM = []int{1, 2, 3, 4, 6, 8}
	tuneBulkBlockSizes  = []int{32}
)

const (
	tuneQuickSamples = 5
	tuneFinalists    = 3
)

// tuneSteps plans the search: per ordered pair and direction, every variant
// the devices support at the default grid, then every grid for the best few,
// then the finalists again with the full sample count; the best median wins.
func (e *Engine) tuneSteps() []step {
	if !e.opt.Tune || len(e.order) < 2 {
		return nil
	}
	var steps []step
	for _, p := range e.orderedPairs() {
		for _, dir := range measure.TuneDirections {
			s, d := p[0], p[1]
			steps = append(steps, step{fmt.Sprintf("tune %d→%d %s", s.Index, d.Index, dir), func(ctx context.Context) { e.tunePair(ctx, s, d, dir) }, tuneCost})
		}
	}
	return steps
}

// tuner searches the SM copy configurations of one pair and direction.
type tuner struct {
	e    *Engine
	ctx  context.Context
	s, d *measure.Device
	dir  string
}

func (e *Engine) tunePair(ctx context.Context, s, d *measure.Device, dir string) {
	rec := results.Tuning{Src: s.Index, Dst: d.Index, Direction: dir, Size: e.opt.Size}
	defer e.addTuning(&rec)
	if err := e.enablePair(s, d); err != nil {
		rec.Tried = append(rec.Tried, results.TuneCandidate{Error: err.Error()})
		return
	}
	defer e.releasePair(s, d)
	t := tuner{e: e, ctx: ctx, s: s, d: d, dir: dir}
	// Stage 1: every variant at the default grid.
	stage1 := t.variants()
	rec.Tried = append(rec.Tried, stage1...)
	// Stage 2: the grid for the best variants.
	stage2 := t.grids(stage1[:min(tuneFinalists, len(stage1))])
	rec.Tried = append(rec.Tried, stage2...)
	all := append(append([]results.TuneCandidate(nil), stage1...), stage2...)
	t.rank(all)
	// Stage 3: the finalists with the full sample count.
	var final []results.TuneCandidate
	for _, c := range all[:min(tuneFinalists, len(all))] {
		if c.Error != "" || ctx.Err() != nil {
			continue
		}
		final = append(final, t.try(measure.SMConfig{Variant: c.Variant, BlocksPerSM: c.BlocksPerSM, BlockSize: c.BlockSize}, e.opt.Samples))
	}
	t.rank(final)
	if len(final) > 0 && final[0].Error == "" {
		rec.Winner = final[0]
	}
	rec.Tried = append(rec.Tried, final...)
}

// variants tries every copy variant the pair supports at its default grid,
// best first.
func (t tuner) variants() []results.TuneCandidate {
	cc := min(t.s.Info.ComputeMajor*10+t.s.Info.ComputeMinor, t.d.Info.ComputeMajor*10+t.d.Info.ComputeMinor)
	var out []results.TuneCandidate
	for _, k := range kernels.CopyKernels {
		if k.MinCC > cc || t.ctx.Err() != nil {
			continue
		}
		b, bs := k.DefaultGrid()
		out = append(out, t.try(measure.SMConfig{Variant: k.Variant, BlocksPerSM: b, BlockSize: bs}, tuneQuickSamples))
	}
	t.rank(out)
	return out
}

// grids tries the other grids of each candidate's variant.
func (t tuner) grids(best []results.TuneCandidate) []results.TuneCandidate {
	var out []results.TuneCandidate
	for _, c := range best {
		blocks, sizes := tuneBlocksPerSM, tuneBlockSizes
		if k, _ := kernels.CopyKernelByVariant(c.Variant); k.CacheHint == "bulk" {
			blocks, sizes = tuneBulkBlocksPerSM, tuneBulkBlockSizes
		}
		for _, b := range blocks {
			for _, bs := range sizes {
				if t.ctx.Err() != nil || (b == c.BlocksPerSM && bs == c.BlockSize) || b*bs > 2048 {
					continue
				}
				out = append(out, t.try(measure.SMConfig{Variant: c.Variant, BlocksPerSM: b, BlockSize: bs}, tuneQuickSamples))
			}
		}
	}
	return out
}

// rank sorts candidates best first: measured before failed, verified before
// not (when verifying), then by median.
func (t tuner) rank(cs []results.TuneCandidate) {
	verify := t.e.opt.Verify
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if (a.Error == "") != (b.Error == "") {
			return a.Error == ""
		}
		if a.Verified != b.Verified && verify {
			return a.Verified
		}
		return a.MedianGBps > b.MedianGBps
	})
}

// try measures one configuration with the given samples.
func (t tuner) try(cfg measure.SMConfig, samples int) results.TuneCandidate {
	c := results.TuneCandidate{Variant: cfg.Variant, BlocksPerSM: cfg.BlocksPerSM, BlockSize: cfg.BlockSize}
	figs := t.e.tuneMeasure(t.ctx, t.s, t.d, t.dir, cfg, samples)
	if len(figs) == 0 {
		c.Error = "cancelled"
		return c
	}
	f := figs[len(figs)-1] // the total for both directions, else the only one
	if f.Error != "" {
		c.Error = f.Error
		return c
	}
	c.Verified = true
	for _, g := range figs {
		if g.Verify != results.VerifyPassed {
			c.Verified = false
		}
	}
	if f.Stats != nil {
		c.MedianGBps, c.CV = f.Stats.Median, f.Stats.CV
	}
	return c
}

// tuneMeasure measures one configuration in one direction and returns the
// figures (for both directions at once, the total comes last).
func (e *Engine) tuneMeasure(ctx context.Context, s, d *measure.Device, dir string, cfg measure.SMConfig, samples int) []results.Figure {
	mk := func(direction results.Direction, a, b *measure.Device) flow {
		fl := e.pairFlow(results.SMRead, direction, a, b, e.opt.Size, a.Send, b.Recv)
		fl.sm = cfg
		fl.fig.Engine, fl.fig.Params = cfg.Engine(), cfg.FigureParams(e.opt.Size)
		return fl
	}
	base, bothWays := measure.SplitTuneDirection(dir)
	n := func(measure.Timing) int { return samples }
	if !bothWays {
		return e.flowFigures(ctx, []flow{mk(base, s, d)}, n)
	}
	fwd := mk(base, s, d)
	rev := mk(base, d, s)
	tot := fwd.fig
	tot.Part = results.PartTotal
	return e.flowFigures(ctx, []flow{fwd, rev}, n, sum{fig: tot})
}

// addTuning records a search and lets its winner serve the SM tests after it.
func (e *Engine) addTuning(t *results.Tuning) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.run.Tuning = append(e.run.Tuning, *t)
	if t.Winner.Variant != "" {
		if e.opt.Tuned == nil {
			e.opt.Tuned = map[measure.TuneKey]measure.SMConfig{}
		}
		e.opt.Tuned[measure.TuneKey{Src: t.Src, Dst: t.Dst, Direction: t.Direction}] = measure.SMConfig{Variant: t.Winner.Variant, BlocksPerSM: t.Winner.BlocksPerSM, BlockSize: t.Winner.BlockSize}
	}
}
