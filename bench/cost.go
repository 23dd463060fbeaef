package bench

import (
	"time"

	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// The estimate of a plan's duration (Preview): each bandwidth figure takes
// its round's samples, each about measure.SampleTarget or one copy if
// longer, queued behind as few latches as the batches allow, plus one
// calibration sample in the first round, at a bandwidth guessed from the
// topology; the other steps a fixed time each; the NVLink counter readings
// of the first round; the tests across processes; and what a run costs
// around its measurements. The fixed costs are read off the traces
// (P2PBENCH_TRACE) of runs of all on a 2× H100 NV18 (docs/performance.md):
// the estimate is as good as that machine is like the one measured.
const (
	// perHold is one latched batch of samples: the latch launched, the
	// copies queued, the release, the wait for the events.
	perHold = 150 * time.Microsecond
	// perFigure is the fixed cost of one figure in a round, the results
	// kept; firstRound what a figure's first round adds: its calibration,
	// the pattern written and checked, buffers allocated (the 2× H100's
	// first rounds took 3.3 s more than the others, 1 s of it counter
	// readings, for about 400 figures).
	perFigure  = 200 * time.Microsecond
	firstRound = 5 * time.Millisecond
	// checkCost is the method check of one family in the last round: two
	// plain windows of about 20 ms behind a warm-up copy.
	checkCost = 50 * time.Millisecond
	// latencyStepCost is one round of a ping-pong or of a chase within L2;
	// chaseBeyondCost of a chase beyond it (its chains, each warmed
	// first); hostChaseCost of the chase through host memory;
	// atomicTputCost of the atomic throughput of a pair (local or peer:
	// 17-33 ms on the 2× H100), atomicLatencyCost of its atomic latency
	// (15-42 ms).
	latencyStepCost = 12 * time.Millisecond
	// pingPongCost is one round of a pair's ping-pong: two kernels, each
	// a launch at every flag slot of twice PingRoundTrips round trips
	// (about 2.5 µs each between two H200s) and its start (about 60 µs);
	// worked out from those, not yet read off a trace.
	pingPongCost      = 2 * measure.FlagSlots * (2*measure.PingRoundTrips*2500*time.Nanosecond + 60*time.Microsecond)
	chaseBeyondCost   = 12 * time.Millisecond
	hostChaseCost     = 19 * time.Millisecond
	atomicTputCost    = 21 * time.Millisecond
	atomicLatencyCost = 27 * time.Millisecond
	// copyLatencyCost is one round of the small-copy latencies of a pair:
	// 55 ms on the 2× H100 (four sizes, both ways, three tests, the
	// back-to-back copies queued twice).
	copyLatencyCost = 55 * time.Millisecond
	// tuneCost is one search of the SM copy configurations.
	tuneCost = 2 * time.Second
	// counterReading is one reading of both devices' NVLink counters (4.5
	// ms on the 2× H100 since the sums over every link are read, 22 ms
	// before): a step's windows back to back take one each, and one more
	// for the first one's start (measure.Meter).
	counterReading = 4500 * time.Microsecond
	// runCost is what a run spends around its measurements: starting,
	// discovering the machine, writing the results, judging and printing.
	runCost = 900 * time.Millisecond
	// Across processes: starting the children and mapping their memory,
	// and stopping them (ipcStart: 0.4 and 0.3 s on the 2× H100), and
	// each figure's round, the requests to the children
	// around its copies (ipcPerFigure).
	ipcStart     = 650 * time.Millisecond
	ipcPerFigure = 9 * time.Millisecond
	// pairEfficiency is the share of a link's theoretical bandwidth a copy
	// reaches; localGBps a copy within a device's memory; defaultGBps the
	// guess where the topology gives none (a PCIe Gen4 link).
	pairEfficiency = 0.87
	// stagedShare is the share of the host link's bandwidth a copy staged
	// through host memory reaches (no peer access): 37.5-38.4 GB/s on the
	// 2× H100s, whose host copies ran at 55.
	stagedShare = 0.69
	localGBps   = 1400
	defaultGBps = 25
)

// chaseCost is one round of a chase of ws bytes of owner's memory: its
// chains beyond L2, one within (measure.ChainShares).
func (e *Engine) chaseCost(owner *measure.Device, ws uint64) time.Duration {
	l2 := uint64(owner.Info.L2CacheBytes)
	if l2 == 0 {
		l2 = 128 << 20 // a plan's preview knows no device: more than any L2 so far
	}
	if ws > l2 {
		return chaseBeyondCost
	}
	return latencyStepCost
}

// copyCost is one round of figs bandwidth figures measured one after the
// other, each one copy taking copyNs nanoseconds.
func (e *Engine) copyCost(figs int, copyNs float64) time.Duration {
	return e.samplesCost(figs, copyNs, measure.SampleTarget)
}

// samplesCost is one round of figs figures of one copy of copyNs each,
// timed as the figures will be (measure.SteadyTimingFor): the round's
// samples of Reps copies behind Warmup ones and the fit's short window,
// queued in batches behind latches, and the first round's calibration copy
// spread over the rounds.
func (e *Engine) samplesCost(figs int, copyNs float64, target time.Duration) time.Duration {
	c := time.Duration(copyNs)
	tm := measure.SteadyTimingFor(copyNs/1e6, target)
	n := e.roundSamples(tm)
	copies := n*(tm.Reps+tm.Warmup) + tm.Short*(1+max(tm.Warmup, 1))
	holds := max(1, (n*(tm.Reps+tm.Warmup+3)+measure.BatchOps-1)/measure.BatchOps)
	round := time.Duration(copies)*c + time.Duration(holds)*perHold + (c+perHold+firstRound)/time.Duration(max(1, e.rounds))
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
	// On the 2× H100 a group's step took 17-20 ms a round.
	return e.copyCost(dirs, float64(busiest)*float64(size)/e.pairGBps(q))
}

// hostCost is one round of a host bandwidth test: one copy's time, as the
// directions and the devices' links run side by side; both ways at once
// take windows of one copy, three samples a round, and the directions slow
// each other (the 2× H100: 44-63 ms a round against 14-29 for one way);
// held windows (measure.Timing.Held) copy 2 + HeldTail times as much a
// sample.
func (e *Engine) hostCost(bothWays, held bool) time.Duration {
	c := e.samplesCost(1, float64(e.opt.Size)/e.hostGBps(), measure.HostSampleTarget)
	if bothWays {
		c *= 2
	}
	if held {
		c *= 2 + measure.HeldTail
	}
	return c
}

// ipcCost is the tests across processes of a plan: the children's start,
// and each figure's rounds on each pair (both ways of a pair take a figure
// each; the copy engine's figures twice, as the peer's buffer is opened in
// two places), with the counter readings of its first round.
func (e *Engine) ipcCost() time.Duration {
	var figs, windows int
	for _, t := range e.opt.Tests {
		if !t.IsIPC() {
			continue
		}
		n := 1
		sm, _ := measure.CopyOf(t)
		if !sm {
			n = 2
		}
		if t.Info().BothWays {
			n *= 2
		}
		figs += n
		if !sm {
			// Only the copy engine's figures read the counters (ipc/pairs.go).
			windows += n
		}
	}
	if figs == 0 {
		return 0
	}
	pairs, _ := AcrossProcesses(e.sched, e.order)
	per := time.Duration(len(pairs)*figs)*time.Duration(e.rounds)*ipcPerFigure + time.Duration(len(pairs)*(windows+1))*counterReading
	return ipcStart + per
}

// countersCost is the NVLink counter readings of the first round: one
// window around each group of figures at the transfer size between two
// devices, about one per peer test and pair.
func (e *Engine) countersCost() time.Duration {
	if e.linkGBps == nil {
		return 0
	}
	var windows int
	for _, t := range e.peerTests() {
		n := 1
		if t.Info().BothWays {
			n = 2
		}
		windows += n
	}
	return time.Duration((windows+1)*len(e.linkGBps)) * counterReading
}

// checksCost is the run's method checks (check.go): one per family of the
// peer tests at the transfer size and, for the one-way tests, at the
// smallest size of the sweep, and one for the local copy.
func (e *Engine) checksCost() time.Duration {
	n := 0
	for _, t := range e.peerTests() {
		switch {
		case t.Info().BothWays:
			n += 2
		case len(e.opt.Sweep) > 0:
			n += 2
		default:
			n++
		}
	}
	n += len(e.localTests())
	return time.Duration(n) * checkCost
}
