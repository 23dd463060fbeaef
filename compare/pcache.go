package compare

import (
	"encoding/binary"
	"math"
	"sync"

	"golang.org/x/perf/benchmath"
)

// uTest runs benchmath's Mann–Whitney U test (AssumeNothing.Compare), asking
// benchmath once per rank pattern. The test's outcome depends on two samples
// only through their sizes, the U statistic and the sizes of the groups of
// tied values in their merged order: go-moremath takes the exact
// distribution of U given the ties, or its normal approximation with the
// tie correction, from those alone. Samples without ties of one size have a
// few hundred patterns, which a large comparison meets thousands of times
// each: the memo makes comparing two synthetic 72-GPU runs 8 times faster.
// Samples with ties, as the timers' resolution makes them in real runs,
// seldom share a pattern, and the exact distribution with ties costs about a
// millisecond for samples of 20. uTest computes the pattern, never a
// p-value. It is safe for concurrent use.
//
// The compares of one process share one memo (uTests): its outcomes
// depend on the pattern and the thresholds' alpha alone, which the key
// holds, and a process that compares many sets (fleet, the tests of the
// tables of FALLBACK.md) meets the same patterns in each. It forgets what
// it holds past maxKnown patterns, a few megabytes.
type uTest struct {
	mu    sync.Mutex
	known map[string]benchmath.Comparison
}

func newUTest() *uTest { return &uTest{known: map[string]benchmath.Comparison{}} }

// uTests is the memo every compare of the process asks.
var uTests = newUTest()

// maxKnown bounds the patterns a memo holds.
const maxKnown = 1 << 16

// compare returns benchmath.AssumeNothing.Compare(a, b); a and b are sorted,
// as benchmath.NewSample leaves them. A pattern new to two goroutines at
// once is computed by both.
func (t *uTest) compare(a, b *benchmath.Sample) benchmath.Comparison {
	var alpha float64
	if a.Thresholds != nil {
		alpha = a.Thresholds.CompareAlpha
	}
	key := string(rankPattern(binary.LittleEndian.AppendUint64(nil, math.Float64bits(alpha)), a.Values, b.Values))
	t.mu.Lock()
	cmp, ok := t.known[key]
	t.mu.Unlock()
	if !ok {
		cmp = benchmath.AssumeNothing.Compare(a, b)
		t.mu.Lock()
		if len(t.known) >= maxKnown {
			clear(t.known)
		}
		t.known[key] = cmp
		t.mu.Unlock()
	}
	return cmp
}

// rankPattern appends to key what the U test of sorted samples x and y
// depends on: their sizes, the size of each group of equal values in their
// merged order, and twice x's rank sum (a whole number even with ties, whose
// members share the mean of their ranks).
func rankPattern(key []byte, x, y []float64) []byte {
	key = binary.AppendUvarint(key, uint64(len(x)))
	key = binary.AppendUvarint(key, uint64(len(y)))
	rankSum2 := 0
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		var v float64 // the next value
		if j == len(y) || i < len(x) && x[i] <= y[j] {
			v = x[i]
		} else {
			v = y[j]
		}
		first := i + j + 1 // the group's first rank
		nx, n := 0, 0
		for ; i < len(x) && x[i] == v; i++ {
			nx++
		}
		for ; j < len(y) && y[j] == v; j++ {
			n++
		}
		n += nx // at least 1: Compare refuses NaNs
		// The group's ranks are first … first+n−1; twice their mean is 2·first+n−1.
		rankSum2 += nx * (2*first + n - 1)
		key = binary.AppendUvarint(key, uint64(n))
	}
	return binary.AppendUvarint(key, uint64(rankSum2))
}
