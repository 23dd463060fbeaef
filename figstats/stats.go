// Package figstats holds the statistics of p2pbench's figures: a figure's
// samples summarised (Stats: median, mean, spread, percentiles) as a
// results file records them, the rounds a figure's samples were taken in
// (their medians, the interval within which another run's median falls,
// a round median's own error), an interval's spread as text, samples kept
// to the digits measured, and the half-peak size of a bandwidth curve.
// Package results keeps the file format and holds its figures' Stats from
// here; figstats imports nothing of the project (tools/house holds it to
// that), as golang.org/x/perf keeps benchmath apart from benchfmt.
package figstats

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"

	moremath "github.com/aclements/go-moremath/stats"
	"github.com/montanaflynn/stats"
)

// Stats summarises a figure's samples.
type Stats struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	CV     float64 `json:"cv"` // stddev / mean
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	P5     float64 `json:"p5"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99,omitempty"`
	// Rounds summarises the rounds of a figure measured in two or more.
	Rounds *RoundStats `json:"rounds,omitempty"`
}

// RoundStats summarise the independent rounds a figure's samples were
// taken in. The rounds are spread over the run, each with freshly placed
// buffers and streams, so their medians vary as a figure varies from one
// run to the next, which the samples of one round do not show.
type RoundStats struct {
	// N is the number of rounds.
	N int `json:"n"`
	// MedianLo and MedianHi bound, with probability Confidence, the
	// median another run of as many rounds would give (RoundIntervalWithin).
	MedianLo   float64 `json:"median_lo"`
	MedianHi   float64 `json:"median_hi"`
	Confidence float64 `json:"confidence"`
	// RunCV is the run-to-run coefficient of variation: the sample standard
	// deviation of the round medians over their mean.
	RunCV float64 `json:"run_cv"`
}

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
	// percentiles, both excluded above, so their errors are ignored. The
	// median and each percentile sort a copy of what they are given: given
	// a copy sorted once as they sort it (sort.Float64s), each sorts values
	// already in order, in about one pass, and takes the same ranks; the
	// mean and deviation sum the samples in their own order.
	sorted := slices.Clone(data)
	sort.Float64s(sorted)
	s.Median, _ = stats.Median(sorted)
	s.Mean, _ = stats.Mean(data)
	if len(samples) > 1 {
		s.Stddev, _ = stats.StandardDeviationSample(data)
	}
	if s.Mean != 0 {
		s.CV = math.Abs(s.Stddev / s.Mean)
	}
	s.Min, _ = stats.Min(data)
	s.Max, _ = stats.Max(data)
	s.P5, _ = stats.Percentile(sorted, 5)
	s.P95, _ = stats.Percentile(sorted, 95)
	s.P99, _ = stats.Percentile(sorted, 99)
	s.round()
	return s
}

// round keeps SampleDigits significant digits of the statistics that are
// not samples themselves (min and max are), each within [min, max] (with
// samples of SampleDigits, rounding keeps them there and in order): digits
// beyond the samples' carry nothing, and full float64 text made stats the
// largest part of a results file.
func (s *Stats) round() {
	for _, x := range []*float64{&s.Median, &s.Mean, &s.P5, &s.P95, &s.P99} {
		*x = min(max(roundDigits(*x), s.Min), s.Max)
	}
	s.Stddev, s.CV = roundDigits(s.Stddev), roundDigits(s.CV)
}

// ComputeRoundStats is ComputeStats of samples taken in rounds (counts of
// samples per round, as Figure.Rounds; nil or one round: none), with the
// rounds summarised (RoundStats) when there are two or more. Counts that do
// not add up to the samples are ignored (Validate refuses such a figure).
func ComputeRoundStats(samples []float64, rounds []int) *Stats {
	s := ComputeStats(samples)
	meds := RoundMedians(samples, rounds)
	if s == nil || len(meds) < 2 {
		return s
	}
	lo, hi := RoundIntervalWithin(s.Median, meds, RoundMedianError(samples, rounds))
	rs := &RoundStats{N: len(meds), MedianLo: roundDigits(math.Max(lo, 0)), MedianHi: roundDigits(hi), Confidence: IntervalConfidence}
	mean, _ := stats.Mean(meds)
	if sd, _ := stats.StandardDeviationSample(meds); mean != 0 {
		rs.RunCV = roundDigits(math.Abs(sd / mean))
	}
	s.Rounds = rs
	return s
}

// RoundMedians returns the median of each round of samples (rounds counts
// the samples of each, in order; nil is one round). It returns nil when the
// counts do not add up to the samples or one is below 1.
func RoundMedians(samples []float64, rounds []int) []float64 {
	if len(samples) == 0 {
		return nil
	}
	if len(rounds) == 0 {
		rounds = []int{len(samples)}
	}
	out := make([]float64, 0, len(rounds))
	at := 0
	for _, n := range rounds {
		if n < 1 || at+n > len(samples) {
			return nil
		}
		out = append(out, Median(samples[at:at+n]))
		at += n
	}
	if at != len(samples) {
		return nil
	}
	return out
}

// IntervalConfidence is the probability with which RoundIntervalWithin covers
// the median of another run.
const IntervalConfidence = 0.95

// medianVariance is how much more a median of n values varies than their
// mean, for normal values and large n (π/2; 1.44 for five, so the interval
// errs wide).
const medianVariance = math.Pi / 2

