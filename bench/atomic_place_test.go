package bench_test

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// roundsAgree runs test on the simulated 2× H200 in five rounds with the
// default renewals and checks that the rounds of every figure keep accepts
// agree within 5%; it returns those figures.
func roundsAgree(t *testing.T, test results.Test, keep func(results.Figure) bool) []results.Figure {
	t.Helper()
	opt := options(test)
	opt.Devices, opt.Rounds, opt.Samples, opt.Renew = []int{0, 1}, 5, 20, measure.DefaultRenewal
	run, err := simRun(t, "h200x2", opt)
	if err != nil {
		t.Fatal(err)
	}
	var out []results.Figure
	for _, f := range run.Figures {
		if f.Test != test || f.Stats == nil || !keep(f) {
			continue
		}
		out = append(out, f)
		meds := figstats.RoundMedians(f.Samples, f.Rounds)
		if len(meds) != 5 {
			t.Fatalf("%s: %d rounds, want 5", f.Key(), len(meds))
		}
		if spread := slices.Max(meds)/slices.Min(meds) - 1; spread > 0.05 {
			t.Errorf("%s: rounds %v spread %.0f%%", f.Key(), meds, 100*spread)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s figure", test)
	}
	return out
}

// On a machine where a dependent atomic's round trip depends on where its
// counter lies (the simulated NVLink machines, as the 2× H100 showed), the
// atomic latency's rounds agree: every sample covers the same places. A
// chain on one counter, moved by the round's offset, gave each round its
// place's figure (143.8 to 253.9 ns on the H100), and compare a spread of
// rounds no change could get past.
func TestAtomicLatencyRoundsAgreeWhereverTheCounterLies(t *testing.T) {
	for _, f := range roundsAgree(t, results.AtomicLatency, func(results.Figure) bool { return true }) {
		if f.Params["counters_per_sample"] == "" {
			t.Errorf("%s: no counters_per_sample param", f.Key())
		}
	}
}

// A chain beyond L2 keeps one of two modes by its seed (the simulated
// NVLink machines, as the 2× H100 showed). The chase follows the same
// chains in every round, so its rounds agree; a new chain a round gave each
// round its chain's mode, and compare a spread of rounds (15%) a 10% rise
// got past.
func TestChaseBeyondL2RoundsAgree(t *testing.T) {
	roundsAgree(t, results.LatChase, func(f results.Figure) bool { return f.Size >= 256<<20 })
}
