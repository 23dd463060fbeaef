package sim

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/p2pbench/p2pbench/kernels"
)

// The latency kernels: the pointer chase (p2p_chase_build, p2p_chase) and the
// flag ping-pong between two GPUs (p2p_pingpong). Their timestamps are the
// virtual %globaltimer.

// chaseBuild is p2p_chase_build. The chain is kept symbolically (a chase
// segment); its pointers are computed when something reads them.
func (l *launch) chaseBuild() (*op, error) {
	a, err := kernels.DecodeChaseBuildArgs(l.params)
	if err != nil {
		return nil, l.decodeErr(err)
	}
	if a.Nodes == 0 || a.Nodes&(a.Nodes-1) != 0 || a.Nodes > 1<<40 {
		return nil, l.invalid("nodes %d is not a power of two up to 2^40", a.Nodes)
	}
	if err := l.syncFault(a.Buf); err != nil {
		return nil, err
	}
	c, d := l.c, l.c.d
	desc := &chaseDesc{addr: a.Buf, nodes: a.Nodes, stride: a.Stride, seed: a.Seed, bits: uint(bits.TrailingZeros64(a.Nodes))}
	o := &op{kind: opWork}
	var sp span
	o.prepare = func(o *op) *asyncError {
		if a.Buf%8 != 0 || a.Stride%8 != 0 || a.Stride == 0 {
			return misaligned("p2p_chase_build: buffer %#x or stride %d not 8-byte aligned", a.Buf, a.Stride)
		}
		over, n := bits.Mul64(a.Nodes, a.Stride)
		if over != 0 {
			return illegalAddress("p2p_chase_build: %d nodes of %d bytes overflow", a.Nodes, a.Stride)
		}
		var f *asyncError
		if sp, f = c.access(a.Buf, n, "p2p_chase_build"); f != nil {
			return f
		}
		if f := d.pairAsyncError(c.dev, sp.dev()); f != nil {
			return f
		}
		remote := sp.dev() != c.dev
		o.setup = l.kernelSetup(o, remote)
		// Scattered 8-byte stores: each costs a 32-byte sector.
		uses := d.transferUses(locCore, sp.loc(), c.dev, engFill, 1, 1)
		o.fl = newFlow(float64(a.Nodes)*32, uses, l.inflightCap(8, remote), d.opJitter(1, o.keys(noiseSpeed)))
		return nil
	}
	o.finish = func(o *op) *asyncError {
		if sp.a != nil {
			sp.a.mem.write(sp.off, sp.n, []segment{{off: sp.off, n: sp.n, kind: segChase, origin: int64(sp.off), chase: desc}})
			return nil
		}
		if h := sp.h; !h.freed {
			h.settle(sp.off, sp.n) // the bytes between the pointers stay
			for k := uint64(0); k < a.Nodes; k++ {
				binary.LittleEndian.PutUint64(h.b[sp.off+k*a.Stride:], a.Buf+desc.next(k)*a.Stride)
			}
		}
		return nil
	}
	return o, nil
}

// maxWalk bounds a chase followed pointer by pointer (a chain the simulator
// cannot follow symbolically); beyond it the chase stops where it is.
const maxWalk = 1 << 26

