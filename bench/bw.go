package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// flow is one directed copy of a test: its figure template and its transfer.
// An end in pinned host memory has no device (src or dst nil): its bytes
// are srcHost or dstHost, mapped at srcPtr or dstPtr.
type flow struct {
	fig              results.Figure
	issuer           *measure.Device
	src              *measure.Device
	dst              *measure.Device
	srcPtr           cuda.DevicePtr
	dstPtr           cuda.DevicePtr
	srcHost, dstHost []byte
	size             uint64
	seed             uint32
	sm               measure.SMConfig
}

// transfer is the flow's transfer: the SM copy kernel launched on the
// issuer (measure.SMCopy: from measure.InKernelRepsFrom, a window is one
// launch that repeats the copy), or a copy-engine copy issued in its
// context (a peer copy between two devices, a copy by address to or from
// the host). Staged copies (no peer access) go through the host and block
// it until the stream reaches them: they cannot wait behind a latch.
func (fl flow) transfer() (measure.Transfer, error) {
	t := measure.Transfer{Dev: fl.issuer, Unlatched: fl.fig.Engine == results.EngineStaged}
	switch {
	case fl.fig.Engine.IsSM():
		return fl.issuer.SMCopy(fl.sm, fl.dstPtr, fl.srcPtr, fl.size)
	case fl.src == nil || fl.dst == nil:
		t.Op = fl.issuer.Copy(fl.dstPtr, fl.srcPtr, fl.size)
	default:
		t.Op = fl.issuer.PeerCopy(fl.dstPtr, fl.dst.Primary, fl.srcPtr, fl.src.Primary, fl.size)
	}
	return t, nil
}

// unheldPull says whether the flow is a copy-engine pull between two
// devices below results.UnheldPullBelow.
func (fl flow) unheldPull() bool {
	return fl.fig.Engine == results.EngineCopy && fl.src != nil && fl.dst != nil && fl.issuer == fl.dst && fl.size < results.UnheldPullBelow
}

// check verifies the data the flow moved against its seed, on the GPU: a
// destination in host memory is read by the issuer through its device
// address. The check kernel reads a 512 MiB destination in host memory in
// about 10 ms over PCIe, where the host's own pass over it takes tenths of
// a second (docs/findings.md, "Behind the code").
func (fl flow) check() error {
	if fl.dst == nil {
		return fl.issuer.Check(fl.dstPtr, fl.size, fl.seed)
	}
	return fl.dst.Check(fl.dstPtr, fl.size, fl.seed)
}

// sum is a figure that totals some of a group's flows (of: their indices;
// nil: every flow), such as a both-ways test's total.
type sum struct {
	fig results.Figure
	of  []int
}

