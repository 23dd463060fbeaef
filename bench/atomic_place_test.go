package bench_test

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// On a machine where a dependent atomic's round trip depends on where its
// counter lies (the simulated NVLink machines, as the 2× H100 showed), the
// atomic latency's rounds agree: every sample covers the same places. A
// chain on one counter, moved by the round's offset, gave each round its
// place's figure (143.8 to 253.9 ns on the H100), and compare a spread of
// rounds no change could get past.
func TestAtomicLatencyRoundsAgreeWhereverTheCounterLies(t *testing.T) {
	opt := options(results.AtomicLatency)
	opt.Devices, opt.Rounds, opt.Samples, opt.Renew = []int{0, 1}, 5, 20, measure.DefaultRenewal
	run, err := simRun(t, "h200x2", opt)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range run.Figures {
		if f.Test != results.AtomicLatency || f.Stats == nil {
			continue
		}
		n++
		meds := results.RoundMedians(f.Samples, f.Rounds)
		if len(meds) != 5 {
			t.Fatalf("%s: %d rounds, want 5", f.Key(), len(meds))
		}
		if spread := slices.Max(meds)/slices.Min(meds) - 1; spread > 0.05 {
			t.Errorf("%s: rounds %v spread %.0f%%", f.Key(), meds, 100*spread)
		}
		if f.Params["counters_per_sample"] == "" {
			t.Errorf("%s: no counters_per_sample param", f.Key())
		}
	}
	if n == 0 {
		t.Fatal("no atomic latency figure")
	}
}
