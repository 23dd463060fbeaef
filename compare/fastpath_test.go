package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/p2pbench/p2pbench/results"
)

// The tests here hold Compare's shortcuts to benchmath called directly,
// bit for bit: the U-test tables, the memo of rank patterns, sorting, and
// the summaries, on the sample sizes results files have (10 for atomics,
// 20 for bandwidth, 50 for copy latency, 100 for the chase and ping-pong)
// and mixtures of them.

var testTh = &benchmath.Thresholds{CompareAlpha: 0.05}

func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// direct is benchmath's comparison of two samples, given unsorted.
func direct(x, y []float64) benchmath.Comparison {
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(x), testTh), benchmath.NewSample(slices.Clone(y), testTh))
}

func sameComparison(a, b benchmath.Comparison) bool {
	if !sameFloat(a.P, b.P) || a.N1 != b.N1 || a.N2 != b.N2 || !sameFloat(a.Alpha, b.Alpha) || len(a.Warnings) != len(b.Warnings) {
		return false
	}
	for i := range a.Warnings {
		if a.Warnings[i].Error() != b.Warnings[i].Error() {
			return false
		}
	}
	return true
}

// samplesWithU returns samples of n1 and n2 distinct values whose U
// statistic (pairs with the first sample's value above the second's) is u.
func samplesWithU(n1, n2, u int) (x, y []float64) {
	for j := 1; j <= n2; j++ {
		y = append(y, float64(j*(n1+1)))
	}
	// x[k] lies above c[k] values of y; the c add up to u.
	left := u
	for k := n1; k >= 1; k-- {
		c := min(n2, left) // the top values first
		left -= c
		x = append(x, float64(c*(n1+1)+k))
	}
	return x, y
}

// TestUTableAgreesWithBenchmath compares the table with benchmath for
// every U of the sizes results files have, either sample first, and a few
// other sizes.
func TestUTableAgreesWithBenchmath(t *testing.T) {
	sizes := [][2]int{{10, 10}, {10, 20}, {20, 10}, {20, 20}, {10, 50}, {20, 50}, {50, 20}, {50, 50}, {13, 37}, {50, 1}, {9, 9}}
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			t.Parallel()
			n1, n2 := sz[0], sz[1]
			tables := &uTables{}
			checked := 0
			for u := 0; u <= n1*n2; u++ {
				x, y := samplesWithU(n1, n2, u)
				want := direct(x, y)
				sx, sy := slices.Sorted(slices.Values(x)), slices.Sorted(slices.Values(y))
				rankSum2, ties := rankPattern(sx, sy, nil)
				if ties != nil {
					t.Fatalf("%d×%d U=%d: samples have ties", n1, n2, u)
				}
				if got := rankSum2/2 - int64(n1*(n1+1)/2); got != int64(u) {
					t.Fatalf("%d×%d: samples for U=%d have U=%d", n1, n2, u, got)
				}
				tab := tables.get(n1, n2)
				if tab == nil {
					if max(n1, n2) >= 10 {
						t.Fatalf("%d×%d: no table", n1, n2)
					}
					continue
				}
				if got := tab.compare(rankSum2, testTh.CompareAlpha); !sameComparison(got, want) {
					t.Fatalf("%d×%d U=%d: table says %+v, benchmath %+v", n1, n2, u, got, want)
				}
				checked++
			}
			if checked == 0 && max(n1, n2) >= 10 {
				t.Errorf("%d×%d: nothing checked", n1, n2)
			}
		})
	}
}

// randomSample draws n values around center; ties says how likely a value
// repeats one already drawn (in this sample or in from).
func randomSample(rng *rand.Rand, n int, center, ties float64, from []float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		switch {
		case rng.Float64() < ties && i > 0:
			s[i] = s[rng.IntN(i)]
		case rng.Float64() < ties && len(from) > 0:
			s[i] = from[rng.IntN(len(from))]
		default:
			s[i] = results.RoundSamples([]float64{center * (1 + 0.01*rng.NormFloat64())})[0]
		}
	}
	return s
}

