package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// The latch buffer of each device: the flag at offset 0, one status word per
// latch slot from offset 64.
const (
	latchBytes        = 4096
	latchStatusOffset = 64
	latchSlots        = (latchBytes - latchStatusOffset) / 4
)

// errLatchTimeout means a latch kernel gave up waiting for its release, so
// the work queued behind it may have started before everything was enqueued.
var errLatchTimeout = errors.New("latch timed out before release (the host took too long to enqueue, or the flag never reached the GPU)")

func hostWord(h cuda.HostBuffer, off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&h.Host[off]))
}

// arm clears the latch flag: latches launched from now on hold their streams.
func (dv *Device) arm() { atomic.StoreUint32(hostWord(dv.latch, 0), 0) }

// Release sets the latch flag: every stream the device's latch holds starts.
func (dv *Device) Release() {
	if dv.latch.Host != nil {
		atomic.StoreUint32(hostWord(dv.latch, 0), 1)
	}
}

// launchLatch clears the status word of slot and launches the latch kernel
// on s in c (the device's context, or the one Do passes).
func (dv *Device) launchLatch(c gpu.Context, f cuda.Function, s cuda.Stream, slot int, timeout time.Duration) error {
	status := latchStatusOffset + 4*slot
	atomic.StoreUint32(hostWord(dv.latch, status), 0)
	args := kernels.LatchArgs{
		Flag:      uint64(dv.latch.Device),
		Status:    uint64(dv.latch.Device) + uint64(status),
		TimeoutNs: uint64(timeout.Nanoseconds()),
	}
	if err := c.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, args.Params()...); err != nil {
		return fmt.Errorf("device %d: launching the latch: %w", dv.Index, err)
	}
	return nil
}

// latchTimedOut says whether the latch of slot gave up before its release.
func (dv *Device) latchTimedOut(slot int) error {
	if atomic.LoadUint32(hostWord(dv.latch, latchStatusOffset+4*slot)) == kernels.LatchTimedOut {
		return fmt.Errorf("device %d: %w", dv.Index, errLatchTimeout)
	}
	return nil
}

// Hold arms the device's latch and launches it on s: s waits until Release,
// or until timeout has passed (HeldTooLong then says so).
func (dv *Device) Hold(s cuda.Stream, timeout time.Duration) error {
	f, err := dv.Function(kernels.Latch)
	if err != nil {
		return err
	}
	dv.arm()
	if err := dv.launchLatch(dv.Ctx, f, s, 0, timeout); err != nil {
		dv.Release()
		return err
	}
	return nil
}

// HeldTooLong returns an error when the latch of Hold timed out before its release.
func (dv *Device) HeldTooLong() error { return dv.latchTimedOut(0) }

