package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// TestBandwidthModel times single transfers behind a latch, as the engine
// does, and compares GB/s with the model's calibration (hardware.md on
// h200x2).
func TestBandwidthModel(t *testing.T) {
	const size = 256 << 20
	cases := []struct {
		name    string
		machine string
		job     func(r *rig, a, b cuda.DevicePtr) job // a on device 0, b on device 1 (or 3)
		peer    [2]int                                // enable peer access (issuer, peer); -1: none
		want    float64
		tol     float64
	}{
		{"h200 ce push", "h200x2", func(r *rig, a, b cuda.DevicePtr) job { return r.ceJob(0, 0, 1, a, b, size) }, [2]int{0, 1}, 394, 0.015},
		{"h200 ce pull", "h200x2", func(r *rig, a, b cuda.DevicePtr) job { return r.ceJob(1, 0, 1, a, b, size) }, [2]int{1, 0}, 394, 0.015},
		{"h200 sm read", "h200x2", func(r *rig, a, b cuda.DevicePtr) job { return r.smJob(1, "v4_u4", b, a, size) }, [2]int{1, 0}, 373, 0.015},
		{"h200 sm write", "h200x2", func(r *rig, a, b cuda.DevicePtr) job { return r.smJob(0, "v4_u4", b, a, size) }, [2]int{0, 1}, 370, 0.015},
		{"h200 staged", "h200x2", func(r *rig, a, b cuda.DevicePtr) job { return r.ceJob(1, 0, 1, a, b, size) }, [2]int{-1, -1}, 38, 0.03},
		{"h200 local ce", "h200x2", func(r *rig, a, b cuda.DevicePtr) job {
			return job{0, func(s cuda.Stream) error { return r.ctx[0].MemcpyAsync(a+size, a, size, s) }}
		}, [2]int{-1, -1}, 2000, 0.03},
		{"dgx ce push", "dgx-h100", func(r *rig, a, b cuda.DevicePtr) job { return r.ceJob(0, 0, 1, a, b, size) }, [2]int{0, 1}, 394, 0.015},
		{"pcie same switch", "pcie-4gpu", func(r *rig, a, b cuda.DevicePtr) job { return r.ceJob(0, 0, 1, a, b, size) }, [2]int{0, 1}, 25, 0.03},
		{"pcie across switches", "pcie-4gpu", func(r *rig, a, b cuda.DevicePtr) job { return r.ceJob(0, 0, 3, a, b, size) }, [2]int{0, 3}, 12, 0.03},
		{"nvl72 ce push", "nvl72", func(r *rig, a, b cuda.DevicePtr) job { return r.ceJob(0, 0, 1, a, b, size) }, [2]int{0, 1}, 788, 0.015},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.machine)
			other := 1
			if tc.name == "pcie across switches" {
				other = 3
			}
			a, b := r.alloc(0, 2*size), r.alloc(other, size)
			if tc.peer[0] >= 0 {
				r.enable(tc.peer[0], tc.peer[1])
			}
			ms, status := r.timeJobs(3, tc.job(r, a, b))
			if status[0] != kernels.LatchReleased {
				t.Fatalf("latch status %d", status[0])
			}
			got := gbps(size, ms[0])
			t.Logf("%.1f GB/s", got)
			if !near(got, tc.want, tc.tol) {
				t.Errorf("%.1f GB/s, want %.0f ± %.1f%%", got, tc.want, 100*tc.tol)
			}
		})
	}
}

// TestSlowLink: a slow link carries data one way at its scale of the rate;
// the other way and other pairs are as fast as before.
func TestSlowLink(t *testing.T) {
	const size = 256 << 20
	r := newRig(t, "pcie-4gpu", WithFault(Fault{Kind: FaultSlowLink, Src: 0, Dst: 1, Scale: 0.5}))
	a, b, c := r.alloc(0, 2*size), r.alloc(1, size), r.alloc(2, size)
	r.enable(0, 1)
	r.enable(1, 0)
	for _, tc := range []struct {
		name string
		job  job
		want float64
	}{
		{"0→1 pushed", r.ceJob(0, 0, 1, a, b, size), 12.5},
		{"0→1 pulled", r.ceJob(1, 0, 1, a, b, size), 12.5},
		{"1→0", r.ceJob(1, 1, 0, b, a, size), 25},
		{"staged 0→2", r.ceJob(0, 0, 2, a, c, size), 17},
	} {
		ms, _ := r.timeJobs(3, tc.job)
		if got := gbps(size, ms[0]); !near(got, tc.want, 0.03) {
			t.Errorf("%s: %.1f GB/s, want %.1f", tc.name, got, tc.want)
		}
	}
	if _, err := New("h200x2", WithFault(Fault{Kind: FaultSlowLink, Src: 0, Dst: 1, Scale: 1})); err == nil || !strings.Contains(err.Error(), "Scale above 0 and below 1") {
		t.Errorf("a slow link at scale 1: %v", err)
	}
}

