package figstats

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/montanaflynn/stats"
)

// TestComputeStatsAsMontanaflynn holds ComputeStats, which gives the median
// and percentiles samples sorted once, to montanaflynn's functions given the
// samples in their own order (each sorts a copy), on samples with ties and
// without, of every size up to 300.
func TestComputeStatsAsMontanaflynn(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 300; n++ {
		for _, ties := range []bool{false, true} {
			samples := make([]float64, n)
			for i := range samples {
				samples[i] = 100 * (1 + 0.05*rng.NormFloat64())
				if ties {
					samples[i] = float64(90 + rng.IntN(20))
				}
			}
			data := stats.Float64Data(samples)
			want := &Stats{N: n}
			want.Median, _ = stats.Median(data)
			want.Mean, _ = stats.Mean(data)
			if n > 1 {
				want.Stddev, _ = stats.StandardDeviationSample(data)
			}
			want.CV = want.Stddev / want.Mean
			want.Min, _ = stats.Min(data)
			want.Max, _ = stats.Max(data)
			want.P5, _ = stats.Percentile(data, 5)
			want.P95, _ = stats.Percentile(data, 95)
			want.P99, _ = stats.Percentile(data, 99)
			want.round()
			if got := ComputeStats(samples); !reflect.DeepEqual(got, want) {
				t.Fatalf("%d samples (ties %v): %+v, want %+v", n, ties, got, want)
			}
		}
	}
}
