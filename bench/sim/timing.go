package sim

import (
	"math"
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
	loadTau     = 1e9    // ns: time constant of the utilisation behind DeviceState
	simStart    = 1e9    // ns: both clocks start here (small, so float64 keeps sub-ns precision)
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
	what string  // for error details

	// prepare runs when the op starts: it checks the memory the op touches
	// (now, as the GPU would) and sets setup, fl or delay. finish applies
	// the op's effects when it ends. Either may report a failure.
	prepare func(o *op) *asyncError
	finish  func(o *op) *asyncError

	started, done bool
	start, end    float64
	fail          *asyncError

	setup     float64 // fixed time before data moves...
	floor     float64 // ...of which this much cannot overlap the previous op
	fl        *flow
	delay     float64
	endAt     float64 // known end; < 0 while unknown
	timeoutAt float64
	graceUsed bool
	counted   bool // in sched.busy

	rec   *recordNode // opRecord, opWait (nil: wait on an unrecorded event, a no-op)
	latch *latchRun
	ping  *pingRun
}

// recordNode is one EventRecord: the time the stream reached it.
type recordNode struct {
	done bool
	t    float64
	dev  int
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
	enqueued  uint64
	completed uint64
	destroyed bool
}

// sched is the part of the driver that runs queued work in virtual time.
type sched struct {
	d     *Driver
	now   float64
	host  float64
	order []*stream // every stream, creation order: the deterministic scan order
	flows []*op     // running ops with a flow
	res   map[resKey]*resource
	// Rates are recomputed when the set of moving flows changes (dirty);
	// with more than exactFlows at once, at most once per epoch.
	dirty     bool
	recompute float64 // the earliest time of the next recomputation
	active    []*flow // scratch of computeRates
	byCap     []*flow
	touched   []*resource
	busy      []int // running ops keeping each device busy
	mark      int
	wake      bool // an op ended or was enqueued: startReady has work
}

// exactFlows is how many concurrent flows get their rates recomputed at
// every start and end. Beyond, recomputation waits for the end of an epoch
// of epochFraction of the flows' expected time (0.2 %), so that thousands of
// flows (all pairs of nvl72) simulate in reasonable time; starts and ends
// inside an epoch take effect at its end, an error of at most that fraction.
const (
	exactFlows    = 64
	epochFraction = 0.002
	minEpoch      = 200.0 // ns
)

// refreshRates recomputes the rates if needed and allowed, and returns the
// time it must be called again at (+Inf: no deadline).
func (s *sched) refreshRates() float64 {
	if !s.dirty {
		return math.Inf(1)
	}
	many := len(s.flows) > exactFlows
	if many && s.now < s.recompute-timeEps {
		return s.recompute
	}
	s.computeRates()
	s.dirty = false
	if many {
		eta, n := 0.0, 0
		for _, f := range s.active {
			if f.rate > 0 {
				eta += f.remaining / f.rate
				n++
			}
		}
		epoch := minEpoch
		if n > 0 {
			epoch = math.Max(minEpoch, epochFraction*eta/float64(n))
		}
		s.recompute = s.now + epoch
	}
	return math.Inf(1)
}

func (s *sched) init(d *Driver) {
	s.d = d
	s.busy = make([]int, d.m.n)
	s.now, s.host = simStart, simStart
	s.res = map[resKey]*resource{}
}

func (s *sched) drop() {
	s.order, s.flows, s.res = nil, nil, nil
}

// tick advances the host clock by the cost of a call.
func (s *sched) tick(cost float64) { s.host += cost }

func (s *sched) addStream(st *stream) {
	st.ready = s.now
	s.order = append(s.order, st)
}

// enqueue appends o to st; it becomes visible to the GPU at the host's time.
func (s *sched) enqueue(st *stream, o *op) {
	o.s = st
	o.ord = st.enqueued
	st.enqueued++
	o.enq = s.host
	o.endAt = -1
	st.queue = append(st.queue, o)
	s.wake = true
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
			s.d.flushHost() // the host may look while it is unlocked
			s.waitForHost(waiting)
			continue
		}
		s.advance(t)
	}
	if !s.d.closed {
		s.d.flushHost()
		s.prune()
	}
	if blocking {
		s.host = math.Max(s.host, s.now) + costWake
	}
	return nil
}