// TestHostCopies: pinned host copies at PCIe speed, pageable ones slower.
func TestHostCopies(t *testing.T) {
	const size = 16 << 20
	r := newRig(t, "h200x2")
	dev := r.alloc(0, size)
	h, err := r.ctx[0].HostAlloc(size, true)
	r.must(err)
	ms, _ := r.timeJobs(2, job{0, func(s cuda.Stream) error { return r.ctx[0].MemcpyAsync(h.Device, dev, size, s) }})
	if got := gbps(size, ms[0]); !near(got, 55, 0.03) {
		t.Errorf("D2H pinned %.1f GB/s, want ~55", got)
	}
	ms, _ = r.timeJobs(2, job{0, func(s cuda.Stream) error { return r.ctx[0].MemcpyAsync(dev, h.Device, size, s) }})
	if got := gbps(size, ms[0]); !near(got, 55, 0.03) {
		t.Errorf("H2D pinned %.1f GB/s, want ~55", got)
	}
	// Round trip of real bytes, through device memory, with odd offsets.
	src := make([]byte, 1000)
	for i := range src {
		src[i] = byte(i * 7)
	}
	r.must(r.ctx[0].MemcpyHtoD(dev+3, src))
	got := make([]byte, 1000)
	r.must(r.ctx[0].MemcpyDtoH(got, dev+3))
	for i := range got {
		if got[i] != src[i] {
			t.Fatalf("byte %d: %d, want %d", i, got[i], src[i])
		}
	}
	wantCode(t, "HtoD past the end", r.ctx[0].MemcpyHtoD(dev+size-4, src), cuda.ErrorInvalidValue)
}

// TestBidirectional: both directions at once share the links as measured
// on the H200 pair, at the size it measured them (512 MiB: an SM launch per
// copy costs 0.7% of a copy there, twice that at 256 MiB).
func TestBidirectional(t *testing.T) {
	const size = 512 << 20
	cases := []struct {
		name  string
		jobs  func(r *rig, a0, a1, b0, b1 cuda.DevicePtr) []job
		total float64
	}{
		{"ce push", func(r *rig, a0, a1, b0, b1 cuda.DevicePtr) []job {
			return []job{r.ceJob(0, 0, 1, a0, b1, size), r.ceJob(1, 1, 0, a1, b0, size)}
		}, 783},
		{"ce pull", func(r *rig, a0, a1, b0, b1 cuda.DevicePtr) []job {
			return []job{r.ceJob(1, 0, 1, a0, b1, size), r.ceJob(0, 1, 0, a1, b0, size)}
		}, 778},
		{"sm read", func(r *rig, a0, a1, b0, b1 cuda.DevicePtr) []job {
			return []job{r.smJob(1, "v4_u8", b1, a0, size), r.smJob(0, "v4_u8", b0, a1, size)}
		}, 672},
		{"sm write", func(r *rig, a0, a1, b0, b1 cuda.DevicePtr) []job {
			return []job{r.smJob(0, "v4_u8", b1, a0, size), r.smJob(1, "v4_u8", b0, a1, size)}
		}, 731},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "h200x2")
			r.enable(0, 1)
			r.enable(1, 0)
			a0, b0, a1, b1 := r.alloc(0, size), r.alloc(0, size), r.alloc(1, size), r.alloc(1, size)
			one, _ := r.timeJobs(2, tc.jobs(r, a0, a1, b0, b1)[0])
			both, _ := r.timeJobs(2, tc.jobs(r, a0, a1, b0, b1)...)
			total := 2 * size / (max(both[0], both[1]) * 1e-3) / 1e9
			t.Logf("one direction %.1f GB/s, both %.1f + %.1f, total %.1f", gbps(size, one[0]), gbps(size, both[0]), gbps(size, both[1]), total)
			if !near(total, tc.total, 0.015) {
				t.Errorf("total %.1f GB/s, want %.0f", total, tc.total)
			}
			if ratio := total / gbps(size, one[0]); ratio < 1.75 || ratio > 2.02 {
				t.Errorf("both directions %.2f× one direction", ratio)
			}
		})
	}
}

