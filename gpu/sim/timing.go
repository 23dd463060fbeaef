package sim

import (
	"math"
	"slices"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
)

// Time is virtual. There are two clocks, in nanoseconds:
//
//   - the host clock, which every API call advances by what it would cost a
//     CPU thread (enqueueing a copy or a launch, recording an event), and
//     which a synchronising call moves to the time the awaited work ended;
//   - the simulation clock, up to which queued work has been run.
//
// Work is not run when it is enqueued but when the host waits for it (or
// asks whether it is done): the scheduler then runs every stream, on every
// device, in virtual-time order, until the awaited work is complete. An
// operation starts when its stream is free, the host has enqueued it, and
// (for StreamWaitEvent) the awaited record has completed. Transfers share
// resources while they overlap (bandwidth.go). A latch reads its host flag
// when the scheduler reaches it: set, and it releases at the host time of
// the first synchronising call that saw it set; still clear when the host
// waits on it, and it runs into its timeout, in virtual time.
//
// Host-side costs of the calls, so that unlatched timings show launch gaps as
// on a real GPU.
const (
	costEnqueue = 2000.0 // a copy, memset or kernel launch
	costLight   = 300.0  // recording an event, waiting on one, a query
	costWake    = 1500.0 // a synchronising call returns this long after the work ended
	failTime    = 2000.0 // a failing kernel or copy ends this long after it starts
	timeEps     = 0.01   // ns: events closer than this are simultaneous (well above float64 rounding of the clocks)
	loadTau     = 1e9    // ns: time constant of the utilisation behind the Monitor's power
	// heatTau is the time constant of the temperature behind the Monitor's
	// State: the real GPUs warm by 1-3 °C over runs of 10-24 s of copies
	// (2× H200 and 2× H100), where following the utilisation of the last
	// second warmed the simulated ones by 16.
	heatTau  = 200e9 // ns
	simStart = 1e9   // ns: both clocks start here (small, so float64 keeps sub-ns precision)
)

// exactFlows is how many concurrent flows get their rates recomputed at
// every start and end. Beyond, recomputation waits for the end of an epoch
// of epochFraction of a whole transfer's time (0.2 %), so that thousands of
// flows (all pairs of nvl72) simulate in reasonable time; starts and ends
// inside an epoch take effect at its end, an error of at most that fraction.
const (
	exactFlows    = 64
	epochFraction = 0.002
	minEpoch      = 200.0 // ns
)

// globaltimerBase is added to virtual time for %globaltimer values, which on
// a GPU count nanoseconds since the Unix epoch.
const globaltimerBase uint64 = 1_700_000_000_000_000_000

// globaltimer is the %globaltimer a kernel reads at virtual time t.
func globaltimer(t float64) uint64 { return globaltimerBase + uint64(math.Round(t)) }

type opKind uint8

const (
	opRecord opKind = iota // EventRecord
	opWait                 // StreamWaitEvent
	opWork                 // setup, then a flow or a fixed delay
	opLatch                // waits for its host flag or its timeout
	opPing                 // ping-pong: waits for its partner or its timeout
)

// op is one entry of a stream's queue.
type op struct {
	kind opKind
	s    *stream
	ord  uint64  // position in the stream
	enq  float64 // host time the call returned

	// prepare runs when the op starts: it checks the memory the op touches
	// (now, as the GPU would) and sets setup, fl or delay. finish applies
	// the op's effects when it ends. Either may report a failure.
	prepare func(o *op) *asyncError
	finish  func(o *op) *asyncError
	data    any // what prepare and finish read, where they are functions of their own

	started, done bool
	start, end    float64
	fail          *asyncError

	setup     float64 // fixed time before data moves...
	floor     float64 // ...of which this much cannot overlap the previous op
	extra     float64 // fixed time on top that never overlaps (a cold first pull)
	pull      bool    // a small pull, whose fixed time follows how it was queued
	drain     float64 // after it ends, an event recorded on its stream waits this long (not the next op)
	fl        *flow
	delay     float64
	endAt     float64 // known end; < 0 while unknown
	timeoutAt float64
	graceUsed bool
	counted   bool   // in sched.busy
	seq       uint64 // events carrying an older seq are stale
	slot      int    // index in sched.flows

	rec   *recordNode // opRecord, opWait (nil: wait on an unrecorded event, a no-op)
	latch *latchRun
	ping  *pingRun
}

// recordNode is one EventRecord: the time the stream reached it, and the
// streams whose next op waits for it.
type recordNode struct {
	done    bool
	t       float64
	dev     int
	waiters []*stream
}

