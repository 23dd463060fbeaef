package sim

import (
	"encoding/binary"
	"hash/fnv"
	"math"

	"github.com/p2pbench/p2pbench/kernels"
)

// The data-moving kernels: p2p_fill, p2p_check and the SM copy variants.

// fill is p2p_fill: the pattern over words of buf.
func (l *launch) fill() (*op, error) {
	a, err := kernels.DecodeFillArgs(l.params)
	if err != nil {
		return nil, l.decodeErr(err)
	}
	if err := l.syncFault(a.Buf); err != nil {
		return nil, err
	}
	c, d := l.c, l.c.d
	o := &op{kind: opWork}
	var sp span
	o.prepare = func(o *op) *asyncError {
		var f *asyncError
		if sp, f = c.accessWords(a.Buf, a.Words, "p2p_fill"); f != nil {
			return f
		}
		if f := d.pairAsyncError(c.dev, sp.dev()); f != nil {
			return f
		}
		remote := sp.dev() != c.dev
		o.setup = l.kernelSetup(o, remote)
		uses := d.transferUses(locCore, sp.loc(), c.dev, engFill, 1, 1)
		o.fl = newFlow(float64(sp.n), uses, l.inflightCap(16, remote), d.opJitter(1, o.keys(noiseSpeed)))
		return nil
	}
	o.finish = func(o *op) *asyncError {
		d.writeSegs(sp, []segment{{n: sp.n, kind: segPattern, seed: a.Seed}})
		return nil
	}
	return o, nil
}

// check is p2p_check: it compares, then folds its finding into the two u64
// at result as the kernel's atom.min and atom.add would.
func (l *launch) check() (*op, error) {
	a, err := kernels.DecodeCheckArgs(l.params)
	if err != nil {
		return nil, l.decodeErr(err)
	}
	if err := l.syncFault(a.Buf); err != nil {
		return nil, err
	}
	c, d := l.c, l.c.d
	o := &op{kind: opWork}
	var buf, res span
	o.prepare = func(o *op) *asyncError {
		var f *asyncError
		if buf, f = c.accessWords(a.Buf, a.Words, "p2p_check"); f != nil {
			return f
		}
		if res, f = c.access(a.Result, 16, "p2p_check (result)"); f != nil {
			return f
		}
		if a.Result%8 != 0 {
			return misaligned("p2p_check result at %#x", a.Result)
		}
		if f := d.pairAsyncError(c.dev, buf.dev()); f != nil {
			return f
		}
		remote := buf.dev() != c.dev
		o.setup = l.kernelSetup(o, remote)
		uses := d.transferUses(buf.loc(), locCore, c.dev, engFill, 1, 1)
		o.fl = newFlow(float64(buf.n), uses, l.inflightCap(16, remote), d.opJitter(1, o.keys(noiseSpeed)))
		return nil
	}
	o.finish = func(o *op) *asyncError {
		first, bad := d.checkSpan(buf, a.Words, a.Seed)
		if bad == 0 {
			return nil
		}
		var r [16]byte
		d.readBytes(res, r[:])
		oldFirst := binary.LittleEndian.Uint64(r[0:])
		binary.LittleEndian.PutUint64(r[0:], min(oldFirst, uint64(first)))
		binary.LittleEndian.PutUint64(r[8:], binary.LittleEndian.Uint64(r[8:])+bad)
		d.writeBytes(res, r[:])
		return nil
	}
	return o, nil
}

// checkSpan is checkPattern over device or host memory.
func (d *Driver) checkSpan(sp span, words uint64, seed uint32) (int64, uint64) {
	switch {
	case sp.a != nil:
		return sp.a.mem.checkPattern(sp.off, words, seed)
	case sp.h.freed:
		return 0, words
	}
	return sp.h.mem.checkPattern(sp.off, words, seed)
}

// variantScale is how far an SM copy variant falls short of the best one,
// reading and writing: small, fixed amounts derived from its name, so the
// tuning sweep sees the spread hardware.md reports (372–374 pulling,
// 368–372 pushing on the H200 pair).
func (d *Driver) variantScale(variant string) (read, write float64) {
	h := fnv.New64a()
	h.Write([]byte(variant))
	x := h.Sum64()
	mm := d.m.m
	return 1 - mm.smVariantRead*unitFloat(splitmix(x)), 1 - mm.smVariantWrt*unitFloat(splitmix(x^1))
}

