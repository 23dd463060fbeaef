package sim

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// plainFill is progressive filling as fillRates did it before it let the
// resources far from full wait: a pass over every resource not yet full at
// each step. fillRates must give the same rates, to the bit: simulated
// figures and the golden files depend on every rounding.
func plainFill(active []*flow, touched []*resource) {
	byCap := slices.Clone(active)
	slices.SortFunc(byCap, func(a, b *flow) int { return cmp.Compare(a.cap, b.cap) })
	live := slices.Clone(touched)
	level, left, next := 0.0, len(active), 0
	freeze := func(f *flow) {
		f.frozen, f.rate = true, level
		left--
		for _, u := range f.uses {
			u.r.wsum = math.Max(0, u.r.wsum-u.w)
		}
	}
	for iter := 0; left > 0; iter++ {
		if iter > len(active)+len(touched)+4 {
			for _, f := range active {
				if !f.frozen {
					freeze(f)
				}
			}
			break
		}
		for next < len(byCap) && byCap[next].frozen {
			next++
		}
		inc := math.Inf(1)
		if next < len(byCap) {
			inc = byCap[next].cap - level
		}
		for _, r := range live {
			if r.wsum > 1e-12 {
				inc = math.Min(inc, r.remain/r.wsum)
			}
		}
		if math.IsInf(inc, 1) {
			break
		}
		inc = math.Max(inc, 0)
		level += inc
		for _, r := range live {
			r.remain -= inc * r.wsum
		}
		for ; next < len(byCap) && (byCap[next].frozen || byCap[next].cap-level <= 1e-9*byCap[next].cap); next++ {
			if !byCap[next].frozen {
				freeze(byCap[next])
			}
		}
		kept := live[:0]
		for _, r := range live {
			if !(r.remain <= 1e-9*r.cap) {
				kept = append(kept, r)
				continue
			}
			r.full = true
			for _, f := range r.flows {
				if !f.frozen {
					freeze(f)
				}
			}
		}
		live = kept
	}
}

// fillCase is a random set of flows over random resources: groups of flows
// that share nothing (as a matrix's batch), flows that share ports (as all
// pairs at once), caps of their own, weights as the model's (a link's
// 1/efficiency, a request's share on the way back, none), a resource of no
// capacity now and then.
func fillCase(rng *rand.Rand) *sched {
	s := &sched{}
	nres := 1 + rng.IntN(80)
	res := make([]*resource, nres)
	caps := []float64{900, 4000, 6400, 450, 64, 25}
	for i := range res {
		c := caps[rng.IntN(len(caps))]
		if rng.IntN(2) == 0 {
			c *= 0.98 + 0.04*rng.Float64() // else resources fill at once
		}
		if rng.IntN(200) == 0 {
			c = 0
		}
		res[i] = &resource{cap: c}
	}
	nflows := 1 + rng.IntN(120)
	shared := rng.IntN(3) == 0
	quantized := rng.IntN(2) == 0
	for range nflows {
		k := 1 + rng.IntN(min(7, nres))
		var picks []int
		if shared {
			picks = rng.Perm(nres)[:k]
		} else {
			// Mostly a neighbourhood of its own.
			base := rng.IntN(nres)
			for j := range k {
				picks = append(picks, (base+j*(1+rng.IntN(3)))%nres)
			}
			slices.Sort(picks)
			picks = slices.Compact(picks)
		}
		var uses []use
		for _, p := range picks {
			w := 1 / (0.7 + 0.3*rng.Float64())
			if quantized {
				w = 1 / (0.7 + 0.3*float64(rng.IntN(4))/4)
			}
			switch rng.IntN(6) {
			case 0:
				w = 0.02 + 0.1*rng.Float64()
			case 1:
				if rng.IntN(10) == 0 {
					w = 0
				}
			}
			uses = append(uses, use{res[p], w})
		}
		c := float64(noCap)
		if rng.IntN(4) == 0 {
			c = 100 + 900*rng.Float64()
		}
		j := 1.0
		if rng.IntN(2) == 0 {
			j = 0.9 + 0.2*rng.Float64()
		}
		f := newFlow(1e6, uses, c, j)
		o := &op{fl: f, endAt: -1}
		s.flows = append(s.flows, o)
	}
	return s
}

// pairsCase is every ordered pair of n ports at once, as all_pairs: each
// flow out of a port's egress and into another's ingress, a request's share
// on the two ways back, the ports' capacities alike or two apart, some
// flows slower: many resources fill at one step, and the order in which
// their flows freeze decides the roundings of the weight sums after.
func pairsCase(rng *rand.Rand) *sched {
	s := &sched{}
	n := 2 + rng.IntN(9)
	eg, in := make([]*resource, n), make([]*resource, n)
	for i := range n {
		c := 900.0
		if rng.IntN(3) == 0 {
			c = 899
		}
		eg[i], in[i] = &resource{cap: c}, &resource{cap: c}
	}
	ce := &resource{cap: 4000}
	for a := range n {
		for b := range n {
			if a == b {
				continue
			}
			uses := []use{{eg[a], 1 / 0.93}, {in[b], 1 / 0.93}, {eg[b], 0.07}, {in[a], 0.07}, {ce, 1}}
			j := 1.0
			if rng.IntN(4) == 0 {
				j = 0.9 + 0.2*rng.Float64()
			}
			s.flows = append(s.flows, &op{fl: newFlow(1e6, uses, noCap, j), endAt: -1})
		}
	}
	rng.Shuffle(len(s.flows), func(i, j int) { s.flows[i], s.flows[j] = s.flows[j], s.flows[i] })
	return s
}

func TestFillRatesIsPlainFilling(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var want []float64
	for n := range 1000 {
		s := fillCase(rng)
		if n%4 == 0 {
			s = pairsCase(rng)
		}
		s.collectFlows()
		plainFill(s.active, s.touched)
		want = want[:0]
		for _, f := range s.active {
			want = append(want, f.rate)
		}
		s.collectFlows()
		s.fillRates()
		for i, f := range s.active {
			if math.Float64bits(f.rate) != math.Float64bits(want[i]) {
				t.Fatalf("case %d (%d flows, %d resources): flow %d at %v, plain filling %v",
					n, len(s.active), len(s.touched), i, f.rate, want[i])
			}
		}
	}
}
