package bench

import (
	"time"

	"github.com/p2pbench/p2pbench/internal/measure"
	"github.com/p2pbench/p2pbench/results"
)

// The estimate of a plan's duration (Preview): each bandwidth figure takes
// its round's samples, each about measure.SampleTarget or one copy if
// longer, after a warm-up copy, plus one calibration sample, at a bandwidth
// guessed from the topology; the other steps a fixed time each. The
// constants are the simulator's model of an H200 machine (sim.Driver's
// Elapsed, step by step, on h200x2), so the estimate is only as good as
// that model.
const (
	// perSample is the fixed cost of one sample: the latch, the events,
	// the host waiting for them.
	perSample = 60 * time.Microsecond
	// perFigure is the fixed cost of one figure in a round: peer access,
	// the pattern written and checked (first round), the results kept.
	perFigure = 500 * time.Microsecond
	// latencyStepCost is one round of a latency step or of the atomic
	// throughput of a pair; atomicLatencyCost of the atomic latency.
	latencyStepCost   = 12 * time.Millisecond
	atomicLatencyCost = 45 * time.Millisecond
	// tuneCost is one search of the SM copy configurations.
	tuneCost = 2 * time.Second
	// pairEfficiency is the share of a link's theoretical bandwidth a copy
	// reaches; localGBps a copy within a device's memory; defaultGBps the
	// guess where the topology gives none (a PCIe Gen4 link).
	pairEfficiency = 0.87
	localGBps      = 1400
	defaultGBps    = 25
)

// copyCost is one round of figs bandwidth figures measured one after the
// other, each one copy taking copyNs nanoseconds.
func (e *Engine) copyCost(figs int, copyNs float64) time.Duration {
	return e.samplesCost(figs, copyNs, measure.SampleTarget)
}

// samplesCost is one round of figs figures of one copy of copyNs each,
// timed as the figures will be (measure.SteadyTimingFor): the round's
// samples of Reps copies behind Warmup ones, the fit's short window, and
// the first round's calibration copy spread over the rounds.
func (e *Engine) samplesCost(figs int, copyNs float64, target time.Duration) time.Duration {
	c := time.Duration(copyNs)
	tm := measure.SteadyTimingFor(copyNs/1e6, target)
	sample := time.Duration(tm.Reps+tm.Warmup)*c + perSample
	round := time.Duration(e.roundSamples(tm))*sample + time.Duration(tm.Short)*c + c/time.Duration(max(1, e.rounds))
	return time.Duration(figs) * (round + perFigure)
}

// pairGBps guesses the bandwidth of one copy s → d: the link's theoretical
// figure at pairEfficiency.
func (e *Engine) pairGBps(q results.PairID) float64 {
	if g := e.linkGBps[q]; g > 0 {
		return g * pairEfficiency
	}
	return defaultGBps
}

// hostGBps guesses the bandwidth of a copy between the host and a device.
func (e *Engine) hostGBps() float64 {
	if e.hostLinkGBps > 0 {
		return e.hostLinkGBps * pairEfficiency
	}
	return defaultGBps
}

// matrixCost is one round of tests on a group of pairs (q its first): each one-way test one figure's time, each both-ways test two
// (pulling, pushing) at half the bandwidth per direction's share.
func (e *Engine) matrixCost(q results.PairID, tests []results.Test) time.Duration {
	var figs int
	for _, t := range tests {
		figs++
		if t.Info().BothWays {
			figs++
		}
	}
	return e.copyCost(figs, float64(e.opt.Size)/e.pairGBps(q))
}

// sweepCost is one round of the size sweeps of tests one-way tests on s → d.
func (e *Engine) sweepCost(tests int, sizes []uint64, s, d int) time.Duration {
	var c time.Duration
	for _, z := range sizes {
		c += e.copyCost(tests, float64(z)/e.pairGBps(results.PairID{s, d}))
	}
	return c
}

// aggregateCost is one round of a group test over pairs in dirs
// directions: each copy of the size aggregate gives it, and the busiest
// device's port carries one per pair it is in.
func (e *Engine) aggregateCost(dirs int, pairs [][2]int) time.Duration {
	if len(pairs) == 0 {
		return 0
	}
	load := map[int]int{}
	busiest := 0
	for _, p := range pairs {
		load[p[0]]++
		load[p[1]]++
		busiest = max(busiest, load[p[0]], load[p[1]])
	}
	buf, _ := e.bufferBytes()
	size := min(e.opt.Size, aggregateSlot(buf, len(e.order)))
	q := results.PairID{pairs[0][0], pairs[0][1]}
	return e.copyCost(dirs, float64(busiest)*float64(size)/e.pairGBps(q))
}

// hostCost is one round of a host bandwidth test: one copy's time, as the
// directions and the devices' links run side by side.
func (e *Engine) hostCost() time.Duration {
	return e.samplesCost(1, float64(e.opt.Size)/e.hostGBps(), measure.HostSampleTarget)
}
