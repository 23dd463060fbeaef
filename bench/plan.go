package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/p2pbench/p2pbench/results"
)

// PlanOptions choose the pairs a run measures in detail.
type PlanOptions struct {
	// AllPairs measures every pair in detail (--all-pairs).
	AllPairs bool
	// Peers, when > 0, samples: besides the representatives of each link
	// class, each device measures Peers peers drawn at random with Seed.
	// When 0, a domain of more than results.SampleAbove devices samples
	// results.DefaultPeers peers.
	Peers int
	Seed  uint64
}

// Validate checks plan options as a command line gives them (its messages
// name the flags): Peers 0 or more, and not with AllPairs; a Seed other
// than 0.
func (o PlanOptions) Validate() error {
	switch {
	case o.Peers < 0:
		return fmt.Errorf("--sample-peers must be 0 or more (got %d)", o.Peers)
	case o.AllPairs && o.Peers > 0:
		return errors.New("--all-pairs and --sample-peers exclude each other")
	case o.Seed == 0:
		return errors.New("--sample-seed must not be 0")
	}
	return nil
}

// DefaultSeed seeds the draw of a sampled plan's peers.
const DefaultSeed = 1

// sampledEveryPair are the matrix tests a sampled plan measures on every
// pair: the copy engine's one way (its pair tests of each direction),
// the health of every link. The rest
// keeps a large domain's results file small. Measured on nvl72 (5,112
// pairs): every matrix test on every pair makes hundreds of megabytes, the
// pairs' parts of the group tests 41 MB, the size sweeps of 146 pairs
// 13 MB, the detail tests of 146 pairs (two peers per device) 11 MB. So a
// sampled plan draws one peer per device, measures the other matrices on
// the detail pairs, records the group tests' totals only, and sweeps sizes
// on the representatives, the shape of a class's curve.
var sampledEveryPair = []results.Test{pairTest(results.EngineCopy, results.DirRead), pairTest(results.EngineCopy, results.DirWrite)}

// pairTest is results.PairTest of a shape the catalogue must have.
func pairTest(engine results.Engine, dir results.Direction) results.Test {
	t, ok := results.PairTest(engine, dir)
	if !ok {
		panic(fmt.Sprintf("bench: the catalogue has no pair test of engine %s, direction %q", engine, dir))
	}
	return t
}

// NewPlan plans a run on topo: its link classes and the pairs measured in
// detail. The matrices at the transfer size cover every pair (on a sampled
// plan, those of sampledEveryPair; the others the detail pairs); the size sweeps, latency, atomics, copies without peer access and
// the tests across processes take the plan's detail pairs.
func NewPlan(topo *results.Topology, o PlanOptions) *results.Plan {
	p := &results.Plan{Mode: results.PlanRepresentatives, Classes: Classify(topo)}
	if topo == nil {
		return p
	}
	n := len(topo.Devices)
	if o.Peers == 0 && !o.AllPairs && n > results.SampleAbove {
		o.Peers = results.DefaultPeers
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	seen := map[results.PairID]bool{}
	add := func(q results.PairID) {
		if !seen[q] {
			seen[q] = true
			p.Detail = append(p.Detail, q)
		}
	}
	switch {
	case o.AllPairs:
		p.Mode = results.PlanAllPairs
		for _, q := range topo.Pairs {
			add(results.PairID{q.Src, q.Dst})
		}
		return p
	case o.Peers > 0:
		p.Mode, p.PeersPerDevice, p.Seed = results.PlanSampled, min(o.Peers, n-1), o.Seed
		p.EveryPair, p.GroupTotalsOnly = sampledEveryPair, true
	}
	// The detail tests need peer access: pairs without it take only the
	// copies staged through the host, which every such pair gets anyway.
	noPeer := map[results.PairID]bool{}
	for _, c := range p.Classes {
		for _, q := range c.Pairs {
			noPeer[q] = c.Name == noPeerClass
		}
		if c.Name == noPeerClass {
			continue
		}
		for _, q := range c.Representatives {
			add(q)
		}
	}
	for i, d := range topo.Devices {
		rng := rand.New(rand.NewPCG(p.Seed, uint64(d)))
		others := slices.Delete(slices.Clone(topo.Devices), i, i+1)
		rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
		drawn := 0
		for _, peer := range others {
			if q := (results.PairID{d, peer}); drawn < p.PeersPerDevice && !noPeer[q] {
				add(q)
				drawn++
			}
		}
	}
	slices.SortFunc(p.Detail, func(a, b results.PairID) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return p
}

// AcrossProcesses are the pairs a plan measures across processes: its
// detail pairs, on a sampled plan its representatives (the process
// boundary, not the link, is what those tests add), and the devices they
// need, in the order of devs.
func AcrossProcesses(p *results.Plan, devs []int) ([]results.PairID, []int) {
	pairs := p.Detail
	if p.Mode == results.PlanSampled {
		pairs = nil
		for _, c := range p.Classes {
			if c.Name != noPeerClass {
				pairs = append(pairs, c.Representatives...)
			}
		}
	}
	used := map[int]bool{}
	for _, q := range pairs {
		used[q[0]], used[q[1]] = true, true
	}
	var out []int
	for _, d := range devs {
		if used[d] || len(used) == 0 && len(out) == 0 {
			out = append(out, d)
		}
	}
	return pairs, out
}

// groups splits the ordered pairs of devs into groups measured at once: the
// rounds of a round-robin tournament (every unordered pair once, no device
// twice in a round), each round split by link class and direction; a pair
// of a class that is not concurrent (or of none) is a group of its own.
// Every ordered pair of devs is in exactly one group.
func groups(devs []int, classes []results.LinkClass) [][]results.PairID {
	class := map[results.PairID]int{}
	for i, c := range classes {
		for _, q := range c.Pairs {
			class[q] = i
		}
	}
	var out [][]results.PairID
	for _, round := range tournament(devs) {
		for dir := range 2 {
			byClass := map[int][]results.PairID{}
			var order []int
			for _, u := range round {
				q := results.PairID{u[dir], u[1-dir]}
				c, ok := class[q]
				switch {
				case !ok || !classes[c].Concurrent:
					out = append(out, []results.PairID{q})
					continue
				case byClass[c] == nil:
					order = append(order, c)
				}
				byClass[c] = append(byClass[c], q)
			}
			for _, c := range order {
				out = append(out, byClass[c])
			}
		}
	}
	return out
}

// tournament is the circle method's schedule of devs: len(devs)-1 rounds
// (one more for an odd count), each pairing every device with another at
// most once, every two devices meeting in exactly one round.
func tournament(devs []int) [][][2]int {
	pos := slices.Clone(devs)
	if len(pos)%2 == 1 {
		pos = append(pos, -1)
	}
	n := len(pos)
	var out [][][2]int
	for range n - 1 {
		var round [][2]int
		for i := range n / 2 {
			a, b := pos[i], pos[n-1-i]
			if a >= 0 && b >= 0 {
				round = append(round, [2]int{min(a, b), max(a, b)})
			}
		}
		out = append(out, round)
		// Keep the first device in place and turn the others by one.
		pos = append([]int{pos[0], pos[n-1]}, pos[1:n-1]...)
	}
	return out
}
