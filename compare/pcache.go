package compare

import (
	"strconv"
	"sync"

	"golang.org/x/perf/benchmath"
)

// pCache memoises benchmath's comparisons. benchmath's Mann–Whitney U test
// takes tens of microseconds for two samples of 20 (it builds the exact
// distribution of U), and a 72-GPU run has hundreds of thousands of
// figures. The test's outcome depends on the two samples only through their
// sizes and their rank pattern — the U statistic and the sizes of the groups
// of tied values, in order — so comparisons with the same pattern get the
// same answer: pCache asks benchmath once per pattern and reuses it. It
// computes the pattern, never a p-value.
//
// One pCache serves every worker of a comparison: exact distributions for
// samples of 50 take a fraction of a millisecond each, and workers see the
// same patterns.
type pCache struct {
	// tables answer samples of up to 50 without ties.
	tables uTables
	mu     sync.Mutex
	// plain holds patterns without ties: sizes and rank sum say it all.
	plain map[plainPattern]benchmath.Comparison
	// tied holds the others, keyed by sizes, rank sum and tie groups.
	tied map[string]benchmath.Comparison
}

type plainPattern struct {
	n1, n2   int32
	rankSum2 int64
}

func newPCache() *pCache {
	return &pCache{plain: map[plainPattern]benchmath.Comparison{}, tied: map[string]benchmath.Comparison{}}
}

// compare returns benchmath.AssumeNothing.Compare(a, b). Sample values are
// sorted, as benchmath.NewSample leaves them.
// The lock is not held while benchmath computes: two workers may then both
// compute a new pattern, which costs time but never a wrong answer.
func (c *pCache) compare(a, b *benchmath.Sample, buf []byte) benchmath.Comparison {
	rankSum2, ties := rankPattern(a.Values, b.Values, buf)
	if ties == nil {
		if t := c.tables.get(len(a.Values), len(b.Values)); t != nil {
			return t.compare(rankSum2, a.Thresholds.CompareAlpha)
		}
		k := plainPattern{int32(len(a.Values)), int32(len(b.Values)), rankSum2}
		c.mu.Lock()
		cmp, ok := c.plain[k]
		c.mu.Unlock()
		if !ok {
			cmp = benchmath.AssumeNothing.Compare(a, b)
			c.mu.Lock()
			c.plain[k] = cmp
			c.mu.Unlock()
		}
		return cmp
	}
	k := strconv.AppendInt(ties, int64(len(a.Values)), 10)
	k = append(k, ',')
	k = strconv.AppendInt(k, int64(len(b.Values)), 10)
	k = append(k, ',')
	k = strconv.AppendInt(k, rankSum2, 10)
	c.mu.Lock()
	cmp, ok := c.tied[string(k)]
	c.mu.Unlock()
	if !ok {
		cmp = benchmath.AssumeNothing.Compare(a, b)
		c.mu.Lock()
		c.tied[string(k)] = cmp
		c.mu.Unlock()
	}
	return cmp
}

// rankPattern returns twice the rank sum of x in the merged samples (an
// integer even with ties, whose ranks are averages) and, when there are
// ties, the sizes of the groups of equal values in order, appended to buf;
// nil when there are none.
func rankPattern(x, y []float64, buf []byte) (rankSum2 int64, ties []byte) {
	if s, ok := plainRankSum2(x, y); ok {
		return s, nil
	}
	hasTies := false
	walkGroups(x, y, func(rank, nx, n int) {
		// The group's ranks are rank .. rank+n-1; each member gets their mean.
		rankSum2 += int64(nx) * int64(2*rank+n-1)
		hasTies = hasTies || n > 1
	})
	if !hasTies {
		return rankSum2, nil
	}
	ties = buf
	walkGroups(x, y, func(_, _, n int) {
		ties = strconv.AppendInt(ties, int64(n), 10)
		ties = append(ties, ' ')
	})
	return rankSum2, ties
}

// plainRankSum2 is rankPattern's quick path for samples without ties or
// NaNs (most of them): ok is false when there are any. x[i] has rank i+1
// plus the number of values of y below it.
func plainRankSum2(x, y []float64) (rankSum2 int64, ok bool) {
	for _, s := range [2][]float64{x, y} {
		for k := 1; k < len(s); k++ {
			if !(s[k-1] < s[k]) {
				return 0, false // a tie, or a NaN
			}
		}
	}
	if len(x) > 0 && x[0] != x[0] || len(y) > 0 && y[0] != y[0] {
		return 0, false
	}
	j := 0
	for i, v := range x {
		for j < len(y) && y[j] < v {
			j++
		}
		if j < len(y) && y[j] == v {
			return 0, false
		}
		rankSum2 += 2 * int64(i+1+j)
	}
	return rankSum2, true
}

// walkGroups calls fn for each group of equal values of the merged sorted
// samples, in order: its first rank, how many of it are in x, its size.
func walkGroups(x, y []float64, fn func(rank, nx, n int)) {
	i, j, rank := 0, 0, 1
	for i < len(x) || j < len(y) {
		var v float64
		if j == len(y) || i < len(x) && x[i] < y[j] {
			v = x[i]
		} else {
			v = y[j]
		}
		nx, n := 0, 0
		for i < len(x) && x[i] == v {
			i++
			nx++
			n++
		}
		for j < len(y) && y[j] == v {
			j++
			n++
		}
		fn(rank, nx, n)
		rank += n
	}
}
