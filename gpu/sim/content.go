package sim

import (
	"encoding/binary"
	"slices"
	"sort"

	"github.com/p2pbench/p2pbench/kernels"
)

// Device memory holds no bytes until it must. A buffer's content is a list of
// segments, each a run of bytes described symbolically:
//
//   - pattern: the verification pattern of p2p_fill (kernels.Pattern(seed, i)
//     for word i counted from an origin), also used for the "junk" a fresh
//     allocation holds;
//   - repeat: an 8-byte unit over and over (memset, atomic counters);
//   - chase: the pointer chain of p2p_chase_build, computed on demand;
//   - bytes: real bytes, for small writes (results, flags) and host memory
//     that is neither pattern nor repeat;
//   - host bytes: in a pinned host buffer's own content only, the bytes the
//     buffer itself holds (hostmem.go).
//
// Copies splice segments (shifting their origin), so filling, copying and
// checking a gigabyte costs microseconds; only reading to the host, or
// checking data that is wrong, walks the words.

type segKind uint8

const (
	segPattern segKind = iota
	segRepeat
	segChase
	segBytes
	segHost
)

// chaseDesc is one p2p_chase_build: a cycle through nodes at addr + k*stride.
type chaseDesc struct {
	addr   uint64 // the buffer address the kernel was given (node 0)
	nodes  uint64
	stride uint64
	seed   uint32
	bits   uint
}

// next returns the node that follows node p on the cycle.
func (c *chaseDesc) next(p uint64) uint64 {
	return c.advance(p, 1)
}

// advance returns the node h hops after node p.
func (c *chaseDesc) advance(p, h uint64) uint64 {
	if c.nodes <= 1 {
		return 0
	}
	k := chasePermInverse(p, c.bits, c.seed)
	return kernels.ChasePerm((k+h)&(c.nodes-1), c.bits, c.seed)
}

// buildResident is the share of the lines p2p_chase_build writes in the
// second half of its pass that a chase right after it finds in L2 (not yet
// written back). On an H200 a chase of 256 MiB right after its build reads
// 272-305 ns a load from nodes the build wrote 57-96% into its pass (every
// other build; 328-332 in the others), 329-332 from the node it wrote first
// and 327-331 with L2 flushed (docs/methods.md, "Pointer chase"): about a
// quarter of such lines are L2 hits.
const buildResident = 0.25

// builtLate is the share of the hops hops from start (an address of the
// chain) that find their line in L2 because the build wrote it late.
func (c *chaseDesc) builtLate(start, hops uint64) float64 {
	if c.nodes < 2 || hops == 0 || start < c.addr {
		return 0
	}
	k := chasePermInverse((start-c.addr)/c.stride, c.bits, c.seed)
	late := uint64(0)
	// The positions k+1 … k+hops along the cycle, those of the second half.
	for _, r := range [][2]uint64{{k + 1, min(k+hops+1, c.nodes)}, {0, (k + hops + 1) - min(k+hops+1, c.nodes)}} {
		lo, hi := max(r[0], c.nodes/2), r[1]
		if hi > lo {
			late += hi - lo
		}
	}
	return buildResident * float64(late) / float64(hops)
}

type segment struct {
	off, n uint64 // the bytes [off, off+n) of the buffer
	kind   segKind
	seed   uint32 // pattern
	origin int64  // pattern, repeat, chase: the buffer offset of index 0
	unit   uint64 // repeat: 8 bytes, little-endian
	data   []byte // bytes: data[0] is at off; never modified (buffers share arrays)
	chase  *chaseDesc
	h      *hostBuf // host bytes: the buffer whose bytes [off, off+n) are meant
}

// content is the memory of one allocation: segments in order, covering it.
type content struct {
	segs []segment
}

// maxMergedBytes bounds how large adjacent small byte segments grow by merging.
const maxMergedBytes = 64 << 10

func newContent(size uint64, junkSeed uint32) content {
	return content{segs: []segment{{off: 0, n: size, kind: segPattern, seed: junkSeed}}}
}

// find returns the index of the segment holding offset off.
func (c *content) find(off uint64) int {
	return sort.Search(len(c.segs), func(i int) bool { return c.segs[i].off+c.segs[i].n > off })
}

// clip returns the part [lo, hi) of s (lo, hi inside it).
func (s segment) clip(lo, hi uint64) segment {
	if s.kind == segBytes {
		s.data = s.data[lo-s.off : hi-s.off]
	}
	s.off, s.n = lo, hi-lo
	return s
}

// shift moves s by delta bytes (a copy to another offset).
func (s segment) shift(delta int64) segment {
	s.off = uint64(int64(s.off) + delta)
	s.origin += delta
	return s
}

// read returns the segments describing [off, off+n).
func (c *content) read(off, n uint64) []segment { return c.readTo(nil, off, n) }

