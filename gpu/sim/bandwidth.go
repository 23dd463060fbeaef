package sim

import (
	"cmp"
	"math"
	"slices"
)

// The bandwidth model is a fluid one. Every transfer in progress is a flow of
// bytes across a set of resources (link directions, NVSwitch ports, PCIe
// links, device memory, copy engines, host memory), each with a capacity in
// GB/s (= bytes/ns). A flow uses each resource with a weight: the resource
// capacity one payload byte takes (1/efficiency on the links data crosses,
// the request overhead on the reverse direction). Rates are max-min fair:
// all flows speed up together until a resource is full or a flow reaches its
// own cap (the SM kernel's bytes in flight over latency), then those freeze
// and the rest go on. Rates change only when a flow starts or ends, so the
// scheduler moves from one such event to the next.

type resKind uint8

const (
	resLink       resKind = iota // direct NVLink bundle a→b
	resEgress                    // NVSwitch port of a, outbound
	resIngress                   // NVSwitch port of a, inbound
	resPCIeUp                    // GPU a's PCIe link towards the host or switch
	resPCIeDown                  // ... and back
	resSwitchUp                  // PCIe switch a's uplink to the root complex
	resSwitchDown                // ... and back
	resRootP2P                   // root complex forwarding peer traffic, switch a → switch b
	resMem                       // device a's memory (read + write bytes)
	resCE                        // device a's copy engines together
	resHostMem                   // host memory
	resPlane                     // a blocking NVSwitch plane, all ports together
	resKinds                     // how many kinds
)

type resKey struct {
	kind resKind
	a, b int
}

type resource struct {
	cap float64 // bytes/ns
	// water-filling scratch
	remain, wsum float64
	full         bool
	flows        []*flow
	unfrozen     int // flows through it not frozen yet
	mark         int
	// fillRates' state: its index in touched, the steps of the level taken
	// off remain, awake (taken care of at every step) or dead (decides
	// nothing more), and the version of its entry among the waiting.
	idx, upto   int
	awake, dead bool
	ver         uint32
}

// use is one resource a flow crosses and the capacity per payload byte it takes.
type use struct {
	r *resource
	w float64
}

// flow is the bandwidth part of an operation.
type flow struct {
	bytes     float64
	remaining float64 // at t0
	t0        float64
	start     float64 // data starts moving (after the operation's setup)
	cap       float64 // the flow's own limit, bytes/ns
	uses      []use
	rate      float64
	frozen    bool
	usesBuf   [usesCap]use // uses' array, where they fit: the flow and its uses one allocation
}

// location is where bytes live: a device's memory (>= 0), host memory, or a
// kernel's registers (bytes produced or consumed by the SMs themselves).
type location int

const (
	locHost location = -1
	locCore location = -2
)

// engineKind selects the efficiency profiles of a transfer.
type engineKind int

const (
	engCE   engineKind = iota // copy engine
	engSM                     // SM copy kernels
	engFill                   // fill, check and memset kernels
)

func (m *machine) capacity(k resKey) float64 {
	var c float64
	switch k.kind {
	case resLink, resEgress, resIngress:
		c = m.m.portGBps
	case resPCIeUp, resPCIeDown:
		c = m.m.pcieGBps
	case resSwitchUp, resSwitchDown:
		c = m.m.uplinkGBps
	case resRootP2P:
		c = m.m.rootP2PGBps
	case resMem:
		c = m.gpu.memGBps
	case resCE:
		c = m.m.ceGBps
	case resHostMem:
		c = m.m.hostMemGBps
	case resPlane:
		c = m.planeGBps
	}
	return c * m.personality(k)
}

// A path is at most maxPath resources: linkPath, toHost and fromHost append
// theirs to ks, an array of the caller's (no allocation for each copy).
const maxPath = 5

// linkPath appends what data crosses from device a to device b (a != b).
func (m *machine) linkPath(ks []resKey, a, b int) []resKey {
	switch m.topo {
	case topoDirect:
		return append(ks, resKey{resLink, a, b})
	case topoSwitch:
		if m.planeGBps > 0 {
			return append(ks, resKey{resEgress, a, 0}, resKey{resIngress, b, 0}, resKey{resPlane, 0, 0})
		}
		return append(ks, resKey{resEgress, a, 0}, resKey{resIngress, b, 0})
	}
	sa, sb := m.switchOf[a], m.switchOf[b]
	if sa == sb {
		return append(ks, resKey{resPCIeUp, a, 0}, resKey{resPCIeDown, b, 0})
	}
	return append(ks, resKey{resPCIeUp, a, 0}, resKey{resSwitchUp, sa, 0}, resKey{resRootP2P, sa, sb}, resKey{resSwitchDown, sb, 0}, resKey{resPCIeDown, b, 0})
}

