package sim

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Pinned host memory is shared by the CPU and the GPUs, and a timed host
// copy moves 512 MiB dozens of times: writing every copy's bytes into host
// memory, or comparing them back out, would cost seconds per figure. So a
// host buffer has content like device memory (content.go), whose segments
// say where its bytes are:
//
//   - host bytes (segHost): the buffer's own bytes are the truth;
//   - any other segment: the truth held symbolically, either what a GPU
//     wrote there last (the buffer's bytes are stale) or a description of
//     the buffer's bytes (the verification pattern, one repeated value,
//     else a copy of them) made when a GPU first read them.
//
// The CPU says when it looks (gpu.Context's HostRead and HostWritten, which
// the real driver ignores): before it reads a range, what the GPUs left
// there is written into the buffer (settle); after it writes one, the
// range is the buffer's bytes again. Copies from host memory take the
// description, copies into it replace it, so a copy costs a few segments
// whatever its size, and the bytes move only when the CPU writes or reads
// them: once per figure, not once per copy.
//
// The simulator's own small accesses (a latch's flag and status, a check's
// result, an atomic, a chase's pointers) settle their few bytes and use the
// buffer itself, so the host sees them without announcing a read.
//
// Nor does the buffer keep its pages once its bytes are held symbolically:
// a simulated machine has as much pinned memory as a real one (two
// transfer-size regions per device: 8 GiB on dgx-h100 at 512 MiB), and
// keeping every page the CPU once filled made `all --simulate dgx-h100`
// peak at 8 GiB. So the bytes the CPU wrote are described as soon as it
// says so (HostWritten), and the pages of every chunk described, or
// overwritten by a GPU, go back to the system (releasePages). The bytes
// settled for the CPU to read stay until the settled ranges exceed
// settledBudget; the oldest are then described and their pages released.
// The CPU reads a range right after announcing it, one at a time (the
// engine verifies one figure after another), so a range is never released
// under its reader.

// chunkBytes is the unit in which host bytes are described, at buffer
// offsets that are multiples of it; a run of host bytes shorter than a
// chunk stays in the buffer.
const chunkBytes = 1 << 20

// settledBudget bounds the bytes that settle keeps in the buffers' own
// pages for the CPU to read: two of the largest transfers the default plan
// verifies (512 MiB), so that even two reads at once keep their bytes.
const settledBudget = 1 << 30

// settledRange is a range of a host buffer that settle wrote out for the CPU.
type settledRange struct {
	h      *hostBuf
	off, n uint64
}

// newHostBuf returns a host buffer over b, holding b's bytes; pages says
// whether b is the driver's own pages (allocPages), to free with it.
func newHostBuf(b []byte, pages bool) *hostBuf {
	h := &hostBuf{b: b, pages: pages}
	if len(b) > 0 {
		h.ptr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	}
	h.mem.segs = []segment{h.bytesSeg(0, uint64(len(b)))}
	return h
}

// bytesSeg is the segment saying that [off, off+n) is in the buffer itself.
func (h *hostBuf) bytesSeg(off, n uint64) segment {
	return segment{off: off, n: n, kind: segHost, h: h}
}

// inBuffer reports whether the buffer itself holds [off, off+n).
func (h *hostBuf) inBuffer(off, n uint64) bool {
	i := h.mem.find(off)
	return i < len(h.mem.segs) && h.mem.segs[i].kind == segHost && h.mem.segs[i].off+h.mem.segs[i].n >= off+n
}

// settle writes into the buffer what the GPUs left at [off, off+n), before
// the CPU or the simulator reads it there.
func (h *hostBuf) settle(off, n uint64) {
	if n == 0 || h.freed || h.inBuffer(off, n) {
		return
	}
	type piece struct {
		s      segment
		lo, hi uint64
	}
	var pieces []piece
	for _, s := range h.mem.read(off, n) {
		if s.kind == segHost {
			continue
		}
		for lo := s.off; lo < s.off+s.n; lo += chunkBytes {
			pieces = append(pieces, piece{s, lo, min(s.off+s.n, lo+chunkBytes)})
		}
	}
	parallel(len(pieces), func(k int) {
		p := pieces[k]
		p.s.bytesAt(h.b[p.lo:p.hi], p.lo)
	})
	h.mem.write(off, n, []segment{h.bytesSeg(off, n)})
	if h.space != nil && n >= chunkBytes {
		h.space.settled(h, off, n)
	}
}

// settled records that [off, off+n) of h is in h's pages for the CPU (in
// place of any earlier record of those bytes), describing and releasing
// the oldest such ranges beyond s.budget (settledBudget; never the newest).
func (s *addressSpace) settled(h *hostBuf, off, n uint64) {
	// An earlier record of these bytes must not release them later.
	s.settledRanges = slices.DeleteFunc(s.settledRanges, func(r settledRange) bool {
		if r.h == h && r.off < off+n && off < r.off+r.n {
			s.settledBytes -= r.n
			return true
		}
		return false
	})
	s.settledRanges = append(s.settledRanges, settledRange{h, off, n})
	s.settledBytes += n
	for len(s.settledRanges) > 1 && s.settledBytes > s.budget {
		r := s.settledRanges[0]
		s.settledRanges = s.settledRanges[1:]
		s.settledBytes -= r.n
		if !r.h.freed {
			r.h.describe(r.off, r.n)
			r.h.release(r.off, r.n)
		}
	}
}