// stream is a CUDA stream of one context; ord 0 is the legacy stream.
type stream struct {
	handle    cuda.Stream
	ctx       *devContext
	ord       uint64
	queue     []*op
	running   *op
	ready     float64
	lastStart float64 // start of the latest op that does work (not a record or wait)
	drained   float64 // an event recorded now completes no earlier: the last op's drain
	holdEnd   float64 // when the latest hold of the stream (a latch, an event wait) let it go
	enqueued  uint64
	completed uint64
	destroyed bool
	candidate bool // in sched.cands
}

// evKind is what a scheduled event does.
type evKind uint8

const (
	evEnd       evKind = iota // op ends (a fixed end, or a flow's expected end)
	evActivate                // a flow's data starts moving: rates change
	evWake                    // a stream's next op may start
	evRecompute               // the rate epoch ends
)

// simEvent is one entry of the scheduler's time-ordered queue.
type simEvent struct {
	t    float64
	kind evKind
	o    *op
	seq  uint64
	st   *stream
	n    uint64 // push order, for determinism among equal times
}

// eventHeap is a binary min-heap of events by time, then push order: the
// order is total (n is unique), so the events come out in one order
// whatever the heap's layout. It is container/heap's algorithm on the
// events themselves, where container/heap's interface boxes every event
// pushed and popped (an allocation each, a tenth of a simulated run's).
type eventHeap []simEvent

func (h eventHeap) less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].n < h[j].n
}

func (h *eventHeap) push(e simEvent) {
	*h = append(*h, e)
	q := *h
	for j := len(q) - 1; j > 0; {
		i := (j - 1) / 2 // parent
		if !q.less(j, i) {
			break
		}
		q[i], q[j] = q[j], q[i]
		j = i
	}
}