// WarmUp keeps every device busy for d at once (a latch kernel that is
// never released spins until its timeout), so that the first figures are
// not taken while the clocks climb out of idle. Meanwhile every device
// loads every module it can run (Preload), each on its own thread.
func WarmUp(devs []*Device, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	for _, dv := range devs {
		if err := dv.Hold(dv.streams[0], d); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	for _, dv := range devs {
		wg.Go(dv.Preload)
	}
	wg.Wait()
	var errs []error
	for _, dv := range devs {
		if err := dv.Ctx.StreamSynchronize(dv.streams[0]); err != nil {
			errs = append(errs, fmt.Errorf("device %d: %w", dv.Index, err))
		}
	}
	return errors.Join(errs...)
}

// Transfer is one stream of timed work (the copies of a flow in bench and
// ipc, a latency or atomics kernel): Op enqueues one repetition on the
// stream it is given, in Dev's context.
type Transfer struct {
	Dev *Device
	Op  func(s cuda.Stream) error
	// OpN, when set, enqueues n repetitions (n ≥ 1) as one operation (an SM
	// copy kernel that repeats its copy: SMCopy), which Enqueue then uses
	// for the warm-up and for the timed window: a window of n repetitions
	// is one launch, whose start and end cost is paid once, where n calls
	// of Op would pay it n times. A steady-state fit's short window is one
	// such launch too, of Short repetitions.
	OpN func(s cuda.Stream, n int) error
	// Prep, when set, is enqueued after the warm-up and before the start
	// event of every sample (resetting counters, say), outside the timing.
	Prep func(s cuda.Stream) error
	// Unlatched transfers are not held by a latch: staged copies block the
	// host until their stream reaches them, so a latch would only time out.
	Unlatched bool
	// Enqueued, when set on an unlatched transfer, is told how long the
	// host took to queue each sample's timed window (its start event, the
	// repetitions and its end event) on HostClock (the driver's: virtual on
	// a simulated machine): a window the GPU ran in about that time waited
	// for the host, not the GPU.
	Enqueued  func(took time.Duration)
	HostClock func() time.Duration
}

// Timing is how a sample is taken: Reps back-to-back repetitions between
// two events, after Warmup untimed ones. With Short > 0 a sample is steady
// state, a two-point fit of time against repetitions: every call of
// Measure first times one window of Short repetitions, and each sample's
// figure is (its window of Reps − that window) / (Reps − Short), the time of
// one repetition with the fixed start and end cost of a timed window (the
// first repetition's start, the last one's drain before the end event)
// taken out. Without, a sample is its window / Reps, which carries that
// cost divided by Reps.
type Timing struct {
	Reps, Warmup, Short int
	// Held says every window runs while every other transfer still copies:
	// before its start event each transfer makes Reps untimed repetitions
	// (so that no window starts with every transfer at once), after its end
	// event HeldTail × Reps more, and a sample ends once they have. Transfers that run at
	// different rates (the host's two directions under every device's
	// load) each read their rate under the others' load, where windows
	// timed alone at once let the faster end first and the slower finish
	// on a quieter path (nvbandwidth's interference copies of twice the
	// size serve the same end).
	Held bool
	// Few says a sample's repetitions take results.LongSample or more: such a
	// figure takes fewer samples (Samples).
	Few bool
}

// Target time of one sample, and the most operations queued behind one latch
// (a stream's queue holds about a thousand entries before enqueueing blocks).
// An eighth of a millisecond is 250 times an event's resolution (0.5 µs):
// 0.4%, below what small copies vary from round to round (1–6%). It keeps a
// steady-state sample of the smallest copies near 50 of them, so that the
// fit's short window and a round's three samples fit behind one latch
// (BatchOps), since a sweep of small copies otherwise spends as long in
// holds, releases and waits as on the GPU.
const (
	SampleTarget = 125 * time.Microsecond
	// HostSampleTarget is longer: PCIe copies vary more from one to the
	// next, and averaging two or more per sample keeps their spread near 1%
	// where a host path stalls a copy now and then (one copy a sample let
	// such stalls move a median by 17%: docs/findings.md, "Behind the
	// code").
	HostSampleTarget = 10 * time.Millisecond
	maxReps          = 200
	// noWarmup is the repetition time from which a steady-state sample has
	// no warm-up: a copy of 0.1 ms keeps the engines busy from its start,
	// and the fit takes out what the first one costs more.
	noWarmup = 0.1 // ms
)

// TimingFor picks the repetitions that make a sample about target long when
// the longest of the transfers running together takes longest milliseconds.
func TimingFor(longest float64, target time.Duration) Timing {
	reps := 1
	if longest > 0 {
		reps = int(math.Ceil(float64(target) / float64(time.Millisecond) / longest))
	}
	reps = max(1, min(reps, maxReps))
	warmup := min(reps, results.MaxWarmup)
	if longest >= float64(results.NoWarmupFrom)/float64(time.Millisecond) {
		// Transfers of milliseconds keep the engines busy from the first
		// one on; warming up before each sample would only double the time.
		warmup = 0
	}
	return Timing{Reps: reps, Warmup: warmup}
}

// SteadyTimingFor is the steady-state timing whose timed copies last about
// target, at least results.MinSteadyReps of them per sample: a two-point fit (see
// Timing) against one short repetition, unless the window of Reps lasts
// results.PlainWindow or more, where its start and end cost (µs) is lost in it and
// the fit's short window would only cost time. A fit's sample varies as
// √(Reps+Short)/(Reps−Short) repetitions do: 1.7× one repetition with 2,
// 0.75× with 4, so four are about as precise per repetition timed as the
// plain sample of one behind a warm-up was.
func SteadyTimingFor(longest float64, target time.Duration) Timing {
	tm := TimingFor(longest, target)
	if plain := time.Duration(float64(tm.Reps) * longest * float64(time.Millisecond)); plain >= results.PlainWindow {
		// The window the target asks for is long enough already: a plain
		// window of it (host copies of 512 MiB: two, 19 ms).
		tm.Warmup = 0
		tm.Few = plain >= results.LongSample
		return tm
	}
	tm.Reps = min(max(tm.Reps+1, results.MinSteadyReps), maxReps)
	window := time.Duration(float64(tm.Reps) * longest * float64(time.Millisecond))
	if window < results.PlainWindow {
		tm.Short = 1
		if tm.Reps >= 8 {
			// Two copies in the short window and an even number in the
			// long one: small pulls can cost less and more in turn, so a
			// short window of one copy would carry either turn into the
			// fit (docs/methods.md, "Steady state"). Where copies are that
			// short, the longer short window costs nothing.
			tm.Short = 2
			tm.Reps += tm.Reps % 2
			if tm.Reps > maxReps {
				tm.Reps -= 2
			}
		}
	}
	if longest >= noWarmup {
		tm.Warmup = 0
	}
	tm.Few = window >= results.LongSample
	return tm
}

// WindowTimingFor is the timing of plain windows (no fit) of at least
// results.MinSteadyReps repetitions lasting about target, as the tests across
// processes take them: a window of four 512 MiB copies carries a quarter of
// its start and end cost (a few µs: under 0.1%), where a sample of one copy
// carried all of it.
func WindowTimingFor(longest float64, target time.Duration) Timing {
	tm := SteadyTimingFor(longest, target)
	tm.Short = 0
	return tm
}

// The params of a figure that say how its samples were taken: repetitions
// per sample, and the repetitions of the short window of a steady-state fit
// (absent: no fit). SM copies say too whether each window was one launch
// (results.ParamInKernelReps, SMConfig.FigureParams).
const (
	ParamReps      = "reps_per_sample"
	ParamShortReps = "short_reps_per_sample"
	// ParamHeldReps is the untimed repetitions after each held window
	// (Timing.Held); absent when the windows were not held.
	ParamHeldReps = results.ParamHeldReps
)

// HeldTail is how many times its timed repetitions a held transfer repeats
// after its window: twice, so that a transfer up to twice as fast as the
// slowest (its leading, timed and held copies, four windows' worth, against
// the slowest's leading and timed two) still copies while the slowest's
// window ends; on 2× H200 the two directions are 1.6–1.7 apart.
const HeldTail = 2

// Record returns a copy of params with the timing's params set.
func (t Timing) Record(params map[string]string) map[string]string {
	out := WithParam(params, ParamReps, strconv.Itoa(t.Reps))
	if t.Short > 0 {
		out[ParamShortReps] = strconv.Itoa(t.Short)
	}
	if t.Held {
		out[ParamHeldReps] = strconv.Itoa(HeldTail * t.Reps)
	}
	return out
}

// Samples is how many samples a figure asked for n over rounds takes with
// this timing: n, or when Few n/results.FewSamplesDivisor, never fewer than one per
// round (the default 15 over 5 rounds: one per round).
func (t Timing) Samples(n, rounds int) int {
	if !t.Few {
		return n
	}
	return max(min(rounds, n), n/results.FewSamplesDivisor)
}

// Enqueue puts one sample of t on s, in c (t.Dev's context, or the one Do
// passes): the warm-up repetitions, t.Prep, the start event, the timed
// repetitions and the end event; the warm-up and the timed repetitions are
// one call of t.OpN each where t has it; a held timing's untimed
// repetitions before the start event and after the end event
// (Timing.Held). What holds s (a latch, an
// event wait) is enqueued before.
func (t Transfer) Enqueue(c gpu.Context, s cuda.Stream, start, end cuda.Event, tm Timing) error {
	warmup := tm.Warmup
	if tm.Held {
		warmup = max(warmup, tm.Reps)
	}
	if err := t.repeat(s, warmup); err != nil {
		return err
	}
	if t.Prep != nil {
		if err := t.Prep(s); err != nil {
			return err
		}
	}
	timed := t.Unlatched && t.Enqueued != nil && t.HostClock != nil
	var t0 time.Duration
	if timed {
		t0 = t.HostClock()
	}
	if err := c.EventRecord(start, s); err != nil {
		return fmt.Errorf("device %d: recording an event: %w", t.Dev.Index, err)
	}
	if err := t.repeat(s, tm.Reps); err != nil {
		return err
	}
	if err := c.EventRecord(end, s); err != nil {
		return fmt.Errorf("device %d: recording an event: %w", t.Dev.Index, err)
	}
	if timed {
		t.Enqueued(t.HostClock() - t0)
	}
	if tm.Held {
		return t.repeat(s, HeldTail*tm.Reps)
	}
	return nil
}

// repeat enqueues n repetitions on s: one call of OpN where the transfer
// has it, else n calls of Op.
func (t Transfer) repeat(s cuda.Stream, n int) error {
	if n <= 0 {
		return nil
	}
	if t.OpN != nil {
		return t.OpN(s, n)
	}
	for range n {
		if err := t.Op(s); err != nil {
			return err
		}
	}
	return nil
}

// ops is how many operations n repetitions queue on a stream.
func (t Transfer) ops(n int) int {
	if t.OpN != nil {
		return min(n, 1)
	}
	return n
}

// Elapsed waits for end and returns the milliseconds from start to end
// divided by reps: one repetition's time.
func (dv *Device) Elapsed(start, end cuda.Event, reps int) (float64, error) {
	if err := dv.Ctx.EventSynchronize(end); err != nil {
		return 0, fmt.Errorf("device %d: waiting for the timed work: %w", dv.Index, err)
	}
	el, err := dv.Ctx.EventElapsed(start, end)
	if err != nil {
		return 0, fmt.Errorf("device %d: reading the events: %w", dv.Index, err)
	}
	return float64(el) / float64(reps), nil
}

// Timer times transfers with latches that hold a stream at most LatchTimeout
// (5 s when 0).
type Timer struct {
	LatchTimeout time.Duration
}

// latchTimeout is LatchTimeout, or its default.
func (tm Timer) latchTimeout() time.Duration {
	if tm.LatchTimeout <= 0 {
		return defaultLatchTimeout
	}
	return tm.LatchTimeout
}

// Longest times one repetition of each transfer (all at once, as they will
// run) and returns the longest one's milliseconds, from which TimingFor or
// SteadyTimingFor picks a timing. A repetition shorter than retimeBelow is
// timed again behind an untimed one: the first of short ones may be slowed
// by what happens once (clocks leaving idle, a kernel's first launch, a link
// waking); a longer one is not worth a second pass.
func (tm Timer) Longest(ctx context.Context, ts []Transfer) (float64, error) {
	longest, err := tm.longest(ctx, ts, Timing{Reps: 1})
	if err == nil && longest < retimeBelow {
		longest, err = tm.longest(ctx, ts, Timing{Reps: 1, Warmup: 1})
	}
	return longest, err
}

func (tm Timer) longest(ctx context.Context, ts []Transfer, t Timing) (float64, error) {
	ms, err := tm.Measure(ctx, ts, t, 1)
	if err != nil {
		return 0, err
	}
	longest := 0.0
	for _, m := range ms {
		longest = math.Max(longest, m[0])
	}
	return longest, nil
}

// retimeBelow is the first repetition's time (ms) below which Longest times
// it again behind an untimed one. A pull over a link that carried none for a
// while pays the link's waking (three times the time of a warm 1 MiB pull:
// docs/methods.md, "Small pulls between GPUs"), and a 4-byte pull timed
// first thing in the size sweep would size the figure's windows for copies
// 30 times longer than they are.
const retimeBelow = 0.5

// slot is where a transfer sits on its device: its stream, its pair of
// events and its latch status word.
type slot struct{ stream, event, latch int }

// Measure runs samples of the transfers, all concurrently: for each sample
// it holds every stream with a latch, enqueues warm-up then the timed
// repetitions between two events per transfer, releases every latch at once
// and reads the events. It returns, per transfer, the milliseconds of one
// repetition in each sample: with t.Short, fitted against one window of
// t.Short repetitions taken first (see Timing), or, for unlatched transfers,
// each against a window of its own taken right after it.
func (tm Timer) Measure(ctx context.Context, ts []Transfer, t Timing, samples int) ([][]float64, error) {
	out := make([][]float64, len(ts))
	slots, devs, err := place(ts)
	if err != nil {
		return nil, err
	}
	if t.Short > 0 && samples > 0 && t.Short >= t.Reps {
		return nil, fmt.Errorf("a steady-state fit of %d against %d repetitions", t.Reps, t.Short)
	}
	if len(ts) == 1 && samples > 0 {
		batched := tm.batched
		if ts[0].Unlatched {
			batched = tm.unheldBatched
		}
		ms, err := batched(ctx, ts[0], t, samples)
		if err != nil {
			return nil, err
		}
		return [][]float64{ms}, nil
	}
	// Unheld, every sample has its own short window (unheldBatched).
	unheld := slices.ContainsFunc(ts, func(tr Transfer) bool { return tr.Unlatched })
	shortTiming := Timing{Reps: t.Short, Warmup: max(t.Warmup, 1)}
	var short []float64
	if t.Short > 0 && samples > 0 && !unheld {
		// The short window runs behind at least one untimed repetition in
		// the same held stream: the first pull after host copies with peer
		// access enabled again costs more than the next, and a short window
		// timed alone first thing would carry that cost, which the fit turns
		// into more bandwidth (docs/methods.md, "The method checks itself").
		if short, err = tm.sample(ts, slots, devs, shortTiming); err != nil {
			return nil, err
		}
	}
	for range samples {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ms, err := tm.sample(ts, slots, devs, t)
		if err != nil {
			return nil, err
		}
		if t.Short > 0 && unheld {
			// Its host time is not reported (Transfer.Enqueued): it is
			// no sample.
			if short, err = tm.sample(unreported(ts), slots, devs, shortTiming); err != nil {
				return nil, err
			}
		}
		for i := range ts {
			if short != nil {
				ms[i] = fit(ms[i], short[i], t)
			}
			out[i] = append(out[i], ms[i])
		}
	}
	return out, nil
}

// unreported is ts without the host's enqueue time reported
// (Transfer.Enqueued): for windows that are no sample.
func unreported(ts []Transfer) []Transfer {
	out := slices.Clone(ts)
	for i := range out {
		out[i].Enqueued = nil
	}
	return out
}

// window is one timed window of a batch: its timing, and whether it is a
// fit's short window.
type window struct {
	tm    Timing
	short bool
}

// BatchOps bounds the operations one batch queues behind a latch. A stream's
// queue holds a few hundred operations: beyond that the host's enqueueing
// blocks behind the latch until the latch times out (400 small pulls did on
// a 2× H100). A sample alone queues at most maxReps and its warm-ups, which
// never block; a batch stays near that.
const BatchOps = maxReps + 40

// batched takes the samples of one transfer (and its fit's short window
// first, behind an untimed repetition) as windows queued back to back
// behind one latch, as many as BatchOps allows, each between its own pair
// of events: one hold, release and wait for many samples, where a sample
// of small copies alone spends more time in those than on the GPU. Each
// window is preceded by its own
// warm-up repetitions, as a sample taken alone is. It returns the
// milliseconds of one repetition in each sample.
func (tm Timer) batched(ctx context.Context, tr Transfer, t Timing, samples int) ([]float64, error) {
	var ws []window
	if t.Short > 0 {
		ws = append(ws, window{Timing{Reps: t.Short, Warmup: max(t.Warmup, 1)}, true})
	}
	for range samples {
		ws = append(ws, window{t, false})
	}
	ms, err := tm.inBatches(ctx, tr, ws, 1, true)
	if err != nil {
		return nil, err
	}
	var short float64
	var out []float64
	for i, w := range ws {
		switch {
		case w.short:
			short = ms[i]
		case t.Short > 0:
			out = append(out, fit(ms[i], short, t))
		default:
			out = append(out, ms[i])
		}
	}
	return out, nil
}

// unheldBatched takes the samples of one unlatched transfer as windows
// queued back to back as the host issues them, each behind its own warm-up
// and between its own pair of events, and waits once: with t.Short, every
// sample's long window followed by a short window of its own, against which
// it is fitted. Such copies meet the link and engine as the moment leaves
// them, and a fit's short window taken once would set the fit of every
// sample after it (a round of 1 MiB pulls 116-153 GB/s where the others read
// 74-77: docs/methods.md, "Small pulls between GPUs"). With a short
// window each, a slow moment moves one sample of a round. Only the long
// windows report their host time (Transfer.Enqueued).
func (tm Timer) unheldBatched(ctx context.Context, tr Transfer, t Timing, samples int) ([]float64, error) {
	perSample := 1
	if t.Short > 0 {
		perSample = 2
	}
	var ws []window
	for range samples {
		ws = append(ws, window{t, false})
		if t.Short > 0 {
			ws = append(ws, window{Timing{Reps: t.Short, Warmup: max(t.Warmup, 1)}, true})
		}
	}
	ms, err := tm.inBatches(ctx, tr, ws, perSample, false)
	if err != nil {
		return nil, err
	}
	var out []float64
	for i := 0; i < len(ms); i += perSample {
		if t.Short > 0 {
			out = append(out, fit(ms[i], ms[i+1], t))
		} else {
			out = append(out, ms[i])
		}
	}
	return out, nil
}

// inBatches times ws in batches of whole groups of group windows, as many
// as BatchOps allows (at least one group), each batch queued back to back
// behind one latch where held, and returns each window's milliseconds per
// repetition, in order.
func (tm Timer) inBatches(ctx context.Context, tr Transfer, ws []window, group int, held bool) ([]float64, error) {
	cost := func(w window) int { return tr.ops(w.tm.Warmup) + tr.ops(w.tm.Reps) + 3 }
	var out []float64
	for len(ws) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, ops := 0, 0
		for n < len(ws) {
			c := 0
			for _, w := range ws[n:min(n+group, len(ws))] {
				c += cost(w)
			}
			if n > 0 && ops+c > BatchOps {
				break
			}
			ops += c
			n = min(n+group, len(ws))
		}
		ms, err := tm.batch(tr, ws[:n], held)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
		ws = ws[n:]
	}
	return out, nil
}

