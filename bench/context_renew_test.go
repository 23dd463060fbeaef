package bench_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/bench"
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
		opt := options(results.SMRead, results.SMWrite)
		opt.Size, opt.Samples, opt.Rounds, opt.Renew = 4<<10, 15, 5, renew
		return coverage(t, opt)
	}
	with, without := inside(measure.DefaultRenewal), inside(measure.DefaultRenewal&^measure.RenewContext)
	t.Logf("inside: %.0f%% with a context a round, %.0f%% without", 100*with, 100*without)
	if with < 0.95 || without > 0.8 {
		t.Errorf("runs' intervals held %.0f%% of the other runs' medians with a context a round, %.0f%% without; want 95%% or more, and 80%% or less", 100*with, 100*without)
	}
}

// TestMovingFlagsCarryThePlacement: a ping-pong takes the time of where its
// flags sit in device memory, the same for every ping-pong of a process at
// that place (the simulator as a 2× H200 showed, 2026-11-25: 577-836 ns one
// way by the flags' place, rounds of one process within 0.5 %, processes
// 10 % apart). Five simulated processes: with the flags moved every round
// (RenewOffset: measure.FlagOffset) each run's interval holds the other
// runs' medians; with nothing renewed, each process keeps its place and the
// intervals hold none.
func TestMovingFlagsCarryThePlacement(t *testing.T) {
	inside := func(renew measure.Renewal) float64 {
		opt := options(results.LatPingPong)
		opt.Samples, opt.Rounds, opt.Renew = 15, 5, renew
		return coverage(t, opt)
	}
	with, without := inside(measure.DefaultRenewal), inside(0)
	t.Logf("inside: %.0f%% with the flags moved every round, %.0f%% with nothing renewed", 100*with, 100*without)
	if with < 0.95 || without > 0.5 {
		t.Errorf("runs' intervals held %.0f%% of the other runs' medians with the flags moved every round, %.0f%% without; want 95%% or more, and 50%% or less", 100*with, 100*without)
	}
}

// coverage runs opt in five simulated processes (seeds) and returns the
// share of (figure, ordered pair of runs) where one run's interval holds
// the other's median.
func coverage(t *testing.T, opt bench.Options) float64 {
	t.Helper()
	var runs []*results.Run
	for seed := int64(1); seed <= 5; seed++ {
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
