package figstats_test

import (
	"math"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
)

func TestComputeStats(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		want    *figstats.Stats
	}{
		{"none", nil, nil},
		{"one", []float64{5}, &figstats.Stats{N: 1, Median: 5, Mean: 5, Min: 5, Max: 5, P5: 5, P95: 5, P99: 5}},
		// Statistics keep figstats.SampleDigits significant digits (√2 =
		// 1.41421356…).
		{"two", []float64{4, 2}, &figstats.Stats{N: 2, Median: 3, Mean: 3, Stddev: 1.41421356, CV: 0.471404521,
			Min: 2, Max: 4, P5: 2.1, P95: 3.9, P99: 3.98}},
		{"one to five", []float64{3, 1, 5, 2, 4}, &figstats.Stats{N: 5, Median: 3, Mean: 3, Stddev: 1.58113883, CV: 0.527046277,
			Min: 1, Max: 5, P5: 1.2, P95: 4.8, P99: 4.96}},
		{"zeros", []float64{0, 0, 0}, &figstats.Stats{N: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := figstats.ComputeStats(tt.samples)
			if (got == nil) != (tt.want == nil) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if got == nil {
				return
			}
			g := []float64{float64(got.N), got.Median, got.Mean, got.Stddev, got.CV, got.Min, got.Max, got.P5, got.P95, got.P99}
			w := []float64{float64(tt.want.N), tt.want.Median, tt.want.Mean, tt.want.Stddev, tt.want.CV, tt.want.Min, tt.want.Max, tt.want.P5, tt.want.P95, tt.want.P99}
			names := []string{"n", "median", "mean", "stddev", "cv", "min", "max", "p5", "p95", "p99"}
			for i := range g {
				if math.Abs(g[i]-w[i]) > 1e-12 {
					t.Errorf("%s = %v, want %v", names[i], g[i], w[i])
				}
			}
		})
	}
}

func TestComputeStatsLeavesSamplesAlone(t *testing.T) {
	s := []float64{3, 1, 2}
	figstats.ComputeStats(s)
	if s[0] != 3 || s[1] != 1 || s[2] != 2 {
		t.Errorf("ComputeStats reordered its input: %v", s)
	}
}

// n½ is said only of a curve that reaches below half its peak: one that
// starts at 64 MiB near its peak has none (issue 39: "n½ = 64 MiB" of the
// bulk kernel's curve, which starts there).
func TestHalfPeak(t *testing.T) {
	for _, c := range []struct {
		sizes  []uint64
		values []float64
		want   int
		ok     bool
	}{
		{[]uint64{4, 64, 1024, 16384}, []float64{1, 10, 300, 390}, 2, true},
		{[]uint64{16384, 4, 1024, 64}, []float64{390, 1, 300, 10}, 2, true}, // any order
		{[]uint64{64 << 20, 256 << 20}, []float64{372, 374}, 0, false},
		{[]uint64{4}, []float64{5}, 0, false},
		{[]uint64{4, 64}, []float64{0, 0}, 0, false},
	} {
		i, ok := figstats.HalfPeak(c.sizes, c.values)
		if ok != c.ok || ok && i != c.want {
			t.Errorf("HalfPeak(%v, %v) = %d, %v; want %d, %v", c.sizes, c.values, i, ok, c.want, c.ok)
		}
	}
}

// TestRoundIntervalNoNarrowerThanItsSamples: rounds whose medians agree
// more closely than their own samples allow (as the chase in L2 across
// processes on a 2× H200: 851-853 ns samples, every round's median 852)
// get an interval from the samples' spread within the rounds,
// which holds another run's 853; rounds that differ more than that keep
// the interval of their medians.
func TestRoundIntervalNoNarrowerThanItsSamples(t *testing.T) {
	flat := []float64{852, 853, 851, 852, 852, 853, 853, 851, 852, 851, 852, 853, 852, 851, 853}
	rounds := []int{3, 3, 3, 3, 3}
	s := figstats.ComputeRoundStats(flat, rounds)
	if lo, hi := figstats.RoundIntervalWithin(s.Median, figstats.RoundMedians(flat, rounds), 0); lo != hi {
		t.Fatalf("the rounds' medians alone give [%v, %v]; the test wants them equal", lo, hi)
	}
	if r := s.Rounds; !(r.MedianLo < 852 && r.MedianHi >= 853) {
		t.Errorf("interval [%v, %v] of rounds with medians of 852 and samples of 851-853; want it to hold 853", r.MedianLo, r.MedianHi)
	}
	if e := figstats.RoundMedianError(flat, []int{3, 3, 3}); e != 0 {
		t.Errorf("counts that do not add up gave a round median error of %v", e)
	}
	apart := []float64{800, 801, 800, 850, 851, 850, 820, 821, 820, 840, 841, 840, 810, 811, 810}
	s = figstats.ComputeRoundStats(apart, rounds)
	lo, hi := figstats.RoundIntervalWithin(s.Median, figstats.RoundMedians(apart, rounds), 0)
	if math.Abs(s.Rounds.MedianLo-lo) > 0.01 || math.Abs(s.Rounds.MedianHi-hi) > 0.01 {
		t.Errorf("rounds far apart: [%v, %v], want the medians' own [%v, %v]", s.Rounds.MedianLo, s.Rounds.MedianHi, lo, hi)
	}
}
