package sim

import (
	"encoding/binary"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
)

// rig is a simulated machine with helpers to drive it as the engine does.
type rig struct {
	t    testing.TB
	d    *Driver
	ctx  []gpu.Context
	mods map[int]map[string]cuda.Module
	fns  map[int]map[string]cuda.Function
}

func newRig(t testing.TB, machine string, opts ...Option) *rig {
	t.Helper()
	d, err := New(machine, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	r := &rig{t: t, d: d, mods: map[int]map[string]cuda.Module{}, fns: map[int]map[string]cuda.Function{}}
	for i := 0; i < d.m.n; i++ {
		c, err := d.Context(i)
		if err != nil {
			t.Fatal(err)
		}
		r.ctx = append(r.ctx, c)
	}
	return r
}

func (r *rig) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

// fn loads k's module on dev (once) and returns the function.
func (r *rig) fn(dev int, k kernels.Kernel) cuda.Function {
	r.t.Helper()
	if f, ok := r.fns[dev][k.Entry]; ok {
		return f
	}
	if r.mods[dev] == nil {
		r.mods[dev] = map[string]cuda.Module{}
		r.fns[dev] = map[string]cuda.Function{}
	}
	m, ok := r.mods[dev][k.Module]
	if !ok {
		ptx, err := kernels.PTX(k.Module)
		r.must(err)
		m, err = r.ctx[dev].LoadModule(ptx)
		r.must(err)
		r.mods[dev][k.Module] = m
	}
	f, err := r.ctx[dev].Function(m, k.Entry)
	r.must(err)
	r.fns[dev][k.Entry] = f
	return f
}

func (r *rig) launch(dev int, k kernels.Kernel, grid, block uint32, s cuda.Stream, params ...any) error {
	r.t.Helper()
	return r.ctx[dev].Launch(r.fn(dev, k), [3]uint32{grid, 1, 1}, [3]uint32{block, 1, 1}, 0, s, params...)
}

func (r *rig) stream(dev int) cuda.Stream {
	r.t.Helper()
	s, err := r.ctx[dev].StreamCreate()
	r.must(err)
	return s
}

func (r *rig) alloc(dev int, n uint64) cuda.DevicePtr {
	r.t.Helper()
	p, err := r.ctx[dev].MemAlloc(n)
	r.must(err)
	return p
}

func (r *rig) enable(a, b int) {
	r.t.Helper()
	r.must(r.ctx[a].EnablePeerAccess(r.ctx[b], 0))
}

// fill writes the pattern over bytes of p (memory of any device) from dev.
func (r *rig) fill(dev int, p cuda.DevicePtr, bytes uint64, seed uint32) {
	r.t.Helper()
	r.must(r.launch(dev, kernels.Fill, 528, 256, 0, kernels.FillArgs{Buf: uint64(p), Words: bytes / 4, Seed: seed}.Params()...))
	r.must(r.ctx[dev].StreamSynchronize(0))
}

// check runs p2p_check on dev and returns {first_bad, bad_count}.
func (r *rig) check(dev int, p cuda.DevicePtr, bytes uint64, seed uint32) (first, bad uint64, err error) {
	r.t.Helper()
	res := r.alloc(dev, 256)
	defer r.ctx[dev].MemFree(res)
	c := r.ctx[dev]
	r.must(c.MemsetD32Async(res, 0xFFFFFFFF, 2, 0))
	r.must(c.MemsetD32Async(res+8, 0, 2, 0))
	if err := r.launch(dev, kernels.Check, 528, 256, 0, kernels.CheckArgs{Buf: uint64(p), Words: bytes / 4, Seed: seed, Result: uint64(res)}.Params()...); err != nil {
		return 0, 0, err
	}
	if err := c.StreamSynchronize(0); err != nil {
		return 0, 0, err
	}
	var b [16]byte
	r.must(c.MemcpyDtoH(b[:], res))
	return binary.LittleEndian.Uint64(b[0:]), binary.LittleEndian.Uint64(b[8:]), nil
}

func (r *rig) readU64s(dev int, p cuda.DevicePtr, n int) []uint64 {
	r.t.Helper()
	b := make([]byte, 8*n)
	r.must(r.ctx[dev].MemcpyDtoH(b, p))
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

func (r *rig) readU32(dev int, p cuda.DevicePtr) uint32 {
	r.t.Helper()
	var b [4]byte
	r.must(r.ctx[dev].MemcpyDtoH(b[:], p))
	return binary.LittleEndian.Uint32(b[:])
}

func hostU32(h cuda.HostBuffer, off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&h.Host[off]))
}

// job is one timed transfer: op enqueues one repetition on the stream.
type job struct {
	dev int
	op  func(s cuda.Stream) error
}