// flows lists the indices of the flows s totals among n.
func (s sum) flows(n int) []int {
	if s.of != nil {
		return s.of
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// shareSMs splits a device's SMs between the SM copies that run on it at
// once (measured on an H200: two full grids, host→device and device→host,
// ran one after the other, so each direction's figure swung by ±20% from
// sample to sample while their total was one direction's), and says so in
// their figures and the totals over them.
func shareSMs(flows []flow, sums []sum) {
	on := map[*measure.Device]int{}
	for _, fl := range flows {
		if fl.fig.Engine.IsSM() {
			on[fl.issuer]++
		}
	}
	for i := range flows {
		fl := &flows[i]
		if n := on[fl.issuer]; fl.fig.Engine.IsSM() && n > 1 {
			fl.sm.Share = n
			fl.fig.Params = measure.WithParam(fl.fig.Params, measure.ParamSMShare, fl.sm.Params()[measure.ParamSMShare])
			for j := range sums {
				if slices.Contains(sums[j].flows(len(flows)), i) {
					sums[j].fig.Params = measure.WithParam(sums[j].fig.Params, measure.ParamSMShare, fl.fig.Params[measure.ParamSMShare])
				}
			}
		}
	}
}

// measureFlows runs flows concurrently and records their figures.
func (e *Engine) measureFlows(ctx context.Context, flows []flow, sums ...sum) {
	for _, f := range e.flowFigures(ctx, flows, e.roundSamples, sums...) {
		e.add(f)
	}
}

// roundSamples is this round's part of the samples of a figure with timing tm.
func (e *Engine) roundSamples(tm measure.Timing) int {
	return e.share(tm.Samples(e.opt.Samples, e.rounds))
}

// flowFigures runs flows concurrently: prepares and verifies their data
// (in the first round), times them with the samples that samples gives for
// their timing, and returns one figure per flow, then one per sum. A
// failure fails every figure of the group; a cancelled run, or a round
// with no samples for them, returns none.
func (e *Engine) flowFigures(ctx context.Context, flows []flow, samples func(measure.Timing) int, sums ...sum) []results.Figure {
	shareSMs(flows, sums)
	ts, err := e.prepareFlows(flows)
	if err != nil {
		return failFlows(flows, sums, err)
	}
	target := measure.SampleTarget
	for _, fl := range flows {
		if fl.src == nil || fl.dst == nil {
			target = measure.HostSampleTarget
		}
	}
	wins := e.trafficWindows(flows)
	tm, err := e.timing(ctx, fmt.Sprintf("%s|%d flows", flows[0].fig.Key(), len(flows)), ts, target)
	if err != nil {
		return failFlows(flows, sums, err)
	}
	tm.Held = held(flows)
	n := samples(tm)
	if n == 0 {
		return nil
	}
	var ms [][]float64
	if len(flows) == 1 && flows[0].unheldPull() {
		ms, err = e.unheldSamples(ctx, ts[0], tm, n)
		// The method check's plain windows are queued the same way.
		ts[0].Unlatched = true
		flows[0].fig.Params = measure.WithParam(flows[0].fig.Params, results.ParamQueue, results.QueueUnheld)
	} else {
		ms, err = e.timer.Measure(ctx, ts, tm, n)
	}
	if err != nil {
		return failFlows(flows, sums, err)
	}
	for _, w := range wins {
		w.End()
	}
	out := e.checkFlows(flows, ms, tm)
	plain, reps := e.methodCheck(ctx, flows[0].fig, ts, tm, ms)
	for i := range plain {
		out[i].Check = measure.NewCheck(measure.GBps(flows[i].size, plain[i]), reps)
	}
	for _, su := range sums {
		out = append(out, e.sumFigure(su, flows, out, ms, plain, reps, tm))
	}
	for i := range out {
		if len(out[i].Samples) > 0 {
			out[i].Stats = figstats.ComputeStats(out[i].Samples)
		}
	}
	for _, w := range wins {
		w.Attach(out)
	}
	return out
}

// held says whether flows take held windows (measure.Timing.Held; see
// heldOn).
func held(flows []flow) bool {
	devs := map[*measure.Device]bool{}
	for _, fl := range flows {
		devs[fl.issuer] = true
	}
	return heldOn(flows[0].fig.Test, len(devs))
}

// heldOn says whether test, run on devices devices at once, takes held
// windows: two devices or more copying to and from the host at once, whose
// directions run at rates far apart (host_all_both_ways_held). One
// device's two directions end together, held or not (on one H200 both
// timings read what nvbandwidth reads), and its windows are not held.
func heldOn(test results.Test, devices int) bool {
	sh := test.Info().Shape
	return devices > 1 && sh.Ends == results.EndsHostBothWays && sh.AllDevices
}

// failFlows is every figure of flows and sums failed with err; none when
// the run was cancelled.
func failFlows(flows []flow, sums []sum, err error) []results.Figure {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	var out []results.Figure
	for _, fl := range flows {
		out = append(out, measure.Fail(fl.fig, err))
	}
	for _, t := range sums {
		out = append(out, measure.Fail(t.fig, err))
	}
	return out
}

// trafficWindows opens the NVLink counter windows of flows' links, in the
// first round and at the run's transfer size only, where the matrices, the
// tests across processes and the report's "On the wire" are (a reading of
// both devices takes tens of ms). Not for the figures of many pairs at once
// (all to one, all pairs): their pairs' links carry what the pairs' own
// figures measured the wire of.
func (e *Engine) trafficWindows(flows []flow) []*measure.Window {
	var wins []*measure.Window
	if e.round == 0 && flows[0].fig.Part != results.PartPair {
		for _, l := range linkPairs(flows) {
			if l.size == e.opt.Size {
				wins = append(wins, e.traffic.Begin(l.src, l.dst, l.size))
			}
		}
	}
	if len(wins) == 0 {
		// Traffic outside any counter window (measure.Meter.Invalidate).
		e.traffic.Invalidate()
	}
	return wins
}

// sumFigure is the total of su's flows, from their times ms (and the
// method check's plain windows plain, of reps copies), verified where each
// of its flows' figures out is.
func (e *Engine) sumFigure(su sum, flows []flow, out []results.Figure, ms, plain [][]float64, reps int, tm measure.Timing) results.Figure {
	t := su.fig
	t.Verify = results.VerifySkipped
	if e.verifying() {
		t.Verify = results.VerifyPassed
	}
	var sizes []uint64
	var times [][]float64
	for _, i := range su.flows(len(flows)) {
		sizes, times = append(sizes, flows[i].size), append(times, ms[i])
		if out[i].Verify == results.VerifyFailed {
			t.Verify = results.VerifyFailed
		}
	}
	total := measure.TotalGBps
	if tm.Held {
		total = measure.SumGBps
	}
	t.Samples = total(sizes, times)
	t.Params = tm.Record(t.Params)
	if plain != nil {
		var pt [][]float64
		for _, i := range su.flows(len(flows)) {
			pt = append(pt, plain[i])
		}
		t.Check = measure.NewCheck(total(sizes, pt), reps)
	}
	return t
}

// prepareFlows writes the pattern into every source and poisons every
// destination (when verifying), and returns the flows' transfers.
func (e *Engine) prepareFlows(flows []flow) ([]measure.Transfer, error) {
	// Flows that read the same source buffer (one_to_all, all_pairs) share
	// one pattern, written once over the longest of their ranges: filling it
	// per flow would leave only the last seed in place.
	type source struct {
		dv *measure.Device
		p  cuda.DevicePtr
	}
	span := map[source]uint64{}
	host := map[source]flow{} // of a source in host memory, the flow that reads most of it
	for _, fl := range flows {
		k := source{fl.src, fl.srcPtr}
		span[k] = max(span[k], fl.size)
		if len(fl.srcHost) > len(host[k].srcHost) {
			host[k] = fl
		}
	}
	seeds := map[source]uint32{}
	if e.verifying() {
		for k, n := range span {
			if k.dv == nil {
				var err error
				if seeds[k], err = e.hostSource(host[k].srcHost, k.p, host[k].issuer); err != nil {
					return nil, err
				}
				continue
			}
			seeds[k] = e.seeds.Next()
			if err := k.dv.Fill(k.p, n, seeds[k]); err != nil {
				return nil, err
			}
		}
	}
	ts := make([]measure.Transfer, len(flows))
	for i, fl := range flows {
		t, err := fl.transfer()
		if err != nil {
			return nil, err
		}
		ts[i] = t
		if e.verifying() {
			flows[i].seed = seeds[source{fl.src, fl.srcPtr}]
			// Host memory too is poisoned by the GPU, through its device
			// address: a memset over PCIe beats the CPU's pass over it.
			poisoner := fl.dst
			if poisoner == nil {
				poisoner = fl.issuer
			}
			if err := poisoner.Poison(fl.dstPtr, fl.size); err != nil {
				return nil, err
			}
		}
	}
	return ts, nil
}

// checkFlows makes the figures of timed flows: their samples, and the
// verification of the data each moved.
func (e *Engine) checkFlows(flows []flow, ms [][]float64, tm measure.Timing) []results.Figure {
	var out []results.Figure
	for i, fl := range flows {
		f := fl.fig
		f.Samples = measure.GBps(fl.size, ms[i])
		f.Params = tm.Record(f.Params)
		f.Verify = results.VerifySkipped
		if e.verifying() {
			f.Verify = results.VerifyPassed
			if err := fl.check(); err != nil {
				f.Verify = results.VerifyFailed
				f.VerifyDetail = err.Error()
				var mm *measure.Mismatch
				if !errors.As(err, &mm) {
					f.Error = "verification could not run: " + err.Error()
					f.ErrorName = cuda.NameOf(err)
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// link is two devices whose NVLink counters a group of flows reads: src
// and dst of its first flow between them, and its largest transfer.
type link struct {
	src, dst int
	size     uint64
}

// linkPairs says which devices' links a group of flows uses: each flow
// between two devices, one way or both, and no device in two of the pairs
// (one pair's flows, or pairs measured at once that share no device), so
// each device's counters count its pair's traffic alone. Other groups
// (aggregates, host copies, staged copies) give none.
func linkPairs(flows []flow) []link {
	var out []link
	at := map[*measure.Device]int{} // a device's link in out, by either end
	for _, fl := range flows {
		if fl.src == nil || fl.dst == nil || fl.fig.Engine == results.EngineStaged {
			return nil
		}
		i, ok := at[fl.src]
		j, okd := at[fl.dst]
		switch {
		case !ok && !okd:
			at[fl.src], at[fl.dst] = len(out), len(out)
			out = append(out, link{fl.src.Index, fl.dst.Index, fl.size})
		case ok && okd && i == j:
			out[i].size = max(out[i].size, fl.size)
		default:
			return nil
		}
	}
	return out
}

// pairFlow builds the flow of test (ce_*, sm_*, nop2p_copy) for data moving
// s → d, issued by d (read) or s (write).
func (e *Engine) pairFlow(test results.Test, dir results.Direction, s, d *measure.Device, size uint64, srcPtr, dstPtr cuda.DevicePtr) flow {
	fl := flow{
		fig:    results.Figure{Test: test, Engine: results.EngineCopy, Direction: dir, Src: s.Index, Dst: d.Index, Size: size, Unit: results.UnitGBps},
		issuer: d, src: s, dst: d, srcPtr: srcPtr, dstPtr: dstPtr, size: size,
	}
	if dir == results.DirWrite {
		fl.issuer = s
	}
	switch sm, _ := measure.CopyOf(test); {
	case test.Info().Shape.Engine == results.EngineStaged:
		fl.fig.Engine = results.EngineStaged
	case sm:
		fl.sm = e.opt.SMForTest(test, s.Index, d.Index, measure.TuneDirection(dir, test.Info().BothWays), size)
		fl.fig.Engine, fl.fig.Params = fl.sm.Engine(), fl.sm.FigureParams(size)
	}
	return fl
}

// uniPair measures a one-direction test on s → d at size.
func (e *Engine) uniPair(ctx context.Context, test results.Test, s, d *measure.Device, size uint64) {
	_, dir := measure.CopyOf(test)
	e.measureFlows(ctx, []flow{e.pairFlow(test, dir, s, d, size, s.Send, d.Recv)})
}

// bothWays measures both directions between each pair of pairs at once
// (pairs that share no device), by dir; each pair's total sums its two
// flows.
func (e *Engine) bothWays(ctx context.Context, test results.Test, dir results.Direction, pairs [][2]*measure.Device, size uint64) {
	var flows []flow
	var sums []sum
	for _, p := range pairs {
		s, d := p[0], p[1]
		fwd := e.pairFlow(test, dir, s, d, size, s.Send, d.Recv)
		fwd.fig.Part = results.PartForward
		rev := e.pairFlow(test, dir, d, s, size, d.Send, s.Recv)
		rev.fig.Part = results.PartReverse
		// Both parts are filed under the pair (s, d) of the matrix.
		rev.fig.Src, rev.fig.Dst = s.Index, d.Index
		tot := fwd.fig
		tot.Part = results.PartTotal
		sums = append(sums, sum{fig: tot, of: []int{len(flows), len(flows) + 1}})
		flows = append(flows, fwd, rev)
	}
	e.measureFlows(ctx, flows, sums...)
}

// localCopy measures a device-to-device copy within dv.
func (e *Engine) localCopy(ctx context.Context, test results.Test, dv *measure.Device, size uint64) {
	f := results.Figure{Test: test, Engine: results.EngineCopy, Src: dv.Index, Dst: dv.Index, Size: size, Unit: results.UnitGBps}
	var seed uint32
	if e.verifying() {
		seed = e.seeds.Next()
		err := dv.Fill(dv.Send, size, seed)
		if err == nil {
			err = dv.Poison(dv.Recv, size)
		}
		if err != nil {
			e.add(measure.Fail(f, err))
			return
		}
	}
	e.timeOne(ctx, f, measure.Transfer{Dev: dv, Op: dv.Copy(dv.Recv, dv.Send, size)}, measure.SampleTarget,
		func() error { return dv.Check(dv.Recv, size, seed) })
}

// timing is the timing of a group of transfers, calibrated for samples
// of about target in its first round and kept, by key, for the others.
func (e *Engine) timing(ctx context.Context, key string, ts []measure.Transfer, target time.Duration) (measure.Timing, error) {
	if tm, ok := e.timings[key]; ok {
		return tm, nil
	}
	longest, err := e.timer.Longest(ctx, ts)
	if err != nil {
		return measure.Timing{}, err
	}
	tm := measure.SteadyTimingFor(longest, target)
	if shareDevice(ts) {
		tm = measure.TimingFor(longest, target)
	}
	e.timings[key] = tm
	return tm, nil
}

// shareDevice says whether two of the transfers are issued on one device.
// Such transfers (host copies both ways, SM copies splitting a device's
// SMs) take plain samples, one window each: measured on an H200 at
// 512 MiB, host copies both ways in windows of four back-to-back copies
// moved from round to round by 1–4% (copy engine) and 4–8% (SM copies,
// whose later launches found the SMs the other direction's kernels had
// freed), in windows of one copy by 0.1% and 0.3–0.7%.
func shareDevice(ts []measure.Transfer) bool {
	seen := map[*measure.Device]bool{}
	for _, t := range ts {
		if seen[t.Dev] {
			return true
		}
		seen[t.Dev] = true
	}
	return false
}

// timeOne times a single-transfer figure with samples of about target and
// verifies it with check (in the first round).
func (e *Engine) timeOne(ctx context.Context, f results.Figure, t measure.Transfer, target time.Duration, check func() error) {
	ts := []measure.Transfer{t}
	tm, err := e.timing(ctx, f.Key(), ts, target)
	samples := e.roundSamples(tm)
	if err == nil && samples == 0 {
		return
	}
	if err == nil {
		var ms [][]float64
		ms, err = e.timer.Measure(ctx, ts, tm, samples)
		if err == nil {
			f.Samples = measure.GBps(f.Size, ms[0])
			f.Params = tm.Record(f.Params)
			if plain, reps := e.methodCheck(ctx, f, ts, tm, ms); plain != nil {
				f.Check = measure.NewCheck(measure.GBps(f.Size, plain[0]), reps)
			}
		}
	}
	if err != nil {
		e.addResult(err, f)
		return
	}
	f.Verify = results.VerifySkipped
	if e.verifying() {
		f.Verify = results.VerifyPassed
		if err := check(); err != nil {
			f.Verify, f.VerifyDetail = results.VerifyFailed, err.Error()
		}
	}
	e.add(f)
}

// aggregate measures concurrent copies over the given pairs in direction
// dir; test is all_to_one, one_to_all, all_pairs or an SM twin. Each
// destination receives into its own slot of the receive buffer.
func (e *Engine) aggregate(ctx context.Context, test results.Test, dir results.Direction, pairs [][2]int, size uint64) {
	n := len(e.order)
	slot := aggregateSlot(e.devs[e.order[0]].BufBytes, n)
	size = min(size, slot)
	index := map[int]int{}
	for i, d := range e.order {
		index[d] = i
	}
	sm, _ := measure.CopyOf(test)
	var flows []flow
	for _, p := range pairs {
		s, d := e.devs[p[0]], e.devs[p[1]]
		// Source slot: position of s among d's senders.
		k := index[s.Index]
		if k > index[d.Index] {
			k--
		}
		fl := e.pairFlow(oneWayTest(sm, dir), dir, s, d, size, s.Send, d.Recv+cuda.DevicePtr(uint64(k)*slot))
		fl.fig.Test, fl.fig.Part = test, results.PartPair
		flows = append(flows, fl)
	}
	tot := flows[0].fig
	tot.Part, tot.Src, tot.Dst = results.PartTotal, results.HostDevice, results.HostDevice
	tot.Params = measure.WithParam(tot.Params, "pairs", strconv.Itoa(len(pairs)))
	switch test.Info().Shape.Ends {
	case results.EndsIntoOne:
		tot.Dst = pairs[0][1]
	case results.EndsOutOfOne:
		tot.Src = pairs[0][0]
	}
	// Peer access for every pair (both ways: the copy engine may need either).
	var ok []flow
	for _, fl := range flows {
		if err := e.enablePair(fl.src, fl.dst); err != nil {
			e.add(measure.Fail(fl.fig, err))
			continue
		}
		ok = append(ok, fl)
	}
	if len(ok) > 0 {
		for _, f := range e.flowFigures(ctx, ok, e.roundSamples, sum{fig: tot}) {
			if f.Part != results.PartPair || !e.sched.GroupTotalsOnly {
				e.add(f)
			}
		}
	} else {
		e.add(measure.Fail(tot, errors.New("no pair of the group has peer access")))
	}
	for _, fl := range ok {
		e.releasePair(fl.src, fl.dst)
	}
}

// aggregateSlot is the part of a receive buffer of bufBytes that each of
// the other devices of n copies into in a group test.
func aggregateSlot(bufBytes uint64, n int) uint64 {
	return roundDown(bufBytes/uint64(max(1, n-1)), 256)
}

// oneWayTest is the one-way pair test with peer access that copies as sm
// and dir say, with the run's kernel (results.PairTest).
func oneWayTest(sm bool, dir results.Direction) results.Test {
	engine := results.EngineCopy
	if sm {
		engine = results.EngineSM
	}
	return pairTest(engine, dir)
}

func roundDown(n, a uint64) uint64 { return n / a * a }
