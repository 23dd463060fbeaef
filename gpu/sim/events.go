package sim

import (
	"github.com/p2pbench/p2pbench/cuda"
)

// eventState is what an event is; an IPC-opened event shares it with the
// event it was exported from.
type eventState struct {
	current      *recordNode // the latest record; nil before the first
	timing       bool
	interprocess bool
	ipcTag       uint64
}

// event is one event handle of one context.
type event struct {
	handle    cuda.Event
	ctx       *devContext
	st        *eventState
	destroyed bool
}

func (c *devContext) newEvent(st *eventState) cuda.Event {
	d := c.d
	ev := &event{handle: cuda.Event(d.handle()), ctx: c, st: st}
	d.events[ev.handle] = ev
	return ev.handle
}

// EventCreate is cuEventCreate with timing enabled.
func (c *devContext) EventCreate() (cuda.Event, error) {
	return c.createEvent(&eventState{timing: true})
}

// EventCreateInterprocess is cuEventCreate(CU_EVENT_INTERPROCESS|CU_EVENT_DISABLE_TIMING).
func (c *devContext) EventCreateInterprocess() (cuda.Event, error) {
	return c.createEvent(&eventState{interprocess: true})
}

func (c *devContext) createEvent(st *eventState) (cuda.Event, error) {
	return lockedValue(c, "cuEventCreate", func(d *Driver) (cuda.Event, error) {
		d.tick(costLight)
		return c.newEvent(st), nil
	})
}

// EventDestroy is cuEventDestroy; a record still queued completes anyway.
func (c *devContext) EventDestroy(e cuda.Event) error {
	const call = "cuEventDestroy"
	return c.locked(call, func(d *Driver) error {
		ev, err := d.liveEvent(e, call)
		if err != nil {
			return err
		}
		ev.destroyed = true
		delete(d.events, e)
		return nil
	})
}

// EventRecord is cuEventRecord. The event and the stream must belong to the
// same context.
func (c *devContext) EventRecord(e cuda.Event, s cuda.Stream) error {
	const call = "cuEventRecord"
	return c.locked(call, func(d *Driver) error {
		ev, err := d.liveEvent(e, call)
		if err == nil && ev.ctx != c {
			err = cuda.NewError(cuda.ErrorInvalidHandle, call)
		}
		if err != nil {
			return err
		}
		st, err := c.streamFor(s, call)
		if err != nil {
			return err
		}
		d.tick(costLight)
		rec := &recordNode{dev: c.dev}
		ev.st.current = rec
		d.enqueue(st, &op{kind: opRecord, rec: rec})
		return nil
	})
}

// EventSynchronize is cuEventSynchronize: it waits for the latest record (at
// once for an event never recorded).
func (c *devContext) EventSynchronize(e cuda.Event) error {
	const call = "cuEventSynchronize"
	return c.locked(call, func(d *Driver) error {
		ev, err := d.liveEvent(e, call)
		if err != nil {
			return err
		}
		rec := ev.st.current
		if rec == nil {
			d.tick(costLight)
			return nil
		}
		if err := d.run(recordDone(rec), true); err != nil {
			return err
		}
		return ev.ctx.takeError(call)
	})
}

// EventElapsed is cuEventElapsedTime: milliseconds between the latest records
// of two events. INVALID_HANDLE when either was never recorded, was created
// without timing, or the two were recorded on different devices (timestamps
// of two GPUs do not compare); NOT_READY while either record is still ahead
// of the GPU.
func (c *devContext) EventElapsed(start, end cuda.Event) (float32, error) {
	const call = "cuEventElapsedTime"
	return lockedValue(c, call, func(d *Driver) (float32, error) {
		d.tick(costLight)
		a, err1 := d.liveEvent(start, call)
		b, err2 := d.liveEvent(end, call)
		if err1 != nil || err2 != nil || !a.st.timing || !b.st.timing {
			return 0, cuda.NewError(cuda.ErrorInvalidHandle, call)
		}
		ra, rb := a.st.current, b.st.current
		if ra == nil || rb == nil || ra.dev != rb.dev {
			return 0, cuda.NewError(cuda.ErrorInvalidHandle, call)
		}
		if !ra.done || !rb.done {
			if err := d.run(nil, false); err != nil {
				return 0, err
			}
			if !ra.done || !rb.done {
				return 0, cuda.NewError(cuda.ErrorNotReady, call)
			}
		}
		return float32((rb.t - ra.t) / 1e6), nil
	})
}