// TestAllToOne: on the NVSwitch box, seven sources pushing into one device
// share its ingress port.
func TestAllToOne(t *testing.T) {
	const size = 128 << 20
	r := newRig(t, "dgx-h100")
	var jobs []job
	for s := 1; s < 8; s++ {
		r.enable(s, 0)
		jobs = append(jobs, r.ceJob(s, s, 0, r.alloc(s, size), r.alloc(0, size), size))
	}
	ms, _ := r.timeJobs(2, jobs...)
	longest := 0.0
	for _, m := range ms {
		longest = max(longest, m)
	}
	total := 7 * size / (longest * 1e-3) / 1e9
	if !near(total, 394, 0.02) {
		t.Errorf("all-to-one total %.1f GB/s, want ~394 (the destination's ingress)", total)
	}
	for i, m := range ms {
		if g := gbps(size, m); !near(g, 394.0/7, 0.05) {
			t.Errorf("source %d: %.1f GB/s, want ~%.1f", i+1, g, 394.0/7)
		}
	}
}

// TestLatch: released, the latch writes 1 and the work behind it runs at
// its own speed; never released (or stuck by a fault), it writes 2 after its
// timeout of virtual time.
func TestLatch(t *testing.T) {
	cases := []struct {
		name    string
		opts    []Option
		release bool
		status  uint32
	}{
		{"released", nil, true, kernels.LatchReleased},
		{"never released", []Option{WithLatchGrace(0)}, false, kernels.LatchTimedOut},
		{"never released, with grace", nil, false, kernels.LatchTimedOut},
		{"stuck by a fault", []Option{WithFault(Fault{Kind: FaultLatchStuck, Src: AnyDevice})}, true, kernels.LatchTimedOut},
	}
	const timeout = 3e6 // 3 ms
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "h200x2", tc.opts...)
			c := r.ctx[0]
			h, err := c.HostAlloc(4096, true)
			r.must(err)
			s := r.stream(0)
			r.fn(0, kernels.Latch) // load (JIT) before timing
			before, _ := c.EventCreate()
			after, _ := c.EventCreate()
			r.must(c.EventRecord(before, s))
			r.must(r.launch(0, kernels.Latch, 1, 1, s, kernels.LatchArgs{Flag: uint64(h.Device), Status: uint64(h.Device) + 64, TimeoutNs: timeout}.Params()...))
			r.must(c.EventRecord(after, s))
			if tc.release {
				atomic.StoreUint32(hostU32(h, 0), 1)
			}
			r.must(c.StreamSynchronize(s))
			if got := atomic.LoadUint32(hostU32(h, 64)); got != tc.status {
				t.Errorf("status %d, want %d", got, tc.status)
			}
			ms, err := c.EventElapsed(before, after)
			r.must(err)
			if tc.status == kernels.LatchTimedOut && (ms < 3 || ms > 3.01) {
				t.Errorf("timed-out latch held the stream %.4f ms, want just over 3", ms)
			}
			if tc.status == kernels.LatchReleased && ms > 0.05 {
				t.Errorf("released latch held the stream %.4f ms", ms)
			}
		})
	}
}

// TestLatchReleasedByAnotherGoroutine: a synchronising call gives the host
// a moment to release the latch from elsewhere before timing it out.
func TestLatchReleasedByAnotherGoroutine(t *testing.T) {
	r := newRig(t, "h200x2", WithLatchGrace(2*time.Second))
	c := r.ctx[0]
	h, err := c.HostAlloc(4096, true)
	r.must(err)
	s := r.stream(0)
	r.must(r.launch(0, kernels.Latch, 1, 1, s, kernels.LatchArgs{Flag: uint64(h.Device), Status: uint64(h.Device) + 64, TimeoutNs: 1e9}.Params()...))
	waiting := make(chan struct{}, 1)
	r.d.hostWaiting = waiting
	go func() {
		<-waiting // the synchronising call has started to wait
		atomic.StoreUint32(hostU32(h, 0), 1)
	}()
	r.must(c.StreamSynchronize(s))
	if got := atomic.LoadUint32(hostU32(h, 64)); got != kernels.LatchReleased {
		t.Errorf("status %d, want released", got)
	}
}