// smCopy is p2p_copy_<variant>: dst ← src, bytes (whole words), Reps times,
// with 16-byte aligned addresses (MISALIGNED_ADDRESS otherwise, as the
// vector loads would). The launch moves Reps × bytes as one flow and pays
// its fixed costs once: its setup, of which the launch's cost
// (model.smLaunch) is more than the launch before can hide, and the drain
// before an event. The content is what Reps copies leave, which is what
// one leaves. Reps 0 launches a kernel that touches no memory.
func (l *launch) smCopy() (*op, error) {
	a, err := kernels.DecodeCopyArgs(l.params)
	if err != nil {
		return nil, l.decodeErr(err)
	}
	d := l.c.d
	variant := l.fn.name[len("p2p_copy_"):]
	perThread := l.copyInFlight(variant)
	if ss, ok := d.resolve(a.Src, 0); ok {
		if ds, ok := d.resolve(a.Dst, 0); ok {
			if err := d.pairError(ss.dev(), ds.dev(), "cuLaunchKernel"); err != nil {
				return nil, err
			}
		}
	}
	readScale, writeScale := d.variantScale(variant)
	bytes := a.Bytes &^ 3
	if a.Reps == 0 {
		o := &op{kind: opWork}
		o.prepare = func(o *op) *asyncError {
			o.setup = l.kernelSetup(o, false)
			return nil
		}
		return o, nil
	}
	sc := &smCopyOp{op: op{kind: opWork}, l: l, a: a, variant: variant, perThread: perThread,
		readScale: readScale, writeScale: writeScale, bytes: bytes}
	sc.prepare, sc.finish, sc.data = prepareSMCopy, finishSMCopy, sc
	return &sc.op, nil
}

// smCopyOp is an SM copy of Reps > 0: the op and what its prepare and
// finish read, one allocation (closures over these were four a launch).
type smCopyOp struct {
	op
	l                     *launch
	a                     kernels.CopyArgs
	variant               string
	perThread             float64
	readScale, writeScale float64
	bytes                 uint64
	src, dst              span // set by prepare
}

func prepareSMCopy(o *op) *asyncError {
	sc := o.data.(*smCopyOp)
	l, a, variant, bytes := sc.l, sc.a, sc.variant, sc.bytes
	c, d := l.c, l.c.d
	if a.Src%16 != 0 || a.Dst%16 != 0 {
		return misaligned("p2p_copy_%s: src %#x or dst %#x not 16-byte aligned", variant, a.Src, a.Dst)
	}
	var f *asyncError
	if sc.src, f = c.access(a.Src, bytes, "p2p_copy_"+variant+" (load)"); f != nil {
		return f
	}
	if sc.dst, f = c.access(a.Dst, bytes, "p2p_copy_"+variant+" (store)"); f != nil {
		return f
	}
	src, dst := sc.src, sc.dst
	if f := d.pairAsyncError(src.dev(), dst.dev()); f != nil {
		return f
	}
	remote := src.dev() != c.dev || dst.dev() != c.dev
	p := d.placement(o, bytes, dst, src)
	o.setup = l.copySetup(o, bytes, remote) * p
	o.floor *= p
	uses := d.transferUses(src.loc(), dst.loc(), c.dev, engSM, sc.readScale, sc.writeScale)
	// A launch of Reps copies moves as Reps copies one after the other
	// would: its speed's jitter is their average's, 1/√Reps of one's.
	j := 1 + (d.opJitter(1, o.keys(noiseSpeed))-1)/math.Sqrt(float64(a.Reps))
	o.fl = newFlow(float64(bytes)*float64(a.Reps), uses, l.inflightCap(sc.perThread, remote), j/p)
	o.drain = drain(d.m.m.smDrain, bytes)
	return nil
}

func finishSMCopy(o *op) *asyncError {
	sc := o.data.(*smCopyOp)
	c, d, src, dst := sc.l.c, sc.l.c.d, sc.src, sc.dst
	if sd, dd := src.dev(), dst.dev(); sd >= 0 && dd >= 0 && sd != dd {
		p := d.m.m.smWrite
		if c.dev == dd {
			p = d.m.m.smRead
		}
		d.traffic.count(sd, dd, float64(sc.bytes)*float64(sc.a.Reps), p)
	}
	d.copySpan(dst, src)
	return nil
}

// copyInFlight is how many bytes a thread of copy variant keeps in flight:
// 16 a vector, Unroll vectors; the bulk path's one thread per block keeps
// Unroll stages of 8 KiB.
func (l *launch) copyInFlight(variant string) float64 {
	k, ok := kernels.CopyKernelByVariant(variant)
	switch {
	case !ok:
		return 16
	case k.CacheHint == "bulk":
		return float64(max(k.Unroll, 1)) * 8192 / float64(l.blockSize)
	}
	return 16 * float64(max(k.Unroll, 1))
}

// copySetup is the fixed time of an SM copy launch o of bytes (remote: it
// reaches another device's memory), before placement: the kernel's setup,
// the launch's cost the launch before cannot hide, and a slow context's
// cost, which every launch pays, back to back too. It raises o.floor to
// what the launch before cannot hide.
func (l *launch) copySetup(o *op, bytes uint64, remote bool) float64 {
	d := l.c.d
	setup := l.kernelSetup(o, remote)
	if c := d.m.m.smLaunch.at(bytes); c > o.floor {
		setup += c - o.floor
		o.floor = c
	}
	if remote && l.c.slowLaunch {
		extra := d.m.m.smContextMode * o.floor
		setup += extra
		o.floor += extra
	}
	return setup
}
