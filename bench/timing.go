package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
)

// The latch buffer of each device: the flag at offset 0, one status word per
// latch slot from offset 64.
const (
	latchStatusOffset = 64
	latchSlots        = (4096 - latchStatusOffset) / 4
)

// ErrLatchTimeout means a latch kernel gave up waiting for its release, so
// the work queued behind it may have started before everything was enqueued.
var ErrLatchTimeout = errors.New("latch timed out before release (the host took too long to enqueue, or the flag never reached the GPU)")

func hostWord(h cuda.HostBuffer, off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&h.Host[off]))
}

func armLatch(dv *device) { atomic.StoreUint32(hostWord(dv.latch, 0), 0) }
func releaseLatch(dv *device) {
	if dv.latch.Host != nil {
		atomic.StoreUint32(hostWord(dv.latch, 0), 1)
	}
}

// transfer is one stream of timed work: op enqueues one repetition on the
// stream it is given, in dv's context.
type transfer struct {
	dv *device
	op func(s cuda.Stream) error
	// prep, when set, is enqueued after the warm-up and before the start
	// event of every sample (resetting counters, say), outside the timing.
	prep func(s cuda.Stream) error
	// unlatched transfers are not held by a latch: staged copies block the
	// host until their stream reaches them, so a latch would only time out.
	unlatched bool
}

// timing is how many repetitions make one sample, and how many go untimed first.
type timing struct {
	reps, warmup int
}

// Target time of one sample, and the most operations queued behind one latch
// (a stream's queue holds about a thousand entries before enqueueing blocks).
const (
	sampleTarget = 500 * time.Microsecond
	maxReps      = 200
	// hostSampleTarget is longer: PCIe copies vary more from one to the next,
	// and averaging two or more per sample keeps their spread near 1%.
	hostSampleTarget = 10 * time.Millisecond
)

// calibrate times one repetition of each transfer (all at once, as they will
// run) and picks the repetitions that make a sample about sampleTarget long.
func (e *Engine) calibrate(ctx context.Context, ts []transfer) (timing, error) {
	return e.calibrateFor(ctx, ts, sampleTarget)
}

// calibrateFor is calibrate with another target sample time.
func (e *Engine) calibrateFor(ctx context.Context, ts []transfer, target time.Duration) (timing, error) {
	ms, err := e.timeTransfers(ctx, ts, timing{reps: 1, warmup: 1}, 1)
	if err != nil {
		return timing{}, err
	}
	longest := 0.0
	for _, m := range ms {
		longest = math.Max(longest, m[0])
	}
	reps := 1
	if longest > 0 {
		reps = int(math.Ceil(float64(target) / float64(time.Millisecond) / longest))
	}
	reps = max(1, min(reps, maxReps))
	warmup := min(reps, 4)
	if longest >= 2 {
		// Transfers of milliseconds keep the engines busy from the first
		// one on; warming up before each sample would only double the time.
		warmup = 0
	}
	return timing{reps: reps, warmup: warmup}, nil
}

// timeTransfers runs samples of the transfers, all concurrently: for each
// sample it holds every stream with a latch, enqueues warm-up then the timed
// repetitions between two events per transfer, releases every latch at once
// and reads the events. It returns, per transfer, the milliseconds of one
// repetition in each sample.
func (e *Engine) timeTransfers(ctx context.Context, ts []transfer, tm timing, samples int) ([][]float64, error) {
	out := make([][]float64, len(ts))
	slots := make([]slot, len(ts))
	used := map[*device]*slot{}
	var devs []*device
	for i, t := range ts {
		u := used[t.dv]
		if u == nil {
			u = &slot{}
			used[t.dv] = u
			devs = append(devs, t.dv)
		}
		slots[i] = *u
		u.stream++
		u.event += 2
		u.latch++
		if u.latch > latchSlots {
			return nil, fmt.Errorf("device %d: more than %d concurrent transfers", t.dv.idx, latchSlots)
		}
	}
	for s := 0; s < samples; s++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ms, err := e.sampleOnce(ts, slots, devs, tm)
		if err != nil {
			return nil, err
		}
		for i := range ts {
			out[i] = append(out[i], ms[i])
		}
	}
	return out, nil
}

