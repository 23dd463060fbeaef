package sim

import (
	"encoding/binary"
	"math"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// freed reports memory freed after the op touching it was enqueued.
func freed(sp span) bool {
	return (sp.a != nil && sp.a.freed) || (sp.h != nil && sp.h.freed)
}

// ceCopy builds a copy-engine copy of bytes from src to dst issued in c.
// How it moves is decided when it starts, from the peer access of that
// moment: directly over the link when the issuing context has peer access to
// the other device, staged through host memory otherwise.
func (c *devContext) ceCopy(dst, src span, what string, pageable bool) *op {
	d := c.d
	o := &op{kind: opWork, what: what}
	o.prepare = func(o *op) *asyncError {
		if freed(dst) || freed(src) {
			return illegalAddress("%s: memory freed while the copy was queued", what)
		}
		sd, dd := src.dev(), dst.dev()
		if f := d.pairAsyncError(sd, dd); f != nil {
			return f
		}
		mm := d.m.m
		var uses []use
		limit := float64(noCap)
		switch {
		case sd >= 0 && dd >= 0 && sd != dd:
			direct := (c.dev == dd && c.peers[sd]) || (c.dev == sd && c.peers[dd])
			if direct {
				o.setup = mm.ceSetupPeer
				uses = d.transferUses(location(sd), location(dd), c.dev, engCE, 1, 1)
			} else {
				o.setup = mm.ceSetupStaged
				uses = d.stagedUses(sd, dd)
				limit = mm.stagedGBps
			}
		case sd < 0 || dd < 0:
			o.setup = mm.ceSetupHost
			uses = d.transferUses(src.loc(), dst.loc(), c.dev, engCE, 1, 1)
			if pageable {
				limit = mm.pageableGBps
			}
		default:
			o.setup = mm.ceSetup
			uses = d.transferUses(src.loc(), dst.loc(), c.dev, engCE, 1, 1)
		}
		o.setup *= d.jitter(10, o.keys(noiseSetup)...)
		// The front end's share of a local copy's fixed time can overlap
		// the previous op; the rest (link and PCIe latency) cannot.
		o.floor = math.Max(o.setup-mm.ceSetup*2/3, mm.ceSetup/3)
		o.fl = newFlow(float64(dst.n), uses, limit, d.jitter(1, o.keys(noiseSpeed)...))
		return nil
	}
	o.finish = func(o *op) *asyncError {
		d.copySpan(dst, src)
		return nil
	}
	return o
}

// MemcpyAsync is cuMemcpyAsync between any two addresses of the unified
// address space (device or pinned host memory).
func (c *devContext) MemcpyAsync(dst, src cuda.DevicePtr, bytes uint64, s cuda.Stream) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	const call = "cuMemcpyAsync"
	if err := c.usable(call); err != nil {
		return err
	}
	st, err := c.streamFor(s, call)
	if err != nil {
		return err
	}
	d.tick(costEnqueue)
	if bytes == 0 {
		return nil
	}
	ds, ok1 := d.resolve(uint64(dst), bytes)
	ss, ok2 := d.resolve(uint64(src), bytes)
	if !ok1 || !ok2 {
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	}
	if err := d.pairError(ss.dev(), ds.dev(), call); err != nil {
		return err
	}
	d.enqueue(st, c.ceCopy(ds, ss, call, false))
	return nil
}

// MemcpyPeerAsync is cuMemcpyPeerAsync issued in this context. dst must be
// memory of dstCtx and src of srcCtx (INVALID_VALUE otherwise). Without peer
// access it still works, staged through host memory, as the real one does.
func (c *devContext) MemcpyPeerAsync(dst cuda.DevicePtr, dstCtx gpu.Context, src cuda.DevicePtr, srcCtx gpu.Context, bytes uint64, s cuda.Stream) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	const call = "cuMemcpyPeerAsync"
	if err := c.usable(call); err != nil {
		return err
	}
	dc, ok1 := d.ctxOf(dstCtx)
	sc, ok2 := d.ctxOf(srcCtx)
	if !ok1 || !ok2 {
		return cuda.NewError(cuda.ErrorInvalidContext, call)
	}
	st, err := c.streamFor(s, call)
	if err != nil {
		return err
	}
	d.tick(costEnqueue)
	if bytes == 0 {
		return nil
	}
	ds, ok1 := d.resolve(uint64(dst), bytes)
	ss, ok2 := d.resolve(uint64(src), bytes)
	if !ok1 || !ok2 || !belongs(ds, dc) || !belongs(ss, sc) {
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	}
	if err := d.pairError(ss.dev(), ds.dev(), call); err != nil {
		return err
	}
	d.enqueue(st, c.ceCopy(ds, ss, call, false))
	return nil
}

