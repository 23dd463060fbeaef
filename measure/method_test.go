package measure

import (
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// The timing does what the conventions say of it (results' method
// numbers, which the catalogue's words are made of): a steady-state window
// of results.PlainWindow or more is plain, a shorter one has a short
// window and at least results.MinSteadyReps copies; a figure of long
// samples takes 1/results.FewSamplesDivisor of them from
// results.LongSample; no warm-up where a copy takes results.NoWarmupFrom,
// at most results.MaxWarmup below; SM windows are one launch from
// results.InKernelRepsFrom (issue 39: the words said 20 ms where the
// method used 10).
func TestTimingIsAsTheConventionsSay(t *testing.T) {
	for _, longest := range []float64{0.001, 0.05, 0.3, 1, 1.3, 2.5, 4, 6, 9.5, 12, 40} { // ms a copy
		for _, target := range []time.Duration{SampleTarget, HostSampleTarget} {
			tm := SteadyTimingFor(longest, target)
			window := time.Duration(float64(tm.Reps) * longest * float64(time.Millisecond))
			switch {
			case tm.Short == 0 && window < results.PlainWindow:
				t.Errorf("%v ms a copy, target %v: a plain window of %v, below %v", longest, target, window, results.PlainWindow)
			case tm.Short > 0 && window >= results.PlainWindow:
				t.Errorf("%v ms a copy, target %v: a fit on a window of %v, from %v plain", longest, target, window, results.PlainWindow)
			case tm.Short > 0 && tm.Reps < results.MinSteadyReps:
				t.Errorf("%v ms a copy: a fit on %d copies, want at least %d", longest, tm.Reps, results.MinSteadyReps)
			}
			if tm.Few != (window >= results.LongSample) {
				t.Errorf("%v ms a copy, target %v: Few %v for a window of %v", longest, target, tm.Few, window)
			}
			if tm.Few && tm.Samples(20, 5) != 20/results.FewSamplesDivisor {
				t.Errorf("%v ms a copy: %d of 20 samples", longest, tm.Samples(20, 5))
			}
			plain := TimingFor(longest, target)
			if noWarm := time.Duration(longest*float64(time.Millisecond)) >= results.NoWarmupFrom; noWarm && plain.Warmup != 0 || plain.Warmup > results.MaxWarmup {
				t.Errorf("%v ms a copy: %d warm-up copies", longest, plain.Warmup)
			}
		}
	}
	if InKernelRepsFrom != results.InKernelRepsFrom || kernels.LargeCopyBytes != results.InKernelRepsFrom ||
		InKernelReps(results.InKernelRepsFrom-1) || !InKernelReps(results.InKernelRepsFrom) {
		t.Errorf("SM windows are one launch from %d bytes, large copies from %d; the conventions say %d",
			InKernelRepsFrom, kernels.LargeCopyBytes, results.InKernelRepsFrom)
	}
}
