package sim

import (
	"math"
	"sort"
	"unsafe"

	"github.com/p2pbench/p2pbench/cuda"
)

// The unified address space. Device memory lives above 2^47, beyond any
// Linux user-space pointer, so it can never collide with pinned host memory,
// whose device address is its host address (as with UVA on a real machine).
const (
	devSpaceBase = 0x8000_0000_0000 // device 0's range
	devSpaceSize = 1 << 38          // 256 GiB of addresses per device
	ipcSpaceBase = 0xC000_0000_0000 // IPC mappings of each context
	smallAlign   = 256              // alignment of allocations under 1 MiB
	largeAlign   = 2 << 20          // and of larger ones, as the real allocator
	largeAt      = 1 << 20
)

// allocation is one MemAlloc.
type allocation struct {
	dev    int
	base   uint64
	size   uint64 // as asked
	span   uint64 // as placed and accounted
	serial uint64
	mem    content
	freed  bool
	ipcTag uint64 // 0 until exported
}

// hostBuf is one HostAlloc, or the caller's bytes of a blocking copy: real
// bytes, and the content saying which of them are current (hostmem.go).
type hostBuf struct {
	ptr   uint64
	b     []byte
	mem   content
	pages bool // b is the driver's own pages (allocPages)
	freed bool
	space *addressSpace // where settle records what it keeps; nil for a blocking copy's bytes
}

// ipcMapping is an IPC handle opened in a context.
type ipcMapping struct {
	addr uint64
	a    *allocation
	ctx  *devContext
	refs int
}

// addressSpace holds every allocation of the machine.
type addressSpace struct {
	devs  [][]*allocation // per device, by base
	used  []uint64
	hosts []*hostBuf // by ptr
	// The ranges settle wrote out for the CPU, oldest first, and their
	// bytes (hostmem.go).
	settledRanges []settledRange
	settledBytes  uint64
	budget        uint64 // settledBudget (less in tests)
}

func (s *addressSpace) init(n int) {
	s.devs = make([][]*allocation, n)
	s.used = make([]uint64, n)
	s.budget = settledBudget
}

func (s *addressSpace) drop() {
	for i := range s.devs {
		for _, a := range s.devs[i] {
			a.freed = true
		}
		s.devs[i] = nil
	}
	for _, h := range s.hosts {
		h.free()
	}
	s.hosts = nil
	s.settledRanges, s.settledBytes = nil, 0
}

// span is a resolved range of memory: part of an allocation (possibly
// reached through an IPC mapping or a VMM mapping) or of a pinned host
// buffer.
type span struct {
	a   *allocation
	h   *hostBuf
	via *ipcMapping
	vmm *vmmMapping
	off uint64
	n   uint64
}

// dev is the device whose memory holds the span, -1 for host memory.
func (sp span) dev() int {
	if sp.a != nil {
		return sp.a.dev
	}
	return -1
}

func (sp span) loc() location { return location(sp.dev()) }

