package sim

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/p2pbench/p2pbench/kernels"
)

// The atomic kernels: p2p_atomic_<op> (throughput) and p2p_atomic_chain_<op>
// (latency). Their effect is computed from the values in memory, so counters
// accumulate over launches as on a GPU; from AtomicOp.Init, one launch gives
// exactly AtomicOp.Expected.

type atomClass int

const (
	clsAdd  atomClass = iota // add, red.add (and anything unrecognised)
	clsCAS                   // compare-and-swap v → v+1 until it succeeds
	clsExch                  // operation i exchanges in i+1
	clsMin                   // operation i stores min(old, iters-i)
)

// atomicDesc is what the simulator needs of an operation, from the kernels
// catalogue when it lists the name, else from the name itself.
type atomicDesc struct {
	name  string
	width int
	float bool
	red   bool
	class atomClass
}

func describeAtomic(name string) atomicDesc {
	a := atomicDesc{name: name, width: 4, red: strings.HasPrefix(name, "red_")}
	if op, ok := kernels.AtomicOpByName(name); ok {
		a.width, a.float = op.Width, op.Float
	} else {
		if strings.HasSuffix(name, "64") {
			a.width = 8
		}
		a.float = strings.Contains(name, "_f")
	}
	switch {
	case strings.HasPrefix(name, "cas"):
		a.class = clsCAS
	case strings.HasPrefix(name, "exch"):
		a.class = clsExch
	case strings.HasPrefix(name, "min"):
		a.class = clsMin
	}
	return a
}

func (a atomicDesc) mask() uint64 {
	if a.width == 8 {
		return math.MaxUint64
	}
	return math.MaxUint32
}

// apply is the final value of an element that held old after n operations
// (iters per thread) of the kind.
func (a atomicDesc) apply(old, n, iters uint64) uint64 {
	if n == 0 {
		return old
	}
	switch a.class {
	case clsExch:
		return iters & a.mask()
	case clsMin:
		return min(old&a.mask(), 1)
	}
	if a.float {
		// Adding 1.0 n times: exact below 2^24, stuck there (x+1 rounds
		// back to x), as float32 arithmetic on the GPU.
		x := math.Float32frombits(uint32(old))
		const top = 1 << 24
		switch {
		case x >= 0 && x < top && x == float32(math.Trunc(float64(x))):
			x = float32(math.Min(float64(x)+float64(n), top))
		case x >= top:
		default:
			x += float32(n)
		}
		return uint64(math.Float32bits(x))
	}
	return (old + n) & a.mask()
}

// lose is the value with lost updates (FaultAtomicCount, non-native
// atomics): counts come out short; exchange and min, which settle on one
// value, come out off by one.
func (a atomicDesc) lose(v, lost uint64) uint64 {
	switch {
	case a.class == clsExch || a.class == clsMin:
		return (v + 1) & a.mask()
	case a.float:
		return uint64(math.Float32bits(math.Float32frombits(uint32(v)) - float32(lost)))
	}
	return (v - lost) & a.mask()
}

// rate is the operation's throughput in Gop/s (= ops/ns) on the memory of
// device mem (-1: host) from device dev.
func (d *Driver) atomicRate(a atomicDesc, dev, mem int, contended bool) float64 {
	mm := d.m.m
	remote := mem != dev
	var r float64
	switch {
	case contended && remote && a.width == 8 && mm.contRemote64 > 0:
		r = mm.contRemote64
	case contended && remote:
		r = mm.contRemote
	case contended:
		r = mm.contLocal
	case a.red && remote:
		r = mm.redRemote
	case a.red:
		r = mm.redLocal
	case a.class == clsCAS && remote:
		r = mm.casRemote
	case a.class == clsCAS:
		r = mm.casLocal
	case remote:
		r = mm.atomRemote
	default:
		r = mm.atomLocal
	}
	switch {
	case mem < 0:
		r *= 0.25 // system-scope atomics to host memory cross PCIe one by one
	case remote && !d.m.sameSwitch(dev, mem):
		r *= mm.farAtomicScale
	}
	return r
}

// atomicRun is one launch of an atomic kernel.
type atomicRun struct {
	l         *launch
	desc      atomicDesc
	buf       uint64
	iters     uint64
	chain     bool   // p2p_atomic_chain_<op>: one thread, dependent operations
	contended bool   // every thread on element 0
	elems     uint64 // elements operated on
	sp        span   // those elements, resolved when the kernel starts
}

// atomic is p2p_atomic_<op> (chain false) or p2p_atomic_chain_<op>.
func (l *launch) atomic(chain bool) (*op, error) {
	r := &atomicRun{l: l, chain: chain, elems: l.threads}
	prefix := "p2p_atomic_"
	if chain {
		prefix = "p2p_atomic_chain_"
		a, err := kernels.DecodeChainArgs(l.params)
		if err != nil {
			return nil, l.decodeErr(err)
		}
		r.buf, r.iters = a.Buf, uint64(a.Iters)
	} else {
		a, err := kernels.DecodeAtomicArgs(l.params)
		if err != nil {
			return nil, l.decodeErr(err)
		}
		r.buf, r.iters, r.contended = a.Buf, uint64(a.Iters), a.Contended != 0
	}
	r.desc = describeAtomic(l.fn.name[len(prefix):])
	if err := l.syncFault(r.buf); err != nil {
		return nil, err
	}
	if chain || r.contended {
		r.elems = 1
	}
	return &op{kind: opWork, prepare: r.prepare, finish: r.finish}, nil
}