// toHost appends what data crosses from device a to host memory; fromHost
// back.
func (m *machine) toHost(ks []resKey, a int) []resKey {
	if m.topo == topoPCIe {
		return append(ks, resKey{resPCIeUp, a, 0}, resKey{resSwitchUp, m.switchOf[a], 0})
	}
	return append(ks, resKey{resPCIeUp, a, 0})
}

func (m *machine) fromHost(ks []resKey, b int) []resKey {
	if m.topo == topoPCIe {
		return append(ks, resKey{resSwitchDown, m.switchOf[b], 0}, resKey{resPCIeDown, b, 0})
	}
	return append(ks, resKey{resPCIeDown, b, 0})
}

// resource returns the resource of key k, made on first use. The
// resources of each kind are in a slice by device (by pair of devices for
// links and root-complex forwarding): a map by key hashed the key for every
// resource of every copy.
func (s *sched) resource(k resKey) *resource {
	n := s.d.m.n
	size, i := n, k.a
	if k.kind == resLink || k.kind == resRootP2P {
		size, i = n*n, k.a*n+k.b
	} else if k.b != 0 {
		size, i = 0, -1 // no such key; the map below holds it
	}
	if k.a < 0 || k.a >= n || k.b < 0 || k.b >= n || i < 0 || int(k.kind) >= len(s.res) {
		r := s.resMap[k]
		if r == nil {
			r = &resource{cap: s.d.m.capacity(k)}
			s.resMap[k] = r
		}
		return r
	}
	rs := s.res[k.kind]
	if rs == nil {
		rs = make([]*resource, size)
		s.res[k.kind] = rs
	}
	r := rs[i]
	if r == nil {
		r = &resource{cap: s.d.m.capacity(k)}
		rs[i] = r
	}
	return r
}

// usesCap is the room for a flow's uses in the flow itself: those of a copy
// over NVLink or to the host (memories, links both ways, a copy engine).
const usesCap = 8

// usesBuilder accumulates a flow's resources, merging repeats.
type usesBuilder struct {
	s    *sched
	uses []use
}

func (b *usesBuilder) add(k resKey, w float64) {
	r := b.s.resource(k)
	for i := range b.uses {
		if b.uses[i].r == r {
			b.uses[i].w += w
			return
		}
	}
	b.uses = append(b.uses, use{r, w})
}

func (b *usesBuilder) path(ks []resKey, w float64) {
	for _, k := range ks {
		b.add(k, w)
	}
}

// leg adds data moving from one location to another (neither the same
// device) with profile p for device-to-device links and hp for PCIe to host.
func (b *usesBuilder) leg(from, to location, p, hp profile) {
	m := b.s.d.m
	var ks [maxPath]resKey
	switch {
	case from == locHost && to >= 0:
		b.path(m.fromHost(ks[:0], int(to)), 1/hp.eff)
		b.path(m.toHost(ks[:0], int(to)), hp.rev)
		b.add(resKey{kind: resHostMem}, 1)
	case to == locHost && from >= 0:
		b.path(m.toHost(ks[:0], int(from)), 1/hp.eff)
		b.path(m.fromHost(ks[:0], int(from)), hp.rev)
		b.add(resKey{kind: resHostMem}, 1)
	case from >= 0 && to >= 0:
		b.path(m.linkPath(ks[:0], int(from), int(to)), 1/(p.eff*b.s.d.linkScale(int(from), int(to))))
		b.path(m.linkPath(ks[:0], int(to), int(from)), p.rev)
	case from == locHost && to == locHost:
		b.add(resKey{kind: resHostMem}, 2)
	}
}