// TestCompareAgreesWithBenchmath runs Compare over figures with random
// samples of every size and mixture, with and without ties and shifts,
// and checks every cell and change against benchmath called directly.
func TestCompareAgreesWithBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sizes := []int{10, 20, 50, 100}
	base := &results.Run{Schema: results.SchemaVersion}
	other := &results.Run{Schema: results.SchemaVersion}
	for i := 0; i < 6000; i++ {
		n1, n2 := sizes[rng.IntN(4)], sizes[rng.IntN(4)]
		if rng.IntN(2) == 0 {
			n2 = n1
		}
		ties := []float64{0, 0, 0.05, 0.3}[rng.IntN(4)]
		shift := []float64{1, 1, 1.002, 0.99, 1.05}[rng.IntN(5)]
		x := randomSample(rng, n1, 100, ties, nil)
		y := randomSample(rng, n2, 100*shift, ties, x)
		if i%500 == 0 {
			y = slices.Clone(x[:min(len(x), n2)]) // identical samples
		}
		f := results.Figure{Test: "t", Src: i, Unit: results.UnitGBps, Samples: x, Verify: results.VerifyNA}
		base.Figures = append(base.Figures, f)
		f.Samples = y
		other.Figures = append(other.Figures, f)
	}
	res, err := Compare([]Input{{"a", base}, {"b", other}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != len(base.Figures) {
		t.Fatalf("%d rows for %d figures", len(res.Rows), len(base.Figures))
	}
	for i, row := range res.Rows {
		x, y := base.Figures[i].Samples, other.Figures[i].Samples
		for k, s := range [][]float64{x, y} {
			sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(s), testTh), 0.95)
			c := row.Cells[k]
			lo, hi := sum.Lo, sum.Hi
			if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
				lo, hi = sum.Center, sum.Center
			}
			if !sameFloat(c.Center, sum.Center) || !sameFloat(c.Lo, lo) || !sameFloat(c.Hi, hi) || c.N != len(s) ||
				c.Spread != string(appendSpread(nil, sum.Center, sum.Lo, sum.Hi)) {
				t.Fatalf("row %d cell %d: %+v, benchmath's summary %+v", i, k, c, sum)
			}
		}
		want := direct(x, y)
		if ch := row.Changes[0]; !sameFloat(ch.P, want.P) || ch.Significant != (want.P < want.Alpha) {
			t.Fatalf("row %d (%d+%d samples): p %v, benchmath %v", i, len(x), len(y), ch.P, want.P)
		}
	}
}

// TestPCacheAgreesWithBenchmath asks one cache, as Compare does, for many
// comparisons whose rank patterns repeat, with and without ties.
func TestPCacheAgreesWithBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	cache := newPCache()
	for i := 0; i < 2500; i++ {
		n := []int{3, 10, 20, 50, 100}[rng.IntN(5)]
		ties := []float64{0, 0.02, 0.3}[rng.IntN(3)]
		// Few distinct values make patterns repeat.
		x := randomSample(rng, n, 100, ties, nil)
		y := randomSample(rng, n, 100.5, ties, x)
		want := direct(x, y)
		a := benchmath.NewSample(slices.Clone(x), testTh)
		b := benchmath.NewSample(slices.Clone(y), testTh)
		if got := cache.compare(a, b, nil); !sameComparison(got, want) {
			t.Fatalf("%d samples: cache says %+v, benchmath %+v", n, got, want)
		}
	}
}

func TestSortedCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	odd := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), -1, 5, 5}
	for i := 0; i < 20000; i++ {
		v := make([]float64, rng.IntN(40))
		for j := range v {
			switch rng.IntN(10) {
			case 0:
				v[j] = odd[rng.IntN(len(odd))]
			case 1:
				if j > 0 {
					v[j] = v[rng.IntN(j)]
				}
			default:
				v[j] = rng.Float64() * 1000
			}
		}
		want := slices.Clone(v)
		sort.Float64s(want)
		got := sortedCopy(nil, v)
		for j := range want {
			if !sameFloat(got[j], want[j]) {
				t.Fatalf("sortedCopy(%v) = %v, sort.Float64s gives %v", v, got, want)
			}
		}
	}
}

// TestRankPattern checks the quick rank sum against the general one.
func TestRankPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 20000; i++ {
		x := randomSample(rng, 1+rng.IntN(30), 100, []float64{0, 0.1}[rng.IntN(2)], nil)
		y := randomSample(rng, 1+rng.IntN(30), 100, []float64{0, 0.1}[rng.IntN(2)], x)
		nan := false
		if i%50 == 0 {
			x[rng.IntN(len(x))], nan = math.NaN(), true
		}
		slices.Sort(x)
		slices.Sort(y)
		got, ok := plainRankSum2(x, y)
		if nan {
			if ok {
				t.Fatalf("plainRankSum2(%v, %v) took a NaN", x, y)
			}
			continue
		}
		var want int64
		tied := false
		walkGroups(x, y, func(rank, nx, n int) {
			want += int64(nx) * int64(2*rank+n-1)
			tied = tied || n > 1
		})
		if ok == tied || ok && got != want {
			t.Fatalf("plainRankSum2(%v, %v) = %d, %v; want %d, ties %v", x, y, got, ok, want, tied)
		}
	}
}
