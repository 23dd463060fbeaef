package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// Atomic test settings: per launch, distinct-address runs use 2 blocks of
// 256 threads per SM, 64 operations each; contended runs fewer, since every
// operation serialises on one address.
const (
	atomBlocksPerSM    = 2
	atomBlock          = 256
	atomIters          = 64
	atomContendedBlock = 64
	atomContendedIters = 8
	atomChainIters     = 1000 // over the counters, in a sample's long set
	atomSamples        = 10   // per figure, over all its rounds
	// The chain of the atomic latency runs on atomChainCounters counters
	// measure.PlacementStep apart (each its own launch) from the start of
	// the scratch allocation, the same places in every sample, round and
	// run: a chain on one counter takes a time by where the round puts it
	// (up to 1.8× apart: docs/methods.md, "Atomic latency"), so a round's
	// figure would be its place's, and its rounds' spread all compare
	// could hold a change against.
	atomChainCounters = 8
)

func (e *Engine) atomicSteps() []step {
	var steps []step
	for _, test := range []results.Test{results.AtomicTput, results.AtomicLatency} {
		if !e.opt.Selected(test) {
			continue
		}
		for _, p := range e.localAndDetailPairs() {
			issuer, owner := p[0], p[1]
			steps = append(steps, step{fmt.Sprintf("%s %d→%d", test, issuer.Index, owner.Index), func(ctx context.Context) {
				e.atomics(ctx, test, issuer, owner)
			}, map[results.Test]time.Duration{results.AtomicTput: atomicTputCost, results.AtomicLatency: atomicLatencyCost}[test]})
		}
	}
	return steps
}

// driverAtomicLabels describes what the driver reports for atomics on the
// pair: the NATIVE_ATOMIC_SUPPORTED attribute and the op's capability bitmask.
func (e *Engine) driverAtomicLabels(issuer, owner *measure.Device, op kernels.AtomicOp) map[string]string {
	out := map[string]string{}
	if issuer == owner {
		out["native_atomic_supported"] = "local"
		return out
	}
	if v, err := e.drv.P2PAttribute(cuda.P2PNativeAtomicSupported, issuer.Index, owner.Index); err == nil {
		out["native_atomic_supported"] = strconv.Itoa(v)
	} else {
		out["native_atomic_supported"] = "error: " + cuda.NameOf(err)
	}
	caps, err := e.drv.P2PAtomicCapabilities([]cuda.AtomicOperation{cuda.AtomicOperation(op.DriverOp)}, issuer.Index, owner.Index)
	switch {
	case err == nil:
		out["driver_caps"] = fmt.Sprintf("0x%x", caps[0])
		if names := cuda.AtomicCapabilityNames(caps[0]); len(names) > 0 {
			out["driver_caps_names"] = strings.Join(names, "|")
		}
	case errors.Is(err, cuda.ErrUnavailable):
		out["driver_caps"] = "unavailable"
	default:
		out["driver_caps"] = "error: " + cuda.NameOf(err)
	}
	return out
}

// atomics measures every atomic operation issued by issuer on owner's memory.
func (e *Engine) atomics(ctx context.Context, test results.Test, issuer, owner *measure.Device) {
	remote := issuer != owner
	if remote {
		if err := e.peers.Enable(issuer.Primary, owner.Primary); err != nil {
			for _, op := range kernels.AtomicOps {
				for _, f := range e.atomicTemplates(test, issuer, owner, op) {
					e.add(measure.Fail(f, err))
				}
			}
			return
		}
		defer e.peers.Release(issuer.Primary, owner.Primary)
	}
	for _, op := range kernels.AtomicOps {
		if ctx.Err() != nil {
			return
		}
		for _, f := range e.atomicTemplates(test, issuer, owner, op) {
			e.atomicFigure(ctx, f, op, issuer, owner)
		}
	}
}

func (e *Engine) atomicTemplates(test results.Test, issuer, owner *measure.Device, op kernels.AtomicOp) []results.Figure {
	base := results.Figure{Test: test, Engine: results.EngineSM, Src: issuer.Index, Dst: owner.Index, Size: uint64(op.Width), Unit: test.Info().Unit}
	mk := func(contended bool) results.Figure {
		f := base
		f.Params = e.driverAtomicLabels(issuer, owner, op)
		f.Params["op"] = op.Name
		f.Params["ptx"] = op.PTXOp
		if test == results.AtomicLatency {
			return f
		}
		f.Params["contended"] = strconv.FormatBool(contended)
		return f
	}
	if test == results.AtomicLatency {
		if op.Chain.Entry == "" {
			return nil
		}
		return []results.Figure{mk(false)}
	}
	return []results.Figure{mk(false), mk(true)}
}

