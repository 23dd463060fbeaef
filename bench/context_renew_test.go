package bench_test

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// TestRenewedContextsCarryTheMode: small SM copies between the GPUs take
// one of two times by the context they run in (the simulator as the 2×
// H100 showed: 2.9-3.0 or 3.1-3.3 µs at 4 KiB, drawn afresh by
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

// TestPingPongRoundsAreReplicates: a ping-pong takes the time of where its
// flags sit, the same in every process (the simulator as a 2× H200 showed:
// 577-836 ns one way by place; rounds that took the flags' slots by round
// number repeated one pattern in every process, 1237 / 1328 / 1232 / 1329 /
// 1231 ns). Every round takes a sample at every slot, in an order
// drawn afresh: in five simulated processes a round's samples spread by the
// slots' places while the rounds' medians agree, within a process and
// across, and each run's interval holds the other runs' medians. Medians
// agree within 3%, as in TestPingSlotsOnOneGPU: the noise of a median over
// the slots reaches 1.4%, rounds that kept their slots differed by 7%.
func TestPingPongRoundsAreReplicates(t *testing.T) {
	opt := options(results.LatPingPong)
	opt.Samples, opt.Rounds = 15, 5
	var medians []float64
	for seed := int64(1); seed <= 5; seed++ {
		run, err := simRun(t, "h200x2", opt, sim.WithSeed(seed))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range run.Figures {
			if f.Params["measure"] != "one_way" || f.Params["ordering"] != "release_acquire" || f.Src != 0 {
				continue
			}
			if len(f.Rounds) != 5 || f.Rounds[0] != measure.FlagSlots {
				t.Fatalf("%s: rounds %v, want 5 of a sample per flag slot (%d)", f.Key(), f.Rounds, measure.FlagSlots)
			}
			first := f.Samples[:f.Rounds[0]]
			if spread := slices.Max(first)/slices.Min(first) - 1; spread < 0.1 {
				t.Errorf("seed %d: a round's samples spread by %.1f%%; the slots' places should show (the model's spread is %.0f%%)", seed, 100*spread, 45.0)
			}
			rounds := figstats.RoundMedians(f.Samples, f.Rounds)
			if spread := slices.Max(rounds)/slices.Min(rounds) - 1; spread > 0.03 {
				t.Errorf("seed %d: the rounds' medians %v spread by %.2f%%; want within 3%%", seed, rounds, 100*spread)
			}
			medians = append(medians, f.Stats.Median)
		}
	}
	if len(medians) != 5 {
		t.Fatalf("%d figures of 0→1 one way, want one a run", len(medians))
	}
	if spread := slices.Max(medians)/slices.Min(medians) - 1; spread > 0.03 {
		t.Errorf("the five processes' medians %v spread by %.2f%%; want within 3%%", medians, 100*spread)
	}
	if in := coverage(t, opt); in < 0.95 {
		t.Errorf("runs' intervals held %.0f%% of the other runs' medians; want 95%% or more", 100*in)
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