func (h *eventHeap) pop() simEvent {
	q := *h
	n := len(q) - 1
	q[0], q[n] = q[n], q[0]
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n && q.less(j2, j) {
			j = j2
		}
		if !q.less(j, i) {
			break
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
	e := q[n]
	q[n] = simEvent{} // no hold on its op or stream
	*h = q[:n]
	return e
}

// sched is the part of the driver that runs queued work in virtual time.
type sched struct {
	d      *Driver
	now    float64
	host   float64
	order  []*stream             // every stream, creation order
	flows  []*op                 // running ops with a flow
	res    [resKinds][]*resource // by kind, then device (resource)
	resMap map[resKey]*resource  // any other key

	events    eventHeap
	pushed    uint64
	cands     []*stream // streams whose next op may start now (from candsHead)
	candsHead int
	waiting   []*op // latches not released, ping-pongs not paired

	// Rates are recomputed when the set of moving flows changes (dirty);
	// with more than exactFlows at once, at most once per epoch.
	dirty     bool
	recompute float64
	active    []*flow // scratch of computeRates
	byCap     []*flow
	live      []*resource  // fillRates: the awake resources
	full      []*resource  // fillRates: those that filled at this step
	incs      []float64    // fillRates: each step's rise of the level
	waits     []waitEntry  // fillRates: the resources waiting, a heap by fill level
	filling   filling      // fillRates' state
	usesBuf   [usesCap]use // the uses transferUses and stagedUses build, until newFlow copies them
	touched   []*resource
	mark      int

	busy      []int // running ops keeping each device busy
	destroyed int   // destroyed streams still in order
}

func (s *sched) init(d *Driver) {
	s.d = d
	s.now, s.host = simStart, simStart
	s.resMap = map[resKey]*resource{}
	s.busy = make([]int, d.m.n)
}

func (s *sched) drop() {
	s.order, s.flows, s.resMap, s.events, s.cands, s.waiting = nil, nil, nil, nil, nil, nil
	s.res = [resKinds][]*resource{}
}

// tick advances the host clock by the cost of a call.
func (s *sched) tick(cost float64) { s.host += cost }

func (s *sched) addStream(st *stream) {
	st.ready = s.now
	s.order = append(s.order, st)
}

func (s *sched) push(e simEvent) {
	e.n = s.pushed
	s.pushed++
	s.events.push(e)
}

func (s *sched) candidate(st *stream) {
	if !st.candidate {
		st.candidate = true
		s.cands = append(s.cands, st)
	}
}

// enqueue appends o to st; it becomes visible to the GPU at the host's time.
func (s *sched) enqueue(st *stream, o *op) {
	o.s = st
	o.ord = st.enqueued
	st.enqueued++
	o.enq = s.host
	o.endAt = -1
	st.queue = append(st.queue, o)
	if st.running == nil && len(st.queue) == 1 {
		s.candidate(st)
	}
	s.d.version.Add(1)
}

// run advances the simulation. With blocking, it runs until goal holds (or
// nothing more can happen), as a host thread waiting for it; the host clock
// then moves to the end of the awaited work. Without, it only runs what the
// GPU has done by the host's current time (goal is ignored).
func (s *sched) run(goal func() bool, blocking bool) error {
	for {
		if s.d.closed {
			return deinitialized("")
		}
		s.startReady()
		if blocking && goal() {
			break
		}
		t, waiting := s.next()
		if math.IsInf(t, 1) {
			break
		}
		if !blocking && t > s.host {
			break
		}
		if blocking && waiting != nil && !waiting.graceUsed && s.d.grace > 0 {
			waiting.graceUsed = true
			s.waitForHost(waiting)
			continue
		}
		s.advance(t)
	}
	if !s.d.closed && s.destroyed > 0 {
		s.prune()
	}
	if blocking {
		s.host = max(s.host, s.now) + costWake
	}
	return nil
}

// prune forgets destroyed streams that have run everything they held.
func (s *sched) prune() {
	s.destroyed = 0
	kept := s.order[:0]
	for _, st := range s.order {
		if !st.destroyed {
			kept = append(kept, st)
		} else if len(st.queue) > 0 {
			kept = append(kept, st)
			s.destroyed++ // still to prune
		}
	}
	clear(s.order[len(kept):])
	s.order = kept
}

// waitForHost gives another goroutine a moment of real time to release a
// latch (or launch a ping-pong partner) before the waiting kernel times out.
func (s *sched) waitForHost(o *op) {
	d := s.d
	v0 := d.version.Load()
	var flag func() bool
	if o.latch != nil {
		flag = o.latch.hostFlagSet
	}
	d.mu.Unlock()
	defer d.mu.Lock()
	if d.hostWaiting != nil {
		select {
		case d.hostWaiting <- struct{}{}:
		default:
		}
	}
	deadline := time.Now().Add(d.grace)
	for time.Now().Before(deadline) {
		if d.version.Load() != v0 || (flag != nil && flag()) {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// startReady starts the next op of every candidate stream whose time has
// come; a stream whose op starts later is woken then, one waiting for a
// record when it completes.
func (s *sched) startReady() {
	// The queue is read from its head and emptied at the end, its array
	// kept: taking its first element off the slice made append reallocate
	// it every few candidates.
	for s.candsHead < len(s.cands) {
		st := s.cands[s.candsHead]
		s.cands[s.candsHead] = nil
		s.candsHead++
		st.candidate = false
		for st.running == nil && len(st.queue) > 0 {
			o := st.queue[0]
			t := max(st.ready, o.enq)
			if o.kind == opWait && o.rec != nil {
				if !o.rec.done {
					if !slices.Contains(o.rec.waiters, st) {
						o.rec.waiters = append(o.rec.waiters, st)
					}
					break
				}
				t = max(t, o.rec.t)
			}
			if o.kind == opRecord {
				t = max(t, st.drained)
			}
			if t > s.now+timeEps {
				s.push(simEvent{t: t, kind: evWake, st: st})
				break
			}
			s.begin(o, max(t, s.now))
		}
	}
	s.cands, s.candsHead = s.cands[:0], 0
}

// begin starts o at time at.
func (s *sched) begin(o *op, at float64) {
	o.started, o.start = true, at
	o.s.running = o
	switch o.kind {
	case opRecord:
		o.rec.done, o.rec.t = true, at
		for _, w := range o.rec.waiters {
			s.candidate(w)
		}
		o.rec.waiters = nil
		s.complete(o, at)
		return
	case opWait:
		o.s.holdEnd = at
		s.complete(o, at)
		return
	}
	if c := o.s.ctx; c.sticky != nil {
		// A context poisoned by an earlier failure runs nothing more.
		o.prepare, o.finish = nil, nil
		o.fail = c.sticky
		s.endAt(o, at)
		return
	}
	if o.prepare != nil {
		if f := o.prepare(o); f != nil {
			o.fail, o.finish, o.fl, o.latch, o.ping = f, nil, nil, nil, nil
			o.kind = opWork
			s.endAt(o, at+failTime)
			return
		}
	}
	s.fixedTime(o, at)
	o.s.lastStart = at
	s.busy[o.s.ctx.dev]++
	o.counted = true
	switch o.kind {
	case opWork:
		if o.fl == nil {
			s.endAt(o, at+o.setup+o.delay)
			return
		}
		o.fl.start = at + o.setup
		o.fl.t0 = o.fl.start
		o.slot = len(s.flows)
		s.flows = append(s.flows, o)
		if o.fl.start > s.now+timeEps {
			s.push(simEvent{t: o.fl.start, kind: evActivate, o: o, seq: o.seq})
		} else {
			s.dirty = true
		}
	case opLatch:
		o.timeoutAt = at + o.setup + o.latch.timeout
		s.waiting = append(s.waiting, o)
	case opPing:
		s.pairPing(o)
	}
}

// fixedTime sets the fixed time of o, starting at at: the stream's front
// end prepares an op while the one before it runs (event records do not
// stop it), so only the floor of the fixed time remains for an op queued
// behind work; a small pull costs what its queueing makes it cost; and
// what o pays beyond (o.extra) comes on top.
func (s *sched) fixedTime(o *op, at float64) {
	if o.floor < o.setup {
		hidden := at - max(o.enq, o.s.lastStart)
		o.setup = max(o.floor, o.setup-max(0, hidden))
	}
	if mm := s.d.m.m; o.pull && mm.pullSetup > 0 {
		// A small pull queued while its stream was held (by a latch or an
		// event wait: queued before the hold let the stream go) costs
		// heldPullSetup; one queued as the stream runs, pullSetup.
		o.setup = mm.pullSetup
		if o.enq < o.s.holdEnd {
			o.setup = mm.heldPullSetup
		}
		if mm.pullTurn > 0 {
			dev := o.s.ctx.dev
			if s.d.pullTurn[dev]%2 == 0 {
				o.setup -= mm.pullTurn
			} else {
				o.setup += mm.pullTurn
			}
			s.d.pullTurn[dev]++
		}
	}
	o.setup += o.extra
}

// endAt fixes when o ends.
func (s *sched) endAt(o *op, t float64) {
	o.endAt = t
	o.seq++
	s.push(simEvent{t: t, kind: evEnd, o: o, seq: o.seq})
}

// waitingSnapshot is a copy of the waiting list, safe to change while
// iterating (nil when empty, the common case).
func (s *sched) waitingSnapshot() []*op {
	if len(s.waiting) == 0 {
		return nil
	}
	return slices.Clone(s.waiting)
}

// unwait removes o from the waiting list.
func (s *sched) unwait(o *op) {
	if i := slices.Index(s.waiting, o); i >= 0 {
		s.waiting = slices.Delete(s.waiting, i, i+1)
	}
}

// refreshRates recomputes the rates when the moving flows changed (at most
// once per epoch with many flows) and schedules each flow's expected end.
func (s *sched) refreshRates() {
	if !s.dirty {
		return
	}
	many := len(s.flows) > exactFlows
	if many && s.now < s.recompute-timeEps {
		return // an evRecompute at s.recompute is pending
	}
	// Bring every flow's remaining bytes to now, at its old rate.
	for _, o := range s.flows {
		f := o.fl
		if f.rate > 0 && s.now > f.t0 {
			f.remaining = max(0, f.remaining-f.rate*(s.now-f.t0))
		}
		f.t0 = max(f.t0, s.now)
	}
	s.computeRates()
	s.dirty = false
	var sum float64
	var n int
	for _, o := range s.flows {
		f := o.fl
		if f.start > s.now+timeEps {
			continue // waiting for its evActivate
		}
		o.seq++
		switch {
		case f.remaining <= 1e-3:
			s.push(simEvent{t: s.now, kind: evEnd, o: o, seq: o.seq})
		case f.rate > 0:
			sum += f.bytes / f.rate // the whole transfer at this rate
			n++
			s.push(simEvent{t: s.now + f.remaining/f.rate, kind: evEnd, o: o, seq: o.seq})
		}
	}
	if many {
		epoch := minEpoch
		if n > 0 {
			epoch = max(minEpoch, epochFraction*sum/float64(n))
		}
		s.recompute = s.now + epoch
		s.push(simEvent{t: s.recompute, kind: evRecompute})
	}
}

// stale reports an event superseded since it was pushed.
func (s *sched) stale(e simEvent) bool {
	switch e.kind {
	case evEnd, evActivate:
		return e.o.done || e.o.seq != e.seq
	}
	return false
}

// next returns the time of the next event, and the op whose timeout it is
// when that event is a kernel giving up on the host (a latch whose flag is
// still clear, an unpaired ping-pong).
func (s *sched) next() (float64, *op) {
	s.refreshRates()
	for len(s.events) > 0 && s.stale(s.events[0]) {
		s.events.pop()
	}
	best := math.Inf(1)
	if len(s.events) > 0 {
		best = s.events[0].t
	}
	var waiting *op
	for _, o := range s.waitingSnapshot() {
		t, grace := o.timeoutAt, true
		if o.kind == opLatch {
			l := o.latch
			if l.stuck {
				grace = false
			} else if l.flagSet() {
				// Released at the host time the flag was seen set, unless
				// the latch had given up by then.
				end := max(o.start+o.setup, s.host) + s.d.m.m.latchPoll
				l.released = end <= o.timeoutAt
				s.unwait(o)
				s.endAt(o, min(end, o.timeoutAt))
				best = min(best, o.endAt)
				continue
			}
		}
		if t < best-timeEps {
			best, waiting = t, nil
			if grace {
				waiting = o
			}
		}
	}
	if waiting != nil && waiting.timeoutAt > best+timeEps {
		waiting = nil
	}
	return best, waiting
}

// advance moves the simulation clock to t and processes what happens there.
func (s *sched) advance(t float64) {
	if dt := t - s.now; dt > 0 {
		s.accountLoad(dt)
		s.now = t
	}
	for len(s.events) > 0 && s.events[0].t <= s.now+timeEps {
		e := s.events.pop()
		if s.stale(e) {
			continue
		}
		switch e.kind {
		case evEnd:
			s.complete(e.o, min(e.t, s.now))
		case evActivate:
			s.dirty = true
		case evWake:
			s.candidate(e.st)
		case evRecompute:
			// refreshRates runs at the next step
		}
	}
	for _, o := range s.waitingSnapshot() {
		if o.timeoutAt <= s.now+timeEps {
			s.unwait(o)
			s.complete(o, o.timeoutAt)
		}
	}
}

// complete ends o at time t and applies its effects.
func (s *sched) complete(o *op, t float64) {
	st := o.s
	o.done, o.end = true, t
	o.seq++
	if o.counted {
		s.busy[st.ctx.dev]--
	}
	st.ready = t
	switch o.kind {
	case opWork:
		st.drained = t + o.drain
	case opLatch:
		st.holdEnd = t
	}
	st.queue[0] = nil // the op may hold memory; let it go
	st.queue = st.queue[1:]
	st.running = nil
	st.completed++
	s.candidate(st)
	if o.fl != nil && o.slot < len(s.flows) && s.flows[o.slot] == o {
		last := len(s.flows) - 1
		s.flows[o.slot] = s.flows[last]
		s.flows[o.slot].slot = o.slot
		s.flows[last] = nil
		s.flows = s.flows[:last]
		s.dirty = true
	}
	if o.fail == nil && o.finish != nil {
		o.fail = o.finish(o)
	}
	if o.fail != nil {
		st.ctx.fail(o.fail)
	}
}

// accountLoad updates each device's utilisation over dt of virtual time.
func (s *sched) accountLoad(dt float64) {
	d := s.d
	k := 1 - math.Exp(-dt/loadTau)
	h := 1 - math.Exp(-dt/heatTau)
	for i := range d.load {
		target := 0.0
		if s.busy[i] > 0 {
			target = 1
			d.busyNs[i] += dt
		}
		d.load[i] += (target - d.load[i]) * k
		d.heat[i] += (target - d.heat[i]) * h
	}
}

// opKeys are an op's keys for its noise draws, and room for one more.
type opKeys struct {
	k [6]uint64
	n int
}

// keys identifies an op for its noise draws: an array, not a slice, so
// that drawing a copy's noise allocates nothing.
func (o *op) keys(purpose uint64) opKeys {
	// The context's serial too: the streams of a new context count from 1
	// again, and their ops would draw the last context's noise.
	return opKeys{k: [6]uint64{purpose, uint64(o.s.ctx.dev), o.s.ctx.serial, o.s.ord, o.ord}, n: 5}
}

// with is k and one more key (a chunk's, a round trip's).
func (k opKeys) with(x uint64) opKeys {
	k.k[k.n] = x
	k.n++
	return k
}

// opJitter is d.jitter(sigma, k's keys...).
func (d *Driver) opJitter(sigma float64, k opKeys) float64 {
	return d.jitter(sigma, k.k[:k.n]...)
}

// Goals for blocking runs.

func streamDone(st *stream) func() bool {
	target := st.enqueued
	return func() bool { return st.completed >= target }
}

func opDone(o *op) func() bool { return func() bool { return o.done } }

func recordDone(r *recordNode) func() bool { return func() bool { return r.done } }

func allDone(goals []func() bool) func() bool {
	return func() bool {
		for _, g := range goals {
			if !g() {
				return false
			}
		}
		return true
	}
}
