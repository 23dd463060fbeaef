package measure

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// steadySize is the size the steady-state tests copy: the default matrix size.
const steadySize = results.DefaultSize

// steadyFigures are the GB/s of one copy measured three ways: the median of
// samples of one copy behind a warm-up (the timing before steady state), the
// median of steady-state samples (SteadyTimingFor, as the engine calibrates
// it), and the median of a few long back-to-back windows of refCopies, the
// reference where a window's fixed cost is spread thinnest; refRange is
// the range of the reference windows over their median, the path's own
// noise over a long window.
type steadyFigures struct {
	one, steady, ref, refRange float64
	// reps is the steady-state timing's repetitions per sample.
	reps int
}

// steadyEffort is how many samples measureSteady takes of each kind: in
// rounds as a run takes them (a steady-state round fits its samples against
// one short window of its own), and windows of refCopies for the reference.
type steadyEffort struct{ rounds, samples, refSamples int }

const refCopies = 64

// simEffort is many samples, for the simulator's jitter of 0.3% per copy:
// the medians' own spread is near 0.02% with them.
var simEffort = steadyEffort{rounds: 40, samples: 5, refSamples: 10}

// measureSteady times tr (copies of size bytes) the three ways, the steady
// state calibrated for samples of about target.
func measureSteady(t *testing.T, tr Transfer, size uint64, target time.Duration, e steadyEffort) steadyFigures {
	t.Helper()
	ctx := context.Background()
	tm := Timer{}
	ts := []Transfer{tr}
	sorted := func(tg Timing, rounds, samples int) []float64 {
		t.Helper()
		var g []float64
		for range rounds {
			ms, err := tm.Measure(ctx, ts, tg, samples)
			if err != nil {
				t.Fatal(err)
			}
			g = append(g, GBps(size, ms[0])...)
		}
		slices.Sort(g)
		return g
	}
	median := func(tg Timing, rounds, samples int) float64 {
		g := sorted(tg, rounds, samples)
		return g[len(g)/2]
	}
	longest, err := tm.Longest(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	steady := SteadyTimingFor(longest, target)
	f := steadyFigures{
		one:    median(Timing{Reps: 1, Warmup: 1}, e.rounds, e.samples),
		steady: median(steady, e.rounds, e.samples),
		reps:   steady.Reps,
	}
	refs := sorted(Timing{Reps: refCopies, Warmup: 1}, 1, e.refSamples)
	f.ref = refs[len(refs)/2]
	f.refRange = (refs[len(refs)-1] - refs[0]) / f.ref
	t.Logf("%d reps per sample: one copy %.2f GB/s, steady state %.2f, %d back to back %.2f, range %.3f%% (steady %+.3f%%, one copy %+.3f%% of it)",
		steady.Reps, f.one, f.steady, refCopies, f.ref, 100*f.refRange, 100*(f.steady/f.ref-1), 100*(f.one/f.ref-1))
	return f
}

// steadyTargets are the sample targets of the copies of steadyCopies, as
// the engine picks them.
var steadyTargets = map[string]time.Duration{"local_copy": SampleTarget, "h2d": HostSampleTarget, "d2h": HostSampleTarget}

// steadyCopies are the copies both steady-state tests time on one device:
// within its memory, and to and from pinned host memory.
func steadyCopies(t *testing.T, dv *Device) map[string]Transfer {
	t.Helper()
	h, err := dv.Ctx.HostAlloc(steadySize, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dv.Ctx.HostFree(h) })
	return map[string]Transfer{
		"local_copy": {Dev: dv, Op: dv.Copy(dv.Recv, dv.Send, steadySize)},
		"h2d":        {Dev: dv, Op: dv.Copy(dv.Recv, h.Device, steadySize)},
		"d2h":        {Dev: dv, Op: dv.Copy(h.Device, dv.Send, steadySize)},
	}
}

// openSteady opens device dev of drv with buffers of steadySize.
func openSteady(t *testing.T, drv gpu.Driver, dev int) *Device {
	t.Helper()
	dv, err := Open(drv, dev, steadySize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dv.Close() })
	return dv
}

// TestSteadyStateReachesTheAsymptote: on the simulated 2× H200, whose
// copies pay a drain before an event recorded after them, samples of one
// copy read low at 512 MiB, and steady-state samples read what a long
// back-to-back window does, within 0.1%.
func TestSteadyStateReachesTheAsymptote(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() }) // after the devices' cleanups
	dv, peer := openSteady(t, drv, 0), openSteady(t, drv, 1)
	if err := NewPeers().EnableBoth(dv.Ctx, peer.Ctx); err != nil {
		t.Fatal(err)
	}
	k, _ := kernels.CopyKernelByVariant(kernels.DefaultCopyVariant)
	b, bs := k.DefaultGrid()
	sm, err := dv.SMCopy(SMConfig{Variant: k.Variant, BlocksPerSM: b, BlockSize: bs}, dv.Recv, peer.Send, steadySize)
	if err != nil {
		t.Fatal(err)
	}
	copies := steadyCopies(t, dv)
	copies["ce_read"] = Transfer{Dev: dv, Op: dv.PeerCopy(dv.Recv, dv.Ctx, peer.Send, peer.Ctx, steadySize)}
	copies["sm_read"] = sm
	for _, name := range []string{"local_copy", "ce_read", "sm_read", "h2d", "d2h"} {
		t.Run(name, func(t *testing.T) {
			target, ok := steadyTargets[name]
			if !ok {
				target = SampleTarget
			}
			f := measureSteady(t, copies[name], steadySize, target, simEffort)
			if d := f.steady/f.ref - 1; d < -0.001 || d > 0.001 {
				t.Errorf("steady state %.2f GB/s is %+.3f%% off the back-to-back %.2f", f.steady, 100*d, f.ref)
			}
			// A host copy of 9.7 ms hides a drain of 3 µs: only the
			// faster copies show what the old timing lost.
			if name != "h2d" && name != "d2h" && f.one > f.ref*0.999 {
				t.Errorf("one copy per sample %.2f GB/s is within 0.1%% of the back-to-back %.2f: the model's drain does not show", f.one, f.ref)
			}
		})
	}
}
