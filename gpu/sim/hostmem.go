package sim

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Copies between device and pinned host memory move real bytes, and a
// timed host copy repeats a 512 MiB transfer dozens of times: snapshotting
// host memory, or writing a pattern into it, on every repetition would
// take seconds. But the host thread is blocked inside the driver call that
// runs the work (a synchronisation), so within one scheduler run it can
// neither see nor change host memory. The simulator therefore defers the
// host side of copies to the end of the run:
//
//   - a copy from host memory leaves a host reference in device memory
//     (the bytes are still the host's), snapshotted at the end of the run;
//   - a copy to host memory is queued, and only the last of several copies
//     to the same range is written, at the end of the run.
//
// Any simulated access to a host buffer during the run (a latch reading its
// flag, a kernel writing a status, a later copy) first settles what is
// pending on that buffer, so the result is exactly that of running every
// copy in order.
//
// A snapshot does not keep the bytes where it can describe them: host
// memory the host filled with the verification pattern, or with one
// repeated value, becomes the same symbolic segments as device memory
// (recognise), checked byte for byte, so a device holding a copy of a
// 512 MiB host buffer costs a few segments, not 512 MiB, and 72 devices
// that each received one cost no more than two. Only bytes that are
// neither stay bytes. The last large range written to or snapshotted from
// host memory is remembered with its description (memo): a repeated host
// copy of unchanged bytes costs one comparison per run, a repeated write
// of the same data one memmove.

// hostTraffic is the deferred host side of the current scheduler run.
type hostTraffic struct {
	writes []pendingWrite
	refs   map[*allocation]bool // allocations that may hold host references
	memo   hostMemo
}

// pendingWrite is a copy's data on its way into host memory.
type pendingWrite struct {
	h      *hostBuf
	off, n uint64
	segs   []segment // at offsets 0..n
}

// hostMemo holds bytes b and the segments (at offsets 0..len(b)) that
// describe them exactly.
type hostMemo struct {
	b    []byte
	segs []segment
}

const (
	memoAt = 1 << 20 // ranges of host memory of at least this many bytes are remembered
	// chunkBytes is the unit in which host bytes are recognised; a chunk
	// that is neither pattern nor repeat is kept as bytes.
	chunkBytes = 1 << 20
)

func (t *hostTraffic) init() { t.refs = map[*allocation]bool{} }

// hostRead settles what is pending on h before the simulator reads it.
func (d *Driver) hostRead(h *hostBuf) {
	t := &d.traffic
	if len(t.writes) == 0 {
		return
	}
	var mine, rest []pendingWrite
	for _, w := range t.writes {
		if w.h == h {
			mine = append(mine, w)
		} else {
			rest = append(rest, w)
		}
	}
	if len(mine) == 0 {
		return
	}
	t.writes = rest
	d.applyWrites(mine)
}

// hostWrite settles h before the simulator writes it: pending writes go in
// first, and device memory still referring to its bytes takes its snapshot.
func (d *Driver) hostWrite(h *hostBuf) {
	d.hostRead(h)
	d.snapshotRefs(h)
}

// flushHost settles everything: the end of a run, before the host looks.
func (d *Driver) flushHost() {
	t := &d.traffic
	ws := t.writes
	t.writes = nil
	d.applyWrites(ws)
	d.snapshotRefs(nil)
}

// applyWrites writes ws in order, skipping any that a later one covers.
func (d *Driver) applyWrites(ws []pendingWrite) {
	for i, w := range ws {
		covered := false
		for _, later := range ws[i+1:] {
			if later.h == w.h && later.off <= w.off && later.off+later.n >= w.off+w.n {
				covered = true
				break
			}
		}
		if !covered {
			d.snapshotRefs(w.h)
			d.traffic.memo.write(w.h.b[w.off:w.off+w.n], w.segs)
		}
	}
}

// write materialises segs into dst, from the memo when it holds them.
func (m *hostMemo) write(dst []byte, segs []segment) {
	if len(m.b) == len(dst) && slices.EqualFunc(segs, m.segs, sameSegment) {
		copy(dst, m.b)
		return
	}
	for _, s := range segs {
		s.bytesAt(dst[s.off:s.off+s.n], s.off)
	}
	m.remember(dst, segs)
}

// remember keeps a copy of b, described by segs, when b is large.
func (m *hostMemo) remember(b []byte, segs []segment) {
	if len(b) < memoAt {
		return
	}
	if len(m.b) != len(b) {
		m.b = make([]byte, len(b))
	}
	copy(m.b, b)
	m.segs = slices.Clone(segs)
}

// sameSegment reports whether a and b describe the same bytes in the same
// way (bytes segments: the same array).
func sameSegment(a, b segment) bool {
	return a.kind == b.kind && a.off == b.off && a.n == b.n && a.seed == b.seed && a.origin == b.origin &&
		a.unit == b.unit && a.chase == b.chase && a.h == b.h &&
		len(a.data) == len(b.data) && (len(a.data) == 0 || &a.data[0] == &b.data[0])
}

