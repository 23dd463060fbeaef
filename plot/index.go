package plot

import (
	"sort"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// index groups a run's figures once, so that each figure builder looks up
// what it needs instead of scanning every figure (a 72-GPU run has hundreds
// of thousands).
type index struct {
	run    *results.Run
	devs   []int
	byTest map[string][]*results.Figure
	pairs  map[[2]int]results.Pair
	// matrixSize is the size of the pairwise matrices (Run.MatrixSize).
	matrixSize uint64
}

func newIndex(run *results.Run) *index {
	ix := &index{
		run:    run,
		devs:   run.DeviceIndices(),
		byTest: map[string][]*results.Figure{},
		pairs:  run.Topology.PairIndex(),
	}
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.OpenedOnPeerGPU() {
			// IPC copies with the peer's buffer opened on the peer's
			// device repeat a test's pairs; the figures draw the copies
			// one-GPU-per-process jobs make (the report tabulates both).
			continue
		}
		ix.byTest[string(f.Test)] = append(ix.byTest[string(f.Test)], f)
	}
	ix.matrixSize = run.MatrixSize()
	return ix
}

// rankOf returns the pair's performance rank, if the topology has one.
func (ix *index) rankOf(src, dst int) (int, bool) {
	p, ok := ix.pairs[[2]int{src, dst}]
	if !ok {
		return 0, false
	}
	return p.PerformanceRank()
}

// linkOf returns the pair's theoretical one-direction bandwidth, 0 if unknown.
func (ix *index) linkOf(src, dst int) float64 {
	return ix.pairs[[2]int{src, dst}].LinkGBps
}

// engineLabel names an engine for legends: "copy engine", "SM v4_u4".
func engineLabel(engine string) string {
	switch {
	case engine == "copy_engine":
		return "copy engine"
	case strings.HasPrefix(engine, "sm:"):
		return "SM kernel " + strings.TrimPrefix(engine, "sm:")
	case engine == "sm":
		return "SM kernel"
	}
	return engine
}

// directionLabel names a direction with its meaning.
func directionLabel(dir string) string {
	switch dir {
	case "read":
		return "read (pull)"
	case "write":
		return "write (push)"
	}
	return dir
}

// isLocal reports whether a figure stays on one device.
func isLocal(f *results.Figure) bool { return f.Src == f.Dst }

// param returns a figure's param or "".
func param(f *results.Figure, name string) string { return f.Params[name] }

// truthy reads the boolean-ish params the engine writes ("true", "1").
func truthy(s string) bool { return s == "true" || s == "1" }

// sortedKeys returns a map's keys in order.
func sortedKeys[K interface{ ~int | ~uint64 | ~string }, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}