// readTo appends the segments describing [off, off+n) to out.
func (c *content) readTo(out []segment, off, n uint64) []segment {
	end := off + n
	for i := c.find(off); i < len(c.segs) && c.segs[i].off < end; i++ {
		s := c.segs[i]
		out = append(out, s.clip(max(off, s.off), min(end, s.off+s.n)))
	}
	return out
}

// write replaces [off, off+n) with segs, which must cover exactly that range.
// It splices in place: the segments after the range move within c.segs
// rather than through a new list (a buffer written piece by piece holds
// many segments, and a copy of the tail per write was most of its cost).
func (c *content) write(off, n uint64, segs []segment) {
	end := off + n
	i := c.find(off)
	j := i
	for j < len(c.segs) && c.segs[j].off < end {
		j++
	}
	// The new run with what is left of the segments it cuts, and a
	// neighbour each side to merge with.
	lo, hi := i, j
	var buf [8]segment
	repl := buf[:0]
	if lo > 0 {
		lo--
		repl = append(repl, c.segs[lo])
	}
	if i < len(c.segs) && c.segs[i].off < off {
		repl = append(repl, c.segs[i].clip(c.segs[i].off, off))
	}
	repl = append(repl, segs...)
	if j > i {
		last := c.segs[j-1]
		if last.off+last.n > end {
			repl = append(repl, last.clip(end, last.off+last.n))
		}
	}
	if hi < len(c.segs) {
		repl = append(repl, c.segs[hi])
		hi++
	}
	c.segs = slices.Replace(c.segs, lo, hi, mergeSegments(repl)...)
}

// mergeSegments joins the adjacent segments of in that describe one run, in
// place: it returns in's own array, shortened.
func mergeSegments(in []segment) []segment {
	out := in[:0]
	for _, s := range in {
		if s.n == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 {
			if m, ok := merge(out[k], s); ok {
				out[k] = m
				continue
			}
		}
		out = append(out, s)
	}
	clear(in[len(out):])
	return out
}

// merge joins two adjacent segments that describe one run.
func merge(a, b segment) (segment, bool) {
	if a.kind != b.kind || a.off+a.n != b.off {
		return a, false
	}
	switch a.kind {
	case segPattern:
		if a.seed != b.seed || a.origin != b.origin {
			return a, false
		}
	case segRepeat:
		if a.unit != b.unit || mod8(a.origin) != mod8(b.origin) {
			return a, false
		}
	case segChase:
		if a.chase != b.chase || a.origin != b.origin {
			return a, false
		}
	case segHost:
		if a.h != b.h {
			return a, false
		}
	case segBytes:
		if a.n+b.n > maxMergedBytes {
			return a, false
		}
		data := make([]byte, 0, a.n+b.n)
		a.data = append(append(data, a.data...), b.data...)
	}
	a.n += b.n
	return a, true
}

func mod8(x int64) int64 { return ((x % 8) + 8) % 8 }

// bytesAt writes the bytes of s for buffer offsets [off, off+len(dst)) into dst.
func (s *segment) bytesAt(dst []byte, off uint64) {
	switch s.kind {
	case segBytes:
		copy(dst, s.data[off-s.off:])
	case segHost:
		copy(dst, s.h.b[off:])
	case segRepeat:
		var u [8]byte
		binary.LittleEndian.PutUint64(u[:], s.unit)
		p := mod8(int64(off) - s.origin)
		n := copy(dst, append(u[p:], u[:p]...))
		for n < len(dst) {
			n += copy(dst[n:], dst[:n])
		}
	case segPattern:
		rel := uint64(int64(off) - s.origin)
		i := 0
		// Leading partial word.
		for i < len(dst) && (rel+uint64(i))%4 != 0 {
			w := kernels.Pattern(s.seed, (rel+uint64(i))/4)
			dst[i] = byte(w >> (8 * ((rel + uint64(i)) % 4)))
			i++
		}
		for w := (rel + uint64(i)) / 4; i+4 <= len(dst); i, w = i+4, w+1 {
			binary.LittleEndian.PutUint32(dst[i:i+4], kernels.Pattern(s.seed, w))
		}
		for ; i < len(dst); i++ {
			w := kernels.Pattern(s.seed, (rel+uint64(i))/4)
			dst[i] = byte(w >> (8 * ((rel + uint64(i)) % 4)))
		}
	case segChase:
		c := s.chase
		for i := range dst {
			rel := uint64(int64(off)+int64(i)) - uint64(s.origin)
			node, within := rel/c.stride, rel%c.stride
			if within < 8 && node < c.nodes {
				ptr := c.addr + c.next(node)*c.stride
				dst[i] = byte(ptr >> (8 * within))
			} else {
				dst[i] = 0
			}
		}
	}
}

// readBytes materialises [off, off+len(dst)).
func (c *content) readBytes(dst []byte, off uint64) {
	for _, s := range c.read(off, uint64(len(dst))) {
		s.bytesAt(dst[s.off-off:s.off-off+s.n], s.off)
	}
}

