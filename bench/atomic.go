package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
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
	atomChainIters     = 2000
	atomSamples        = 10
)

const (
	convAtomTput  = "Gop/s (1e9 atomic operations per second) of one launch: threads × operations per thread over the kernel's time (CUDA events); row = source (GPU issuing the atomics), column = destination (GPU whose memory holds the counters); src = dst is local memory; scope .sys"
	convAtomChain = "ns per atomic in a dependent chain from one thread (each operand depends on the previous result), CUDA events over the whole chain; row = issuing GPU, column = GPU holding the counter; scope .sys"
)

func (e *Engine) atomicSteps() []step {
	var steps []step
	for _, test := range []string{"atomic_tput", "atomic_latency"} {
		if !e.selected(test) {
			continue
		}
		for _, s := range e.order {
			for _, d := range e.order {
				issuer, owner, test := e.devs[s], e.devs[d], test
				steps = append(steps, step{fmt.Sprintf("%s %d→%d", test, s, d), func(ctx context.Context) {
					e.atomics(ctx, test, issuer, owner)
				}})
			}
		}
	}
	return steps
}

// driverAtomicLabels describes what the driver reports for atomics on the
// pair: the NATIVE_ATOMIC_SUPPORTED attribute and the op's capability bitmask.
func (e *Engine) driverAtomicLabels(issuer, owner *device, op kernels.AtomicOp) map[string]string {
	out := map[string]string{}
	if issuer == owner {
		out["native_atomic_supported"] = "local"
		return out
	}
	if v, err := e.drv.P2PAttribute(cuda.P2PNativeAtomicSupported, issuer.idx, owner.idx); err == nil {
		out["native_atomic_supported"] = strconv.Itoa(v)
	} else {
		out["native_atomic_supported"] = "error: " + cuda.NameOf(err)
	}
	caps, err := e.drv.P2PAtomicCapabilities([]cuda.AtomicOperation{cuda.AtomicOperation(op.DriverOp)}, issuer.idx, owner.idx)
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
func (e *Engine) atomics(ctx context.Context, test string, issuer, owner *device) {
	remote := issuer != owner
	if remote {
		if err := e.peers.Enable(issuer.ctx, owner.ctx); err != nil {
			for _, op := range kernels.AtomicOps {
				for _, f := range e.atomicTemplates(test, issuer, owner, op) {
					e.add(failFigure(f, err))
				}
			}
			return
		}
		defer func() { e.peers.Release(issuer.ctx, owner.ctx); e.disableIdle() }()
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

func (e *Engine) atomicTemplates(test string, issuer, owner *device, op kernels.AtomicOp) []results.Figure {
	base := results.Figure{Test: test, Engine: "sm", Src: issuer.idx, Dst: owner.idx, Size: uint64(op.Width)}
	mk := func(contended bool) results.Figure {
		f := base
		f.Params = e.driverAtomicLabels(issuer, owner, op)
		f.Params["op"] = op.Name
		f.Params["ptx"] = op.PTXOp
		if test == "atomic_latency" {
			f.Unit, f.Convention = "ns", convAtomChain
			return f
		}
		f.Unit, f.Convention = "Gop/s", convAtomTput
		f.Params["contended"] = strconv.FormatBool(contended)
		return f
	}
	if test == "atomic_latency" {
		if op.Chain.Entry == "" {
			return nil
		}
		return []results.Figure{mk(false)}
	}
	return []results.Figure{mk(false), mk(true)}
}

// atomicFigure runs one operation in one mode, times it and checks the final
// counters exactly.
func (e *Engine) atomicFigure(ctx context.Context, f results.Figure, op kernels.AtomicOp, issuer, owner *device) {
	chain := f.Test == "atomic_latency"
	contended := f.Params["contended"] == "true"
	blocks := uint32(max(1, issuer.info.SMCount) * atomBlocksPerSM)
	block, iters := uint32(atomBlock), uint32(atomIters)
	if contended {
		block, iters = atomContendedBlock, atomContendedIters
		if op.Name == "cas_u64" {
			// A contended CAS retries until it wins, so attempts grow with the
			// square of the contenders: keep them to 256 threads.
			blocks, block = 8, 32
		}
	}
	if chain {
		blocks, block, iters = 1, 1, atomChainIters
	}
	threads := uint64(blocks) * uint64(block)
	elems := threads
	if contended || chain {
		elems = 1
	}
	bytes := roundUp(elems*uint64(op.Width), 256)
	f.Params["threads"] = strconv.FormatUint(threads, 10)
	f.Params["ops_per_thread"] = strconv.Itoa(int(iters))
	err := func() error {
		buf, err := owner.scratchBuf(max(bytes, 1<<20))
		if err != nil {
			return err
		}
		init := uint32(op.Init)
		if err := owner.ctx.MemsetD32Async(buf, init, bytes/4, owner.streams[0]); err != nil {
			return fmt.Errorf("device %d: initialising counters: %w", owner.idx, err)
		}
		if err := owner.ctx.StreamSynchronize(owner.streams[0]); err != nil {
			return fmt.Errorf("device %d: %w", owner.idx, err)
		}
		k := op.Tput
		params := kernels.AtomicArgs{Buf: uint64(buf), Iters: iters, Contended: b2u(contended)}.Params()
		if chain {
			k = op.Chain
			params = kernels.ChainArgs{Buf: uint64(buf), Iters: iters}.Params()
		}
		fn, err := issuer.function(k)
		if err != nil {
			return err
		}
		opFn := func(s cuda.Stream) error {
			if err := issuer.ctx.Launch(fn, [3]uint32{blocks, 1, 1}, [3]uint32{block, 1, 1}, 0, s, params...); err != nil {
				return fmt.Errorf("launching %s on device %d: %w", k.Entry, issuer.idx, err)
			}
			return nil
		}
		tm := timing{reps: 1, warmup: 1}
		t := transfer{dv: issuer, op: opFn}
		launches := uint64(atomSamples * (tm.reps + tm.warmup))
		if chain {
			// A chain's operands assume the counter starts from its initial
			// value, so each sample resets it (before its start event).
			t.prep = func(s cuda.Stream) error {
				if err := issuer.ctx.MemsetD32Async(buf, init, bytes/4, s); err != nil {
					return fmt.Errorf("device %d: resetting the counter: %w", issuer.idx, err)
				}
				return nil
			}
			launches = 1
		}
		ms, err := e.timeTransfers(ctx, []transfer{t}, tm, atomSamples)
		if err != nil {
			return err
		}
		for _, m := range ms[0] {
			if chain {
				f.Samples = append(f.Samples, m*1e6/float64(iters))
			} else {
				f.Samples = append(f.Samples, float64(threads)*float64(iters)/(m*1e-3)/1e9)
			}
		}
		return checkAtomics(owner, buf, op, elems, threads, uint64(iters), launches, contended || chain)
	}()
	if err != nil {
		var mm *AtomicMismatch
		if errors.As(err, &mm) {
			f.Verify, f.VerifyDetail = results.VerifyFailed, err.Error()
			e.add(f)
			return
		}
		if !errors.Is(err, context.Canceled) {
			e.add(failFigure(f, err))
		}
		return
	}
	f.Verify = results.VerifyPassed
	e.add(f)
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// AtomicMismatch is a counter that does not hold the exact expected value.
type AtomicMismatch struct {
	Op        string
	Element   uint64
	Got, Want uint64
	Float     bool
}

func (m *AtomicMismatch) Error() string {
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

// checkAtomics reads the counters back and compares each with its exact value.
func checkAtomics(owner *device, buf cuda.DevicePtr, op kernels.AtomicOp, elems, threads, iters, launches uint64, single bool) error {
	b := make([]byte, elems*uint64(op.Width))
	if err := owner.ctx.MemcpyDtoH(b, buf); err != nil {
		return fmt.Errorf("device %d: reading counters: %w", owner.idx, err)
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
			return &AtomicMismatch{Op: op.Name, Element: i, Got: got, Want: want, Float: op.Float}
		}
	}
	return nil
}
