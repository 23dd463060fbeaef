package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
)

// TestFillCopyCheck moves a filled buffer every way the engine does and
// checks it on the destination.
func TestFillCopyCheck(t *testing.T) {
	const size = 16 << 20
	cases := []struct {
		name    string
		machine string
		peer    bool // enable peer access issuer → other side
		copy    func(r *rig, dst, src cuda.DevicePtr) error
		issuer  int
	}{
		{"ce pull", "h200x2", true, func(r *rig, dst, src cuda.DevicePtr) error {
			return r.ctx[1].MemcpyPeerAsync(dst, r.ctx[1], src, r.ctx[0], size, 0)
		}, 1},
		{"ce push", "h200x2", true, func(r *rig, dst, src cuda.DevicePtr) error {
			return r.ctx[0].MemcpyPeerAsync(dst, r.ctx[1], src, r.ctx[0], size, 0)
		}, 0},
		{"ce staged (no peer access)", "h200x2", false, func(r *rig, dst, src cuda.DevicePtr) error {
			return r.ctx[1].MemcpyPeerAsync(dst, r.ctx[1], src, r.ctx[0], size, 0)
		}, 1},
		{"ce by address", "dgx-h100", true, func(r *rig, dst, src cuda.DevicePtr) error {
			return r.ctx[1].MemcpyAsync(dst, src, size, 0)
		}, 1},
		{"sm read", "h200x2", true, func(r *rig, dst, src cuda.DevicePtr) error {
			return r.smJob(1, "v4_u4", dst, src, size).op(0)
		}, 1},
		{"sm write", "h200x2", true, func(r *rig, dst, src cuda.DevicePtr) error {
			return r.smJob(0, "cs_u8", dst, src, size).op(0)
		}, 0},
		{"sm bulk", "h200x2", true, func(r *rig, dst, src cuda.DevicePtr) error {
			return r.smJob(0, "bulk", dst, src, size).op(0)
		}, 0},
		{"pcie, no P2P pair, staged", "pcie-4gpu", false, func(r *rig, dst, src cuda.DevicePtr) error {
			return r.ctx[1].MemcpyPeerAsync(dst, r.ctx[1], src, r.ctx[0], size, 0)
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.machine)
			src, dst := r.alloc(0, size), r.alloc(1, size)
			if tc.peer {
				r.enable(tc.issuer, 1-tc.issuer)
			}
			r.fill(0, src, size, 0xabc)
			r.must(r.ctx[1].MemsetD32Async(dst, 0xDEADBEEF, size/4, 0))
			if _, bad, _ := r.check(1, dst, size, 0xabc); bad != size/4 {
				t.Fatalf("poisoned destination: %d bad words, want all %d", bad, size/4)
			}
			r.must(tc.copy(r, dst, src))
			r.must(r.ctx[tc.issuer].Synchronize())
			first, bad, err := r.check(1, dst, size, 0xabc)
			r.must(err)
			if bad != 0 || first != ^uint64(0) {
				t.Errorf("after the copy: first bad %d, %d bad", first, bad)
			}
			if _, bad, _ := r.check(1, dst, size, 0xabd); bad != size/4 {
				t.Errorf("checked with another seed: %d bad, want all %d", bad, size/4)
			}
		})
	}
}

// TestSMCopyReps: a launch that repeats its copy leaves the data one copy
// leaves (none for 0 repetitions), and at 512 MiB three copies in one
// launch take less than three launches of one by two launch costs: per
// copy, 0.47% faster.
func TestSMCopyReps(t *testing.T) {
	const size = 512 << 20
	r := newRig(t, "h200x2")
	src, dst := r.alloc(0, size), r.alloc(1, size)
	r.enable(1, 0)
	r.fill(0, src, size, 0xabc)
	for _, reps := range []uint32{0, 3} {
		r.must(r.ctx[1].MemsetD32Async(dst, 0xDEADBEEF, size/4, 0))
		r.must(r.smJobN(1, "bulk", dst, src, size, reps).op(0))
		r.must(r.ctx[1].Synchronize())
		_, bad, err := r.check(1, dst, size, 0xabc)
		r.must(err)
		if want := map[uint32]uint64{0: size / 4, 3: 0}[reps]; bad != want {
			t.Errorf("%d repetitions: %d bad words, want %d", reps, bad, want)
		}
	}
	one, _ := r.timeJobs(4, r.smJob(1, "bulk", dst, src, size))
	three, _ := r.timeJobs(4, r.smJobN(1, "bulk", dst, src, size, 3))
	gain := one[0]/(three[0]/3) - 1
	t.Logf("a launch per copy %.2f GB/s, three copies a launch %.2f (%+.3f%%)", gbps(size, one[0]), gbps(3*size, three[0]), 100*gain)
	if gain < 0.003 || gain > 0.0065 {
		t.Errorf("three copies in one launch %+.3f%% per copy against a launch each, want about +0.47%%", 100*gain)
	}
}

