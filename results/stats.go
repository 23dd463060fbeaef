package results

import (
	"math"
	"strconv"

	"github.com/montanaflynn/stats"
)

// ComputeStats summarises raw samples; it returns nil for no samples.
//
// Percentiles (P5, P95, P99) use linear interpolation between the closest
// ranks (rank = p/100 × (n−1) over the sorted samples; R's type 7, numpy's
// default, the "inclusive" method of spreadsheets). It is continuous in the
// data, needs no minimum sample count, and its 50th percentile is the median,
// so the summary is consistent with itself. Stddev is the sample standard
// deviation (n−1 in the denominator) because samples are draws from a
// distribution, not the whole population; it is 0 for one sample. CV is
// Stddev/Mean, 0 when the mean is 0.
func ComputeStats(samples []float64) *Stats {
	if len(samples) == 0 {
		return nil
	}
	data := stats.Float64Data(samples)
	s := &Stats{N: len(samples)}
	// The montanaflynn functions only fail on empty input or out-of-range
	// percentiles, both excluded above, so their errors are ignored.
	s.Median, _ = stats.Median(data)
	s.Mean, _ = stats.Mean(data)
	if len(samples) > 1 {
		s.Stddev, _ = stats.StandardDeviationSample(data)
	}
	if s.Mean != 0 {
		s.CV = math.Abs(s.Stddev / s.Mean)
	}
	s.Min, _ = stats.Min(data)
	s.Max, _ = stats.Max(data)
	s.P5, _ = stats.Percentile(data, 5)
	s.P95, _ = stats.Percentile(data, 95)
	s.P99, _ = stats.Percentile(data, 99)
	return s
}

// SampleDigits is how many significant digits a stored sample keeps. CUDA
// events resolve about half a microsecond and %globaltimer tens of
// nanoseconds, so no measurement carries more than five or six; nine keep
// every sample exact to what was measured, make results files (and reading
// them) much smaller than full float64 text, and are still fine enough that
// rounding creates no ties between samples (ties send compare's exact
// Mann–Whitney test down a much slower path).
const SampleDigits = 9

// RoundSamples rounds each sample to SampleDigits significant digits, in place.
func RoundSamples(s []float64) []float64 {
	for i, v := range s {
		if v != 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', SampleDigits, 64), 64)
			if err == nil {
				s[i] = r
			}
		}
	}
	return s
}
