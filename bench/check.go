package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// The run's method check (results.MethodCheck): in the last round, the
// first group of transfers of each family (test, direction, engine; for a
// transfer timed alone, direction and engine whatever the test) at the
// plan's transfer size and at the smallest size of the sweep is timed again
// with plain long windows; after the rounds every checked figure is held
// against them, and where they disagree the plain windows stand.

// checkFamily is the family of f at its size: what one method check covers.
func checkFamily(f results.Figure) string {
	return fmt.Sprintf("%s|%s|%s|%d", f.Test, f.Direction, f.Engine, f.Size)
}

// singleFamily is the family of a figure timed as one transfer alone:
// whatever its test, one copy of an engine in a direction at a size is
// timed the same way (Timer.batched), so one check covers them all. On two
// GPUs every test of many pairs at once is one pair alone (all to 0 is
// 1 → 0), the same copy as the pair tests' figures, which one check covers.
func singleFamily(f results.Figure) string {
	return fmt.Sprintf("one|%s|%s|%d", f.Direction, f.Engine, f.Size)
}

// checkSizes are the sizes a family is checked at.
func (e *Engine) checkSizes() []uint64 {
	out := []uint64{e.opt.Size}
	if len(e.opt.Sweep) > 0 {
		out = append(out, slices.Min(e.opt.Sweep))
	}
	return out
}

// methodCheck takes the plain windows of the check of f's family when this is the
// round and the first group of the family to take them: ts as they were
// just timed with tm, ms their per-repetition milliseconds; f is the
// group's first figure. It returns per
// transfer the milliseconds of one repetition in each plain window, and the
// repetitions of a window; nil when no check is due or it failed (noted).
func (e *Engine) methodCheck(ctx context.Context, f results.Figure, ts []measure.Transfer, tm measure.Timing, ms [][]float64) ([][]float64, int) {
	family := checkFamily(f)
	if len(ts) == 1 {
		family = singleFamily(f)
	}
	if f.Size < measure.TrafficMinSize {
		// Below 64 MiB (the sweep's smallest size, on its representative
		// pairs only) every pair is checked: the check takes a few ms
		// there, and a small pull's fit can disagree with plain windows on
		// one pair and not its reverse.
		family += fmt.Sprintf("|%d→%d", f.Src, f.Dst)
	}
	if e.round != e.rounds-1 || e.checked[family] || len(ts) == 0 || len(ms) == 0 || !slices.Contains(e.checkSizes(), f.Size) {
		return nil, 0
	}
	longest := 0.0
	for _, m := range ms {
		if len(m) > 0 {
			longest = max(longest, slices.Min(m))
		}
	}
	// Staged copies block the host (no latch to hold them: no plain
	// window of them can be queued ahead); transfers
	// issued on one device at once take windows of one copy on purpose
	// (shareDevice): in long windows SM copies both ways to the host found
	// the SMs the other direction had freed and read 10-20% apart from
	// them on the 2x H100, a different measurement, not a truer one.
	if shareDevice(ts) {
		return nil, 0
	}
	if f.Engine == results.EngineStaged {
		return nil, 0
	}
	if !measure.Checked(tm, longest) {
		return nil, 0
	}
	e.checked[family] = true
	ct := measure.CheckTiming(longest)
	plain, err := e.timer.Plain(ctx, ts, ct, measure.CheckWindows)
	if err != nil {
		if ctx.Err() == nil {
			e.note("method check of %s could not run: %v", family, err)
		}
		return nil, 0
	}
	if len(ts) == 1 {
		e.checkWindowMs[f.Key()] = float64(ct.Reps) * longest
	}
	return plain, ct.Reps
}

// judgeChecks holds every checked figure of the run against its plain
// windows, replaces those that disagree and notes them.
func (e *Engine) judgeChecks() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range e.run.Figures {
		f := &e.run.Figures[i]
		if f.Check == nil {
			continue
		}
		ms, ok := e.checkWindowMs[f.Key()]
		if !ok {
			ms = windowMs(f)
		}
		if measure.JudgeCheck(f, ms) {
			e.notes = append(e.notes, measure.CheckNote(*f))
		}
	}
}

// windowMs is how long one of f's plain check windows lasted, from their
// repetitions and median rate (bandwidth figures; 0 for others).
func windowMs(f *results.Figure) float64 {
	c := f.Check
	if f.Unit != results.UnitGBps || c == nil || len(c.Samples) == 0 {
		return 0
	}
	gbps := figstats.Median(c.Samples)
	if gbps <= 0 {
		return 0
	}
	return float64(c.RepsPerSample) * float64(f.Size) / (gbps * 1e6)
}