// walkChase follows hops pointers from start as a kernel of c would. It
// returns the final pointer, the working set (for the cache model), the
// device holding the chain (-1 host) and the chain's desc when it is one
// p2p_chase_build wrote (nil otherwise); ok is false at an illegal address.
func (d *Driver) walkChase(c *devContext, start, hops uint64) (final, footprint uint64, mem int, chain *chaseDesc, ok bool) {
	sp, found := d.resolve(start, 8)
	if !found || !c.accessible(sp) {
		return 0, 0, 0, nil, false
	}
	mem = sp.dev()
	if sp.a != nil {
		if segs := sp.a.mem.read(sp.off, 8); len(segs) == 1 && segs[0].kind == segChase {
			s := segs[0]
			desc := s.chase
			rel := sp.off - uint64(s.origin)
			whole := sp.a.mem.read(uint64(s.origin), desc.nodes*desc.stride)
			if start-rel == desc.addr && rel%desc.stride == 0 && len(whole) == 1 &&
				whole[0].chase == desc && whole[0].origin == s.origin {
				node := desc.advance(rel/desc.stride, hops)
				return desc.addr + node*desc.stride, desc.nodes * desc.stride, mem, desc, true
			}
		}
		footprint = sp.a.size
	} else {
		footprint = uint64(len(sp.h.b))
	}
	p := start
	var b [8]byte
	for i := uint64(0); i < min(hops, maxWalk); i++ {
		sp, found := d.resolve(p, 8)
		if !found || !c.accessible(sp) || p%8 != 0 {
			return 0, 0, 0, nil, false
		}
		d.readBytes(sp, b[:])
		p = binary.LittleEndian.Uint64(b[:])
	}
	return p, footprint, mem, nil, true
}

// hopLatency is the ns of one dependent load from device dev to memory on
// mem (-1 host) with a working set of footprint bytes: in-L2 latency for
// hits, memory latency for misses, hits at a ratio of (L2/working set)².
func (d *Driver) hopLatency(dev, mem int, footprint uint64) float64 {
	mm := d.m.m
	if mem < 0 {
		return mm.chaseHost
	}
	l2, far := mm.chaseLocalL2, mm.chaseLocalMem
	if mem != dev {
		l2, far = mm.chaseRemoteL2, mm.chaseRemoteMem
	}
	hit := 1.0
	if fp := float64(footprint); fp > float64(d.m.gpu.l2Bytes) {
		hit = math.Pow(float64(d.m.gpu.l2Bytes)/fp, 2)
	}
	lat := hit*l2 + (1-hit)*far
	if mem != dev && !d.m.sameSwitch(dev, mem) {
		lat += d.m.m.farExtra
	}
	return lat
}

// chase is p2p_chase: chunks of hops dependent loads, a timestamp before the
// first and after each chunk.
func (l *launch) chase() (*op, error) {
	a, err := kernels.DecodeChaseArgs(l.params)
	if err != nil {
		return nil, l.decodeErr(err)
	}
	if err := l.syncFault(a.Start); err != nil {
		return nil, err
	}
	c, d := l.c, l.c.d
	o := &op{kind: opWork}
	var times, sink span
	var stamps []float64
	var final uint64
	o.prepare = func(o *op) *asyncError {
		if a.Start%8 != 0 || a.Times%8 != 0 || a.Sink%8 != 0 {
			return misaligned("p2p_chase: start %#x, times %#x or sink %#x not 8-byte aligned", a.Start, a.Times, a.Sink)
		}
		var f *asyncError
		if times, f = c.access(a.Times, 8*(uint64(a.Chunks)+1), "p2p_chase (times)"); f != nil {
			return f
		}
		if sink, f = c.access(a.Sink, 8, "p2p_chase (sink)"); f != nil {
			return f
		}
		var footprint uint64
		var mem int
		var ok bool
		var chain *chaseDesc
		final, footprint, mem, chain, ok = d.walkChase(c, a.Start, uint64(a.Chunks)*uint64(a.Hops))
		if !ok {
			return illegalAddress("p2p_chase on device %d followed a pointer to memory it cannot reach (start %#x)", c.dev, a.Start)
		}
		if f := d.pairAsyncError(c.dev, mem); f != nil {
			return f
		}
		o.setup = l.kernelSetup(o, mem != c.dev)
		hop := d.hopLatency(c.dev, mem, footprint)
		if chain != nil && footprint > uint64(d.m.gpu.l2Bytes) {
			l2 := d.m.m.chaseLocalL2
			if mem != c.dev {
				l2 = d.m.m.chaseRemoteL2
			}
			f := chain.builtLate(a.Start, uint64(a.Chunks)*uint64(a.Hops))
			hop = f*l2 + (1-f)*hop
		}
		stamps = make([]float64, a.Chunks+1)
		t := o.start + o.setup
		stamps[0] = t
		for k := range a.Chunks {
			t += float64(a.Hops) * hop * d.opJitter(1.5, o.keys(noiseChunk).with(uint64(k)))
			stamps[k+1] = t
		}
		o.delay = t - o.start - o.setup + 200 // the final store
		return nil
	}
	o.finish = func(o *op) *asyncError {
		b := make([]byte, 8*len(stamps))
		for i, t := range stamps {
			binary.LittleEndian.PutUint64(b[8*i:], globaltimer(t))
		}
		d.writeBytes(times, b)
		var s [8]byte
		binary.LittleEndian.PutUint64(s[:], final)
		d.writeBytes(sink, s[:])
		return nil
	}
	return o, nil
}