// key identifies the memory itself (not the address used to reach it).
func (sp span) key() [2]uint64 {
	if sp.a != nil {
		return [2]uint64{sp.a.serial, sp.off}
	}
	return [2]uint64{sp.h.ptr, sp.off}
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// resolve finds the memory at [p, p+n); ok is false when any of it is not
// allocated.
func (d *Driver) resolve(p, n uint64) (span, bool) {
	if p+n < p {
		return span{}, false
	}
	s := &d.mem
	switch {
	case p >= devSpaceBase && p < devSpaceBase+uint64(len(s.devs))*devSpaceSize:
		list := s.devs[(p-devSpaceBase)/devSpaceSize]
		i := sort.Search(len(list), func(i int) bool { return list[i].base+list[i].size > p })
		if i == len(list) || list[i].base > p || p+n > list[i].base+list[i].size {
			return span{}, false
		}
		return span{a: list[i], off: p - list[i].base, n: n}, true
	case p >= vmmSpaceBase && p < vmmSpaceBase+vmmSpaceSize:
		return d.resolveVMM(p, n)
	case p >= ipcSpaceBase && p < ipcSpaceBase+uint64(len(s.devs))*devSpaceSize:
		c := d.ctxs[(p-ipcSpaceBase)/devSpaceSize]
		if c == nil {
			return span{}, false
		}
		for _, m := range c.ipcMaps {
			if p >= m.addr && p+n <= m.addr+m.a.size && p < m.addr+m.a.size {
				if m.a.freed {
					return span{}, false
				}
				return span{a: m.a, via: m, off: p - m.addr, n: n}, true
			}
		}
		return span{}, false
	}
	i := sort.Search(len(s.hosts), func(i int) bool { return s.hosts[i].ptr+uint64(len(s.hosts[i].b)) > p })
	if i == len(s.hosts) || s.hosts[i].ptr > p || p+n > s.hosts[i].ptr+uint64(len(s.hosts[i].b)) {
		return span{}, false
	}
	return span{h: s.hosts[i], off: p - s.hosts[i].ptr, n: n}, true
}

// accessible reports whether a kernel of context c may touch sp: its own
// device's memory, pinned host memory, a peer's memory with peer access
// enabled from c (for an IPC mapping, opened in c or in a context c can
// reach), or a VMM mapping c's device was granted access to.
func (c *devContext) accessible(sp span) bool {
	if sp.h != nil {
		return true
	}
	if sp.vmm != nil {
		return sp.vmm.access[c.dev]
	}
	if sp.via != nil && sp.via.ctx != c && !c.peers[sp.via.ctx.dev] && sp.via.ctx.dev != c.dev {
		return false
	}
	return sp.a.dev == c.dev || c.peers[sp.a.dev]
}

// access resolves memory a kernel of c touches when it runs; a failure is
// the CUDA_ERROR_ILLEGAL_ADDRESS the real kernel would raise.
func (c *devContext) access(p, n uint64, what string) (span, *asyncError) {
	sp, ok := c.d.resolve(p, n)
	if !ok {
		return span{}, illegalAddress("%s on device %d touched unallocated memory [%#x, +%d)", what, c.dev, p, n)
	}
	if !c.accessible(sp) {
		return span{}, illegalAddress("%s on device %d touched device %d's memory at %#x without peer access from device %d's context",
			what, c.dev, sp.dev(), p, c.dev)
	}
	return sp, nil
}

// accessWords is access of words 4-byte words: a count whose bytes
// overflow the address space reaches memory no allocation has.
func (c *devContext) accessWords(p, words uint64, what string) (span, *asyncError) {
	if words > math.MaxUint64/4 {
		return span{}, illegalAddress("%s on device %d touched %d words from %#x, beyond the address space", what, c.dev, words, p)
	}
	return c.access(p, 4*words, what)
}

// readSegs returns the content of sp as segments at offsets 0..n, for a copy,
// in buf's array (what buf held is dropped).
func (d *Driver) readSegs(buf []segment, sp span) []segment {
	var segs []segment
	if sp.a != nil {
		segs = sp.a.mem.readTo(buf[:0], sp.off, sp.n)
	} else {
		segs = sp.h.load(buf, sp.off, sp.n)
	}
	for i := range segs {
		segs[i] = segs[i].shift(-int64(sp.off))
	}
	return segs
}

// writeSegs stores segments (at offsets 0..n) into sp.
func (d *Driver) writeSegs(sp span, segs []segment) {
	for i := range segs {
		segs[i] = segs[i].shift(int64(sp.off))
	}
	if sp.a != nil {
		sp.a.mem.write(sp.off, sp.n, segs)
	} else {
		sp.h.store(sp.off, sp.n, segs)
	}
}

// readBytes and writeBytes move real bytes in or out of sp; in host memory
// they read and write the buffer itself (memory freed meanwhile reads as
// zeros).
func (d *Driver) readBytes(sp span, dst []byte) {
	switch {
	case sp.a != nil:
		sp.a.mem.readBytes(dst, sp.off)
	case sp.h.freed:
		clear(dst)
	default:
		sp.h.settle(sp.off, uint64(len(dst)))
		copy(dst, sp.h.b[sp.off:])
	}
}

func (d *Driver) writeBytes(sp span, b []byte) {
	switch {
	case sp.a != nil:
		sp.a.mem.writeBytes(sp.off, b)
	case !sp.h.freed:
		sp.h.overwrite(sp.off, uint64(len(b)))
		copy(sp.h.b[sp.off:], b)
	}
}

// copySpan copies src to dst (same length) and applies a corruption fault of
// the pair, if any.
func (d *Driver) copySpan(dst, src span) {
	// The segments go through a buffer of the machine's: writeSegs copies
	// them into dst's content and keeps nothing of the list (a new list
	// for every copy was a tenth of what a simulated run allocated).
	segs := d.readSegs(d.segBuf, src)
	d.writeSegs(dst, segs)
	clear(segs) // nothing kept alive by the buffer
	d.segBuf = segs[:0]
	if f, ok := d.fault(FaultCorrupt, src.dev(), dst.dev()); ok && f.Offset+4 <= dst.n {
		w := dst
		w.off += f.Offset &^ 3
		w.n = 4
		var b [4]byte
		d.readBytes(w, b[:])
		for i := range b {
			b[i] ^= 0xFF
		}
		d.writeBytes(w, b[:])
	}
}

// MemAlloc is cuMemAlloc: device memory, 256-byte aligned (2 MiB from 1 MiB
// up), holding junk until written.
func (c *devContext) MemAlloc(bytes uint64) (cuda.DevicePtr, error) {
	const call = "cuMemAlloc"
	return lockedValue(c, call, func(d *Driver) (cuda.DevicePtr, error) {
		if bytes == 0 {
			return 0, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		align := uint64(smallAlign)
		if bytes >= largeAt {
			align = largeAlign
		}
		// Overflow-safe: a size near 2^64 rounds up past zero.
		n := alignUp(bytes, align)
		if n < bytes || n > c.totalMemory()-c.reserved-d.mem.used[c.dev] {
			return 0, cuda.NewError(cuda.ErrorOutOfMemory, call)
		}
		list := d.mem.devs[c.dev]
		base := uint64(devSpaceBase) + uint64(c.dev)*devSpaceSize
		at, pos := alignUp(base+largeAlign, align), len(list)
		for i, a := range list {
			if at+n <= a.base {
				pos = i
				break
			}
			at = alignUp(a.base+a.span, align)
		}
		if at+n > base+devSpaceSize {
			return 0, cuda.NewError(cuda.ErrorOutOfMemory, call)
		}
		serial := d.serial()
		a := &allocation{
			dev: c.dev, base: at, size: bytes, span: n, serial: serial,
			mem: newContent(bytes, uint32(hashKeys(uint64(d.seed), 0xa110c, serial))),
		}
		list = append(list, nil)
		copy(list[pos+1:], list[pos:])
		list[pos] = a
		d.mem.devs[c.dev] = list
		d.mem.used[c.dev] += n
		return cuda.DevicePtr(at), nil
	})
}

// MemFree is cuMemFree. Like the real driver it first waits for the device's
// queued work.
func (c *devContext) MemFree(p cuda.DevicePtr) error {
	const call = "cuMemFree"
	return c.locked(call, func(d *Driver) error {
		sp, ok := d.resolve(uint64(p), 0)
		if !ok || sp.a == nil || sp.via != nil || sp.vmm != nil || sp.off != 0 {
			return cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		owner := d.ctxs[sp.a.dev]
		if err := d.run(owner.drained(), true); err != nil {
			return err
		}
		a := sp.a
		list := d.mem.devs[a.dev]
		for i, x := range list {
			if x == a {
				d.mem.devs[a.dev] = append(list[:i], list[i+1:]...)
				break
			}
		}
		d.mem.used[a.dev] -= a.span
		a.freed = true
		a.mem = content{}
		if a.ipcTag != 0 {
			delete(d.memExports, a.ipcTag)
		}
		return owner.takeError(call)
	})
}

// MemGetInfo is cuMemGetInfo: the device's memory less what the context and
// the allocations take.
func (c *devContext) MemGetInfo() (free, total uint64, err error) {
	err = c.locked("cuMemGetInfo", func(d *Driver) error {
		total = c.totalMemory()
		free = total - c.reserved - d.mem.used[c.dev]
		return nil
	})
	return free, total, err
}

func (c *devContext) totalMemory() uint64 { return c.d.m.gpu.memMiB << 20 }

// HostAlloc is cuMemHostAlloc: real memory, the simulator's own pages
// (allocPages). Its device address is its host address (unified
// addressing); Device is set only when mapped is asked for, as
// cuMemHostGetDevicePointer would give it.
func (c *devContext) HostAlloc(bytes uint64, mapped bool) (cuda.HostBuffer, error) {
	const call = "cuMemHostAlloc"
	return lockedValue(c, call, func(d *Driver) (cuda.HostBuffer, error) {
		if bytes == 0 || bytes > 1<<40 {
			return cuda.HostBuffer{}, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		b, err := allocPages(bytes)
		if err != nil {
			return cuda.HostBuffer{}, cuda.NewError(cuda.ErrorOutOfMemory, call)
		}
		h := newHostBuf(b, true)
		h.space = &d.mem
		i := sort.Search(len(d.mem.hosts), func(i int) bool { return d.mem.hosts[i].ptr > h.ptr })
		d.mem.hosts = append(d.mem.hosts, nil)
		copy(d.mem.hosts[i+1:], d.mem.hosts[i:])
		d.mem.hosts[i] = h
		out := cuda.HostBuffer{Host: b}
		if mapped {
			out.Device = cuda.DevicePtr(h.ptr)
		}
		return out, nil
	})
}

// HostFree is cuMemFreeHost.
func (c *devContext) HostFree(hb cuda.HostBuffer) error {
	const call = "cuMemFreeHost"
	return c.locked(call, func(d *Driver) error {
		if len(hb.Host) == 0 {
			return cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		ptr := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hb.Host))))
		for i, h := range d.mem.hosts {
			if h.ptr == ptr {
				d.mem.hosts = append(d.mem.hosts[:i], d.mem.hosts[i+1:]...)
				h.free()
				return nil
			}
		}
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	})
}

// HostRead is gpu.Context's: what the GPUs left in b is written into it,
// for the CPU to read.
func (c *devContext) HostRead(b []byte) {
	c.d.hostAccess(b, (*hostBuf).settle)
}

// HostWritten is gpu.Context's: the CPU wrote every byte of b, which the
// buffer now holds (described when a GPU first reads them, hostmem.go).
func (c *devContext) HostWritten(b []byte) {
	c.d.hostAccess(b, (*hostBuf).overwrite)
}

// hostAccess runs fn on the part of a pinned host buffer that b is; bytes
// elsewhere need nothing.
func (d *Driver) hostAccess(b []byte, fn func(h *hostBuf, off, n uint64)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if sp, ok := d.pinned(b); ok {
		fn(sp.h, sp.off, sp.n)
	}
}

// pinned resolves b when it lies in a pinned host buffer.
func (d *Driver) pinned(b []byte) (span, bool) {
	if len(b) == 0 {
		return span{}, false
	}
	sp, ok := d.resolve(uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint64(len(b)))
	return sp, ok && sp.h != nil
}