// TestCorruptionFault: the flipped word is found at its index, alone, by
// the check, whichever engine moved the data; other pairs are clean.
func TestCorruptionFault(t *testing.T) {
	const size = 1 << 30
	const offset = 123456*4 + 2 // inside word 123456
	for _, engine := range []string{"ce", "sm"} {
		t.Run(engine, func(t *testing.T) {
			r := newRig(t, "dgx-h100", WithFault(Fault{Kind: FaultCorrupt, Src: 3, Dst: 6, Offset: offset}))
			src, dst, other := r.alloc(3, size), r.alloc(6, size), r.alloc(5, size)
			r.enable(6, 3)
			r.enable(5, 3)
			r.fill(3, src, size, 7)
			if engine == "ce" {
				r.must(r.ctx[6].MemcpyPeerAsync(dst, r.ctx[6], src, r.ctx[3], size, 0))
				r.must(r.ctx[5].MemcpyPeerAsync(other, r.ctx[5], src, r.ctx[3], size, 0))
			} else {
				r.must(r.smJob(6, "v4_u4", dst, src, size).op(0))
				r.must(r.smJob(5, "v4_u4", other, src, size).op(0))
			}
			r.must(r.ctx[6].Synchronize())
			r.must(r.ctx[5].Synchronize())
			first, bad, err := r.check(6, dst, size, 7)
			r.must(err)
			if first != 123456 || bad != 1 {
				t.Errorf("3→6: first bad %d, count %d; want 123456, 1", first, bad)
			}
			if _, bad, _ := r.check(5, other, size, 7); bad != 0 {
				t.Errorf("3→5: %d bad words, want none", bad)
			}
		})
	}
}

// TestIllegalAddress: an SM kernel touching a peer's memory without peer
// access fails at the next synchronisation with ILLEGAL_ADDRESS; without
// WithStickyErrors the context recovers, with it every later call fails.
func TestIllegalAddress(t *testing.T) {
	for _, sticky := range []bool{false, true} {
		var opts []Option
		if sticky {
			opts = append(opts, WithStickyErrors())
		}
		r := newRig(t, "h200x2", opts...)
		src, dst := r.alloc(0, 1<<20), r.alloc(1, 1<<20)
		// The launch itself succeeds, as on a GPU.
		r.must(r.smJob(1, "v4_u4", dst, src, 1<<20).op(0))
		err := r.ctx[1].StreamSynchronize(0)
		wantCode(t, "sync after the faulting copy", err, cuda.ErrorIllegalAddress)
		if err != nil && !strings.Contains(err.Error(), "without peer access") {
			t.Errorf("error does not say why: %v", err)
		}
		err = r.ctx[1].StreamSynchronize(0)
		_, allocErr := r.ctx[1].MemAlloc(256)
		if sticky {
			wantCode(t, "sticky: second sync", err, cuda.ErrorIllegalAddress)
			wantCode(t, "sticky: MemAlloc", allocErr, cuda.ErrorIllegalAddress)
		} else {
			wantCode(t, "second sync", err, cuda.Success)
			wantCode(t, "MemAlloc", allocErr, cuda.Success)
			r.enable(1, 0)
			r.must(r.smJob(1, "v4_u4", dst, src, 1<<20).op(0))
			wantCode(t, "with peer access", r.ctx[1].StreamSynchronize(0), cuda.Success)
		}
		// Other contexts are not affected.
		wantCode(t, "device 0", r.ctx[0].Synchronize(), cuda.Success)
	}
}

func TestFaultAsyncError(t *testing.T) {
	r := newRig(t, "h200x2", WithFault(Fault{Kind: FaultAsyncError, Src: 0, Dst: 1, Code: cuda.ErrorLaunchFailed}))
	src, dst := r.alloc(0, 1<<20), r.alloc(1, 1<<20)
	r.enable(0, 1)
	wantCode(t, "enqueue", r.ctx[0].MemcpyPeerAsync(dst, r.ctx[1], src, r.ctx[0], 1<<20, 0), cuda.Success)
	wantCode(t, "sync", r.ctx[0].StreamSynchronize(0), cuda.ErrorLaunchFailed)
	wantCode(t, "reverse", r.ctx[0].MemcpyPeerAsync(src, r.ctx[0], dst, r.ctx[1], 1<<20, 0), cuda.Success)
	wantCode(t, "reverse sync", r.ctx[0].StreamSynchronize(0), cuda.Success)
}