// transferUses is the resource use of moving data from src to dst with an
// engine on device actor: the read leg from src to the actor, the write leg
// from the actor to dst, and the memories at both ends. readScale and
// writeScale lower an SM variant's link efficiency (1 for the best). The
// list is in a buffer of the scheduler's until the next call (newFlow
// copies it into the flow).
func (s *sched) transferUses(src, dst location, actor int, e engineKind, readScale, writeScale float64) []use {
	mm := s.d.m.m
	b := usesBuilder{s: s, uses: s.usesBuf[:0]}
	var rd, wr, hostRd, hostWr profile
	var localEff float64
	switch e {
	case engCE:
		rd, wr, hostRd, hostWr, localEff = mm.ceRead, mm.ceWrite, mm.hostCE, mm.hostCE, mm.ceLocalEff
	case engSM:
		rd, wr, hostRd, hostWr, localEff = mm.smRead, mm.smWrite, mm.hostSM, mm.hostSMWrite, mm.smLocalEff
	default:
		rd, wr, hostRd, hostWr, localEff = mm.smRead, mm.smWrite, mm.hostSM, mm.hostSM, mm.fillEff
	}
	rd.eff *= readScale
	wr.eff *= writeScale
	a := location(actor)
	localOnly := (src == a || src == locCore) && (dst == a || dst == locCore)
	memW := 1.0
	if localOnly {
		memW = 1 / localEff
	}
	if src >= 0 {
		b.add(resKey{resMem, int(src), 0}, memW)
	}
	if dst >= 0 {
		b.add(resKey{resMem, int(dst), 0}, memW)
	}
	if src != locCore && src != a {
		b.leg(src, a, rd, hostRd)
	}
	if dst != locCore && dst != a {
		b.leg(a, dst, wr, hostWr)
	}
	if e == engCE {
		b.add(resKey{resCE, actor, 0}, 1)
	}
	return b.uses
}

// stagedUses is a copy between two devices without peer access: the driver
// copies through pinned host memory, both copy engines and PCIe links busy;
// in the scheduler's buffer, as transferUses.
func (s *sched) stagedUses(src, dst int) []use {
	m := s.d.m
	b := usesBuilder{s: s, uses: s.usesBuf[:0]}
	var ks [maxPath]resKey
	b.add(resKey{resMem, src, 0}, 1)
	b.add(resKey{resMem, dst, 0}, 1)
	b.path(m.toHost(ks[:0], src), 1/m.m.hostCE.eff)
	b.path(m.fromHost(ks[:0], dst), 1/m.m.hostCE.eff)
	b.add(resKey{kind: resHostMem}, 2)
	b.add(resKey{resCE, src, 0}, 1)
	b.add(resKey{resCE, dst, 0}, 1)
	return b.uses
}

// newFlow makes a flow of bytes over a copy of uses with a speed factor j
// (jitter): the flow takes 1/j of each weight and may go j times its cap.
func newFlow(bytes float64, uses []use, cap, j float64) *flow {
	f := &flow{bytes: bytes, remaining: bytes, cap: cap * j}
	if len(uses) <= len(f.usesBuf) {
		f.uses = append(f.usesBuf[:0], uses...)
	} else {
		f.uses = slices.Clone(uses)
	}
	for i := range f.uses {
		f.uses[i].w /= j
	}
	return f
}

// noCap is the cap of flows limited only by resources.
const noCap = 1e9

// computeRates assigns max-min fair rates to the flows that are moving data
// (progressive filling: every unfrozen flow at the same level, raised until
// a resource fills or a flow reaches its cap, those frozen, and on).
func (s *sched) computeRates() {
	s.collectFlows()
	s.fillRates()
}

// collectFlows gathers the flows moving data now (s.active, the others
// frozen at rate 0) and the resources they use (s.touched), each resource's
// capacity reset and its flows' weights summed.
func (s *sched) collectFlows() {
	s.mark++
	active, touched := s.active[:0], s.touched[:0]
	for _, o := range s.flows {
		f := o.fl
		f.rate, f.frozen = 0, true
		if f.start > s.now+timeEps || (f.remaining <= 0 && o.endAt < 0) {
			continue
		}
		f.frozen = false
		active = append(active, f)
		for _, u := range f.uses {
			r := u.r
			if r.mark != s.mark {
				r.mark = s.mark
				r.remain, r.wsum, r.full = r.cap, 0, false
				r.flows = r.flows[:0]
				r.unfrozen = 0
				touched = append(touched, r)
			}
			r.wsum += u.w
			r.flows = append(r.flows, f)
			r.unfrozen++
		}
	}
	s.active, s.touched = active, touched
}

