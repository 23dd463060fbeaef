package sim

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
)

func TestPatternSeed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		seed, i := rng.Uint32(), rng.Uint64()>>rng.IntN(64)
		if got := patternSeed(kernels.Pattern(seed, i), i); got != seed {
			t.Fatalf("patternSeed(Pattern(%#x, %d)) = %#x", seed, i, got)
		}
	}
}

// heldBytes is how many real bytes the device memory of the machine holds.
func heldBytes(d *Driver) (n uint64) {
	for _, list := range d.mem.devs {
		for _, a := range list {
			for _, s := range a.mem.segs {
				if s.kind == segBytes {
					n += s.n
				}
			}
		}
	}
	return n
}

// fillHost writes the verification pattern of seed into b with the CPU
// and tells c, as a program writing pinned memory does.
func fillHost(c gpu.Context, b []byte, seed uint32) {
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(b[i:], kernels.Pattern(seed, uint64(i/4)))
	}
	c.HostWritten(b)
}

// TestHostCopiesHoldNoBytes is issue 19's "660 MB per device for host
// copies": a pattern or a repeated value copied from host memory to every
// device is held symbolically, and still verifies exactly, byte for byte.
func TestHostCopiesHoldNoBytes(t *testing.T) {
	const size = 8 << 20
	r := newRig(t, "dgx-h100")
	h, err := r.ctx[0].HostAlloc(size, true)
	r.must(err)
	fillHost(r.ctx[0], h.Host, 7)
	dst := make([]cuda.DevicePtr, len(r.ctx))
	for dev, c := range r.ctx {
		dst[dev] = r.alloc(dev, size)
		for range 3 { // the repetitions of a timed copy, each run snapshotting
			r.must(c.MemcpyAsync(dst[dev], h.Device, size, 0))
			r.must(c.StreamSynchronize(0))
		}
	}
	if n := heldBytes(r.d); n > 0 {
		t.Errorf("the devices hold %d bytes of the host's pattern", n)
	}
	for dev := range r.ctx {
		if _, bad, err := r.check(dev, dst[dev], size, 7); bad != 0 || err != nil {
			t.Errorf("device %d: %d bad words, %v", dev, bad, err)
		}
	}
	// A repeated value (the poison a test writes) is symbolic too.
	for i := 0; i < size; i += 4 {
		binary.LittleEndian.PutUint32(h.Host[i:], 0xDEADBEEF)
	}
	r.ctx[0].HostWritten(h.Host)
	r.must(r.ctx[1].MemcpyAsync(dst[1], h.Device, size, 0))
	r.must(r.ctx[1].StreamSynchronize(0))
	if n := heldBytes(r.d); n > 0 {
		t.Errorf("the devices hold %d bytes of a repeated value", n)
	}
	if v, ok := r.d.mem.devs[1][0].mem.uniform(0, size, 4); !ok || v != 0xDEADBEEF {
		t.Errorf("device 1 holds %#x (uniform %v), want 0xDEADBEEF", v, ok)
	}
}

// TestHostCopiesOfOtherBytes: what is neither pattern nor a repeated value
// is kept as bytes, exactly; one changed byte of a pattern costs only its
// chunk; and the host changing its buffer after a copy changes nothing on
// the device.
func TestHostCopiesOfOtherBytes(t *testing.T) {
	const size = 4<<20 + 12 // not a whole number of chunks
	r := newRig(t, "h200x2")
	c := r.ctx[0]
	h, err := c.HostAlloc(size, true)
	r.must(err)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range h.Host {
		h.Host[i] = byte(rng.Uint32())
	}
	want := append([]byte(nil), h.Host...)
	c.HostWritten(h.Host)
	p := r.alloc(0, size)
	r.must(c.MemcpyAsync(p, h.Device, size, 0))
	r.must(c.StreamSynchronize(0))
	fillHost(c, h.Host, 9) // the host moves on; the device keeps what it got
	got := make([]byte, size)
	r.must(c.MemcpyDtoH(got, p))
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("byte %d is %#x, want %#x", i, got[i], want[i])
		}
	}
	// The pattern with one word changed: only that word fails, and only
	// its chunk is held as bytes.
	c.HostRead(h.Host)
	h.Host[3<<20+5] ^= 0x10
	c.HostWritten(h.Host)
	r.must(c.MemcpyAsync(p, h.Device, size, 0))
	r.must(c.StreamSynchronize(0))
	if n := heldBytes(r.d); n > chunkBytes {
		t.Errorf("%d bytes held for one changed byte", n)
	}
	if first, bad, _ := r.check(0, p, size&^3, 9); bad != 1 || first != (3<<20+4)/4 {
		t.Errorf("first bad word %d, %d bad; want word %d alone", first, bad, (3<<20+4)/4)
	}
}