// writeBytes stores a copy of b at off.
func (c *content) writeBytes(off uint64, b []byte) {
	if len(b) == 0 {
		return
	}
	data := append([]byte(nil), b...)
	c.write(off, uint64(len(b)), []segment{{off: off, n: uint64(len(b)), kind: segBytes, data: data}})
}

// fillRepeat writes the 8-byte unit over [off, off+n), unit byte 0 at off.
func (c *content) fillRepeat(off, n uint64, unit uint64) {
	if n == 0 {
		return
	}
	c.write(off, n, []segment{{off: off, n: n, kind: segRepeat, unit: unit, origin: int64(off)}})
}

// checkPattern compares words from off with the pattern of seed (word i
// against kernels.Pattern(seed, i)) as p2p_check does: the first mismatching
// index (or -1) and how many mismatch.
func (c *content) checkPattern(off, words uint64, seed uint32) (first int64, bad uint64) {
	first = -1
	end := off + 4*words
	note := func(i uint64, n uint64) {
		if n == 0 {
			return
		}
		if first < 0 || int64(i) < first {
			first = int64(i)
		}
		bad += n
	}
	var buf []byte
	slow := func(s *segment, wlo, whi uint64) {
		// Word by word, in chunks, as the kernel would.
		const chunk = 16 << 10
		for w := wlo; w < whi; {
			n := min(whi-w, chunk)
			if cap(buf) < int(4*n) {
				buf = make([]byte, 4*chunk)
			}
			b := buf[:4*n]
			s.bytesAt(b, off+4*w)
			for k := uint64(0); k < n; k++ {
				if binary.LittleEndian.Uint32(b[4*k:]) != kernels.Pattern(seed, w+k) {
					note(w+k, 1)
				}
			}
			w += n
		}
	}
	segs := c.read(off, 4*words)
	for idx := range segs {
		s := &segs[idx]
		// Words wholly inside this segment; words across a segment edge
		// are checked from materialised bytes below.
		wlo := (s.off - off + 3) / 4
		whi := (s.off + s.n - off) / 4
		if wlo < whi {
			if s.kind == segPattern && mod4(s.origin-int64(off)) == 0 {
				dw := (int64(off) - s.origin) / 4 // actual index = i + dw
				switch {
				case dw == 0 && s.seed == seed:
					// The right pattern in the right place.
				case dw == 0 || (s.seed == seed && sameHigh(wlo, whi, dw)):
					// The pattern is a bijection of its mixed input, so a
					// different seed at the same index, or the same seed at
					// another index with the same high half, never matches.
					note(wlo, whi-wlo)
				default:
					slow(s, wlo, whi)
				}
			} else {
				slow(s, wlo, whi)
			}
		}
		// A word that starts in this segment and ends in the next.
		if e := s.off + s.n; e < end && (e-off)%4 != 0 {
			w := (e - off) / 4
			var b [4]byte
			c.readBytes(b[:], off+4*w)
			if binary.LittleEndian.Uint32(b[:]) != kernels.Pattern(seed, w) {
				note(w, 1)
			}
		}
	}
	return first, bad
}

func mod4(x int64) int64 { return ((x % 4) + 4) % 4 }

// sameHigh reports whether word indices [lo, hi) and [lo+d, hi+d) all have
// one and the same upper 32 bits.
func sameHigh(lo, hi uint64, d int64) bool {
	a, b := lo>>32, (hi-1)>>32
	c, e := uint64(int64(lo)+d)>>32, uint64(int64(hi-1)+d)>>32
	return a == b && c == e && a == c
}

// uniform reports whether [off, off+n) holds one repeated value of width
// bytes (4 or 8), and that value.
func (c *content) uniform(off, n uint64, width int) (uint64, bool) {
	segs := c.read(off, n)
	if len(segs) != 1 || segs[0].kind != segRepeat {
		return 0, false
	}
	s := segs[0]
	p := mod8(int64(off) - s.origin)
	u := s.unit
	if p != 0 {
		u = u>>(8*p) | u<<(64-8*p)
	}
	if width == 4 {
		if uint32(u) != uint32(u>>32) {
			return 0, false
		}
		return uint64(uint32(u)), true
	}
	return u, true
}

// chasePermInverse inverts kernels.ChasePerm.
func chasePermInverse(x uint64, bits uint, seed uint32) uint64 {
	const mult = 0x9E3779B97F4A7C15
	mask := uint64(1)<<bits - 1
	var seeds [3]uint64
	s := uint64(seed)
	for r := range seeds {
		seeds[r] = s
		s = s*0x5851F42D4C957F2D + 0x14057B7EF767814F
	}
	inv := uint64(mult) // Newton's iteration for the inverse mod 2^64
	for range 6 {
		inv *= 2 - mult*inv
	}
	h := (bits + 1) / 2
	x &= mask
	for r := 2; r >= 0; r-- {
		// x ^= x >> h is its own inverse when 2h >= bits.
		x ^= x >> h
		x = ((x - seeds[r]) * inv) & mask
	}
	return x
}