// fillRates raises the level of every unfrozen active flow until each is
// frozen: by a resource that fills (its flows stay at that level) or by its
// own cap (flows in order of cap). It is progressive filling as a pass over
// every resource at each step would do it, with the same floating-point
// operations in the same order for everything that decides a rate, so the
// rates are the same to the bit (the tests hold it to a plain
// implementation); it only leaves out the work that decides nothing:
//
//   - Each step raises the level by inc, the least of what each flow's cap
//     and each resource's remaining capacity over its weight sum allow, and
//     takes inc times its weight sum off each resource's remaining capacity.
//     A resource far from full (its fill level, the level at which it
//     would fill at its weight sum, well above the level now) decides
//     nothing until the level comes near: it waits, in a heap by that fill
//     level, and the steps it missed are taken off its capacity, one by
//     one in their order, when it is next needed: when the level nears it
//     (it wakes, and is taken care of at every step from then on) or when a
//     flow through it freezes. The margin (1e-9 of the levels, against the
//     rounding of some thousands of steps, below 1e-12) makes it sure that
//     a waiting resource would neither set inc nor fill at the step.
//   - A resource whose flows are all frozen, its weight sum nil (as inc
//     reads it: 1e-12 or less), bounds and freezes nothing more: it is
//     dropped, and what is left of its capacity is never computed.
//
// The matrices' batches are some tens of flows that share nothing, and a
// pass over every resource at each step was most of a simulated run's time.
func (s *sched) fillRates() {
	f := s.startFilling()
	for iter := 0; f.left > 0; iter++ {
		if iter > len(s.active)+len(s.touched)+4 {
			// Rounding kept some flow unfrozen: it gets the level reached.
			for _, fl := range s.active {
				if !fl.frozen {
					f.freeze(fl)
				}
			}
			break
		}
		inc := f.bound()
		if math.IsInf(inc, 1) {
			break // cannot happen: every flow has a cap
		}
		inc = math.Max(inc, 0)
		f.level += inc
		s.incs = append(s.incs, inc)
		f.rise(inc)
		f.freezeReached()
	}
	for _, r := range f.awake {
		r.awake = false
	}
	clear(f.awake)
	s.live, s.full, s.filling = f.awake[:0], f.full, filling{}
	clear(s.waits)
}

// filling is the state of one fillRates.
type filling struct {
	s           *sched
	level       float64
	left, next  int         // flows not frozen; the first in byCap perhaps not
	byCap       []*flow     // the active flows by cap
	awake, full []*resource // taken care of at every step; filled at this one
}

// startFilling sorts the active flows by cap and puts each resource among
// the waiting, or the awake where its weight sum is nil.
func (s *sched) startFilling() *filling {
	byCap := append(s.byCap[:0], s.active...)
	slices.SortFunc(byCap, func(a, b *flow) int { return cmp.Compare(a.cap, b.cap) })
	s.byCap = byCap
	s.incs, s.waits = s.incs[:0], s.waits[:0]
	s.filling = filling{s: s, left: len(s.active), byCap: byCap, awake: s.live[:0], full: s.full[:0]}
	f := &s.filling
	for i, r := range s.touched {
		r.idx, r.upto, r.dead = i, 0, false
		if r.wsum > 1e-12 {
			s.wait(r, 0)
		} else {
			r.awake = true
			f.awake = append(f.awake, r)
		}
	}
	return f
}

// freeze fixes fl's rate at the level and takes its weights off its
// resources' sums.
func (f *filling) freeze(fl *flow) {
	fl.frozen, fl.rate = true, f.level
	f.left--
	for _, u := range fl.uses {
		r := u.r
		r.unfrozen--
		if r.awake || r.dead {
			r.wsum = max(0, r.wsum-u.w)
			continue
		}
		w := max(0, r.wsum-u.w)
		if r.unfrozen == 0 && w <= 1e-12 {
			r.wsum, r.dead = w, true // its capacity is never read again
			continue
		}
		f.s.catchUp(r)
		r.wsum = w
		if w > 1e-12 {
			f.s.wait(r, f.level)
		} else {
			// No share of the level to wait for: taken care of at every
			// step, as it would fill (a resource of no capacity).
			r.awake = true
			f.awake = append(f.awake, r)
		}
	}
}

