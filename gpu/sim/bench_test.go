package sim

import (
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
)

// nvl72Ring allocates a 1 GiB send and receive buffer on each of the 72
// GPUs, fills every send buffer, copies each to the next GPU and checks it
// there: 144 GiB of simulated memory, nothing materialised.
func nvl72Ring(tb testing.TB) {
	const size = 1 << 30
	r := newRig(tb, "nvl72")
	n := len(r.ctx)
	send := make([]cuda.DevicePtr, n)
	recv := make([]cuda.DevicePtr, n)
	for i := range n {
		send[i], recv[i] = r.alloc(i, size), r.alloc(i, size)
		r.fill(i, send[i], size, uint32(i))
	}
	for i := range n {
		j := (i + 1) % n
		r.enable(i, j)
		r.must(r.ctx[i].MemcpyPeerAsync(recv[j], r.ctx[j], send[i], r.ctx[i], size, 0))
	}
	for i := range n {
		r.must(r.ctx[i].Synchronize())
	}
	for j := range n {
		i := (j + n - 1) % n
		if _, bad, err := r.check(j, recv[j], size, uint32(i)); err != nil || bad != 0 {
			tb.Fatalf("GPU %d received %d bad words from %d (%v)", j, bad, i, err)
		}
	}
	free, total, err := r.ctx[0].MemGetInfo()
	r.must(err)
	if total-free < 2*size {
		tb.Errorf("MemGetInfo: %d of %d free after 2 GiB of allocations", free, total)
	}
}

func TestNVL72Ring(t *testing.T) { nvl72Ring(t) }

func BenchmarkNVL72Ring(b *testing.B) {
	for b.Loop() {
		nvl72Ring(b)
	}
}
