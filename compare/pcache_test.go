package compare

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/perf/benchmath"
)

// TestUTestAgreesWithBenchmath holds the memo of U tests to benchmath called
// directly, on samples with and without ties, of equal and different sizes,
// on both sides of go-moremath's limits for exact distributions (25 values
// with ties, 50 without).
func TestUTestAgreesWithBenchmath(t *testing.T) {
	th := &benchmath.Thresholds{CompareAlpha: 0.05}
	rng := rand.New(rand.NewPCG(1, 2))
	// draw returns n values; with few levels there are many ties.
	draw := func(n, levels int, shift float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			if levels > 0 {
				v[i] = float64(rng.IntN(levels)) + shift
			} else {
				v[i] = rng.NormFloat64() + shift
			}
		}
		return v
	}
	test := newUTest()
	calls := 0
	for _, sizes := range [][2]int{{1, 1}, {3, 3}, {5, 9}, {10, 10}, {12, 8}, {20, 20}, {30, 30}, {50, 50}, {60, 40}} {
		for _, levels := range []int{0, 2, 6, 40} {
			if levels > 2 && sizes[0] >= 20 && sizes[0] <= 25 {
				continue // exact with many ties: milliseconds each
			}
			for k := range 20 {
				shift := float64(k%4) / 2
				x, y := draw(sizes[0], levels, 0), draw(sizes[1], levels, shift)
				// Each pair twice, the second time with other values in the
				// same order: the memo's answer.
				for _, scale := range []float64{1, 1 + math.Pi} {
					a := benchmath.NewSample(scaled(x, scale), th)
					b := benchmath.NewSample(scaled(y, scale), th)
					want := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a.Values), th), benchmath.NewSample(slices.Clone(b.Values), th))
					got := test.compare(a, b)
					calls++
					if math.Float64bits(got.P) != math.Float64bits(want.P) || got.N1 != want.N1 || got.N2 != want.N2 ||
						got.Alpha != want.Alpha || !reflect.DeepEqual(errorTexts(got.Warnings), errorTexts(want.Warnings)) {
						t.Fatalf("%v vs %v: memo %+v, benchmath %+v", a.Values, b.Values, got, want)
					}
				}
			}
		}
	}
	if len(test.known) > calls/2 {
		t.Errorf("%d patterns for %d tests: the memo does not recognise a pattern seen before", len(test.known), calls)
	}
}

func scaled(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x*f + 1
	}
	return out
}

func errorTexts(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
