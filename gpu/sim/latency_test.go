package sim

import (
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
)

// TestChase: build a chain on owner, chase it from runner from the node the
// build wrote first (measure.Device.BuildChain's start), read the timestamps
// and the final pointer back.
func TestChase(t *testing.T) {
	const stride = 128
	m := h200x2Model()
	cases := []struct {
		name          string
		owner, runner int
		ws            uint64
		want          float64 // ns per hop
	}{
		{"local in L2", 0, 0, 1 << 20, m.chaseLocalL2},
		{"local beyond L2", 0, 0, 256 << 20, m.chaseLocalMem},
		{"remote in L2", 1, 0, 1 << 20, m.chaseRemoteL2},
		{"remote beyond L2", 1, 0, 256 << 20, m.chaseRemoteMem},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "h200x2")
			if tc.owner != tc.runner {
				r.enable(tc.runner, tc.owner)
			}
			buf := r.alloc(tc.owner, tc.ws)
			small := r.alloc(tc.runner, 64<<10)
			nodes := tc.ws / stride
			const seed = 98
			bits := uint(0)
			for 1<<bits < nodes {
				bits++
			}
			start := uint64(buf) + kernels.ChasePerm(0, bits, seed)*stride
			r.must(r.launch(tc.owner, kernels.ChaseBuild, 528, 256, 0, kernels.ChaseBuildArgs{Buf: uint64(buf), Nodes: nodes, Stride: stride, Seed: seed}.Params()...))
			r.must(r.ctx[tc.owner].StreamSynchronize(0))
			const chunks, hops = 20, 512
			r.must(r.launch(tc.runner, kernels.Chase, 1, 1, 0, kernels.ChaseArgs{Start: start, Chunks: chunks, Hops: hops, Times: uint64(small + 1024), Sink: uint64(small + 512)}.Params()...))
			r.must(r.ctx[tc.runner].StreamSynchronize(0))
			times := r.readU64s(tc.runner, small+1024, chunks+1)
			for c := 0; c < chunks; c++ {
				if ns := float64(times[c+1]-times[c]) / hops; !near(ns, tc.want, 0.06) {
					t.Errorf("chunk %d: %.1f ns per hop, want ~%.0f", c, ns, tc.want)
				}
			}
			// The sink holds the node chunks*hops steps along the cycle.
			want := uint64(buf) + kernels.ChasePerm(chunks*hops%nodes, bits, seed)*stride
			if got := r.readU64s(tc.runner, small+512, 1)[0]; got != want {
				t.Errorf("sink %#x, want %#x", got, want)
			}
			// The pointers themselves read back as the kernel wrote them.
			node := kernels.ChasePerm(5, bits, seed)
			next := r.readU64s(tc.owner, buf+cuda.DevicePtr(node*stride), 1)[0]
			if want := uint64(buf) + kernels.ChasePerm(6, bits, seed)*stride; next != want {
				t.Errorf("pointer at node %d: %#x, want %#x", node, next, want)
			}
		})
	}
	// Beyond L2, a chase through nodes the build wrote in the second half of
	// its pass finds some of their lines in L2, as on the H200 (buildResident).
	r := newRig(t, "h200x2")
	const nodes, bits = 1 << 21, 21
	buf, small := r.alloc(0, nodes*128), r.alloc(0, 64<<10)
	r.must(r.launch(0, kernels.ChaseBuild, 528, 256, 0, kernels.ChaseBuildArgs{Buf: uint64(buf), Nodes: nodes, Stride: 128, Seed: 7}.Params()...))
	r.must(r.ctx[0].StreamSynchronize(0))
	per := func(k uint64) float64 {
		start := uint64(buf) + kernels.ChasePerm(k, bits, 7)*128
		r.must(r.launch(0, kernels.Chase, 1, 1, 0, kernels.ChaseArgs{Start: start, Chunks: 1, Hops: 4096, Times: uint64(small + 1024), Sink: uint64(small + 512)}.Params()...))
		r.must(r.ctx[0].StreamSynchronize(0))
		times := r.readU64s(0, small+1024, 2)
		return float64(times[1]-times[0]) / 4096
	}
	first, late := per(0), per(nodes*3/4)
	if !near(first, m.chaseLocalMem, 0.06) || late > first*0.9 {
		t.Errorf("from the first-written node %.0f ns a hop (want ~%.0f), from one written 3/4 into the build %.0f (want ≤ 90%% of it)", first, m.chaseLocalMem, late)
	}
	// A chase over memory never built follows junk into an illegal address.
	r = newRig(t, "h200x2")
	buf, small = r.alloc(0, 1<<20), r.alloc(0, 4096)
	r.must(r.launch(0, kernels.Chase, 1, 1, 0, kernels.ChaseArgs{Start: uint64(buf), Chunks: 1, Hops: 10, Times: uint64(small), Sink: uint64(small + 512)}.Params()...))
	wantCode(t, "chase of junk", r.ctx[0].StreamSynchronize(0), cuda.ErrorIllegalAddress)
}

