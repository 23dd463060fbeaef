package sim

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/p2pbench/p2pbench/kernels"
)

// latchRun is a running p2p_latch: it holds its stream until the u32 flag
// (normally mapped host memory the host writes) reads non-zero, or until its
// timeout has passed in virtual time; then it writes 1 or 2 to status.
type latchRun struct {
	d        *Driver
	flag     span
	status   span
	timeout  float64
	stuck    bool // FaultLatchStuck
	released bool
}

// hostWord is the u32 of a host buffer at off, for atomic access (the
// engine writes the flag with atomic stores from its own goroutine).
func hostWord(h *hostBuf, off uint64) *uint32 {
	return (*uint32)(unsafe.Pointer(&h.b[off]))
}

// flagSet reads the flag (the driver lock is held).
func (l *latchRun) flagSet() bool {
	if h := l.flag.h; h != nil {
		if h.freed {
			return false
		}
		h.settle(l.flag.off, 4)
		return atomic.LoadUint32(hostWord(h, l.flag.off)) != 0
	}
	var b [4]byte
	l.d.readBytes(l.flag, b[:])
	return binary.LittleEndian.Uint32(b[:]) != 0
}

// hostFlagSet reads a host flag while the scheduler waits, unlocked, for
// the host to set it; a flag in device memory can only change through a
// driver call, which the waiting scheduler notices anyway.
func (l *latchRun) hostFlagSet() bool {
	if l.flag.h == nil {
		return false
	}
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	return l.flagSet()
}

// writeU32 stores v at sp (atomically in host memory, which the host may be
// polling).
func (d *Driver) writeU32(sp span, v uint32) {
	if h := sp.h; h != nil {
		if !h.freed {
			h.overwrite(sp.off, 4)
			atomic.StoreUint32(hostWord(h, sp.off), v)
		}
		return
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	d.writeBytes(span{a: sp.a, off: sp.off, n: 4}, b[:])
}

// latch is p2p_latch.
func (l *launch) latch() (*op, error) {
	a, err := kernels.DecodeLatchArgs(l.params)
	if err != nil {
		return nil, l.decodeErr(err)
	}
	c, d := l.c, l.c.d
	o := &op{kind: opLatch}
	o.prepare = func(o *op) *asyncError {
		if a.Flag%4 != 0 || a.Status%4 != 0 {
			return misaligned("p2p_latch: flag %#x or status %#x not 4-byte aligned", a.Flag, a.Status)
		}
		flag, f := c.access(a.Flag, 4, "p2p_latch (flag)")
		if f != nil {
			return f
		}
		status, f := c.access(a.Status, 4, "p2p_latch (status)")
		if f != nil {
			return f
		}
		o.setup = l.kernelSetup(o, false)
		o.latch = &latchRun{d: d, flag: flag, status: status, timeout: float64(a.TimeoutNs), stuck: d.latchStuck(c.dev)}
		return nil
	}
	o.finish = func(o *op) *asyncError {
		v := kernels.LatchTimedOut
		if o.latch.released {
			v = kernels.LatchReleased
		}
		d.writeU32(o.latch.status, v)
		return nil
	}
	return o, nil
}
