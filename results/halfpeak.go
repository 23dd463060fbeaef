package results

import "github.com/p2pbench/p2pbench/figstats"

// HalfPeakOf returns n½ of a bandwidth curve (figures of one test, engine and
// pair, keyed by size), as figstats.HalfPeak defines it; 0 when it has none.
func HalfPeakOf(curve map[uint64]*Figure) uint64 {
	var sizes []uint64
	var values []float64
	for size, f := range curve {
		if f != nil && f.Error == "" && f.Stats != nil {
			sizes, values = append(sizes, size), append(values, f.Stats.Median)
		}
	}
	if i, ok := figstats.HalfPeak(sizes, values); ok {
		return sizes[i]
	}
	return 0
}
