package sim

import (
	"errors"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// devContext is a device's primary context, or a green context of it.
type devContext struct {
	d        *Driver
	dev      int
	reserved uint64
	legacy   *stream // stream 0
	nextOrd  uint64  // stream ordinals, for deterministic jitter
	peers    map[int]bool
	ipcMaps  []*ipcMapping
	ipcNext  uint64

	// primary is the primary context of a green one (nil for a primary);
	// serial tells contexts apart in the noise (0 for a primary);
	// destroyed marks a green context after Destroy.
	primary   *devContext
	serial    uint64
	destroyed bool
	// slowLaunch is the context's mode of small SM copies (contextMode).
	slowLaunch bool

	// pending is a failure of queued work not yet reported; sticky, with
	// WithStickyErrors, poisons the context for good.
	pending *asyncError
	sticky  *asyncError
}

func newContext(d *Driver, dev int) *devContext {
	c := &devContext{d: d, dev: dev, reserved: d.m.gpu.reservedBytes, peers: map[int]bool{}}
	c.slowLaunch = d.contextMode(dev, 0)
	c.legacy = &stream{ctx: c}
	d.addStream(c.legacy)
	return c
}

// Green is a green context of c's device: c's memory and peer access,
// streams of its own, and its own draw of the mode of small SM copies
// (contextMode), as every new context on real GPUs.
func (c *devContext) Green() (gpu.Context, error) {
	return lockedValue(c, "cuGreenCtxCreate", func(d *Driver) (gpu.Context, error) {
		if c.primary != nil {
			return nil, errors.New("sim: Green of a green context: make it from the primary context")
		}
		d.tick(costLight)
		g := &devContext{d: d, dev: c.dev, peers: c.peers, primary: c, serial: d.serial()}
		g.slowLaunch = d.contextMode(c.dev, g.serial)
		g.legacy = &stream{ctx: g}
		d.addStream(g.legacy)
		return g, nil
	})
}

// Destroy is cuGreenCtxDestroy.
func (c *devContext) Destroy() error {
	return c.locked("cuGreenCtxDestroy", func(d *Driver) error {
		if c.primary == nil || c.destroyed {
			return cuda.NewError(cuda.ErrorInvalidContext, "cuGreenCtxDestroy")
		}
		c.destroyed = true
		return nil
	})
}

// Device returns the context's device ordinal.
func (c *devContext) Device() int { return c.dev }

// Do runs fn with this context; the simulator has no threads to hop.
func (c *devContext) Do(fn func(c gpu.Context) error) error { return fn(c) }

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

// StreamCreate is cuStreamCreate with CU_STREAM_NON_BLOCKING.
func (c *devContext) StreamCreate() (cuda.Stream, error) {
	const call = "cuStreamCreate"
	return lockedValue(c, call, func(d *Driver) (cuda.Stream, error) {
		d.tick(costLight)
		c.nextOrd++
		st := &stream{handle: cuda.Stream(d.handle()), ctx: c, ord: c.nextOrd}
		d.addStream(st)
		d.streams[st.handle] = st
		return st.handle, nil
	})
}

// StreamDestroy is cuStreamDestroy: the handle dies at once, queued work
// still runs.
func (c *devContext) StreamDestroy(s cuda.Stream) error {
	const call = "cuStreamDestroy"
	return c.locked(call, func(d *Driver) error {
		st, err := d.liveStream(s, call)
		if err != nil {
			return err
		}
		st.destroyed = true
		d.sched.destroyed++
		delete(d.streams, s)
		return nil
	})
}

// StreamSynchronize is cuStreamSynchronize.
func (c *devContext) StreamSynchronize(s cuda.Stream) error {
	const call = "cuStreamSynchronize"
	return c.locked(call, func(d *Driver) error {
		st := c.legacy
		if s != 0 {
			var err error
			if st, err = d.liveStream(s, call); err != nil {
				return err
			}
		}
		if err := d.run(streamDone(st), true); err != nil {
			return err
		}
		return st.ctx.takeError(call)
	})
}

// StreamWaitEvent is cuStreamWaitEvent: s waits for the event's latest
// record at the time of the call, on any device. An event never recorded
// makes it a no-op, as in the driver.
func (c *devContext) StreamWaitEvent(s cuda.Stream, e cuda.Event) error {
	const call = "cuStreamWaitEvent"
	return c.locked(call, func(d *Driver) error {
		st, err := c.streamFor(s, call)
		if err != nil {
			return err
		}
		ev, err := d.liveEvent(e, call)
		if err != nil {
			return err
		}
		d.tick(costLight)
		d.enqueue(st, &op{kind: opWait, rec: ev.st.current})
		return nil
	})
}

// Synchronize is cuCtxSynchronize: every stream of the context.
func (c *devContext) Synchronize() error {
	const call = "cuCtxSynchronize"
	return c.locked(call, func(d *Driver) error {
		if err := d.run(c.drained(), true); err != nil {
			return err
		}
		return c.takeError(call)
	})
}
