package compare

import (
	"sync"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// uTable holds the two-sided p-values benchmath's U test gives two samples
// of sizes n1 and n2 without ties, for every U statistic at once.
//
// benchmath.AssumeNothing.Compare runs go-moremath's Mann–Whitney U test,
// which for samples of at most stats.MannWhitneyExactLimit values without
// ties takes the exact distribution of U: twice its CDF at the smaller of
// U and n1·n2−U, or 1 when the two are equal. The CDF at u is the sum, in
// order from 0, of the probabilities p(0..u), which go-moremath computes
// anew for every test by the recurrence of Mann and Whitney (1947),
//
//	p_{n,m}(u) = (n·p_{n−1,m}(u−m) + m·p_{n,m−1}(u)) / (n+m),
//
// filled for u up to the U at hand: Θ(n1·n2·U) work, about a millisecond
// for two samples of 50, and a comparison of 72-GPU runs meets hundreds of
// different U. Each p(u) is computed from entries at u and below only, by
// the same floating-point operations whatever the upper end of the fill,
// so one fill up to the largest U the test can ask for gives every p(u)
// that a smaller fill gives, bit for bit; running sums in the same order
// give the CDF. TestUTableAgreesWithBenchmath compares every entry of the
// sizes results files use with benchmath itself.
type uTable struct {
	n1, n2 int
	// cdf2[u] is twice the CDF at u, for u below n1·n2/2.
	cdf2 []float64
}

// newUTable fills the table for sizes n1 and n2. The recurrence is written
// with go-moremath's operations in go-moremath's order, so that a compiler
// that fuses multiplications and additions fuses both alike.
func newUTable(n1, n2 int) *uTable {
	N, M := min(n1, n2), max(n1, n2)
	// The largest U asked for is the largest below n1·n2/2.
	U := (N*M - 1) / 2
	memo := make([][]float64, N+1)
	for n := range memo {
		memo[n] = make([]float64, U+1)
	}
	for m := 0; m <= M; m++ {
		memo[0][0] = 1 // p_{0,m} is 1 at u = 0, 0 elsewhere
		for n := 1; n <= min(N, m); n++ {
			lp := memo[n-1] // p_{n−1,m}
			var rp []float64
			if n <= m-1 {
				rp = memo[n] // p_{n,m−1}
			} else {
				rp = memo[m-1] // p_{m−1,n}, the same by symmetry (n = m)
			}
			ulim := min(n*m, U)
			out := memo[n]
			nplusm := float64(n + m)
			for u := ulim; u >= 0; u-- {
				l := 0.0
				if u-m >= 0 {
					l = float64(n) * lp[u-m]
				}
				r := float64(m) * rp[u]
				out[u] = (l + r) / nplusm
			}
		}
	}
	t := &uTable{n1: n1, n2: n2, cdf2: make([]float64, U+1)}
	sum := 0.0
	for u, p := range memo[N] {
		sum += p
		t.cdf2[u] = sum * 2
	}
	return t
}

// compare is benchmath.AssumeNothing.Compare of samples of the table's
// sizes without ties, x's rank sum being rankSum2/2.
func (t *uTable) compare(rankSum2 int64, alpha float64) benchmath.Comparison {
	u1 := rankSum2/2 - int64(t.n1*(t.n1+1)/2)
	u2 := int64(t.n1*t.n2) - u1
	p := 1.0
	if u1 != u2 {
		p = t.cdf2[min(u1, u2)]
	}
	return benchmath.Comparison{P: p, N1: t.n1, N2: t.n2, Alpha: alpha}
}

// maxTable is the largest sample size with tables: go-moremath's
// MannWhitneyExactLimit as released (a variable, which get also checks).
const maxTable = 50

// uTables holds the tables of a comparison, made when first needed.
type uTables struct {
	once [maxTable + 1][maxTable + 1]sync.Once
	t    [maxTable + 1][maxTable + 1]*uTable
}

// get returns the table for sizes n1 and n2, or nil when benchmath does not
// take the exact distribution for them, or when it could warn that the
// samples are too small: its warning needs both below 10 (uTestMinP).
func (ts *uTables) get(n1, n2 int) *uTable {
	if n1 > min(maxTable, stats.MannWhitneyExactLimit) || n2 > min(maxTable, stats.MannWhitneyExactLimit) || max(n1, n2) < 10 || n1 < 1 || n2 < 1 {
		return nil
	}
	ts.once[n1][n2].Do(func() { ts.t[n1][n2] = newUTable(n1, n2) })
	return ts.t[n1][n2]
}
