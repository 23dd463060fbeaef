package bench

import (
	"context"
	"fmt"
	"sort"

	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// TuneKey names what a tuned SM configuration is for: an ordered pair and a
// direction (read, write, bidir_read, bidir_write).
type TuneKey struct {
	Src, Dst  int
	Direction string
}

// TuneDirections are the directions a tuning run searches.
var TuneDirections = []string{"read", "write", "bidir_read", "bidir_write"}

// Tuning search space.
var (
	TuneBlocksPerSM = []int{1, 2, 4, 8}
	TuneBlockSizes  = []int{256, 512, 1024}
)

const (
	tuneQuickSamples = 5
	tuneFinalists    = 3
)

// TunedFrom turns the tuning records of a results file into configurations.
func TunedFrom(ts []results.Tuning) map[TuneKey]SMConfig {
	out := map[TuneKey]SMConfig{}
	for _, t := range ts {
		if t.Winner.Variant == "" {
			continue
		}
		out[TuneKey{t.Src, t.Dst, t.Direction}] = SMConfig{t.Winner.Variant, t.Winner.BlocksPerSM, t.Winner.BlockSize}
	}
	return out
}

// tuneSteps plans the search: per ordered pair and direction, every variant
// the devices support at the default grid, then every grid for the best few,
// then the finalists again with the full sample count; the best median wins.
func (e *Engine) tuneSteps() []step {
	if !e.opt.Tune || len(e.order) < 2 {
		return nil
	}
	var steps []step
	for _, s := range e.order {
		for _, d := range e.order {
			if s == d {
				continue
			}
			for _, dir := range TuneDirections {
				sd, dd, dir := e.devs[s], e.devs[d], dir
				steps = append(steps, step{fmt.Sprintf("tune %d→%d %s", s, d, dir), func(ctx context.Context) { e.tunePair(ctx, sd, dd, dir) }})
			}
		}
	}
	return steps
}

func (e *Engine) tunePair(ctx context.Context, s, d *device, dir string) {
	rec := results.Tuning{Src: s.idx, Dst: d.idx, Direction: dir, Size: e.opt.Size}
	if err := e.enablePair(s, d); err != nil {
		rec.Tried = append(rec.Tried, results.TuneCandidate{Error: err.Error()})
		e.addTuning(rec)
		return
	}
	defer func() { e.releasePair(s, d); e.disableIdle() }()
	cc := min(s.info.ComputeMajor*10+s.info.ComputeMinor, d.info.ComputeMajor*10+d.info.ComputeMinor)
	try := func(cfg SMConfig, samples int) results.TuneCandidate {
		c := results.TuneCandidate{Variant: cfg.Variant, BlocksPerSM: cfg.BlocksPerSM, BlockSize: cfg.BlockSize}
		figs := e.tuneMeasure(ctx, s, d, dir, cfg, samples)
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
	better := func(a, b results.TuneCandidate) bool {
		if (a.Error == "") != (b.Error == "") {
			return a.Error == ""
		}
		if a.Verified != b.Verified && e.opt.Verify {
			return a.Verified
		}
		return a.MedianGBps > b.MedianGBps
	}
	// Stage 1: every variant at the default grid.
	var stage1 []results.TuneCandidate
	for _, k := range kernels.CopyKernels {
		if k.MinCC > cc || ctx.Err() != nil {
			continue
		}
		b, t := k.DefaultGrid()
		stage1 = append(stage1, try(SMConfig{k.Variant, b, t}, tuneQuickSamples))
	}
	sort.SliceStable(stage1, func(i, j int) bool { return better(stage1[i], stage1[j]) })
	rec.Tried = append(rec.Tried, stage1...)
	// Stage 2: the grid for the best variants.
	var stage2 []results.TuneCandidate
	for _, c := range stage1[:min(tuneFinalists, len(stage1))] {
		blocks, sizes := TuneBlocksPerSM, TuneBlockSizes
		if k, _ := kernels.CopyKernelByVariant(c.Variant); k.CacheHint == "bulk" {
			// One thread per block drives the copy unit: vary the blocks.
			blocks, sizes = []int{1, 2, 3, 4, 6, 8}, []int{32}
		}
		for _, b := range blocks {
			for _, t := range sizes {
				if ctx.Err() != nil || (b == c.BlocksPerSM && t == c.BlockSize) || b*t > 2048 {
					continue
				}
				stage2 = append(stage2, try(SMConfig{c.Variant, b, t}, tuneQuickSamples))
			}
		}
	}
	rec.Tried = append(rec.Tried, stage2...)
	all := append(append([]results.TuneCandidate(nil), stage1...), stage2...)
	sort.SliceStable(all, func(i, j int) bool { return better(all[i], all[j]) })
	// Stage 3: the finalists with the full sample count.
	var final []results.TuneCandidate
	for _, c := range all[:min(tuneFinalists, len(all))] {
		if c.Error != "" || ctx.Err() != nil {
			continue
		}
		final = append(final, try(SMConfig{c.Variant, c.BlocksPerSM, c.BlockSize}, e.opt.Samples))
	}
	sort.SliceStable(final, func(i, j int) bool { return better(final[i], final[j]) })
	if len(final) > 0 && final[0].Error == "" {
		rec.Winner = final[0]
	}
	rec.Tried = append(rec.Tried, final...)
	e.addTuning(rec)
}

// tuneMeasure measures one configuration in one direction and returns the
// figures (for both directions at once, the total comes last).
func (e *Engine) tuneMeasure(ctx context.Context, s, d *device, dir string, cfg SMConfig, samples int) []results.Figure {
	mk := func(direction string, a, b *device, src, dst *device) flow {
		fl := e.pairFlow("sm_read", direction, a, b, e.opt.Size, src.send, dst.recv)
		fl.sm = cfg
		fl.fig.Engine, fl.fig.Params = cfg.engine(), cfg.params()
		return fl
	}
	switch dir {
	case "read", "write":
		return e.flowFigures(ctx, []flow{mk(dir, s, d, s, d)}, nil, samples)
	}
	base := dir[len("bidir_"):]
	fwd := mk(base, s, d, s, d)
	rev := mk(base, d, s, d, s)
	tot := fwd.fig
	tot.Part = "total"
	return e.flowFigures(ctx, []flow{fwd, rev}, &tot, samples)
}

func (e *Engine) addTuning(t results.Tuning) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.run.Tuning = append(e.run.Tuning, t)
	if t.Winner.Variant != "" {
		if e.opt.Tuned == nil {
			e.opt.Tuned = map[TuneKey]SMConfig{}
		}
		e.opt.Tuned[TuneKey{t.Src, t.Dst, t.Direction}] = SMConfig{t.Winner.Variant, t.Winner.BlocksPerSM, t.Winner.BlockSize}
	}
}
