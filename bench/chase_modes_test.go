package bench_test

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// A chain beyond L2 keeps one of two modes by its seed (the simulated
// NVLink machines, as the 2× H100 showed). The chase follows the same
// chains in every round, so its rounds agree; a new chain a round gave each
// round its chain's mode, and compare a spread of rounds (15%) a 10% rise
// got past.
func TestChaseBeyondL2RoundsAgree(t *testing.T) {
	opt := options(results.LatChase)
	opt.Devices, opt.Rounds, opt.Samples, opt.Renew = []int{0, 1}, 5, 20, measure.DefaultRenewal
	run, err := simRun(t, "h200x2", opt)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range run.Figures {
		if f.Test != results.LatChase || f.Size < 256<<20 || f.Stats == nil {
			continue
		}
		n++
		meds := results.RoundMedians(f.Samples, f.Rounds)
		if spread := slices.Max(meds)/slices.Min(meds) - 1; spread > 0.05 {
			t.Errorf("%s: rounds %v spread %.0f%%", f.Key(), meds, 100*spread)
		}
	}
	if n == 0 {
		t.Fatal("no chase beyond L2")
	}
}
