package measure

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// copyLaunches is a context that records the repetitions of every SM copy
// launch made through it (a launch whose parameters decode as
// kernels.CopyArgs: the other kernels' lists differ in length or types).
type copyLaunches struct {
	gpu.Context
	mu   *sync.Mutex
	reps *[]uint32
}

func countCopyLaunches(dv *Device) *[]uint32 {
	reps := &[]uint32{}
	dv.Ctx = copyLaunches{Context: dv.Ctx, mu: &sync.Mutex{}, reps: reps}
	return reps
}

func (c copyLaunches) Launch(f cuda.Function, grid, block [3]uint32, shared uint32, s cuda.Stream, params ...any) error {
	if a, err := kernels.DecodeCopyArgs(params); err == nil {
		c.mu.Lock()
		*c.reps = append(*c.reps, a.Reps)
		c.mu.Unlock()
	}
	return c.Context.Launch(f, grid, block, shared, s, params...)
}

func (c copyLaunches) Do(fn func(gpu.Context) error) error {
	return c.Context.Do(func(inner gpu.Context) error {
		return fn(copyLaunches{Context: inner, mu: c.mu, reps: c.reps})
	})
}

// smPull opens both devices of a simulated 2× H200 with buffers of size
// and returns device 0, peer access enabled, and its SM pull of size bytes
// from device 1 with the default kernel of an sm_90 device (bulk). The
// source holds the pattern of seed 7, the destination poison.
func smPull(t *testing.T, size uint64) (*Device, Transfer) {
	t.Helper()
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() }) // after the devices' cleanups
	open := func(dev int) *Device {
		dv, err := Open(drv, dev, size)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = dv.Close() })
		return dv
	}
	dv, peer := open(0), open(1)
	if err := NewPeers().EnableBoth(dv.Ctx, peer.Ctx); err != nil {
		t.Fatal(err)
	}
	if err := peer.Fill(peer.Send, size, 7); err != nil {
		t.Fatal(err)
	}
	if err := dv.Poison(dv.Recv, size); err != nil {
		t.Fatal(err)
	}
	k, _ := kernels.CopyKernelByVariant(kernels.CopyVariantFor(90))
	b, bs := k.DefaultGrid()
	tr, err := dv.SMCopy(SMConfig{Variant: k.Variant, BlocksPerSM: b, BlockSize: bs}, dv.Recv, peer.Send, size)
	if err != nil {
		t.Fatal(err)
	}
	return dv, tr
}

// TestSMCopyWindowIsOneLaunch: from kernels.LargeCopyBytes an SM copy's
// warm-up, each timed window and a steady-state fit's short window are one
// launch each, of as many repetitions as the timing asks; below, every
// copy is its own launch of one repetition, as before. Either way the
// destination holds the source's data.
func TestSMCopyWindowIsOneLaunch(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		size     uint64
		inKernel bool
	}{{512 << 20, true}, {kernels.LargeCopyBytes, true}, {kernels.LargeCopyBytes - 4096, false}, {1 << 20, false}} {
		dv, tr := smPull(t, tc.size)
		if (tr.OpN != nil) != tc.inKernel || InKernelReps(tc.size) != tc.inKernel {
			t.Fatalf("%d bytes: OpN set %v, InKernelReps %v, want %v", tc.size, tr.OpN != nil, InKernelReps(tc.size), tc.inKernel)
		}
		_, marked := SMConfig{Variant: "bulk"}.FigureParams(tc.size)[results.ParamInKernelReps]
		if marked != tc.inKernel {
			t.Errorf("%d bytes: figure params say in-kernel repetitions %v, want %v", tc.size, marked, tc.inKernel)
		}
		// The param describes how samples were taken: the figure is the
		// one files before it hold (compare matches them).
		before := results.Figure{Test: results.SMRead, Size: tc.size, Params: SMConfig{Variant: "bulk"}.Params()}
		after := before
		after.Params = SMConfig{Variant: "bulk"}.FigureParams(tc.size)
		if before.Key() != after.Key() {
			t.Errorf("%d bytes: key %q, before %q", tc.size, after.Key(), before.Key())
		}
		launches := countCopyLaunches(dv)
		fit := Timing{Reps: 8, Warmup: 2, Short: 2}
		if _, err := (Timer{}).Measure(ctx, []Transfer{tr}, fit, 3); err != nil {
			t.Fatal(err)
		}
		// The short window behind its warm-up, then three samples, each
		// behind its own.
		want := []uint32{2, 2, 2, 8, 2, 8, 2, 8}
		if !tc.inKernel {
			want = slices.Repeat([]uint32{1}, 2+2+3*(2+8))
		}
		if !slices.Equal(*launches, want) {
			t.Errorf("%d bytes: copy launches of %v repetitions, want %v", tc.size, *launches, want)
		}
		if err := dv.Check(dv.Recv, tc.size, 7); err != nil {
			t.Errorf("%d bytes: %v", tc.size, err)
		}
	}
}

// TestInKernelRepsReadHigher: on the simulated 2× H200, a 512 MiB SM pull
// timed as the engine times it (steady state) reads higher with the
// window's copies in one launch than with a launch per copy, by what a
// launch costs the model (the 2× H100's 373.75 against nvbandwidth's 376.4
// GB/s: 0.7%).
func TestInKernelRepsReadHigher(t *testing.T) {
	const size = 512 << 20
	ctx := context.Background()
	dv, tr := smPull(t, size)
	perLaunch := Transfer{Dev: dv, Op: tr.Op}
	longest, err := (Timer{}).Longest(ctx, []Transfer{tr})
	if err != nil {
		t.Fatal(err)
	}
	tm := SteadyTimingFor(longest, SampleTarget)
	median := func(tr Transfer) float64 {
		t.Helper()
		var g []float64
		for range 10 {
			ms, err := (Timer{}).Measure(ctx, []Transfer{tr}, tm, 3)
			if err != nil {
				t.Fatal(err)
			}
			g = append(g, GBps(size, ms[0])...)
		}
		slices.Sort(g)
		return g[len(g)/2]
	}
	in, per := median(tr), median(perLaunch)
	gain := in/per - 1
	t.Logf("%+v: in one launch %.2f GB/s, a launch per copy %.2f (%+.3f%%)", tm, in, per, 100*gain)
	if gain < 0.005 || gain > 0.009 {
		t.Errorf("in one launch %.2f GB/s against %.2f a launch per copy: %+.3f%%, want the modelled launch cost, +0.7%%", in, per, 100*gain)
	}
}
