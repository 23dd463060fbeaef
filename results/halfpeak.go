package results

// HalfPeakOf returns n½ of a bandwidth curve (figures of one test, engine and
// pair, keyed by size): the smallest size whose median reaches half of the
// curve's highest median. It returns 0 when the curve has no usable point.
func HalfPeakOf(curve map[uint64]*Figure) uint64 {
	peak := 0.0
	for _, f := range curve {
		if f != nil && f.Error == "" && f.Stats != nil && f.Stats.Median > peak {
			peak = f.Stats.Median
		}
	}
	if peak == 0 {
		return 0
	}
	var best uint64
	for size, f := range curve {
		if f != nil && f.Error == "" && f.Stats != nil && f.Stats.Median >= peak/2 && (best == 0 || size < best) {
			best = size
		}
	}
	return best
}