// atomicLaunch is the kernel launch of one atomic figure.
type atomicLaunch struct {
	op                   kernels.AtomicOp
	chain, contended     bool
	blocks, block, iters uint32
}

func newAtomicLaunch(f results.Figure, op kernels.AtomicOp, issuer *measure.Device) atomicLaunch {
	l := atomicLaunch{op: op, chain: f.Test == results.AtomicLatency, contended: f.Params["contended"] == "true",
		blocks: uint32(max(1, issuer.Info.SMCount) * atomBlocksPerSM), block: atomBlock, iters: atomIters}
	if l.contended {
		l.block, l.iters = atomContendedBlock, atomContendedIters
		if op.Name == "cas_u64" {
			// A contended CAS retries until it wins, so attempts grow with the
			// square of the contenders: keep them to 256 threads.
			l.blocks, l.block = 8, 32
		}
	}
	if l.chain {
		l.blocks, l.block, l.iters = 1, 1, atomChainIters
	}
	return l
}

func (l atomicLaunch) threads() uint64 { return uint64(l.blocks) * uint64(l.block) }

// single reports whether every thread works on one counter.
func (l atomicLaunch) single() bool { return l.contended || l.chain }

// elems is the number of counters.
func (l atomicLaunch) elems() uint64 {
	if l.single() {
		return 1
	}
	return l.threads()
}

func (l atomicLaunch) bytes() uint64 { return roundUp(l.elems()*uint64(l.op.Width), 256) }

// atomicFigure runs one operation in one mode, times it and checks the final
// counters exactly.
func (e *Engine) atomicFigure(ctx context.Context, f results.Figure, op kernels.AtomicOp, issuer, owner *measure.Device) {
	samples := e.share(atomSamples)
	if samples == 0 {
		return
	}
	l := newAtomicLaunch(f, op, issuer)
	f.Params["threads"] = strconv.FormatUint(l.threads(), 10)
	f.Params["ops_per_thread"] = strconv.Itoa(int(l.iters))
	if l.chain {
		f.Params["counters_per_sample"] = strconv.Itoa(atomChainCounters)
	}
	var err error
	f.Samples, err = e.atomicSamples(ctx, l, issuer, owner, samples)
	var mm *atomicMismatch
	switch {
	case errors.As(err, &mm):
		f.Verify, f.VerifyDetail = results.VerifyFailed, err.Error()
	case errors.Is(err, context.Canceled):
		return
	case err != nil:
		f = measure.Fail(f, err)
	default:
		f.Verify = results.VerifyPassed
	}
	e.add(f)
}

// atomicSamples initialises the counters on owner, times the kernel on
// issuer for samples samples, and checks the counters: the samples come
// back with a mismatch.
func (e *Engine) atomicSamples(ctx context.Context, l atomicLaunch, issuer, owner *measure.Device, samples int) ([]float64, error) {
	if l.chain {
		return e.chainSamples(ctx, l, issuer, owner, samples)
	}
	bytes := l.bytes()
	buf, err := owner.Scratch(max(bytes, 1<<20))
	if err != nil {
		return nil, err
	}
	init := uint32(l.op.Init)
	if err := owner.Memset(buf, init, bytes/4); err != nil {
		return nil, fmt.Errorf("initialising counters: %w", err)
	}
	k := l.op.Tput
	params := kernels.AtomicArgs{Buf: uint64(buf), Iters: l.iters, Contended: b2u(l.contended)}.Params()
	fn, err := issuer.Function(k)
	if err != nil {
		return nil, err
	}
	t := measure.Transfer{Dev: issuer, Op: func(s cuda.Stream) error {
		if err := issuer.Ctx.Launch(fn, [3]uint32{l.blocks, 1, 1}, [3]uint32{l.block, 1, 1}, 0, s, params...); err != nil {
			return fmt.Errorf("launching %s on device %d: %w", k.Entry, issuer.Index, err)
		}
		return nil
	}}
	tm := measure.Timing{Reps: 1, Warmup: 1}
	launches := uint64(samples * (tm.Reps + tm.Warmup))
	ms, err := e.timer.Measure(ctx, []measure.Transfer{t}, tm, samples)
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, m := range ms[0] {
		out = append(out, float64(l.threads())*float64(l.iters)/(m*1e-3)/1e9)
	}
	return out, checkAtomics(owner, buf, l.op, l.elems(), l.threads(), uint64(l.iters), launches, l.single())
}

