package sim

import (
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
	cc := &ceCopyOp{op: op{kind: opWork, prepare: prepareCECopy, finish: finishCECopy},
		c: c, dst: dst, src: src, what: what, pageable: pageable}
	cc.data = cc
	return &cc.op
}

// ceCopyOp is a copy-engine copy: the op and what its prepare and finish
// read, one allocation (closures over these were five a copy).
type ceCopyOp struct {
	op
	c        *devContext
	dst, src span
	what     string
	pageable bool
	pulling  bool     // a pull that counts on link pullOn while it runs (linkUse)
	pullOn   [2]int   // the link
	counted  *profile // how a copy over a link counts on its counters (nil: not at all)
}

func prepareCECopy(o *op) *asyncError {
	cc := o.data.(*ceCopyOp)
	c, d, dst, src, what := cc.c, cc.c.d, cc.dst, cc.src, cc.what
	if freed(dst) || freed(src) {
		return illegalAddress("%s: memory freed while the copy was queued", what)
	}
	for _, sp := range []span{dst, src} {
		if sp.vmm != nil && !sp.vmm.access[c.dev] {
			return illegalAddress("%s on device %d: a VMM mapping at %#x that device %d was not granted access to", what, c.dev, sp.vmm.base, c.dev)
		}
	}
	sd, dd := src.dev(), dst.dev()
	if f := d.pairAsyncError(sd, dd); f != nil {
		return f
	}
	mm := &d.m.m
	var uses []use
	limit := float64(noCap)
	switch {
	case sd >= 0 && dd >= 0 && sd != dd:
		direct := (c.dev == dd && c.reaches(src)) || (c.dev == sd && c.reaches(dst))
		if direct {
			uses = c.peerCopy(cc, sd, dd, dst.n)
		} else {
			// Staged through host memory: both devices' copy engines
			// moved host memory.
			d.hostCopied[sd], d.hostCopied[dd] = true, true
			o.setup = mm.ceSetupStaged
			uses = d.stagedUses(sd, dd)
			limit = mm.stagedGBps
		}
	case sd < 0 || dd < 0:
		d.hostCopied[c.dev] = true
		o.setup = mm.ceSetupHost
		uses = d.transferUses(src.loc(), dst.loc(), c.dev, engCE, 1, 1)
		if cc.pageable {
			limit = mm.pageableGBps
		}
	default:
		o.setup = mm.ceSetup
		uses = d.transferUses(src.loc(), dst.loc(), c.dev, engCE, 1, 1)
	}
	p := d.placement(o, dst.n, dst, src)
	o.setup *= d.opJitter(10, o.keys(noiseSetup)) * p
	// The front end's share of a local copy's fixed time can overlap
	// the previous op; the rest (link and PCIe latency) cannot.
	o.floor = max(o.setup-mm.ceSetup*2/3, mm.ceSetup/3)
	o.fl = newFlow(float64(dst.n), uses, limit, d.opJitter(1, o.keys(noiseSpeed))/p)
	o.drain = drain(mm.ceDrain, dst.n)
	return nil
}

func finishCECopy(o *op) *asyncError {
	cc := o.data.(*ceCopyOp)
	d, dst, src := cc.c.d, cc.dst, cc.src
	if cc.counted != nil {
		d.traffic.count(src.dev(), dst.dev(), float64(dst.n), *cc.counted)
	}
	if cc.pulling {
		u := d.linkUsed[cc.pullOn]
		u.running--
		u.end = max(u.end, o.end)
		d.linkUsed[cc.pullOn] = u
	}
	d.copySpan(dst, src)
	return nil
}

// peerCopy sets cc up as a copy of n bytes over the link from device sd to
// dd, issued in c with peer access: its fixed cost, a pull's waking of an
// idle link and the first pull's cost after peer access was enabled
// again, how the copy counts on the link's counters, and the link a pull
// counts on while it runs. It returns what the copy uses.
func (c *devContext) peerCopy(cc *ceCopyOp, sd, dd int, n uint64) (uses []use) {
	// The model by pointer: a copy of it, whose field counted points to,
	// was an allocation of the whole model for every copy.
	d, mm, o := c.d, &c.d.m.m, &cc.op
	cc.counted = &mm.ceWrite
	if c.dev == dd {
		cc.counted = &mm.ceRead
	}
	o.setup = mm.ceSetupPeer
	uses = d.transferUses(location(sd), location(dd), c.dev, engCE, 1, 1)
	if mm.linkWake > 0 && c.dev == dd && !d.ipcChild {
		// Pulls, what the probe measured.
		link := [2]int{sd, dd}
		u := d.linkUsed[link]
		if u.running == 0 && (!u.seen || o.start-u.end >= mm.linkIdle) {
			o.extra += mm.linkWake
		}
		u.running++
		u.seen = true
		d.linkUsed[link] = u
		cc.pulling, cc.pullOn = true, link
	}
	if c.dev == dd {
		o.pull = n <= smallPull
		if d.coldPull[c.dev] > 0 {
			d.coldPull[c.dev]--
			o.extra += mm.firstPull
		}
	}
	return uses
}

// linkUse is what the simulator knows of a device's pulls from a peer, for
// model.linkWake: how many run, and when the last one ended.
type linkUse struct {
	running int
	end     float64
	seen    bool
}

// smallPull is the largest pull whose fixed time follows how it was queued
// (model.pullSetup, heldPullSetup): the sizes the probe measured.
const smallPull = 64 << 10

// drainBytes is the size from which a copy pays its whole drain; a smaller
// one pays its share, so small copies' fixed time stays their setup.
const drainBytes = 64 << 20

