package results

import "slices"

// HalfPeakOf returns n½ of a bandwidth curve (figures of one test, engine and
// pair, keyed by size), as HalfPeak defines it; 0 when it has none.
func HalfPeakOf(curve map[uint64]*Figure) uint64 {
	var sizes []uint64
	var values []float64
	for size, f := range curve {
		if f != nil && f.Error == "" && f.Stats != nil {
			sizes, values = append(sizes, size), append(values, f.Stats.Median)
		}
	}
	if i, ok := HalfPeak(sizes, values); ok {
		return sizes[i]
	}
	return 0
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