// RoundIntervalWithin returns the interval around a figure's median in
// which the median of another run of as many rounds falls with probability
// IntervalConfidence, from the spread of this run's round medians meds (two
// or more): median ± t × s × √(2κ/n), s their sample standard deviation (at
// least within), n their number, κ = π/2 how much more a median varies
// than a mean, t the Student quantile of n−1 degrees of freedom. It is a
// prediction interval: both runs' medians vary, each by about s × √(κ/n),
// and s is estimated from n rounds. It assumes round medians that scatter
// roughly normally; rounds that fall in groups (two modes) make s, and the
// interval, wide. Fewer than two medians give the median itself.
//
// within is what a round's median varies by from its own samples alone
// (RoundMedianError): rounds whose medians agree more closely than their
// samples allow agree by chance or by the samples' resolution, and an
// interval from them alone is too narrow (a chase in L2 across processes
// whose every round reads 851-852 ns would claim a single value that holds
// other runs' medians 40 % of the time: docs/methods.md, "Statistics").
func RoundIntervalWithin(median float64, meds []float64, within float64) (lo, hi float64) {
	n := len(meds)
	if n < 2 {
		return median, median
	}
	s, _ := stats.StandardDeviationSample(meds)
	s = math.Max(s, within)
	h := tQuantile(n-1) * s * math.Sqrt(2*medianVariance/float64(n))
	return median - h, median + h
}

// RoundMedianError is the standard error of a round's median from the
// spread of the samples within the rounds (rounds counts the samples of
// each, as Figure.Rounds): √(κ v / k), v their variance pooled over the
// rounds, k the mean number of samples a round, κ = π/2. 0 when no round
// has two samples, or the counts do not add up.
func RoundMedianError(samples []float64, rounds []int) float64 {
	var ss float64
	dof, at, k := 0, 0, 0
	for _, n := range rounds {
		if n < 1 || at+n > len(samples) {
			return 0
		}
		if n >= 2 {
			sd, _ := stats.StandardDeviationSample(stats.Float64Data(samples[at : at+n]))
			v := sd * sd
			ss += v * float64(n-1)
			dof += n - 1
			k++
		}
		at += n
	}
	if dof == 0 || at != len(samples) {
		return 0
	}
	per := float64(dof+k) / float64(k)
	return math.Sqrt(medianVariance * ss / float64(dof) / per)
}

// tQuantiles holds tQuantile's answers by degrees of freedom: one takes a
// bisection of the t distribution's CDF, far longer than the interval it
// serves, and a run's figures have only a few round counts among them.
var tQuantiles sync.Map // int → float64

// tQuantile is Student's t quantile of df degrees of freedom that leaves
// (1 − IntervalConfidence)/2 above it.
func tQuantile(df int) float64 {
	if t, ok := tQuantiles.Load(df); ok {
		return t.(float64)
	}
	t := moremath.InvCDF(moremath.TDist{V: float64(df)})(1 - (1-IntervalConfidence)/2)
	tQuantiles.Store(df, t)
	return t
}

// SpreadText is an interval's half-width relative to its center, as
// benchstat prints it after a "±" ("1%"), with one decimal below 10%
// ("0.3%": bandwidth intervals are often a few tenths of a percent); "∞"
// for an infinite bound, "?" for bounds on the other side of zero.
func SpreadText(center, lo, hi float64) string {
	switch {
	case math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return "∞"
	case center == 0:
		return "0%"
	case (center > 0) != (lo > 0) || (center > 0) != (hi > 0):
		return "?"
	}
	v := 100 * math.Max(hi/center-1, 1-lo/center)
	switch {
	case math.IsInf(v, 0):
		return "∞"
	case v < 10:
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "%"
}

// RoundSpread is SpreadText of the interval of the median that the
// figure's rounds give ("" without rounds).
func (s *Stats) RoundSpread() string {
	if s == nil || s.Rounds == nil {
		return ""
	}
	return SpreadText(s.Median, s.Rounds.MedianLo, s.Rounds.MedianHi)
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
		s[i] = roundDigits(v)
	}
	return s
}

// roundDigits rounds v to SampleDigits significant digits; 0, NaN and
// infinities stay as they are.
func roundDigits(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	if r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', SampleDigits, 64), 64); err == nil {
		return r
	}
	return v
}

// Median is the median of v (0 when empty); v is not changed. It sorts a
// copy, on the stack for the few values of a figure or a round (a
// compare of two 72-GPU runs takes some 200,000 medians: a copy on the
// heap each was a fifth of what it allocated).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var small [32]float64
	s := append(small[:0], v...)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// HalfPeak finds n½ of a curve of values by size: the smallest size whose
// value reaches half of the curve's highest, where the curve reaches below
// half of it at a smaller size. It returns that point's index; ok is false
// where the curve has no point above zero or starts at half its peak or
// more (a curve from 64 MiB: its n½ lies below what it measured).
func HalfPeak(sizes []uint64, values []float64) (i int, ok bool) {
	peak := 0.0
	for _, v := range values {
		peak = max(peak, v)
	}
	if peak <= 0 {
		return 0, false
	}
	i = -1
	for j, v := range values {
		if v >= peak/2 && (i < 0 || sizes[j] < sizes[i]) {
			i = j
		}
	}
	// Every size under n½ is below half the peak: there must be one.
	return i, sizes[i] > slices.Min(sizes)
}