// pingRun is a running p2p_pingpong.
type pingRun struct {
	a                      kernels.PingPongArgs
	dev                    int
	my, peer, times, state span
	timeout                float64
	relaxed                bool // p2p_pingpong_relaxed: no release fence per store
	paired                 bool
	status                 uint32
	store                  uint32    // the last value stored to the peer's flag (0: none)
	stamps                 []float64 // initiator: times[] written
}

// pingPong is p2p_pingpong.
func (l *launch) pingPong() (*op, error) {
	a, err := kernels.DecodePingPongArgs(l.params)
	if err != nil {
		return nil, l.decodeErr(err)
	}
	if a.Chunk == 0 || a.Role > 1 {
		return nil, l.invalid("chunk %d, role %d", a.Chunk, a.Role)
	}
	if err := l.syncFault(a.PeerFlag); err != nil {
		return nil, err
	}
	c, d := l.c, l.c.d
	o := &op{kind: opPing}
	o.prepare = func(o *op) *asyncError {
		if a.MyFlag%4 != 0 || a.PeerFlag%4 != 0 || a.Status%4 != 0 || a.Times%8 != 0 {
			return misaligned("p2p_pingpong: flag, status or times misaligned")
		}
		r := &pingRun{a: a, dev: c.dev, timeout: float64(a.TimeoutNs), relaxed: l.fn.name == "p2p_pingpong_relaxed"}
		var f *asyncError
		if r.my, f = c.access(a.MyFlag, 4, "p2p_pingpong (my flag)"); f != nil {
			return f
		}
		if r.peer, f = c.access(a.PeerFlag, 4, "p2p_pingpong (peer flag)"); f != nil {
			return f
		}
		if r.state, f = c.access(a.Status, 4, "p2p_pingpong (status)"); f != nil {
			return f
		}
		if a.Role == 0 {
			if r.times, f = c.access(a.Times, 8*(uint64(a.Iters/a.Chunk)+1), "p2p_pingpong (times)"); f != nil {
				return f
			}
		}
		if f := d.pairAsyncError(c.dev, r.peer.dev()); f != nil {
			return f
		}
		o.setup = l.kernelSetup(o, r.peer.dev() != c.dev)
		o.ping = r
		return nil
	}
	o.finish = func(o *op) *asyncError {
		r := o.ping
		if !r.paired {
			// Alone: the initiator's first store went out, then nothing came back.
			r.status = kernels.LatchTimedOut
			if a.Role == 0 {
				r.store = min(1, a.Iters)
				r.stamps = []float64{o.start + o.setup}
			}
		}
		if r.store > 0 {
			d.writeU32(r.peer, r.store)
		}
		if len(r.stamps) > 0 {
			b := make([]byte, 8*len(r.stamps))
			for i, t := range r.stamps {
				binary.LittleEndian.PutUint64(b[8*i:], globaltimer(t))
			}
			d.writeBytes(span{a: r.times.a, h: r.times.h, off: r.times.off, n: uint64(len(b))}, b)
		}
		d.writeU32(r.state, r.status)
		return nil
	}
	return o, nil
}

// flagSpread is how much longer a store takes to reach a flag at the worst
// place in device memory than at the best: on a 2× H200 the one-way time of
// a ping-pong takes 577-836 ns by where its flags sit (12 offsets in a 4 MiB
// buffer, the same in three processes), and processes whose rounds take the
// flag buffer's slots by round number repeat one pattern round by round
// (docs/methods.md, "Flag ping-pong").
const flagSpread = 0.45