// TestHostCorruptionFault: a corruption fault on copies into host memory
// shows in the bytes the CPU reads after HostRead, and one on copies out
// of host memory in the device's check; other ends stay clean.
func TestHostCorruptionFault(t *testing.T) {
	const size = 8 << 20
	const word = 100000
	r := newRig(t, "h200x2",
		WithFault(Fault{Kind: FaultCorrupt, Src: 0, Dst: HostMemory, Offset: 4 * word}),
		WithFault(Fault{Kind: FaultCorrupt, Src: HostMemory, Dst: 1, Offset: 4 * word}))
	in, err := r.ctx[0].HostAlloc(size, true)
	r.must(err)
	out, err := r.ctx[0].HostAlloc(size, true)
	r.must(err)
	fillHost(r.ctx[0], in.Host, 3)
	dev0, dev1 := r.alloc(0, size), r.alloc(1, size)
	r.fill(0, dev0, size, 3)
	r.must(r.ctx[0].MemcpyAsync(out.Device, dev0, size, 0))
	r.must(r.ctx[1].MemcpyAsync(dev1, in.Device, size, 0))
	r.must(r.ctx[0].MemcpyAsync(dev0, in.Device, size, 0))
	r.must(r.ctx[0].Synchronize())
	r.must(r.ctx[1].Synchronize())
	r.ctx[0].HostRead(out.Host)
	for i := uint64(0); i < size/4; i++ {
		if got, want := binary.LittleEndian.Uint32(out.Host[4*i:]), kernels.Pattern(3, i); (got != want) != (i == word) {
			t.Fatalf("0→host, word %d: %#x, pattern %#x", i, got, want)
		}
	}
	if first, bad, _ := r.check(1, dev1, size, 3); first != word || bad != 1 {
		t.Errorf("host→1: first bad %d, count %d; want %d, 1", first, bad, word)
	}
	if _, bad, _ := r.check(0, dev0, size, 3); bad != 0 {
		t.Errorf("host→0: %d bad words, want none", bad)
	}
}

// TestBlockingCopiesOfPinnedBytes: cuMemcpyHtoD and cuMemcpyDtoH take and
// leave pinned bytes at once, with no HostWritten or HostRead, even over a
// range a copy had left symbolic.
func TestBlockingCopiesOfPinnedBytes(t *testing.T) {
	const size = 2 << 20
	r := newRig(t, "h200x2")
	c := r.ctx[0]
	h, err := c.HostAlloc(2*size, true)
	r.must(err)
	p := r.alloc(0, size)
	r.fill(0, p, size, 4)
	r.must(c.MemcpyAsync(h.Device, p, size, 0)) // the pattern, held symbolically
	r.must(c.StreamSynchronize(0))
	for i := range size {
		h.Host[i] = byte(i / 3)
	}
	r.must(c.MemcpyHtoD(p, h.Host[:size]))
	r.must(c.MemcpyDtoH(h.Host[size:], p))
	for i := range size {
		if got := h.Host[size+i]; got != byte(i/3) {
			t.Fatalf("byte %d came back as %#x, want %#x", i, got, byte(i/3))
		}
	}
}

// TestHostPagesReleased is issue 27's "8 GiB for dgx-h100": the pages of
// host memory whose bytes the simulator holds symbolically go back to the
// system (they read as zeros), and the bytes still verify exactly when the
// CPU next reads them; of the ranges settled for the CPU, the oldest are
// released beyond the budget, never the one just settled.
func TestHostPagesReleased(t *testing.T) {
	const size = 4 << 20
	r := newRig(t, "h200x2")
	c := r.ctx[0]
	a, err := c.HostAlloc(size, true)
	r.must(err)
	b, err := c.HostAlloc(size, true)
	r.must(err)
	zero := func(buf []byte) bool {
		for _, x := range buf {
			if x != 0 {
				return false
			}
		}
		return true
	}
	holds := func(name string, buf []byte, seed uint32) {
		t.Helper()
		for i := uint64(0); i < size/4; i++ {
			if got, want := binary.LittleEndian.Uint32(buf[4*i:]), kernels.Pattern(seed, i); got != want {
				t.Fatalf("%s: word %d is %#x, want %#x", name, i, got, want)
			}
		}
	}
	// What the CPU wrote and announced is described and its pages released.
	fillHost(c, a.Host, 5)
	if !zero(a.Host) {
		t.Error("the pages the CPU filled with the pattern were kept")
	}
	dev := r.alloc(0, size)
	r.must(c.MemcpyAsync(dev, a.Device, size, 0))
	r.must(c.Synchronize())
	if _, bad, err := r.check(0, dev, size, 5); bad != 0 || err != nil {
		t.Errorf("host→0 after release: %d bad words, %v", bad, err)
	}
	// What a GPU wrote is settled on reading; a range settled again keeps
	// its bytes however small the budget.
	r.d.mem.budget = size
	r.fill(0, dev, size, 6)
	r.must(c.MemcpyAsync(a.Device, dev, size, 0))
	r.must(c.Synchronize())
	if !zero(a.Host) {
		t.Error("the pages a GPU overwrote were kept")
	}
	c.HostRead(a.Host)
	holds("a, read", a.Host, 6)
	r.fill(0, dev, size, 7)
	r.must(c.MemcpyAsync(a.Device, dev, size, 0))
	r.must(c.Synchronize())
	c.HostRead(a.Host)
	holds("a, read again", a.Host, 7)
	// Settling b releases a, beyond the budget; a reads right once more.
	r.must(c.MemcpyAsync(b.Device, dev, size, 0))
	r.must(c.Synchronize())
	c.HostRead(b.Host)
	holds("b", b.Host, 7)
	if !zero(a.Host) {
		t.Error("a range beyond the budget was kept")
	}
	c.HostRead(a.Host)
	holds("a, after b", a.Host, 7)
}