// release gives back to the system the pages of [off, off+n) whose bytes
// the buffer's content holds symbolically (not host bytes): whole pages
// only, of the driver's own pages only.
func (h *hostBuf) release(off, n uint64) {
	if !h.pages || h.freed || n == 0 {
		return
	}
	page := uint64(pageBytes)
	for _, s := range h.mem.read(off, n) {
		if s.kind == segHost {
			continue
		}
		lo, hi := alignUp(s.off, page), (s.off+s.n)/page*page
		if hi > lo {
			releasePages(h.b[lo:hi])
		}
	}
}

// overwrite marks [off, off+n) as the buffer's own bytes: the caller
// writes every one of them there.
func (h *hostBuf) overwrite(off, n uint64) {
	if n == 0 || h.freed {
		return
	}
	if !h.inBuffer(off, n) {
		h.mem.write(off, n, []segment{h.bytesSeg(off, n)})
	}
	if h.pages && n >= chunkBytes {
		h.describe(off, n)
		h.release(off, n)
	}
}

// store puts what a GPU wrote, segs at offsets off..off+n, at [off, off+n).
func (h *hostBuf) store(off, n uint64, segs []segment) {
	if n > 0 && !h.freed {
		h.mem.write(off, n, segs)
		if n >= chunkBytes {
			h.release(off, n)
		}
	}
}

// load returns the content of [off, off+n) as segments at those offsets,
// for a GPU reading it: runs of the buffer's bytes are described first. The
// list is in buf's array (what buf held is dropped).
func (h *hostBuf) load(buf []segment, off, n uint64) []segment {
	if h.freed {
		return append(buf[:0], segment{off: off, n: n, kind: segRepeat, origin: int64(off)})
	}
	h.describe(off, n)
	segs := h.mem.readTo(buf[:0], off, n)
	for i, s := range segs {
		if s.kind == segHost {
			segs[i] = segment{off: s.off, n: s.n, kind: segBytes, data: slices.Clone(h.b[s.off : s.off+s.n])}
		}
	}
	return segs
}

// describe replaces the runs of the buffer's own bytes of a chunk or more
// within [off, off+n) by segments describing them exactly.
func (h *hostBuf) describe(off, n uint64) {
	for _, s := range h.mem.read(off, n) {
		if s.kind != segHost || s.n < chunkBytes {
			continue
		}
		// Chunks start at buffer offsets that are multiples of chunkBytes,
		// so a pattern's words never straddle two guesses.
		var bounds []uint64
		for lo := s.off; lo < s.off+s.n; lo = min(s.off+s.n, lo/chunkBytes*chunkBytes+chunkBytes) {
			bounds = append(bounds, lo)
		}
		bounds = append(bounds, s.off+s.n)
		parts := make([]segment, len(bounds)-1)
		parallel(len(parts), func(k int) {
			lo, hi := bounds[k], bounds[k+1]
			parts[k] = recognise(h.b[lo:hi], lo)
		})
		h.mem.write(s.off, s.n, mergeSegments(parts))
	}
}

// free gives the buffer's memory back.
func (h *hostBuf) free() {
	if sp := h.space; sp != nil {
		sp.settledRanges = slices.DeleteFunc(sp.settledRanges, func(r settledRange) bool {
			if r.h == h {
				sp.settledBytes -= r.n
				return true
			}
			return false
		})
	}
	h.freed = true
	h.mem = content{}
	if h.pages {
		freePages(h.b)
	}
	h.b = nil
}

// recognise describes the chunk c, at offset off of its host buffer, as
// one segment: the verification pattern (word i of the buffer
// Pattern(seed, i), as the fill kernel writes it), one repeated 8-byte
// value, else a copy of the bytes. Every byte is compared.
func recognise(c []byte, off uint64) segment {
	n := uint64(len(c))
	if at := (off + 3) / 4 * 4; at+4 <= off+n {
		w := binary.LittleEndian.Uint32(c[at-off:])
		s := segment{off: off, n: n, kind: segPattern, seed: patternSeed(w, at/4)}
		if s.holds(c) {
			return s
		}
	}
	if at := (off + 7) / 8 * 8; at+8 <= off+n {
		s := segment{off: off, n: n, kind: segRepeat, unit: binary.LittleEndian.Uint64(c[at-off:])}
		if s.holds(c) {
			return s
		}
	}
	return segment{off: off, n: n, kind: segBytes, data: slices.Clone(c)}
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