// TestEventErrors covers the documented event and stream handle errors.
func TestEventErrors(t *testing.T) {
	r := newRig(t, "h200x2")
	c := r.ctx[0]
	a, _ := c.EventCreate()
	b, _ := c.EventCreate()
	ipc, _ := c.EventCreateInterprocess()
	_, err := c.EventElapsed(a, b)
	wantCode(t, "elapsed, never recorded", err, cuda.ErrorInvalidHandle)
	r.must(c.EventRecord(a, 0))
	r.must(c.EventRecord(ipc, 0))
	r.must(c.EventSynchronize(ipc))
	_, err = c.EventElapsed(a, ipc)
	wantCode(t, "elapsed with a timing-disabled event", err, cuda.ErrorInvalidHandle)

	// A record behind an unreleased latch is not ready.
	h, _ := c.HostAlloc(4096, true)
	s := r.stream(0)
	r.must(r.launch(0, kernels.Latch, 1, 1, s, kernels.LatchArgs{Flag: uint64(h.Device), Status: uint64(h.Device) + 64, TimeoutNs: 1e9}.Params()...))
	r.must(c.EventRecord(b, s))
	_, err = c.EventElapsed(a, b)
	wantCode(t, "elapsed before the record ran", err, cuda.ErrorNotReady)
	atomic.StoreUint32(hostU32(h, 0), 1)
	r.must(c.EventSynchronize(b))
	if _, err := c.EventElapsed(a, b); err != nil {
		t.Errorf("elapsed after sync: %v", err)
	}

	// Events of two devices do not compare.
	x, _ := r.ctx[1].EventCreate()
	r.must(r.ctx[1].EventRecord(x, 0))
	r.must(r.ctx[1].EventSynchronize(x))
	_, err = c.EventElapsed(a, x)
	wantCode(t, "elapsed across devices", err, cuda.ErrorInvalidHandle)
	wantCode(t, "record on another context's event", c.EventRecord(x, 0), cuda.ErrorInvalidHandle)

	r.must(c.EventDestroy(a))
	wantCode(t, "destroy twice", c.EventDestroy(a), cuda.ErrorInvalidHandle)
	wantCode(t, "record a destroyed event", c.EventRecord(a, 0), cuda.ErrorInvalidHandle)
	r.must(c.StreamDestroy(s))
	wantCode(t, "stream destroyed twice", c.StreamDestroy(s), cuda.ErrorInvalidHandle)
	wantCode(t, "sync a destroyed stream", c.StreamSynchronize(s), cuda.ErrorInvalidHandle)
	wantCode(t, "legacy stream destroy", c.StreamDestroy(0), cuda.ErrorInvalidHandle)
}

// TestStreamWaitEventAcrossDevices: work on device 1 waits for an event
// recorded after a long copy on device 0.
func TestStreamWaitEventAcrossDevices(t *testing.T) {
	const size = 512 << 20
	r := newRig(t, "h200x2")
	r.enable(0, 1)
	c0, c1 := r.ctx[0], r.ctx[1]
	src, dst := r.alloc(0, size), r.alloc(1, size)
	s0, s1 := r.stream(0), r.stream(1)
	e0, _ := c0.EventCreate()
	start, _ := c1.EventCreate()
	end, _ := c1.EventCreate()
	r.must(c1.EventRecord(start, s1))
	r.must(c0.MemcpyPeerAsync(dst, c1, src, c0, size, s0))
	r.must(c0.EventRecord(e0, s0))
	r.must(c1.StreamWaitEvent(s1, e0))
	r.must(c1.EventRecord(end, s1))
	r.must(c1.EventSynchronize(end))
	ms, err := c1.EventElapsed(start, end)
	r.must(err)
	if copyMs := float64(size) / 394e9 * 1e3; float64(ms) < copyMs {
		t.Errorf("device 1 waited %.3f ms, less than the %.3f ms copy it waits for", ms, copyMs)
	}
}