// timeJobs runs the jobs at once behind latches, as the engine does, and
// timeJobs times reps back-to-back repetitions of each job at once in
// steady state, as the engine does: a window of one repetition and one of
// reps+1, each behind a latch released once everything is queued; ms is
// their difference over reps (each copy's drain taken out), status the
// latches' status words of the longer window.
func (r *rig) timeJobs(reps int, jobs ...job) (ms []float64, status []uint32) {
	r.t.Helper()
	streams := make([]cuda.Stream, len(jobs))
	for i, j := range jobs {
		streams[i] = r.stream(j.dev)
	}
	one, _ := r.window(1, streams, jobs)
	long, status := r.window(reps+1, streams, jobs)
	for i := range jobs {
		ms = append(ms, (long[i]-one[i])/float64(reps))
	}
	return ms, status
}

// window times reps repetitions of each job at once on its stream, after
// one untimed, behind a latch per device released once everything is
// queued: the milliseconds of each job's window and its latch's status word.
func (r *rig) window(reps int, streams []cuda.Stream, jobs []job) (ms []float64, status []uint32) {
	r.t.Helper()
	latches := map[int]cuda.HostBuffer{}
	type marks struct{ start, end cuda.Event }
	ev := make([]marks, len(jobs))
	for i, j := range jobs {
		c := r.ctx[j.dev]
		h, ok := latches[j.dev]
		if !ok {
			var err error
			h, err = c.HostAlloc(4096, true)
			r.must(err)
			latches[j.dev] = h
		}
		s := streams[i]
		st := 64 + 4*i
		r.must(r.launch(j.dev, kernels.Latch, 1, 1, s, kernels.LatchArgs{Flag: uint64(h.Device), Status: uint64(h.Device) + uint64(st), TimeoutNs: 5e9}.Params()...))
		r.must(j.op(s)) // warm-up
		var err error
		ev[i].start, err = c.EventCreate()
		r.must(err)
		ev[i].end, err = c.EventCreate()
		r.must(err)
		r.must(c.EventRecord(ev[i].start, s))
		for k := 0; k < reps; k++ {
			r.must(j.op(s))
		}
		r.must(c.EventRecord(ev[i].end, s))
	}
	for _, h := range latches {
		atomic.StoreUint32(hostU32(h, 0), 1)
	}
	for i, j := range jobs {
		c := r.ctx[j.dev]
		r.must(c.EventSynchronize(ev[i].end))
		el, err := c.EventElapsed(ev[i].start, ev[i].end)
		r.must(err)
		ms = append(ms, float64(el))
		status = append(status, atomic.LoadUint32(hostU32(latches[j.dev], 64+4*i)))
	}
	return ms, status
}

// ceJob is a cuMemcpyPeerAsync of size from src's buffer to dst's, issued on issuer.
func (r *rig) ceJob(issuer, src, dst int, sp, dp cuda.DevicePtr, size uint64) job {
	return job{issuer, func(s cuda.Stream) error {
		return r.ctx[issuer].MemcpyPeerAsync(dp, r.ctx[dst], sp, r.ctx[src], size, s)
	}}
}

// smJob is the SM copy variant launched on issuer, one copy per launch.
func (r *rig) smJob(issuer int, variant string, dp, sp cuda.DevicePtr, size uint64) job {
	return r.smJobN(issuer, variant, dp, sp, size, 1)
}

// smJobN is a launch of the SM copy variant on issuer that repeats the copy
// reps times.
func (r *rig) smJobN(issuer int, variant string, dp, sp cuda.DevicePtr, size uint64, reps uint32) job {
	k, ok := kernels.CopyKernelByVariant(variant)
	if !ok {
		r.t.Fatalf("no copy variant %q", variant)
	}
	grid := uint32(r.d.m.gpu.sms * 4)
	return job{issuer, func(s cuda.Stream) error {
		return r.launch(issuer, k.Kernel, grid, 512, s, kernels.CopyArgs{Dst: uint64(dp), Src: uint64(sp), Bytes: size, Reps: reps}.Params()...)
	}}
}

func gbps(size uint64, ms float64) float64 { return float64(size) / (ms * 1e-3) / 1e9 }

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// wantCode checks that err carries the CUDA error code want (Success: nil).
func wantCode(t testing.TB, what string, err error, want cuda.Result) {
	t.Helper()
	if want == cuda.Success {
		if err != nil {
			t.Errorf("%s: %v, want success", what, err)
		}
		return
	}
	var ce *cuda.Error
	if !errors.As(err, &ce) || ce.Code != want {
		t.Errorf("%s: %v, want %s", what, err, cuda.NewError(want, "").Name)
	}
}
