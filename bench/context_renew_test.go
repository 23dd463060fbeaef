package bench_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// TestRenewedContextsCarryTheMode: small SM copies between the GPUs take
// one of two times by the context they run in (the simulator as the 2×
// H100 showed, 2026-11-25: 2.9-3.0 or 3.1-3.3 µs at 4 KiB, drawn afresh by
// every new context). Five simulated processes of sm_read and sm_write at
// 4 KiB: with every round in a green context of its own, each run's
// interval holds the other runs' medians; with the rounds in the primary
// context, each device keeps one mode for the whole run, and the intervals
// miss the runs whose devices drew the other.
func TestRenewedContextsCarryTheMode(t *testing.T) {
	inside := func(renew measure.Renewal) float64 {
		var runs []*results.Run
		for seed := int64(1); seed <= 5; seed++ {
			opt := options(results.SMRead, results.SMWrite)
			opt.Size, opt.Samples, opt.Rounds, opt.Renew = 4<<10, 15, 5, renew
			run, err := simRun(t, "h200x2", opt, sim.WithSeed(seed))
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, run)
		}
		in, n := 0, 0
		byKey := func(r *results.Run, k string) *results.Figure {
			for i := range r.Figures {
				if r.Figures[i].Key() == k {
					return &r.Figures[i]
				}
			}
			return nil
		}
		for i, a := range runs {
			for j, b := range runs {
				if i == j {
					continue
				}
				for _, fa := range a.Figures {
					fb := byKey(b, fa.Key())
					if fb == nil || fa.Stats == nil || fa.Stats.Rounds == nil || fb.Stats == nil {
						t.Fatalf("%s: no figure or no rounds in run %d or %d", fa.Key(), i+1, j+1)
					}
					n++
					if m := fb.Stats.Median; fa.Stats.Rounds.MedianLo <= m && m <= fa.Stats.Rounds.MedianHi {
						in++
					}
				}
			}
		}
		return float64(in) / float64(n)
	}
	with, without := inside(measure.DefaultRenewal), inside(measure.DefaultRenewal&^measure.RenewContext)
	t.Logf("inside: %.0f%% with a context a round, %.0f%% without", 100*with, 100*without)
	if with < 0.95 || without > 0.8 {
		t.Errorf("runs' intervals held %.0f%% of the other runs' medians with a context a round, %.0f%% without; want 95%% or more, and 80%% or less", 100*with, 100*without)
	}
}
