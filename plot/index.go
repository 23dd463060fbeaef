package plot

import (
	"sort"

	"github.com/p2pbench/p2pbench/results"
)

// index groups a run's figures once, so that each figure builder looks up
// what it needs instead of scanning every figure (a 72-GPU run has hundreds
// of thousands).
type index struct {
	run    *results.Run
	devs   []int
	byTest map[results.Test][]*results.Figure
	pairs  map[[2]int]results.Pair
	// limits are the limits of the paths the figures cross.
	limits results.PathLimits
	// matrixSize is the size of the pairwise matrices (Run.MatrixSize).
	matrixSize uint64
	// figureVerdicts are the run's figure verdicts by key; none for a run
	// without a verdict.
	figureVerdicts map[string]results.FigureVerdict
}

func newIndex(run *results.Run) *index {
	ix := &index{
		run:    run,
		devs:   run.DeviceIndices(),
		byTest: map[results.Test][]*results.Figure{},
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
		ix.byTest[f.Test] = append(ix.byTest[f.Test], f)
	}
	ix.matrixSize = run.MatrixSize()
	ix.limits = run.PathLimits()
	ix.figureVerdicts = map[string]results.FigureVerdict{}
	if v := run.Verdict; v != nil {
		for _, fv := range v.Figures {
			ix.figureVerdicts[fv.Key] = fv
		}
	}
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

// oneWayFigures returns the figures of the one-direction bandwidth tests
// between two devices (the catalogue's matrix tests that copy one way),
// through the copy engine or SM kernels: the staged copy is left out.
func (ix *index) oneWayFigures() []*results.Figure {
	var out []*results.Figure
	for _, info := range results.Catalogue() {
		if !info.Matrix || info.BothWays {
			continue
		}
		for _, f := range ix.byTest[info.Name] {
			if f.Engine != results.EngineStaged && f.Src >= 0 && f.Dst >= 0 && f.Src != f.Dst && f.Part == results.PartNone {
				out = append(out, f)
			}
		}
	}
	return out
}

// engineLabel names an engine for legends: "copy engine", "SM kernel v4_u4".
func engineLabel(engine results.Engine) string {
	switch {
	case engine == results.EngineCopy:
		return "copy engine"
	case engine.Variant() != "":
		return "SM kernel " + engine.Variant()
	case engine.IsSM():
		return "SM kernel"
	}
	return string(engine)
}

// directionLabel names a direction with its meaning.
func directionLabel(dir results.Direction) string {
	switch dir {
	case results.DirRead:
		return "read (pull)"
	case results.DirWrite:
		return "write (push)"
	}
	return string(dir)
}

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
