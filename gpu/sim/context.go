package sim

import (
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// devContext is a device's primary context.
type devContext struct {
	d        *Driver
	dev      int
	reserved uint64
	legacy   *stream // stream 0
	nextOrd  uint64  // stream ordinals, for deterministic jitter
	peers    map[int]bool
	ipcMaps  []*ipcMapping
	ipcNext  uint64

	// pending is a failure of queued work not yet reported; sticky, with
	// WithStickyErrors, poisons the context for good.
	pending *asyncError
	sticky  *asyncError
}

func newContext(d *Driver, dev int) *devContext {
	c := &devContext{d: d, dev: dev, reserved: d.m.gpu.reservedBytes, peers: map[int]bool{}}
	c.legacy = &stream{ctx: c}
	d.addStream(c.legacy)
	return c
}

// Device returns the context's device ordinal.
func (c *devContext) Device() int { return c.dev }

// Do runs fn with this context; the simulator has no threads to hop.
func (c *devContext) Do(fn func(c gpu.Context) error) error { return fn(c) }

// usable is the check at the top of every call: DEINITIALIZED after Close,
// the sticky error of a poisoned context.
func (c *devContext) usable(call string) error {
	if c.d.closed {
		return deinitialized(call)
	}
	if c.sticky != nil {
		return c.sticky.report(call)
	}
	return nil
}

// fail records a failure of queued work.
func (c *devContext) fail(e *asyncError) {
	if c.pending == nil {
		c.pending = e
	}
	if c.d.sticky && c.sticky == nil {
		c.sticky = e
	}
}

// takeError returns (and, unless sticky, clears) the context's unreported
// failure, as a synchronising call would.
func (c *devContext) takeError(call string) error {
	if c.sticky != nil {
		return c.sticky.report(call)
	}
	if e := c.pending; e != nil {
		c.pending = nil
		return e.report(call)
	}
	return nil
}

// ctxOf returns the simulator context behind a gpu.Context of this driver.
func (d *Driver) ctxOf(x gpu.Context) (*devContext, bool) {
	c, ok := x.(*devContext)
	if !ok || c == nil || c.d != d {
		return nil, false
	}
	return c, true
}

// drained is the goal "every stream of this context has run what it holds".
func (c *devContext) drained() func() bool {
	var goals []func() bool
	for _, st := range c.d.order {
		if st.ctx == c {
			goals = append(goals, streamDone(st))
		}
	}
	return allDone(goals)
}

// streamFor resolves a stream handle for enqueueing in c: 0 is c's legacy
// stream; a stream of another context is INVALID_HANDLE, as in the driver.
func (c *devContext) streamFor(s cuda.Stream, call string) (*stream, error) {
	if s == 0 {
		return c.legacy, nil
	}
	st := c.d.streams[s]
	if st == nil || st.destroyed || st.ctx != c {
		return nil, cuda.NewError(cuda.ErrorInvalidHandle, call)
	}
	return st, nil
}

// StreamCreate is cuStreamCreate with CU_STREAM_NON_BLOCKING.
func (c *devContext) StreamCreate() (cuda.Stream, error) {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := c.usable("cuStreamCreate"); err != nil {
		return 0, err
	}
	d.tick(costLight)
	c.nextOrd++
	st := &stream{handle: cuda.Stream(d.handle()), ctx: c, ord: c.nextOrd}
	d.addStream(st)
	d.streams[st.handle] = st
	return st.handle, nil
}

// StreamDestroy is cuStreamDestroy: the handle dies at once, queued work
// still runs.
func (c *devContext) StreamDestroy(s cuda.Stream) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := c.usable("cuStreamDestroy"); err != nil {
		return err
	}
	st := d.streams[s]
	if st == nil || st.destroyed {
		return cuda.NewError(cuda.ErrorInvalidHandle, "cuStreamDestroy")
	}
	st.destroyed = true
	d.sched.destroyed++
	delete(d.streams, s)
	return nil
}

// StreamSynchronize is cuStreamSynchronize.
func (c *devContext) StreamSynchronize(s cuda.Stream) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := c.usable("cuStreamSynchronize"); err != nil {
		return err
	}
	st := c.legacy
	if s != 0 {
		st = d.streams[s]
		if st == nil || st.destroyed {
			return cuda.NewError(cuda.ErrorInvalidHandle, "cuStreamSynchronize")
		}
	}
	if err := d.run(streamDone(st), true); err != nil {
		return err
	}
	return st.ctx.takeError("cuStreamSynchronize")
}

// StreamWaitEvent is cuStreamWaitEvent: s waits for the event's latest
// record at the time of the call, on any device. An event never recorded
// makes it a no-op, as in the driver.
func (c *devContext) StreamWaitEvent(s cuda.Stream, e cuda.Event) error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := c.usable("cuStreamWaitEvent"); err != nil {
		return err
	}
	st, err := c.streamFor(s, "cuStreamWaitEvent")
	if err != nil {
		return err
	}
	ev := d.events[e]
	if ev == nil || ev.destroyed {
		return cuda.NewError(cuda.ErrorInvalidHandle, "cuStreamWaitEvent")
	}
	d.tick(costLight)
	d.enqueue(st, &op{kind: opWait, rec: ev.st.current, what: "cuStreamWaitEvent"})
	return nil
}

// Synchronize is cuCtxSynchronize: every stream of the context.
func (c *devContext) Synchronize() error {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := c.usable("cuCtxSynchronize"); err != nil {
		return err
	}
	if err := d.run(c.drained(), true); err != nil {
		return err
	}
	return c.takeError("cuCtxSynchronize")
}
