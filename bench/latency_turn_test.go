package bench_test

import (
	"math"
	"testing"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/results"
)

// runOn is simRunOn that fails the test on an error.
func runOn(t *testing.T, drv *sim.Driver, opt bench.Options) *results.Run {
	t.Helper()
	run, err := simRunOn(t, drv, opt)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// onePull issues one small pull 0 → 1 on device 1 and waits for it.
func onePull(t *testing.T, drv gpu.Driver) {
	t.Helper()
	c0, err := drv.Context(0)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := drv.Context(1)
	if err != nil {
		t.Fatal(err)
	}
	src, err := c0.MemAlloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := c1.MemAlloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c1.StreamCreate()
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.EnablePeerAccess(c0, 0); err != nil {
		t.Fatal(err)
	}
	if err := c1.MemcpyPeerAsync(dst, c1, src, c0, 4096, s); err != nil {
		t.Fatal(err)
	}
	if err := c1.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	_ = c1.DisablePeerAccess(c0)
	_ = c1.StreamDestroy(s)
	_ = c1.MemFree(dst)
	_ = c0.MemFree(src)
}

// A device's small pulls cost less and more in turn (the 2× H100: 11 and
// 20 µs timed alone). A sample of one copy lands on either, so a figure of
// an odd number of them took whichever turn the run started on; a sample
// that is the mean of two consecutive copies reads the same in every run.
// Runs A and C start their pulls on opposite turns: C follows B (A's plan
// again) and one more pull. In three rounds (7, 7 and 6 samples of the 20)
// samples of one copy each gave A and C medians of either turn.
func TestCopyDeviceLatencyIgnoresWhichTurnARunStartsOn(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	opt := options(results.LatCopyDevice)
	opt.Devices, opt.Rounds = []int{0, 1}, 3
	median := func(run *results.Run) float64 {
		t.Helper()
		for _, f := range run.Figures {
			if f.Test == results.LatCopyDevice && f.Direction == results.DirRead && f.Src == 0 && f.Dst == 1 && f.Size == 4 {
				if f.Stats == nil {
					t.Fatalf("%s: no stats (%s)", f.Key(), f.Error)
				}
				return f.Stats.Median
			}
		}
		t.Fatal("no lat_copy_device read 0→1 at 4 B")
		return 0
	}
	a := median(runOn(t, drv, opt))
	runOn(t, drv, opt)
	onePull(t, drv)
	c := median(runOn(t, drv, opt))
	if d := math.Abs(c/a - 1); d > 0.05 {
		t.Errorf("lat_copy_device read 0→1 4 B: %.0f ns in one run, %.0f in another of the same machine (%.0f%% apart)", a, c, 100*d)
	}
}