// drain is the drain of a copy of n bytes whose whole drain is full.
func drain(full float64, n uint64) float64 {
	return full * math.Min(1, float64(n)/drainBytes)
}

// MemcpyAsync is cuMemcpyAsync between any two addresses of the unified
// address space (device or pinned host memory).
func (c *devContext) MemcpyAsync(dst, src cuda.DevicePtr, bytes uint64, s cuda.Stream) error {
	const call = "cuMemcpyAsync"
	return c.locked(call, func(d *Driver) error {
		st, err := c.streamFor(s, call)
		if err != nil {
			return err
		}
		d.tick(costEnqueue)
		return c.queueCopy(st, dst, nil, src, nil, bytes, call)
	})
}

// MemcpyPeerAsync is cuMemcpyPeerAsync issued in this context. dst must be
// memory of dstCtx and src of srcCtx (INVALID_VALUE otherwise). Without peer
// access it still works, staged through host memory, as the real one does.
func (c *devContext) MemcpyPeerAsync(dst cuda.DevicePtr, dstCtx gpu.Context, src cuda.DevicePtr, srcCtx gpu.Context, bytes uint64, s cuda.Stream) error {
	const call = "cuMemcpyPeerAsync"
	return c.locked(call, func(d *Driver) error {
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
		return c.queueCopy(st, dst, dc, src, sc, bytes, call)
	})
}

// queueCopy queues a copy-engine copy of bytes from src to dst on st:
// INVALID_VALUE for memory that is not allocated, or (where dc or sc is not
// nil) not of that context; the error a FaultError injects on the pair.
func (c *devContext) queueCopy(st *stream, dst cuda.DevicePtr, dc *devContext, src cuda.DevicePtr, sc *devContext, bytes uint64, call string) error {
	if bytes == 0 {
		return nil
	}
	d := c.d
	ds, ok1 := d.resolve(uint64(dst), bytes)
	ss, ok2 := d.resolve(uint64(src), bytes)
	if !ok1 || !ok2 || (dc != nil && !belongs(ds, dc)) || (sc != nil && !belongs(ss, sc)) {
		return cuda.NewError(cuda.ErrorInvalidValue, call)
	}
	if err := d.pairError(ss.dev(), ds.dev(), call); err != nil {
		return err
	}
	d.enqueue(st, c.ceCopy(ds, ss, call, false))
	return nil
}

// reaches reports whether c reaches sp, another device's memory, over the
// link: with peer access to that device, or through a VMM mapping its
// device was granted access to.
func (c *devContext) reaches(sp span) bool {
	return c.peers[sp.dev()] || (sp.vmm != nil && sp.vmm.access[c.dev])
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

// MemcpyHtoD is cuMemcpyHtoD: synchronous; at pinned speed when src lies in
// a HostAlloc buffer, at pageable speed otherwise.
func (c *devContext) MemcpyHtoD(dst cuda.DevicePtr, src []byte) error {
	return c.hostCopy(dst, src, true, "cuMemcpyHtoD")
}

// MemcpyDtoH is cuMemcpyDtoH: synchronous, as MemcpyHtoD.
func (c *devContext) MemcpyDtoH(dst []byte, src cuda.DevicePtr) error {
	return c.hostCopy(src, dst, false, "cuMemcpyDtoH")
}

// hostCopy is a blocking copy between device memory at dev and the host
// bytes host (to the device when toDevice), run on the legacy stream.
func (c *devContext) hostCopy(dev cuda.DevicePtr, host []byte, toDevice bool, call string) error {
	return c.locked(call, func(d *Driver) error {
		d.tick(costEnqueue)
		if len(host) == 0 {
			return nil
		}
		ds, ok := d.resolve(uint64(dev), uint64(len(host)))
		if !ok {
			return cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		hs, pinned := d.pinned(host)
		if !pinned {
			hs = span{h: newHostBuf(host, false), n: uint64(len(host))}
		}
		// The caller hands over host's bytes, or reads them on return: no
		// HostWritten or HostRead for them.
		to, from := hs, ds
		if toDevice {
			to, from = ds, hs
			hs.h.overwrite(hs.off, hs.n)
		}
		o := c.ceCopy(to, from, call, !pinned)
		d.enqueue(c.legacy, o)
		if err := d.run(opDone(o), true); err != nil {
			return err
		}
		if !toDevice {
			hs.h.settle(hs.off, hs.n)
		}
		return c.takeError(call)
	})
}

// MemsetD32Async is cuMemsetD32Async: p must be 4-byte aligned and memory c
// can reach.
func (c *devContext) MemsetD32Async(p cuda.DevicePtr, value uint32, words uint64, s cuda.Stream) error {
	const call = "cuMemsetD32Async"
	return c.locked(call, func(d *Driver) error {
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
		o := &op{kind: opWork}
		o.prepare = func(o *op) *asyncError {
			if freed(sp) {
				return illegalAddress("%s: memory freed while the memset was queued", call)
			}
			o.setup = d.m.m.ceSetup * d.opJitter(10, o.keys(noiseSetup))
			o.floor = o.setup / 3
			uses := d.transferUses(locCore, sp.loc(), c.dev, engFill, 1, 1)
			o.fl = newFlow(float64(sp.n), uses, noCap, d.opJitter(1, o.keys(noiseSpeed)))
			return nil
		}
		o.finish = func(o *op) *asyncError {
			d.fillWords(sp, value)
			return nil
		}
		d.enqueue(st, o)
		return nil
	})
}

// fillWords writes value to every u32 of sp.
func (d *Driver) fillWords(sp span, value uint32) {
	d.writeSegs(sp, []segment{{n: sp.n, kind: segRepeat, unit: uint64(value) | uint64(value)<<32}})
}