// prune forgets destroyed streams that have run everything they held.
func (s *sched) prune() {
	kept := s.order[:0]
	for _, st := range s.order {
		if !st.destroyed || len(st.queue) > 0 {
			kept = append(kept, st)
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
	deadline := time.Now().Add(d.grace)
	for time.Now().Before(deadline) {
		if d.version.Load() != v0 || (flag != nil && flag()) {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// startReady starts every queued op whose time has come.
func (s *sched) startReady() {
	if !s.wake {
		return
	}
	s.wake = false
	for changed := true; changed; {
		changed = false
		for _, st := range s.order {
			for st.running == nil && len(st.queue) > 0 {
				o := st.queue[0]
				t, ok := s.earliestStart(o)
				if !ok || t > s.now+timeEps {
					break
				}
				s.begin(o, math.Max(t, s.now))
				changed = true
			}
		}
	}
}

func (s *sched) earliestStart(o *op) (float64, bool) {
	t := math.Max(o.s.ready, o.enq)
	if o.kind == opWait && o.rec != nil {
		if !o.rec.done {
			return 0, false
		}
		t = math.Max(t, o.rec.t)
	}
	return t, true
}

// begin starts o at time at.
func (s *sched) begin(o *op, at float64) {
	o.started, o.start = true, at
	o.s.running = o
	switch o.kind {
	case opRecord:
		o.rec.done, o.rec.t = true, at
		s.complete(o, at)
		return
	case opWait:
		s.complete(o, at)
		return
	}
	if c := o.s.ctx; c.sticky != nil {
		// A context poisoned by an earlier failure runs nothing more.
		o.prepare, o.finish = nil, nil
		o.fail = c.sticky
		o.endAt = at
		return
	}
	if o.prepare != nil {
		if f := o.prepare(o); f != nil {
			o.fail, o.finish, o.fl, o.latch, o.ping = f, nil, nil, nil, nil
			o.kind = opWork
			o.endAt = at + failTime
			return
		}
	}
	// The stream's front end prepares an op while the one before it runs
	// (event records do not stop it): only the floor of the fixed time
	// remains for an op queued behind work.
	if o.floor < o.setup {
		hidden := at - math.Max(o.enq, o.s.lastStart)
		o.setup = math.Max(o.floor, o.setup-math.Max(0, hidden))
	}
	o.s.lastStart = at
	if working(o) {
		s.busy[o.s.ctx.dev]++
		o.counted = true
	}
	switch o.kind {
	case opWork:
		if o.fl != nil {
			o.fl.start = at + o.setup
			s.flows = append(s.flows, o)
			s.dirty = true
		} else {
			o.endAt = at + o.setup + o.delay
		}
	case opLatch:
		o.timeoutAt = at + o.setup + o.latch.timeout
	case opPing:
		s.pairPing(o)
	}
}

// next returns the time of the next event, and the op whose timeout it is
// when that event is a kernel giving up on the host (a latch whose flag is
// still clear, an unpaired ping-pong).
func (s *sched) next() (float64, *op) {
	best := math.Inf(1)
	var waiting *op
	consider := func(t float64, w *op) {
		if t < best-timeEps {
			best, waiting = t, w
		} else if t <= best+timeEps && w == nil {
			waiting = nil
		}
	}
	consider(s.refreshRates(), nil)
	for _, st := range s.order {
		o := st.running
		if o == nil {
			if len(st.queue) > 0 {
				if t, ok := s.earliestStart(st.queue[0]); ok {
					consider(t, nil)
					if t <= best+timeEps {
						s.wake = true // (harmless when another event wins)
					}
				}
			}
			continue
		}
		switch {
		case o.endAt >= 0:
			consider(o.endAt, nil)
		case o.fl != nil:
			f := o.fl
			switch {
			case f.start > s.now+timeEps:
				consider(f.start, nil)
			case f.remaining <= 1e-3:
				consider(s.now, nil)
			case f.rate > 0:
				consider(math.Max(s.now, s.now+f.remaining/f.rate), nil)
			}
		case o.kind == opLatch:
			l := o.latch
			if !l.stuck && l.flagSet() {
				// Released at the host time the flag was seen set, unless
				// the latch had given up by then.
				o.endAt = math.Max(o.start+o.setup, s.host) + s.d.m.m.latchPoll
				l.released = o.endAt <= o.timeoutAt
				o.endAt = math.Min(o.endAt, o.timeoutAt)
				consider(o.endAt, nil)
			} else if l.stuck {
				consider(o.timeoutAt, nil)
			} else {
				consider(o.timeoutAt, o)
			}
		case o.kind == opPing:
			consider(o.timeoutAt, o)
		}
	}
	return best, waiting
}

// advance moves the simulation clock to t and completes what ends there.
func (s *sched) advance(t float64) {
	if dt := t - s.now; dt > 0 {
		for _, o := range s.flows {
			f := o.fl
			if f.start > s.now+timeEps && f.start <= t+timeEps {
				s.dirty = true // starts moving at t
			}
			if f.rate <= 0 || f.start > s.now+timeEps {
				continue
			}
			if s.now+f.remaining/f.rate <= t+timeEps {
				f.remaining = 0 // ends here (whatever rounding says)
			} else {
				f.remaining -= f.rate * dt
			}
		}
		s.accountLoad(dt)
		s.now = t
	}
	for _, st := range s.order {
		o := st.running
		if o == nil {
			continue
		}
		switch {
		case o.endAt >= 0:
			if o.endAt <= s.now+timeEps {
				s.complete(o, o.endAt)
			}
		case o.fl != nil:
			if o.fl.start <= s.now+timeEps && o.fl.remaining <= 1e-3 {
				s.complete(o, s.now)
			}
		case o.kind == opLatch || o.kind == opPing:
			if o.timeoutAt <= s.now+timeEps {
				s.complete(o, o.timeoutAt)
			}
		}
	}
}

// complete ends o at time t and applies its effects.
func (s *sched) complete(o *op, t float64) {
	st := o.s
	o.done, o.end = true, t
	if o.counted {
		s.busy[st.ctx.dev]--
	}
	s.wake = true
	st.ready = t
	st.queue[0] = nil // the op may hold memory; let it go
	st.queue = st.queue[1:]
	st.running = nil
	st.completed++
	if o.fl != nil {
		for i, x := range s.flows {
			if x == o {
				s.flows = append(s.flows[:i], s.flows[i+1:]...)
				s.dirty = true
				break
			}
		}
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
	for i := range d.load {
		target := 0.0
		if s.busy[i] > 0 {
			target = 1
		}
		d.load[i] += (target - d.load[i]) * k
	}
}

// working reports whether o keeps its device busy (for DeviceState).
func working(o *op) bool { return o.kind == opWork || o.kind == opPing }

// jitterKeys identifies an op for its noise draws.
func (o *op) keys(purpose uint64) []uint64 {
	return []uint64{purpose, uint64(o.s.ctx.dev), o.s.ord, o.ord}
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