// prepare resolves the elements and sets the kernel's time: the chain's
// dependent latencies, or the operations over the link's atomic rate.
func (r *atomicRun) prepare(o *op) *asyncError {
	l, desc := r.l, r.desc
	c, d := l.c, l.c.d
	if r.buf%uint64(desc.width) != 0 {
		return misaligned("%s: buffer %#x not %d-byte aligned", l.fn.name, r.buf, desc.width)
	}
	var f *asyncError
	if r.sp, f = c.access(r.buf, r.elems*uint64(desc.width), l.fn.name); f != nil {
		return f
	}
	mem := r.sp.dev()
	if f := d.pairAsyncError(c.dev, mem); f != nil {
		return f
	}
	mm := d.m.m
	remote := mem != c.dev
	o.setup = l.kernelSetup(o, remote)
	lat := mm.atomLatLocal
	if remote {
		lat = mm.atomLatRemote
		if mem >= 0 && !d.m.sameSwitch(c.dev, mem) {
			lat += 2 * mm.farExtra
		}
	}
	j := d.opJitter(1, o.keys(noiseAtomic))
	if r.chain {
		o.delay = float64(r.iters) * lat * j * atomicPlace(r.buf, mm.atomPlaceSpread)
		return nil
	}
	// Little's law: a thread keeps two atoms (four reds) in flight.
	resident := float64(min(l.threads, uint64(d.m.gpu.sms*d.m.gpu.maxThreadsPerSM)))
	inflight := 2 * resident
	if desc.red {
		inflight = 4 * resident
	}
	rate := math.Min(d.atomicRate(desc, c.dev, mem, r.contended), inflight/lat)
	if r.contended && desc.class == clsCAS {
		// Contending warps retry: each success costs attempts that grow
		// with the number of contenders.
		rate /= 1 + (math.Max(1, resident/32)-1)/2
	}
	o.delay = float64(l.threads*r.iters) / rate * j
	return nil
}

// finish applies the operations to the elements, less the updates an
// injected fault or a link without native atomics loses.
func (r *atomicRun) finish(o *op) *asyncError {
	c, d, desc, sp := r.l.c, r.l.c.d, r.desc, r.sp
	lostByLink := false
	if r.contended && sp.dev() >= 0 && sp.dev() != c.dev {
		// Without native atomics over the link (PCIe across switches)
		// read-modify-writes of one address from many threads race.
		v, _ := d.m.p2pAttribute(3, c.dev, sp.dev())
		lostByLink = v == 0
	}
	n := r.iters
	if r.contended && !r.chain {
		n = r.l.threads * r.iters
	}
	d.applyAtomics(sp, desc, r.elems, n, r.iters)
	var lost uint64
	if _, ok := d.fault(FaultAtomicCount, c.dev, sp.dev()); ok {
		lost = 1
	}
	if lostByLink && desc.class != clsExch && desc.class != clsMin {
		lost += max(1, n/1000)
	}
	if lost > 0 {
		e := span{a: sp.a, h: sp.h, off: sp.off, n: uint64(desc.width)}
		d.writeElem(e, desc.width, desc.lose(d.readElem(e, desc.width), lost))
	}
	return nil
}

func (d *Driver) readElem(sp span, width int) uint64 {
	var b [8]byte
	d.readBytes(span{a: sp.a, h: sp.h, off: sp.off, n: uint64(width)}, b[:width])
	return binary.LittleEndian.Uint64(b[:])
}

func (d *Driver) writeElem(sp span, width int, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	d.writeBytes(span{a: sp.a, h: sp.h, off: sp.off, n: uint64(width)}, b[:width])
}

// applyAtomics updates elems elements of sp, n operations each.
func (d *Driver) applyAtomics(sp span, a atomicDesc, elems, n, iters uint64) {
	w := uint64(a.width)
	if sp.a != nil {
		if old, ok := sp.a.mem.uniform(sp.off, elems*w, a.width); ok {
			v := a.apply(old, n, iters)
			unit := v
			if a.width == 4 {
				unit = v&math.MaxUint32 | v<<32
			}
			sp.a.mem.fillRepeat(sp.off, elems*w, unit)
			return
		}
	}
	b := make([]byte, elems*w)
	d.readBytes(sp, b)
	for i := uint64(0); i < elems; i++ {
		if w == 8 {
			binary.LittleEndian.PutUint64(b[8*i:], a.apply(binary.LittleEndian.Uint64(b[8*i:]), n, iters))
		} else {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(a.apply(uint64(binary.LittleEndian.Uint32(b[4*i:])), n, iters)))
		}
	}
	d.writeBytes(sp, b)
}

// atomicPlace is the factor a counter's address puts on a dependent
// atomic's round trip: 1 to 1 + spread, the same for an address every time,
// from its 4 KiB and 2 MiB page bits (which memory partition and L2 slice
// serve it, on hardware).
func atomicPlace(addr uint64, spread float64) float64 {
	if spread == 0 {
		return 1
	}
	h := (addr>>12 ^ addr>>21 ^ addr>>8) & 7
	return 1 + spread*float64(h)/7
}