// enqueueSample puts one sample of t on stream s: the latch (unless t is
// unlatched), the warm-up, t's preparation, the start event, the timed
// repetitions and the end event. It runs on dv's thread (c is dv's context).
func enqueueSample(c gpu.Context, dv *device, t transfer, s cuda.Stream, start, end cuda.Event, latch cuda.Function, status int, timeout uint64, tm timing) error {
	if !t.unlatched {
		args := kernels.LatchArgs{
			Flag:      uint64(dv.latch.Device),
			Status:    uint64(dv.latch.Device) + uint64(status),
			TimeoutNs: timeout,
		}
		if err := c.Launch(latch, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, args.Params()...); err != nil {
			return fmt.Errorf("device %d: launching the latch: %w", dv.idx, err)
		}
	}
	for w := 0; w < tm.warmup; w++ {
		if err := t.op(s); err != nil {
			return err
		}
	}
	if t.prep != nil {
		if err := t.prep(s); err != nil {
			return err
		}
	}
	if err := c.EventRecord(start, s); err != nil {
		return fmt.Errorf("device %d: recording an event: %w", dv.idx, err)
	}
	for r := 0; r < tm.reps; r++ {
		if err := t.op(s); err != nil {
			return err
		}
	}
	if err := c.EventRecord(end, s); err != nil {
		return fmt.Errorf("device %d: recording an event: %w", dv.idx, err)
	}
	return nil
}

// slot is where a transfer sits on its device: its stream, its pair of
// events and its latch status word.
type slot struct{ stream, event, latch int }

func (e *Engine) sampleOnce(ts []transfer, slots []slot, devs []*device, tm timing) ([]float64, error) {
	for _, dv := range devs {
		armLatch(dv)
	}
	released := false
	release := func() {
		if !released {
			for _, dv := range devs {
				releaseLatch(dv)
			}
			released = true
		}
	}
	// Whatever fails while enqueueing, the latches must not stay armed.
	defer release()
	type evs struct{ start, end cuda.Event }
	marks := make([]evs, len(ts))
	timeout := uint64(e.opt.LatchTimeout.Nanoseconds())
	for i, t := range ts {
		dv, sl := t.dv, slots[i]
		s, err := dv.stream(sl.stream)
		if err != nil {
			return nil, fmt.Errorf("device %d: creating a stream: %w", dv.idx, err)
		}
		start, err := dv.event(sl.event)
		if err != nil {
			return nil, fmt.Errorf("device %d: creating an event: %w", dv.idx, err)
		}
		end, err := dv.event(sl.event + 1)
		if err != nil {
			return nil, fmt.Errorf("device %d: creating an event: %w", dv.idx, err)
		}
		marks[i] = evs{start, end}
		status := latchStatusOffset + 4*sl.latch
		atomic.StoreUint32(hostWord(dv.latch, status), 0)
		var latch cuda.Function
		if !t.unlatched {
			if latch, err = dv.function(kernels.Latch); err != nil {
				return nil, err
			}
		}
		// One hop to the device's thread for the whole sample: hundreds of
		// small operations are enqueued without a thread switch each.
		err = dv.ctx.Do(func(c gpu.Context) error {
			return enqueueSample(c, dv, t, s, start, end, latch, status, timeout, tm)
		})
		if err != nil {
			return nil, err
		}
	}
	release()
	ms := make([]float64, len(ts))
	var timedOut error
	for i, t := range ts {
		dv := t.dv
		if err := dv.ctx.EventSynchronize(marks[i].end); err != nil {
			return nil, fmt.Errorf("device %d: waiting for the timed work: %w", dv.idx, err)
		}
		el, err := dv.ctx.EventElapsed(marks[i].start, marks[i].end)
		if err != nil {
			return nil, fmt.Errorf("device %d: reading the events: %w", dv.idx, err)
		}
		ms[i] = float64(el) / float64(tm.reps)
		st := atomic.LoadUint32(hostWord(dv.latch, latchStatusOffset+4*slots[i].latch))
		if !t.unlatched && st == kernels.LatchTimedOut {
			timedOut = fmt.Errorf("device %d: %w", dv.idx, ErrLatchTimeout)
		}
	}
	if timedOut != nil {
		return nil, timedOut
	}
	return ms, nil
}