// flagPlacement is the factor on the latency of a store to the flag at sp
// (device memory) of where it sits, around 1 (the model's store latencies
// are typical ones): a draw by the device and the flag's offset in its
// allocation, in 1 KiB steps, the same for every store there in every
// process, as the hardware's.
func (d *Driver) flagPlacement(sp span) float64 {
	if sp.a == nil {
		return 1
	}
	u := unitFloat(hashKeys(noisePlacement, uint64(sp.a.dev), sp.off>>10))
	return 1 + flagSpread*(u-0.5)/(1+flagSpread/2)
}

// storeLatency is how long a system-scope store from device from takes to
// be seen by device to polling its own memory; a relaxed store skips the
// release fence.
func (d *Driver) storeLatency(from, to int, relaxed bool) float64 {
	mm := d.m.m
	t := mm.storeRemote
	if from == to {
		t = mm.storeLocal
	} else if !d.m.sameSwitch(from, to) {
		t += mm.farExtra
	}
	if relaxed {
		t *= mm.relaxedStore
	}
	return t
}

// pairPing starts a ping-pong kernel: it pairs with a waiting partner (the
// other role, the flags crossed), or waits for one until its timeout.
func (s *sched) pairPing(o *op) {
	r := o.ping
	o.timeoutAt = o.start + o.setup + r.timeout
	for _, p := range s.waiting {
		q := p.ping
		if p.kind != opPing || q == nil || q.paired {
			continue
		}
		if q.a.Role != r.a.Role && q.my.key() == r.peer.key() && q.peer.key() == r.my.key() {
			s.unwait(p)
			if r.a.Role == 0 {
				s.schedulePing(o, p)
			} else {
				s.schedulePing(p, o)
			}
			return
		}
	}
	s.waiting = append(s.waiting, o)
}

// schedulePing plays out a paired ping-pong: initiator ini, responder res.
func (s *sched) schedulePing(ini, res *op) {
	d := s.d
	I, R := ini.ping, res.ping
	I.paired, R.paired = true, true
	iters := uint64(I.a.Iters)
	chunk := uint64(I.a.Chunk)
	tI, tR := ini.start+ini.setup, res.start+res.setup
	dI, dR := ini.timeoutAt, res.timeoutAt
	out := d.storeLatency(I.dev, R.dev, I.relaxed) * d.flagPlacement(R.my)  // initiator's store seen by the responder
	back := d.storeLatency(R.dev, I.dev, R.relaxed) * d.flagPlacement(I.my) // and back
	rtt := out + back
	// Round trip k ends at end(k); the first waits for whoever starts last.
	ends := make([]float64, 0, iters/chunk+1)
	first := math.Max(tI+out, tR) + back
	done := uint64(0) // round trips completed within both deadlines
	t := first - rtt
	for k := uint64(1); k <= iters; {
		n := min(chunk, iters-k+1)
		step := float64(n) * rtt * d.opJitter(1.5, ini.keys(noisePing).with(k))
		// Round trips of this chunk that fit the deadlines.
		per := step / float64(n)
		fit := n
		for fit > 0 && (t+float64(fit)*per > dI || t+float64(fit)*per-back > dR) {
			fit--
		}
		done += fit
		if fit < n {
			break
		}
		t += step
		if (k+n-1)%chunk == 0 {
			ends = append(ends, t)
		}
		k += n
	}
	I.stamps = append([]float64{tI}, ends...)
	if done == iters {
		I.status, R.status = kernels.LatchReleased, kernels.LatchReleased
		I.store, R.store = uint32(iters), uint32(iters)
		s.endAt(ini, t+100)
		s.endAt(res, t-back+100)
		return
	}
	I.status, R.status = kernels.LatchTimedOut, kernels.LatchTimedOut
	I.store, R.store = uint32(min(done+1, iters)), uint32(done)
	s.endAt(ini, dI)
	s.endAt(res, dR)
}