// batch queues windows of tr back to back, behind one latch where held
// (released once all are queued), waits for the last and returns each
// window's milliseconds per repetition. A fit's short window reports no
// host time (Transfer.Enqueued): it is no sample.
func (tm Timer) batch(tr Transfer, ws []window, held bool) ([]float64, error) {
	dv := tr.Dev
	s, err := dv.Stream(0)
	if err != nil {
		return nil, err
	}
	evs := make([]cuda.Event, 2*len(ws))
	for i := range evs {
		if evs[i], err = dv.Event(i); err != nil {
			return nil, err
		}
	}
	var latch cuda.Function
	if held {
		if latch, err = dv.Function(kernels.Latch); err != nil {
			return nil, err
		}
		dv.arm()
	}
	quiet := unreported([]Transfer{tr})[0]
	err = dv.Ctx.Do(func(c gpu.Context) error {
		if held {
			if err := dv.launchLatch(c, latch, s, 0, tm.latchTimeout()); err != nil {
				return err
			}
		}
		for i, w := range ws {
			t := tr
			if w.short {
				t = quiet
			}
			if err := t.Enqueue(c, s, evs[2*i], evs[2*i+1], w.tm); err != nil {
				return err
			}
		}
		return nil
	})
	if held {
		dv.Release()
	}
	if err != nil {
		return nil, err
	}
	ms := make([]float64, len(ws))
	for i, w := range ws {
		if ms[i], err = dv.Elapsed(evs[2*i], evs[2*i+1], w.tm.Reps); err != nil {
			return nil, err
		}
	}
	if held {
		if err := dv.latchTimedOut(0); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// fit is the milliseconds of one repetition from the per-repetition times
// of a window of t.Reps and one of t.Short. Where the long window took no
// longer than the short one, the short window carried a cost the long one
// did not and the fit has nothing to say: the sample is the long window's
// own per-repetition time (a plain window, which the run's method check
// holds against a longer one).
func fit(long, short float64, t Timing) float64 {
	d := (long*float64(t.Reps) - short*float64(t.Short)) / float64(t.Reps-t.Short)
	if d <= 0 {
		return long
	}
	return d
}

// place gives each transfer its slot on its device, and lists the devices.
func place(ts []Transfer) ([]slot, []*Device, error) {
	slots := make([]slot, len(ts))
	used := map[*Device]*slot{}
	var devs []*Device
	for i, tr := range ts {
		u := used[tr.Dev]
		if u == nil {
			u = &slot{}
			used[tr.Dev] = u
			devs = append(devs, tr.Dev)
		}
		slots[i] = *u
		u.stream++
		u.event += 2
		u.latch++
		if u.latch > latchSlots {
			return nil, nil, fmt.Errorf("device %d: more than %d concurrent transfers", tr.Dev.Index, latchSlots)
		}
	}
	return slots, devs, nil
}

func (tm Timer) sample(ts []Transfer, slots []slot, devs []*Device, t Timing) ([]float64, error) {
	for _, dv := range devs {
		dv.arm()
	}
	released := false
	release := func() {
		if !released {
			for _, dv := range devs {
				dv.Release()
			}
			released = true
		}
	}
	// Whatever fails while enqueueing, the latches must not stay armed.
	defer release()
	timeout := tm.latchTimeout()
	marks := make([][2]cuda.Event, len(ts))
	for i, tr := range ts {
		if err := tr.enqueueLatched(slots[i], &marks[i], timeout, t); err != nil {
			return nil, err
		}
	}
	release()
	ms := make([]float64, len(ts))
	var timedOut error
	for i, tr := range ts {
		var err error
		if ms[i], err = tr.Dev.Elapsed(marks[i][0], marks[i][1], t.Reps); err != nil {
			return nil, err
		}
		if !tr.Unlatched {
			if err := tr.Dev.latchTimedOut(slots[i].latch); err != nil {
				timedOut = err
			}
		}
	}
	if timedOut != nil {
		return nil, timedOut
	}
	if t.Held {
		// The next sample starts from idle streams, every window of it
		// again inside every other transfer's copies.
		for i, tr := range ts {
			if err := tr.Dev.drain(slots[i].stream); err != nil {
				return nil, err
			}
		}
	}
	return ms, nil
}

// drain waits until the device's stream of index i has done its work.
func (dv *Device) drain(i int) error {
	s, err := dv.Stream(i)
	if err != nil {
		return err
	}
	if err := dv.Ctx.StreamSynchronize(s); err != nil {
		return fmt.Errorf("device %d: waiting for the held copies: %w", dv.Index, err)
	}
	return nil
}

// enqueueLatched puts one sample of t on the stream of its slot behind the
// latch (unless t is unlatched), and leaves its start and end events in mark.
func (t Transfer) enqueueLatched(sl slot, mark *[2]cuda.Event, timeout time.Duration, tm Timing) error {
	dv := t.Dev
	s, err := dv.Stream(sl.stream)
	if err != nil {
		return err
	}
	for j := range mark {
		if mark[j], err = dv.Event(sl.event + j); err != nil {
			return err
		}
	}
	var latch cuda.Function
	if !t.Unlatched {
		if latch, err = dv.Function(kernels.Latch); err != nil {
			return err
		}
	}
	// One hop to the device's thread for the whole sample: hundreds of
	// small operations are enqueued without a thread switch each.
	return dv.Ctx.Do(func(c gpu.Context) error {
		if !t.Unlatched {
			if err := dv.launchLatch(c, latch, s, sl.latch, timeout); err != nil {
				return err
			}
		}
		return t.Enqueue(c, s, mark[0], mark[1], tm)
	})
}