func TestChasePermInverse(t *testing.T) {
	for _, bits := range []uint{1, 2, 5, 13, 21, 40} {
		mask := uint64(1)<<bits - 1
		for _, k := range []uint64{0, 1, 2 & mask, 3 & mask, mask, 12345 & mask} {
			p := kernels.ChasePerm(k, bits, 0xfeed)
			if back := chasePermInverse(p, bits, 0xfeed); back != k {
				t.Errorf("bits %d: inverse(perm(%d)) = %d", bits, k, back)
			}
		}
	}
}

// TestPingPong: both sides launched give round trips of two remote store
// visibilities; a missing responder makes the initiator time out.
func TestPingPong(t *testing.T) {
	for _, tc := range []struct {
		name      string
		entry     kernels.Kernel
		responder bool
		want      float64 // ns per round trip
	}{
		{"release/acquire", kernels.PingPong, true, 2 * h200x2Model().storeRemote},
		{"relaxed", kernels.PingPongRelaxed, true, 2 * h200x2Model().storeRemote * h200x2Model().relaxedStore},
		{"no responder", kernels.PingPong, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, "h200x2", WithLatchGrace(0))
			r.enable(0, 1)
			r.enable(1, 0)
			small := []cuda.DevicePtr{r.alloc(0, 64<<10), r.alloc(1, 64<<10)}
			for i := range small {
				r.must(r.ctx[i].MemsetD32Async(small[i], 0, 1024/4, 0))
				r.must(r.ctx[i].Synchronize())
			}
			const iters, chunk = 10000, 100
			launch := func(me, peer int, role uint32) {
				a := kernels.PingPongArgs{MyFlag: uint64(small[me]), PeerFlag: uint64(small[peer]), Iters: iters, Chunk: chunk, Role: role,
					Times: uint64(small[me] + 1024), TimeoutNs: 2e9, Status: uint64(small[me] + 256)}
				r.must(r.launch(me, tc.entry, 1, 1, r.stream(me), a.Params()...))
			}
			if tc.responder {
				launch(1, 0, 1)
			}
			launch(0, 1, 0)
			r.must(r.ctx[0].Synchronize())
			r.must(r.ctx[1].Synchronize())
			if !tc.responder {
				if st := r.readU32(0, small[0]+256); st != kernels.LatchTimedOut {
					t.Errorf("initiator status %d, want timed out", st)
				}
				return
			}
			for dev := range 2 {
				if st := r.readU32(dev, small[dev]+256); st != kernels.LatchReleased {
					t.Errorf("device %d status %d", dev, st)
				}
				if f := r.readU32(dev, small[dev]); f != iters {
					t.Errorf("device %d flag %d, want %d", dev, f, iters)
				}
			}
			// Each way's store takes the time of where its flag sits.
			place := func(dev int) float64 {
				sp, ok := r.d.resolve(uint64(small[dev]), 4)
				if !ok {
					t.Fatalf("no allocation at device %d's flag", dev)
				}
				return r.d.flagPlacement(sp)
			}
			want := tc.want / 2 * (place(0) + place(1))
			times := r.readU64s(0, small[0]+1024, iters/chunk+1)
			for j := 1; j+1 < len(times); j++ {
				if rt := float64(times[j+1]-times[j]) / chunk; !near(rt, want, 0.03) {
					t.Errorf("chunk %d: %.0f ns per round trip, want ~%.0f", j, rt, want)
				}
			}
		})
	}
}