// belongs reports whether sp is device memory of context c (its own, or an
// IPC mapping opened in it).
func belongs(sp span, c *devContext) bool {
	if sp.a == nil {
		return false
	}
	if sp.via != nil {
		return sp.via.ctx == c
	}
	return sp.a.dev == c.dev
}

// syncCopy runs a blocking host copy on the legacy stream and waits for it.
func (c *devContext) syncCopy(o *op, call string) error {
	d := c.d
	d.enqueue(c.legacy, o)
	if err := d.run(opDone(o), true); err != nil {
		return err
	}
	return c.takeError(call)
}

// MemcpyHtoD is cuMemcpyHtoD: synchronous; at pinned speed when src lies in
// a HostAlloc buffer, at pageable speed otherwise.
func (c *devContext) MemcpyHtoD(dst cuda.DevicePtr, src []byte) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	const call = "cuMemcpyHtoD"
	if err := c.usable(call); err != nil {
		return err
	}
	d.tick(costEnqueue)
	if len(src) == 0 {
		return nil
	}
	ds, ok := d.resolve(uint64(dst), uint64(len(src)))
	if !ok {
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	}
	host := span{h: &hostBuf{b: src}, n: uint64(len(src))}
	return c.syncCopy(c.ceCopy(ds, host, call, !d.hostRegistered(src)), call)
}

// MemcpyDtoH is cuMemcpyDtoH: synchronous, as MemcpyHtoD.
func (c *devContext) MemcpyDtoH(dst []byte, src cuda.DevicePtr) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	const call = "cuMemcpyDtoH"
	if err := c.usable(call); err != nil {
		return err
	}
	d.tick(costEnqueue)
	if len(dst) == 0 {
		return nil
	}
	ss, ok := d.resolve(uint64(src), uint64(len(dst)))
	if !ok {
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	}
	host := span{h: &hostBuf{b: dst}, n: uint64(len(dst))}
	return c.syncCopy(c.ceCopy(host, ss, call, !d.hostRegistered(dst)), call)
}

// MemsetD32Async is cuMemsetD32Async: p must be 4-byte aligned and memory c
// can reach.
func (c *devContext) MemsetD32Async(p cuda.DevicePtr, value uint32, words uint64, s cuda.Stream) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	const call = "cuMemsetD32Async"
	if err := c.usable(call); err != nil {
		return err
	}
	st, err := c.streamFor(s, call)
	if err != nil {
		return err
	}
	d.tick(costEnqueue)
	if p%4 != 0 || words > 1<<61 {
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	}
	if words == 0 {
		return nil
	}
	sp, ok := d.resolve(uint64(p), 4*words)
	if !ok || !c.accessible(sp) {
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	}
	o := &op{kind: opWork, what: call}
	o.prepare = func(o *op) *asyncError {
		if freed(sp) {
			return illegalAddress("%s: memory freed while the memset was queued", call)
		}
		o.setup = d.m.m.ceSetup * d.jitter(10, o.keys(noiseSetup)...)
		o.floor = o.setup / 3
		uses := d.transferUses(locCore, sp.loc(), c.dev, engFill, 1, 1)
		o.fl = newFlow(float64(sp.n), uses, noCap, d.jitter(1, o.keys(noiseSpeed)...))
		return nil
	}
	o.finish = func(o *op) *asyncError {
		d.fillWords(sp, value)
		return nil
	}
	d.enqueue(st, o)
	return nil
}

// fillWords writes value to every u32 of sp.
func (d *Driver) fillWords(sp span, value uint32) {
	if sp.a != nil {
		sp.a.mem.fillRepeat(sp.off, sp.n, uint64(value)|uint64(value)<<32)
		return
	}
	d.hostWrite(sp.h)
	b := sp.h.b[sp.off : sp.off+sp.n]
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(b[i:], value)
	}
}