// chainSamples times the atomic latency: each sample launches the chain
// on each of atomChainCounters counters in turn, once with l.iters
// operations on each and once with half as many, and is (long − short)
// over the operations the long one did more: the launches' own start and
// end cost, the same in both, is taken out (on one counter it was paid
// once over 2000 operations; on eight, eight times over fewer). Every
// counter is reset before each timed set (a chain's operands assume its
// initial value) and checked after the last.
func (e *Engine) chainSamples(ctx context.Context, l atomicLaunch, issuer, owner *measure.Device, samples int) ([]float64, error) {
	const stride = measure.PlacementStep
	n := uint64(atomChainCounters)
	span := (n-1)*stride + 256
	// The same places in every round: not moved by the round's offset.
	buf, err := owner.ScratchBase(span)
	if err != nil {
		return nil, err
	}
	init := uint32(l.op.Init)
	reset := func(s cuda.Stream) error {
		if err := issuer.Ctx.MemsetD32Async(buf, init, span/4, s); err != nil {
			return fmt.Errorf("device %d: resetting the counters: %w", issuer.Index, err)
		}
		return nil
	}
	if err := owner.Memset(buf, init, span/4); err != nil {
		return nil, fmt.Errorf("initialising counters: %w", err)
	}
	fn, err := issuer.Function(l.op.Chain)
	if err != nil {
		return nil, err
	}
	perCounter := l.iters / uint32(n)
	set := func(iters uint32) measure.Transfer {
		return measure.Transfer{Dev: issuer, Prep: reset, Op: func(s cuda.Stream) error {
			for c := range n {
				params := kernels.ChainArgs{Buf: uint64(buf) + c*stride, Iters: iters}.Params()
				if err := issuer.Ctx.Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, params...); err != nil {
					return fmt.Errorf("launching %s on device %d: %w", l.op.Chain.Entry, issuer.Index, err)
				}
			}
			return nil
		}}
	}
	tm := measure.Timing{Reps: 1, Warmup: 1}
	long, err := e.timer.Measure(ctx, []measure.Transfer{set(perCounter)}, tm, samples)
	if err != nil {
		return nil, err
	}
	short, err := e.timer.Measure(ctx, []measure.Transfer{set(perCounter / 2)}, tm, samples)
	if err != nil {
		return nil, err
	}
	ops := float64(n) * float64(perCounter-perCounter/2)
	out := make([]float64, samples)
	for i := range out {
		out[i] = (long[0][i] - short[0][i]) * 1e6 / ops
	}
	for c := range n {
		if err := checkAtomics(owner, buf+cuda.DevicePtr(c*stride), l.op, 1, 1, uint64(perCounter/2), 1, true); err != nil {
			return nil, fmt.Errorf("counter %d: %w", c, err)
		}
	}
	return out, nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// atomicMismatch is a counter that does not hold the exact expected value.
type atomicMismatch struct {
	Op        string
	Element   uint64
	Got, Want uint64
	Float     bool
}

func (m *atomicMismatch) Error() string {
	if m.Float {
		return fmt.Sprintf("%s: element %d holds %g, want exactly %g", m.Op, m.Element,
			math.Float32frombits(uint32(m.Got)), math.Float32frombits(uint32(m.Want)))
	}
	return fmt.Sprintf("%s: element %d holds %d, want exactly %d", m.Op, m.Element, m.Got, m.Want)
}

// expectedAfter is the exact value of each element after launches launches:
// counting operations accumulate, exchange and min settle on one value.
func expectedAfter(op kernels.AtomicOp, threads, iters, launches uint64, single bool) uint64 {
	switch op.Name {
	case "exch_u32", "min_u32":
		return op.Expected(threads, iters, single)
	}
	return op.Expected(threads, iters*launches, single)
}

// counterBufs holds the host buffers checkAtomics reads counters into (up
// to a few MiB, a counter for each thread): reused, where a buffer made for
// each check was fresh pages to clear and fault in, most of the check's
// time in the simulator (*[]byte).
var counterBufs sync.Pool

// checkAtomics reads the counters back and compares each with its exact value.
func checkAtomics(owner *measure.Device, buf cuda.DevicePtr, op kernels.AtomicOp, elems, threads, iters, launches uint64, single bool) error {
	n := elems * uint64(op.Width)
	bp, _ := counterBufs.Get().(*[]byte)
	if bp == nil || uint64(cap(*bp)) < n {
		bp = new([]byte)
		*bp = make([]byte, n)
	}
	defer counterBufs.Put(bp)
	b := (*bp)[:n] // all of it read from the device before any is compared
	if err := owner.Ctx.MemcpyDtoH(b, buf); err != nil {
		return fmt.Errorf("device %d: reading counters: %w", owner.Index, err)
	}
	want := expectedAfter(op, threads, iters, launches, single)
	for i := uint64(0); i < elems; i++ {
		var got uint64
		if op.Width == 8 {
			got = binary.LittleEndian.Uint64(b[8*i:])
		} else {
			got = uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
		if got != want {
			return &atomicMismatch{Op: op.Name, Element: i, Got: got, Want: want, Float: op.Float}
		}
	}
	return nil
}