func TestLaunchAndModuleErrors(t *testing.T) {
	r := newRig(t, "pcie-4gpu")
	c := r.ctx[0]
	p := r.alloc(0, 4096)
	fill := r.fn(0, kernels.Fill)
	one := [3]uint32{1, 1, 1}
	cases := []struct {
		name string
		err  error
		want cuda.Result
	}{
		{"too few parameters", c.Launch(fill, one, one, 0, 0, uint64(p), uint64(1)), cuda.ErrorInvalidValue},
		{"u64 for a u32", c.Launch(fill, one, one, 0, 0, uint64(p), uint64(1), uint64(2)), cuda.ErrorInvalidValue},
		{"int for a u64", c.Launch(fill, one, one, 0, 0, int(p), uint64(1), uint32(2)), cuda.ErrorInvalidValue},
		{"DevicePtr accepted", c.Launch(fill, one, one, 0, 0, p, uint64(1), uint32(2)), cuda.Success},
		{"block of 2048", c.Launch(fill, one, [3]uint32{2048, 1, 1}, 0, 0, p, uint64(1), uint32(2)), cuda.ErrorInvalidValue},
		{"empty grid", c.Launch(fill, [3]uint32{0, 1, 1}, one, 0, 0, p, uint64(1), uint32(2)), cuda.ErrorInvalidValue},
		{"64 KiB shared without opt-in", c.Launch(fill, one, one, 64<<10, 0, p, uint64(1), uint32(2)), cuda.ErrorInvalidValue},
		{"opt-in beyond the device", c.SetMaxDynamicShared(fill, 200<<10), cuda.ErrorInvalidValue},
		{"bad function", c.Launch(0x1234, one, one, 0, 0), cuda.ErrorInvalidHandle},
		{"stream of another context", c.Launch(fill, one, one, 0, r.stream(1), p, uint64(1), uint32(2)), cuda.ErrorInvalidHandle},
	}
	for _, tc := range cases {
		wantCode(t, tc.name, tc.err, tc.want)
	}
	wantCode(t, "opt-in", c.SetMaxDynamicShared(fill, 64<<10), cuda.Success)
	wantCode(t, "64 KiB shared after opt-in", c.Launch(fill, one, one, 64<<10, 0, p, uint64(1), uint32(2)), cuda.Success)

	ptx, err := kernels.PTX("verify")
	r.must(err)
	m, err := c.LoadModule(ptx)
	r.must(err)
	_, err = c.Function(m, "p2p_nope")
	wantCode(t, "unknown entry", err, cuda.ErrorNotFound)
	r.must(c.UnloadModule(m))
	wantCode(t, "unload twice", c.UnloadModule(m), cuda.ErrorInvalidHandle)
	_, err = c.Function(m, "p2p_fill")
	wantCode(t, "function of an unloaded module", err, cuda.ErrorInvalidHandle)

	_, err = c.LoadModule("// not PTX at all\x00")
	wantCode(t, "not PTX", err, cuda.ErrorInvalidPTX)
	if err != nil && !strings.Contains(err.Error(), "JIT error log") {
		t.Errorf("no JIT log in %v", err)
	}
	bulk, err := kernels.PTX("copy_bulk")
	r.must(err)
	_, err = c.LoadModule(bulk) // sm_90 on an sm_89 L40S
	wantCode(t, "sm_90 module on 8.9", err, cuda.ErrorInvalidPTX)
	_, err = c.LoadModule(".version 9.9\n.target sm_80\n.address_size 64\n.visible .entry x() { ret; }")
	wantCode(t, "PTX too new", err, 222)
}

// TestSizesNearTwoToTheSixtyFour: allocations and word counts whose bytes
// overflow fail as on a GPU (out of memory, an illegal address), never
// rounded or multiplied past zero into a small size.
func TestSizesNearTwoToTheSixtyFour(t *testing.T) {
	r := newRig(t, "h200x2")
	for _, n := range []uint64{1<<64 - 4, 1<<64 - 2<<20, 1 << 63} {
		_, err := r.ctx[0].MemAlloc(n)
		wantCode(t, fmt.Sprintf("MemAlloc(%d)", n), err, cuda.ErrorOutOfMemory)
	}
	p := r.alloc(0, 1<<20)
	for _, k := range []kernels.Kernel{kernels.Fill, kernels.Check} {
		var params []any
		if k.Entry == kernels.Fill.Entry {
			params = kernels.FillArgs{Buf: uint64(p), Words: 1<<62 + 1, Seed: 1}.Params()
		} else {
			params = kernels.CheckArgs{Buf: uint64(p), Words: 1<<62 + 1, Seed: 1, Result: uint64(p)}.Params()
		}
		r.must(r.launch(0, k, 1, 256, 0, params...))
		err := r.ctx[0].StreamSynchronize(0)
		wantCode(t, k.Entry+" of 2^62+1 words", err, cuda.ErrorIllegalAddress)
	}
}
