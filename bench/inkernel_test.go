package bench_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// TestSMFiguresInOneLaunch: every SM copy figure of 64 MiB and more (pairs,
// both ways, to and from the host) is timed with one launch per window and
// says so (in_kernel_reps), smaller ones with a launch per copy; all
// verify. At 64 MiB on the simulated 2× H200 a pull launched per copy loses
// a launch's cost (5.9 µs) on each 0.18 ms copy and reads 362-365 GB/s (the
// 2× H100 read 363.0-365.6); in one launch per window it reads the link's
// sustained rate, about 377.
func TestSMFiguresInOneLaunch(t *testing.T) {
	opt := options(results.SMRead, results.SMBidir, results.SMH2D, results.SMD2H)
	opt.Size = 64 << 20
	opt.Sweep = []uint64{1 << 20, 64 << 20}
	run, err := simRun(t, "h200x2", opt)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[bool]int{}
	for _, f := range run.Figures {
		if f.Error != "" || f.Verify != results.VerifyPassed {
			t.Errorf("%s: error %q, verify %q", f.Key(), f.Error, f.Verify)
			continue
		}
		inKernel := measure.InKernelReps(f.Size)
		seen[inKernel]++
		if got := f.Params[results.ParamInKernelReps] == "true"; got != inKernel {
			t.Errorf("%s: params %v, want in_kernel_reps %v", f.Key(), f.Params, inKernel)
		}
		if f.Test == results.SMRead && inKernel {
			t.Logf("%s: %.1f GB/s", f.Key(), f.Stats.Median)
			if f.Stats.Median < 370 {
				t.Errorf("%s: %.1f GB/s: a launch per copy?", f.Key(), f.Stats.Median)
			}
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Errorf("figures in one launch and not: %v, want both", seen)
	}
}