// snapshotRefs replaces host references to h (every host buffer when h is
// nil) in device memory with a description of the bytes they refer to.
func (d *Driver) snapshotRefs(h *hostBuf) {
	for a := range d.traffic.refs {
		var refs []segment
		left := false
		for _, s := range a.mem.segs {
			switch {
			case s.kind != segHostRef:
			case h != nil && s.h != h:
				left = true
			default:
				refs = append(refs, s)
			}
		}
		for _, s := range refs {
			b := s.h.b[int64(s.off)-s.origin:][:s.n]
			segs := d.traffic.describe(b, uint64(int64(s.off)-s.origin))
			for i := range segs {
				segs[i] = segs[i].shift(int64(s.off))
			}
			a.mem.write(s.off, s.n, segs)
		}
		if !left {
			delete(d.traffic.refs, a)
		}
	}
}

// hostSegments replaces host references among segs (at offsets 0..n) by a
// description of the bytes: data bound for host memory must not depend on
// host bytes that may change before it lands.
func (d *Driver) hostSegments(segs []segment) []segment {
	var out []segment
	for _, s := range segs {
		if s.kind != segHostRef {
			out = append(out, s)
			continue
		}
		b := s.h.b[int64(s.off)-s.origin:][:s.n]
		for _, r := range d.traffic.describe(b, uint64(int64(s.off)-s.origin)) {
			out = append(out, r.shift(int64(s.off)))
		}
	}
	return out
}

// describe returns segments at offsets 0..len(b) that say what the host
// bytes b, at offset hostOff of their buffer, hold: the verification
// pattern (word i of the buffer Pattern(seed, i), as measure.FillHost
// writes it) or one repeated 8-byte value where every byte agrees, else a
// copy of the bytes. The description is exact: every byte is compared.
func (t *hostTraffic) describe(b []byte, hostOff uint64) []segment {
	n := uint64(len(b))
	if n < memoAt {
		return []segment{{off: 0, n: n, kind: segBytes, data: slices.Clone(b)}}
	}
	if m := &t.memo; len(m.b) == len(b) && parallelEqual(b, m.b) {
		return slices.Clone(m.segs)
	}
	// Chunks start at buffer offsets that are multiples of chunkBytes, so a
	// pattern's words never straddle two guesses.
	var bounds []uint64
	for lo := uint64(0); lo < n; {
		hi := min(n, (hostOff+lo)/chunkBytes*chunkBytes+chunkBytes-hostOff)
		bounds = append(bounds, lo)
		lo = hi
	}
	parts := make([]segment, len(bounds))
	parallel(len(bounds), func(k int) {
		lo, hi := bounds[k], n
		if k+1 < len(bounds) {
			hi = bounds[k+1]
		}
		parts[k] = recognise(b[lo:hi], lo, hostOff)
	})
	segs := mergeSegments(parts)
	t.memo.remember(b, segs)
	return segs
}

// recognise describes the chunk c, at offset lo of a range that starts at
// offset hostOff of its host buffer, as one segment.
func recognise(c []byte, lo, hostOff uint64) segment {
	n := uint64(len(c))
	origin := -int64(hostOff) // word i of the buffer is at range offset 4i + origin
	at := lo + (4-(hostOff+lo)%4)%4
	if at+4 <= lo+n {
		w := binary.LittleEndian.Uint32(c[at-lo:])
		s := segment{off: lo, n: n, kind: segPattern, origin: origin, seed: patternSeed(w, (hostOff+at)/4)}
		if s.holds(c) {
			return s
		}
	}
	at = lo + (8-(hostOff+lo)%8)%8
	if at+8 <= lo+n {
		s := segment{off: lo, n: n, kind: segRepeat, origin: origin, unit: binary.LittleEndian.Uint64(c[at-lo:])}
		if s.holds(c) {
			return s
		}
	}
	return segment{off: lo, n: n, kind: segBytes, data: slices.Clone(c)}
}

// holds reports whether segment s describes exactly the bytes c at its offset.
func (s segment) holds(c []byte) bool {
	var buf [4096]byte
	for k := 0; k < len(c); k += len(buf) {
		part := c[k:min(len(c), k+len(buf))]
		want := buf[:len(part)]
		s.bytesAt(want, s.off+uint64(k))
		if !bytes.Equal(part, want) {
			return false
		}
	}
	return true
}

// patternSeed inverts kernels.Pattern: the seed whose word i is w.
func patternSeed(w uint32, i uint64) uint32 {
	x := w
	x ^= x >> 16
	x *= inverse32(0x846ca68b)
	x ^= x>>15 ^ x>>30
	x *= inverse32(0x7feb352d)
	x ^= x >> 16
	return x ^ uint32(i) ^ (uint32(i>>32) * 0x85ebca6b)
}

// inverse32 is the inverse of odd a modulo 2^32 (Newton's iteration).
func inverse32(a uint32) uint32 {
	inv := a
	for range 5 {
		inv *= 2 - a*inv
	}
	return inv
}

// parallelEqual is bytes.Equal over the CPUs.
func parallelEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	var differ atomic.Bool
	parallel((len(a)+chunkBytes-1)/chunkBytes, func(i int) {
		lo, hi := i*chunkBytes, min(len(a), (i+1)*chunkBytes)
		if !differ.Load() && !bytes.Equal(a[lo:hi], b[lo:hi]) {
			differ.Store(true)
		}
	})
	return !differ.Load()
}

// parallel runs fn(0), ..., fn(n-1) on the CPUs.
func parallel(n int, fn func(k int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for k := range n {
			fn(k)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for k := range next {
				fn(k)
			}
		})
	}
	for k := range n {
		next <- k
	}
	close(next)
	wg.Wait()
}