// bound is the step's inc before it is clamped at 0: the least of the next
// cap's distance and each awake resource's remaining capacity over its
// weight sum, and of the waiting resources woken for it.
func (f *filling) bound() float64 {
	for f.next < len(f.byCap) && f.byCap[f.next].frozen {
		f.next++
	}
	inc := math.Inf(1)
	if f.next < len(f.byCap) {
		inc = f.byCap[f.next].cap - f.level
	}
	for _, r := range f.awake {
		if r.wsum > 1e-12 {
			// A resource whose remaining capacity is over inc times its
			// weight sum fills later: the quotient, rounded, is inc or
			// more (rounding is monotonic and inc a float64), so min would
			// keep inc. A division costs several multiplications, and this
			// skips most of them; the margin (1e-12, against a rounding of
			// 2^-53 in each of the two products) makes the test sure, and
			// it is only made with a positive inc.
			if inc > 0 && r.remain > inc*r.wsum*(1+1e-12) {
				continue
			}
			// The builtin min, which the compiler inlines (math.Min is a
			// call): the same value, NaN and signed zeros alike.
			inc = min(inc, r.remain/r.wsum)
		}
	}
	// Wake the waiting resources that may set inc or fill at this step,
	// nearest first (a woken one may lower inc, and with it the bar).
	s := f.s
	for len(s.waits) > 0 {
		top := s.waits[0]
		r := top.r
		if r.dead || r.awake || top.ver != r.ver {
			s.popWait()
			continue
		}
		if !(top.key <= (f.level+max(inc, 0))*(1+fillMargin)) {
			break
		}
		s.popWait()
		s.catchUp(r)
		r.awake = true
		f.awake = append(f.awake, r)
		inc = min(inc, r.remain/r.wsum)
	}
	return inc
}

// rise takes the step off each awake resource and finds those now full.
// Their flows freeze after the flows that reached their cap, in the order
// of touched (freezeReached), as they did when these were passes of their
// own over every resource: whether a resource is full reads only its
// remaining capacity, which no freezing changes.
func (f *filling) rise(inc float64) {
	kept := f.awake[:0]
	for _, r := range f.awake {
		if r.unfrozen == 0 && r.wsum <= 1e-12 {
			r.awake, r.dead = false, true
			continue
		}
		r.take(inc)
		r.upto++
		if !(r.remain <= 1e-9*r.cap) {
			kept = append(kept, r)
			continue
		}
		r.full, r.awake, r.dead = true, false, true
		f.full = append(f.full, r)
	}
	f.awake = kept
}

// freezeReached freezes the flows that reached their cap, then those of
// the resources that filled.
func (f *filling) freezeReached() {
	for ; f.next < len(f.byCap) && (f.byCap[f.next].frozen || f.byCap[f.next].cap-f.level <= 1e-9*f.byCap[f.next].cap); f.next++ {
		if !f.byCap[f.next].frozen {
			f.freeze(f.byCap[f.next])
		}
	}
	if len(f.full) > 1 {
		slices.SortFunc(f.full, func(a, b *resource) int { return cmp.Compare(a.idx, b.idx) })
	}
	for _, r := range f.full {
		for _, fl := range r.flows {
			if !fl.frozen {
				f.freeze(fl)
			}
		}
	}
	clear(f.full)
	f.full = f.full[:0]
}

// fillMargin is how far below its fill level, relative to the levels, a
// waiting resource wakes: well above what rounding moves a fill level in
// the steps of one filling (some 1e-16 a step).
const fillMargin = 1e-9

// take takes a step of the level, inc, off r's remaining capacity: the one
// expression of it, for the steps taken at once and those caught up on.
func (r *resource) take(inc float64) { r.remain -= inc * r.wsum }

// catchUp takes off r's remaining capacity the steps it waited through.
func (s *sched) catchUp(r *resource) {
	for _, inc := range s.incs[r.upto:] {
		r.take(inc)
	}
	r.upto = len(s.incs)
}

// wait puts r (its remaining capacity up to date, its weight sum over
// 1e-12) among the waiting resources at level, keyed by the level at which
// it may next set inc or fill, less the margins.
func (s *sched) wait(r *resource, level float64) {
	fill := level + r.remain/r.wsum
	key := fill - 1e-9*r.cap/r.wsum - fillMargin*math.Abs(fill)
	r.ver++
	s.waits = append(s.waits, waitEntry{key: key, r: r, ver: r.ver})
	// Sift up.
	q := s.waits
	for j := len(q) - 1; j > 0; {
		i := (j - 1) / 2
		if !(q[j].key < q[i].key) {
			break
		}
		q[i], q[j] = q[j], q[i]
		j = i
	}
}

// popWait removes the first waiting entry.
func (s *sched) popWait() {
	q := s.waits
	n := len(q) - 1
	q[0] = q[n]
	q[n] = waitEntry{}
	q = q[:n]
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n && q[j2].key < q[j].key {
			j = j2
		}
		if !(q[j].key < q[i].key) {
			break
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
	s.waits = q
}

// waitEntry is a waiting resource in fillRates' heap; an entry whose ver is
// not its resource's is stale.
type waitEntry struct {
	key float64
	r   *resource
	ver uint32
}
