package sim

import (
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
)

// TestHostModel times the host tests' transfers on h200x2 against
// hardware.md: 55.4 GB/s each way by the copy engine, 51.2 by SM loads from
// mapped host memory and 52.6 by SM stores to it; both ways at once and
// every device at once; the model's time per load of a chase through host
// memory (1.10 µs, as the 2× H200s read it).
func TestHostModel(t *testing.T) {
	const size = 64 << 20
	r := newRig(t, "h200x2")
	h, err := r.ctx[0].HostAlloc(4*size, true)
	r.must(err)
	host := func(i int) cuda.DevicePtr { return h.Device + cuda.DevicePtr(i*size) }
	dev := [][2]cuda.DevicePtr{{r.alloc(0, size), r.alloc(0, size)}, {r.alloc(1, size), r.alloc(1, size)}}
	ce := func(d int, dst, src cuda.DevicePtr) job {
		return job{d, func(s cuda.Stream) error { return r.ctx[d].MemcpyAsync(dst, src, size, s) }}
	}
	h2d := func(d int) job { return ce(d, dev[d][0], host(2*d)) }
	d2h := func(d int) job { return ce(d, host(2*d+1), dev[d][1]) }
	smH2D := func(d int) job { return r.smJob(d, "warp_u8", dev[d][0], host(2*d), size) }
	smD2H := func(d int) job { return r.smJob(d, "warp_u8", host(2*d+1), dev[d][1], size) }
	for _, tc := range []struct {
		name string
		jobs []job
		want []float64 // GB/s of each job
	}{
		{"ce h2d", []job{h2d(0)}, []float64{55.4}},
		{"ce d2h", []job{d2h(0)}, []float64{55.4}},
		{"sm h2d", []job{smH2D(0)}, []float64{51.2}},
		{"sm d2h", []job{smD2H(0)}, []float64{52.6}},
		// Each direction keeps its own PCIe direction, less the other's requests.
		{"ce both ways", []job{h2d(0), d2h(0)}, []float64{54.8, 54.8}},
		{"sm both ways", []job{smH2D(0), smD2H(0)}, []float64{50.4, 50.4}},
		// Each GPU has its own PCIe link; host memory is not the limit for two.
		{"ce host to all", []job{h2d(0), h2d(1)}, []float64{55.4, 55.4}},
	} {
		ms, _ := r.timeJobs(2, tc.jobs...)
		for i, m := range ms {
			got := gbps(size, m)
			t.Logf("%s, copy %d: %.1f GB/s", tc.name, i, got)
			if !near(got, tc.want[i], 0.015) {
				t.Errorf("%s, copy %d: %.1f GB/s, want %.1f ± 1.5%%", tc.name, i, got, tc.want[i])
			}
		}
	}

	// The chase through host memory: built by device 1 through the mapping,
	// followed from it.
	const ws, stride, chunks, hops = 2 << 20, 128, 10, 512
	small := r.alloc(1, 64<<10)
	r.must(r.launch(1, kernels.ChaseBuild, 528, 256, 0, kernels.ChaseBuildArgs{Buf: uint64(h.Device), Nodes: ws / stride, Stride: stride, Seed: 7}.Params()...))
	r.must(r.launch(1, kernels.Chase, 1, 1, 0, kernels.ChaseArgs{Start: uint64(h.Device), Chunks: chunks, Hops: hops, Times: uint64(small + 1024), Sink: uint64(small + 512)}.Params()...))
	r.must(r.ctx[1].StreamSynchronize(0))
	times := r.readU64s(1, small+1024, chunks+1)
	for c := range chunks {
		if want := h200x2Model().chaseHost; !near(float64(times[c+1]-times[c])/hops, want, 0.06) {
			t.Errorf("host chase, chunk %d: %.0f ns per load, want ~%.0f", c, float64(times[c+1]-times[c])/hops, want)
		}
	}
}