// TestDeterministic: one seed, one set of figures; another seed, others.
func TestDeterministic(t *testing.T) {
	run := func(seed int64) []float64 {
		r := newRig(t, "h200x2", WithSeed(seed))
		r.enable(0, 1)
		a, b := r.alloc(0, 64<<20), r.alloc(1, 64<<20)
		var out []float64
		for range 5 {
			ms, _ := r.timeJobs(1, r.ceJob(0, 0, 1, a, b, 64<<20))
			out = append(out, ms[0])
		}
		return out
	}
	x, y, z := run(7), run(7), run(8)
	same, differ := true, false
	for i := range x {
		same = same && x[i] == y[i]
		differ = differ || x[i] != z[i]
	}
	if !same {
		t.Errorf("seed 7 twice: %v vs %v", x, y)
	}
	if !differ {
		t.Errorf("seeds 7 and 8 give the same figures %v", x)
	}
	// The spread is small but present.
	lo, hi := x[0], x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == lo || (hi-lo)/lo > 0.03 {
		t.Errorf("samples %v: spread %.3f%%", x, 100*(hi-lo)/lo)
	}
}

// TestHostCopyOrdering: host memory holds exactly what running each copy
// in order leaves there, though the simulator holds copies symbolically
// until the CPU reads (HostRead) or after it writes (HostWritten).
func TestHostCopyOrdering(t *testing.T) {
	const size = 4 << 20
	r := newRig(t, "h200x2")
	c := r.ctx[0]
	h, err := c.HostAlloc(size, true)
	r.must(err)
	a, b := r.alloc(0, size), r.alloc(0, size)
	s := r.stream(0)
	for i := range h.Host {
		h.Host[i] = 1
	}
	c.HostWritten(h.Host)
	// Device a gets the host's ones; then the host changes its bytes: a keeps the ones.
	r.must(c.MemcpyAsync(a, h.Device, size, s))
	r.must(c.StreamSynchronize(s))
	for i := range h.Host {
		h.Host[i] = 2
	}
	c.HostWritten(h.Host)
	got := make([]byte, 16)
	r.must(c.MemcpyDtoH(got, a+size/2))
	if got[0] != 1 || got[15] != 1 {
		t.Errorf("device copy of host memory changed with the host: %v", got)
	}
	// In one run: pattern → host, host → b, then a latch status in the same buffer.
	r.fill(0, a, size, 5)
	for i := range 3 {
		r.must(c.MemcpyAsync(h.Device, a, size, s))
		if i == 1 {
			r.must(c.MemcpyAsync(b, h.Device, size, s))
		}
	}
	r.must(r.launch(0, kernels.Latch, 1, 1, s, kernels.LatchArgs{Flag: uint64(h.Device), Status: uint64(h.Device) + 8, TimeoutNs: 1000}.Params()...))
	r.must(c.StreamSynchronize(s))
	if _, bad, _ := r.check(0, b, size, 5); bad != 0 {
		t.Errorf("host → device after device → host in one run: %d bad words", bad)
	}
	c.HostRead(h.Host)
	if v := atomic.LoadUint32(hostU32(h, 8)); v != kernels.LatchReleased {
		t.Errorf("latch status %d (flag was the pattern's first word, non-zero)", v)
	}
	if w := binary.LittleEndian.Uint32(h.Host[12:]); w != kernels.Pattern(5, 3) {
		t.Errorf("host word 3 = %#x, want the pattern", w)
	}
	// The host poisons its buffer; the next run writes the pattern again.
	for i := range h.Host {
		h.Host[i] = 0xEE
	}
	c.HostWritten(h.Host)
	r.must(c.MemcpyAsync(h.Device, a, size, s))
	r.must(c.StreamSynchronize(s))
	c.HostRead(h.Host)
	for i := uint64(0); i < size/4; i += 4099 {
		if w := binary.LittleEndian.Uint32(h.Host[4*i:]); w != kernels.Pattern(5, i) {
			t.Fatalf("host word %d = %#x after the second run, want the pattern", i, w)
		}
	}
}

