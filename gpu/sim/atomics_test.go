package sim

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
)

// runAtomic initialises n elements as the engine does, launches op (chain or
// throughput) on issuer over owner's memory, and returns the elements and
// the kernel's milliseconds.
func runAtomic(r *rig, issuer, owner int, op kernels.AtomicOp, chain, contended bool, blocks, block, iters uint32) ([]uint64, float64) {
	r.t.Helper()
	elems := uint64(blocks) * uint64(block)
	if chain || contended {
		elems = 1
	}
	bytes := max(elems*uint64(op.Width), 256)
	buf := r.alloc(owner, bytes)
	r.must(r.ctx[owner].MemsetD32Async(buf, uint32(op.Init), bytes/4, 0))
	r.must(r.ctx[owner].Synchronize())
	k, params := op.Tput, kernels.AtomicArgs{Buf: uint64(buf), Iters: iters, Contended: b2u(contended)}.Params()
	if chain {
		k, params = op.Chain, kernels.ChainArgs{Buf: uint64(buf), Iters: iters}.Params()
	}
	// One window (a warm-up and one timed launch): the counts below.
	ms, status := r.window(1, []cuda.Stream{r.stream(issuer)}, []job{{issuer, func(s cuda.Stream) error {
		return r.launch(issuer, k, blocks, block, s, params...)
	}}})
	if status[0] != kernels.LatchReleased {
		r.t.Fatalf("latch status %d", status[0])
	}
	b := make([]byte, elems*uint64(op.Width))
	r.must(r.ctx[owner].MemcpyDtoH(b, buf))
	out := make([]uint64, elems)
	for i := range out {
		if op.Width == 8 {
			out[i] = binary.LittleEndian.Uint64(b[8*i:])
		} else {
			out[i] = uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
	}
	return out, ms[0]
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// TestAtomicsExact: every operation of the catalogue, distinct, contended
// and chained, leaves AtomicOp.Expected after one launch plus its warm-up
// (two launches: counters accumulate, exchange and min settle).
func TestAtomicsExact(t *testing.T) {
	r := newRig(t, "h200x2")
	r.enable(0, 1)
	const blocks, block, iters = 8, 64, 16
	threads := uint64(blocks * block)
	for _, op := range kernels.AtomicOps {
		for _, mode := range []string{"distinct", "contended", "chain"} {
			if mode == "chain" && op.Chain.Entry == "" {
				continue
			}
			t.Run(op.Name+"/"+mode, func(t *testing.T) {
				chain, contended := mode == "chain", mode == "contended"
				b, th := uint32(blocks), uint32(block)
				if chain {
					b, th = 1, 1
				}
				got, _ := runAtomic(r, 0, 1, op, chain, contended, b, th, iters)
				want := expectedAfter(op, uint64(b)*uint64(th), iters, 2, chain || contended)
				for i, v := range got {
					if v != want {
						t.Fatalf("element %d = %s, want %s", i, show(op, v), show(op, want))
					}
				}
			})
		}
	}
	_ = threads
}

// expectedAfter mirrors the engine: counting operations accumulate over
// launches, exchange and min settle.
func expectedAfter(op kernels.AtomicOp, threads, iters, launches uint64, single bool) uint64 {
	switch op.Name {
	case "exch_u32", "min_u32":
		return op.Expected(threads, iters, single)
	}
	return op.Expected(threads, iters*launches, single)
}

func show(op kernels.AtomicOp, v uint64) string {
	if op.Float {
		return fmt.Sprint(math.Float32frombits(uint32(v)))
	}
	return fmt.Sprint(v)
}

// TestAtomicFaults: FaultAtomicCount loses an update on its pair only, and
// PCIe across switches (no native atomics) loses contended updates.
func TestAtomicFaults(t *testing.T) {
	add, _ := kernels.AtomicOpByName("add_u32")
	r := newRig(t, "dgx-h100", WithFault(Fault{Kind: FaultAtomicCount, Src: 0, Dst: 1}))
	r.enable(0, 1)
	r.enable(0, 2)
	got, _ := runAtomic(r, 0, 1, add, false, false, 4, 32, 10)
	if want := add.Expected(128, 20, false); got[0] == want {
		t.Errorf("faulted pair 0→1: element 0 = %d, the exact value", got[0])
	}
	got, _ = runAtomic(r, 0, 2, add, false, true, 4, 32, 10)
	if want := add.Expected(128, 20, true); got[0] != want {
		t.Errorf("pair 0→2: %d, want %d", got[0], want)
	}

	p := newRig(t, "pcie-4gpu")
	p.enable(0, 3)
	p.enable(0, 1)
	got, _ = runAtomic(p, 0, 3, add, false, true, 4, 32, 10)
	if want := add.Expected(128, 20, true); got[0] >= want {
		t.Errorf("contended add across switches: %d, want fewer than %d (no native atomics)", got[0], want)
	}
	got, _ = runAtomic(p, 0, 1, add, false, true, 4, 32, 10)
	if want := add.Expected(128, 20, true); got[0] != want {
		t.Errorf("contended add within a switch: %d, want %d", got[0], want)
	}
}

// TestAtomicRates: throughput and chain latency as modelled.
func TestAtomicRates(t *testing.T) {
	r := newRig(t, "h200x2")
	r.enable(0, 1)
	red, _ := kernels.AtomicOpByName("red_add_u32")
	add, _ := kernels.AtomicOpByName("add_u32")
	const blocks, block, iters = 264, 256, 64
	ops := float64(blocks * block * iters)
	cases := []struct {
		name      string
		op        kernels.AtomicOp
		owner     int
		contended bool
		lo, hi    float64 // Gop/s
	}{
		// As the 2× H200s: 66.5, 64.5, 342 and 0.36 Gop/s.
		{"remote red distinct", red, 1, false, 60, 70},
		{"remote atom distinct", add, 1, false, 58, 68},
		{"local red distinct", red, 0, false, 300, 400},
		{"remote contended", add, 1, true, 0.3, 0.45},
	}
	for _, tc := range cases {
		_, ms := runAtomic(r, 0, tc.owner, tc.op, false, tc.contended, blocks, block, iters)
		if g := ops / (ms * 1e-3) / 1e9; g < tc.lo || g > tc.hi {
			t.Errorf("%s: %.1f Gop/s, want %g–%g", tc.name, g, tc.lo, tc.hi)
		}
	}
	for _, tc := range []struct {
		owner int
		want  float64
	}{{1, h200x2Model().atomLatRemote}, {0, h200x2Model().atomLatLocal}} {
		_, ms := runAtomic(r, 0, tc.owner, add, true, false, 1, 1, 2000)
		// The counter's place puts a factor of 1 to 1.75 on it (atomicPlace).
		if ns := ms * 1e6 / 2000; ns < tc.want*0.97 || ns > tc.want*1.75*1.03 {
			t.Errorf("chain on device %d's memory: %.0f ns per atomic, want %.0f to %.0f by the counter's place", tc.owner, ns, tc.want, tc.want*1.75)
		}
	}
}
