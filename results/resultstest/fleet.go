package resultstest

import (
	"fmt"

	"github.com/p2pbench/p2pbench/results"
)

// Fleet describes many machines of one type, as an operator accepting a
// delivery runs p2pbench on each: the runs differ by their noise and by the
// problems planted in a few of them, which a fleet analysis should find and
// nothing else.
type Fleet struct {
	// Nodes is the number of machines.
	Nodes int
	// Node is every machine's run; Host, Seed, SlowPairs and Slowdown are
	// set per node. Keep it small (a few Tests, NoSweep) for large fleets.
	Node Options
	// Prefix starts every host name: Prefix + a four-digit node number
	// ("node0007" by default).
	Prefix string
	// Seed makes fleets differ; node i's run has seed Seed + i.
	Seed uint64
	// WeakLinks are the pairs slower than the model on given nodes.
	WeakLinks []WeakLink
	// SlowNodes are whole machines slower than the model.
	SlowNodes []SlowNode
}

// WeakLink is a pair of devices of one node with lower bandwidth both ways.
type WeakLink struct {
	Node int
	SlowPair
}

// SlowNode is a machine whose every figure is Percent worse than the model.
type SlowNode struct {
	Node    int
	Percent float64
}

// Host is the host name of node i.
func (f Fleet) Host(i int) string {
	prefix := f.Prefix
	if prefix == "" {
		prefix = "node"
	}
	return fmt.Sprintf("%s%04d", prefix, i)
}

// Run builds the run of node i (0 ≤ i < Nodes), with the problems planted in it.
func (f Fleet) Run(i int) *results.Run {
	o := f.Node
	o.Host = f.Host(i)
	o.Seed = f.Seed + uint64(i)
	o.SlowPairs = nil
	for _, w := range f.WeakLinks {
		if w.Node == i {
			o.SlowPairs = append(o.SlowPairs, w.SlowPair)
		}
	}
	for _, s := range f.SlowNodes {
		if s.Node == i {
			o.Slowdown = s.Percent
		}
	}
	return New(o)
}
