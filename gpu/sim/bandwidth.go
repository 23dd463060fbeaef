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
	mark         int
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

func (s *sched) resource(k resKey) *resource {
	r := s.res[k]
	if r == nil {
		r = &resource{cap: s.d.m.capacity(k)}
		s.res[k] = r
	}
	return r
}

// usesCap is the room a flow's uses start with: those of a copy over
// NVLink or to the host (memories, links both ways, a copy engine), so that
// they are one allocation, not three as append grows them.
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
// writeScale lower an SM variant's link efficiency (1 for the best).
func (s *sched) transferUses(src, dst location, actor int, e engineKind, readScale, writeScale float64) []use {
	mm := s.d.m.m
	b := usesBuilder{s: s, uses: make([]use, 0, usesCap)}
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
// copies through pinned host memory, both copy engines and PCIe links busy.
func (s *sched) stagedUses(src, dst int) []use {
	m := s.d.m
	b := usesBuilder{s: s, uses: make([]use, 0, usesCap)}
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

// newFlow makes a flow of bytes with a speed factor j (jitter): the flow
// takes 1/j of each weight and may go j times its cap.
func newFlow(bytes float64, uses []use, cap, j float64) *flow {
	for i := range uses {
		uses[i].w /= j
	}
	return &flow{bytes: bytes, remaining: bytes, cap: cap * j, uses: uses}
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
				touched = append(touched, r)
			}
			r.wsum += u.w
			r.flows = append(r.flows, f)
		}
	}
	s.active, s.touched = active, touched
}

// fillRates raises the level of every unfrozen active flow until each is
// frozen: by a resource that fills (its flows stay at that level) or by its
// own cap (flows in order of cap).
func (s *sched) fillRates() {
	active, touched := s.active, s.touched
	byCap := append(s.byCap[:0], active...)
	slices.SortFunc(byCap, func(a, b *flow) int { return cmp.Compare(a.cap, b.cap) })
	s.byCap = byCap
	// The resources not yet full, in touched's order. A resource that fills
	// stays full, and every pass below skips the full ones, so they leave
	// this list as they fill (in a test of every pair at once on 72 GPUs most
	// fill long before the last flow freezes, and these passes over all of
	// them were a third of the run). Keeping touched's order keeps the order
	// in which flows freeze, and with it every weight's rounding.
	live := append(s.live[:0], touched...)
	level, left, next := 0.0, len(active), 0
	freeze := func(f *flow) {
		f.frozen, f.rate = true, level
		left--
		for _, u := range f.uses {
			u.r.wsum = math.Max(0, u.r.wsum-u.w)
		}
	}
	for iter := 0; left > 0; iter++ {
		if iter > len(active)+len(touched)+4 {
			// Rounding kept some flow unfrozen: it gets the level reached.
			for _, f := range active {
				if !f.frozen {
					freeze(f)
				}
			}
			break
		}
		for next < len(byCap) && byCap[next].frozen {
			next++
		}
		inc := math.Inf(1)
		if next < len(byCap) {
			inc = byCap[next].cap - level
		}
		for _, r := range live {
			if r.wsum > 1e-12 {
				// The builtin min, which the compiler inlines (math.Min is a
				// call): the same value, NaN and signed zeros alike; a fifth
				// of a 72-GPU simulation's time was this line.
				inc = min(inc, r.remain/r.wsum)
			}
		}
		if math.IsInf(inc, 1) {
			break // cannot happen: every flow has a cap
		}
		inc = math.Max(inc, 0)
		level += inc
		for _, r := range live {
			r.remain -= inc * r.wsum
		}
		for ; next < len(byCap) && (byCap[next].frozen || byCap[next].cap-level <= 1e-9*byCap[next].cap); next++ {
			if !byCap[next].frozen {
				freeze(byCap[next])
			}
		}
		kept := live[:0]
		for _, r := range live {
			if !(r.remain <= 1e-9*r.cap) {
				kept = append(kept, r)
				continue
			}
			r.full = true
			for _, f := range r.flows {
				if !f.frozen {
					freeze(f)
				}
			}
		}
		live = kept
	}
	s.live = live[:0]
}