// TestMonitorState: power rises with sustained work at once, temperature
// over minutes (TestTemperatureFollowsWorkOverMinutes).
func TestMonitorState(t *testing.T) {
	const size = 1 << 30
	r := newRig(t, "h200x2")
	state := func(dev int) results.DeviceState {
		t.Helper()
		st, err := r.d.Monitor().State(dev, "")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	idle := state(0)
	a := r.alloc(0, 2*size)
	for range 400 {
		r.must(r.ctx[0].MemcpyAsync(a+size, a, size, 0))
	}
	r.must(r.ctx[0].Synchronize())
	if hot := state(0); hot.TempC < idle.TempC || hot.TempC > idle.TempC+1 || hot.PowerW <= idle.PowerW {
		t.Errorf("after 0.2 s of copies: %d °C %.0f W, idle %d °C %.0f W", hot.TempC, hot.PowerW, idle.TempC, idle.PowerW)
	}
	if t1 := state(1).TempC; t1 != idle.TempC {
		t.Errorf("idle device 1 at %d °C", t1)
	}
	p := newRig(t, "pcie-4gpu")
	if links, err := p.d.Monitor().Links(0, ""); len(links) != 0 || err != nil {
		t.Errorf("the PCIe machine reports NVLinks: %v, %v", links, err)
	}
	if _, err := p.d.Monitor().Traffic(0, ""); !errors.Is(err, gpu.ErrNoCounters) {
		t.Errorf("Traffic: %v, want ErrNoCounters", err)
	}
}

// TestConcurrentContexts drives every context of the NVSwitch box from its
// own goroutine at once: copies, checks and latch-timed samples.
func TestConcurrentContexts(t *testing.T) {
	const size = 16 << 20
	r := newRig(t, "dgx-h100")
	for i := range 8 {
		r.enable(i, (i+1)%8)
		r.fn(i, kernels.Fill)
		r.fn(i, kernels.Check)
		r.fn(i, kernels.Latch)
	}
	bufs := make([][2]cuda.DevicePtr, 8)
	for i := range bufs {
		bufs[i] = [2]cuda.DevicePtr{r.alloc(i, size), r.alloc(i, size)}
	}
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			c, next := r.ctx[i], r.ctx[(i+1)%8]
			s, err := c.StreamCreate()
			if err != nil {
				errs <- err
				return
			}
			h, err := c.HostAlloc(4096, true)
			if err != nil {
				errs <- err
				return
			}
			start, _ := c.EventCreate()
			end, _ := c.EventCreate()
			latch := r.fns[i][kernels.Latch.Entry]
			for k := range 5 {
				atomic.StoreUint32(hostU32(h, 0), 0)
				args := kernels.LatchArgs{Flag: uint64(h.Device), Status: uint64(h.Device) + 64, TimeoutNs: 5e9}
				err := errors.Join(
					c.Launch(latch, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, args.Params()...),
					c.EventRecord(start, s),
					c.MemcpyPeerAsync(bufs[(i+1)%8][1], next, bufs[i][0], c, size, s),
					c.EventRecord(end, s))
				atomic.StoreUint32(hostU32(h, 0), 1)
				if err == nil {
					err = c.EventSynchronize(end)
				}
				var ms float32
				if err == nil {
					ms, err = c.EventElapsed(start, end)
				}
				if err != nil {
					errs <- fmt.Errorf("device %d round %d: %w", i, k, err)
					return
				}
				if st := atomic.LoadUint32(hostU32(h, 64)); st != kernels.LatchReleased {
					errs <- fmt.Errorf("device %d round %d: latch status %d", i, k, st)
					return
				}
				if g := gbps(size, float64(ms)); g < 150 || g > 400 {
					errs <- fmt.Errorf("device %d round %d: %.1f GB/s", i, k, g)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		r.fill(i, bufs[i][0], size, uint32(i))
	}
	for i := range 8 {
		r.must(r.ctx[i].MemcpyPeerAsync(bufs[(i+1)%8][1], r.ctx[(i+1)%8], bufs[i][0], r.ctx[i], size, 0))
	}
	for i := range 8 {
		r.must(r.ctx[i].Synchronize())
		if _, bad, err := r.check((i+1)%8, bufs[(i+1)%8][1], size, uint32(i)); err != nil || bad != 0 {
			t.Errorf("%d→%d: %d bad (%v)", i, (i+1)%8, bad, err)
		}
	}
}
