package sim

import "slices"

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
// copy in order. Snapshots reuse the array of the snapshot they replace,
// and pattern data written to the host is cached, so a repeated 512 MiB
// host copy costs one memmove per run.

// hostTraffic is the deferred host side of the current scheduler run.
type hostTraffic struct {
	writes []pendingWrite
	refs   map[*allocation]bool // allocations that may hold host references
	cache  patternCache
}

// pendingWrite is a copy's data on its way into host memory.
type pendingWrite struct {
	h      *hostBuf
	off, n uint64
	segs   []segment // at offsets 0..n
}

// patternCache keeps the bytes of the last large symbolic range written to
// host memory.
type patternCache struct {
	sig []segSig
	b   []byte
}

type segSig struct {
	kind   segKind
	off, n uint64
	seed   uint32
	origin int64
	unit   uint64
	chase  *chaseDesc
}

const (
	cacheAt = 1 << 20 // host writes of at least this many bytes use the cache
	blobAt  = 1 << 20 // snapshots of at least this many bytes keep a reusable array
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
			d.traffic.cache.write(w.h.b[w.off:w.off+w.n], w.segs)
		}
	}
}

// write materialises segs into dst, through the cache for large symbolic data.
func (c *patternCache) write(dst []byte, segs []segment) {
	n := uint64(len(dst))
	var sig []segSig
	if n >= cacheAt {
		for _, s := range segs {
			if s.kind != segPattern && s.kind != segRepeat && s.kind != segChase {
				sig = nil
				break
			}
			sig = append(sig, segSig{s.kind, s.off, s.n, s.seed, s.origin, s.unit, s.chase})
		}
	}
	if sig != nil && slices.Equal(sig, c.sig) && len(c.b) == len(dst) {
		copy(dst, c.b)
		return
	}
	for _, s := range segs {
		s.bytesAt(dst[s.off:s.off+s.n], s.off)
	}
	if sig != nil {
		if len(c.b) != len(dst) {
			c.b = make([]byte, len(dst))
		}
		copy(c.b, dst)
		c.sig = sig
	}
}

// snapshotRefs replaces host references to h (every host buffer when h is
// nil) in device memory with copies of the bytes.
func (d *Driver) snapshotRefs(h *hostBuf) {
	for a := range d.traffic.refs {
		left := false
		for i, s := range a.mem.segs {
			if s.kind != segHostRef {
				continue
			}
			if h != nil && s.h != h {
				left = true
				continue
			}
			buf := a.takeSpare(s.n)
			copy(buf, s.h.b[int64(s.off)-s.origin:])
			a.mem.segs[i] = segment{off: s.off, n: s.n, kind: segBytes, data: buf}
			if s.n >= blobAt {
				a.mem.segs[i].blob = &blob{b: buf}
			}
		}
		if !left {
			delete(d.traffic.refs, a)
		}
	}
}

// takeSpare returns an array of n bytes, the allocation's spare one when it
// has the size.
func (a *allocation) takeSpare(n uint64) []byte {
	if uint64(len(a.spare)) == n {
		b := a.spare
		a.spare = nil
		return b
	}
	return make([]byte, n)
}

// keepSpare remembers a dropped snapshot array nothing else uses.
func (a *allocation) keepSpare(dropped []segment) {
	for _, s := range dropped {
		if s.kind == segBytes && s.blob != nil && !s.blob.shared && len(s.data) == len(s.blob.b) {
			a.spare = s.blob.b
		}
	}
}

// hostSegments materialises host references among segs (data bound for
// host memory must not depend on host bytes that may change before it lands).
func hostSegments(segs []segment) []segment {
	for i, s := range segs {
		if s.kind == segHostRef {
			data := make([]byte, s.n)
			s.bytesAt(data, s.off)
			segs[i] = segment{off: s.off, n: s.n, kind: segBytes, data: data}
		}
	}
	return segs
}
