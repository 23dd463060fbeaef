package measure

import (
	"maps"
	"sync"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// GBps converts a size and per-repetition milliseconds to GB/s samples.
func GBps(size uint64, ms []float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		if m > 0 {
			out[i] = float64(size) / (m * 1e-3) / 1e9
		}
	}
	return out
}

// TotalGBps is, per sample, all bytes over the longest transfer's time.
func TotalGBps(sizes []uint64, ms [][]float64) []float64 {
	if len(ms) == 0 {
		return nil
	}
	var bytes float64
	for _, s := range sizes {
		bytes += float64(s)
	}
	out := make([]float64, len(ms[0]))
	for k := range out {
		longest := 0.0
		for i := range ms {
			longest = max(longest, ms[i][k])
		}
		if longest > 0 {
			out[k] = bytes / (longest * 1e-3) / 1e9
		}
	}
	return out
}

// SumGBps is, per sample, the sum of the transfers' rates: what they move
// together when each was timed while every other still copied (held
// windows, Timing.Held), where all bytes over the longest window would
// leave out what the faster moved after their windows.
func SumGBps(sizes []uint64, ms [][]float64) []float64 {
	if len(ms) == 0 {
		return nil
	}
	out := make([]float64, len(ms[0]))
	for k := range out {
		for i := range ms {
			if ms[i][k] > 0 {
				out[k] += float64(sizes[i]) / (ms[i][k] * 1e-3) / 1e9
			}
		}
	}
	return out
}

// Fail records that f could not be measured: the error, its CUDA name, no
// samples.
func Fail(f results.Figure, err error) results.Figure {
	f.Error = err.Error()
	f.ErrorName = cuda.NameOf(err)
	f.Samples, f.Rounds = nil, nil
	f.Stats = nil
	if f.Verify == "" || f.Verify == results.VerifyPassed {
		f.Verify = results.VerifyNA
	}
	return f
}

// Finish readies a figure for the results: its samples rounded and
// summarised, a verification state, and its error texts within what a
// results file holds (results.ClipText).
func Finish(f results.Figure) results.Figure {
	if len(f.Samples) > 0 {
		f.Samples = figstats.RoundSamples(f.Samples)
		f.Stats = figstats.ComputeRoundStats(f.Samples, f.Rounds)
	}
	if f.Verify == "" {
		f.Verify = results.VerifyNA
	}
	f.Error, f.VerifyDetail = results.ClipText(f.Error), results.ClipText(f.VerifyDetail)
	if f.Error != "" && f.Samples == nil {
		f.Stats = nil
	}
	return f
}

// WithParam returns a copy of params with k set to v.
func WithParam(params map[string]string, k, v string) map[string]string {
	out := maps.Clone(params)
	if out == nil {
		out = map[string]string{}
	}
	out[k] = v
	return out
}

// Seeds hands out verification seeds: a new pattern per verification, so
// data left by an earlier test never passes for this one's. It is safe for
// concurrent use.
type Seeds struct {
	mu   sync.Mutex
	last uint32
}

// NewSeeds starts a sequence after first.
func NewSeeds(first uint32) *Seeds { return &Seeds{last: first} }

// Next returns the next seed.
func (s *Seeds) Next() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = s.last*1664525 + 1013904223
	return s.last
}
