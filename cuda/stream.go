package cuda

import "fmt"

// Stream and event flags of cuda.h.
const (
	streamNonBlocking      = 0x1 // no implicit synchronisation with the legacy default stream
	eventDefault           = 0x0
	eventDisableTiming     = 0x2
	eventInterprocess      = 0x4
	streamWaitEventDefault = 0x0
)

// StreamCreate creates a stream that does not synchronise with the legacy
// default stream (cuStreamCreate with CU_STREAM_NON_BLOCKING).
func (c *Context) StreamCreate() (Stream, error) {
	var s Stream
	err := c.call(func() error {
		if c.green != 0 {
			// A stream of the green context's own (cuGreenCtxStreamCreate
			// takes only this flag).
			return c.check(c.drv.api.cuGreenCtxStreamCreate(&s, c.green, streamNonBlocking, 0), "cuGreenCtxStreamCreate")
		}
		return c.check(c.drv.api.cuStreamCreate(&s, streamNonBlocking), "cuStreamCreate")
	})
	return s, err
}

// StreamDestroy destroys a stream from StreamCreate (cuStreamDestroy_v2).
func (c *Context) StreamDestroy(s Stream) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuStreamDestroy(s), "cuStreamDestroy")
	})
}

// StreamSynchronize waits for the work queued on s (cuStreamSynchronize).
func (c *Context) StreamSynchronize(s Stream) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuStreamSynchronize(s), "cuStreamSynchronize")
	})
}

// StreamWaitEvent makes later work on s wait for e (cuStreamWaitEvent).
func (c *Context) StreamWaitEvent(s Stream, e Event) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuStreamWaitEvent(s, e, streamWaitEventDefault), "cuStreamWaitEvent")
	})
}

// EventCreate creates a timing event (cuEventCreate with CU_EVENT_DEFAULT).
func (c *Context) EventCreate() (Event, error) {
	return c.eventCreate(eventDefault)
}

// EventCreateInterprocess creates an event another process can open through
// IpcGetEventHandle (CU_EVENT_INTERPROCESS|CU_EVENT_DISABLE_TIMING: the
// driver requires both).
func (c *Context) EventCreateInterprocess() (Event, error) {
	return c.eventCreate(eventInterprocess | eventDisableTiming)
}

func (c *Context) eventCreate(flags uint32) (Event, error) {
	var e Event
	err := c.call(func() error {
		return c.check(c.drv.api.cuEventCreate(&e, flags), "cuEventCreate")
	})
	return e, err
}

// EventDestroy destroys an event (cuEventDestroy_v2).
func (c *Context) EventDestroy(e Event) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuEventDestroy(e), "cuEventDestroy")
	})
}

// EventRecord records e on stream s (cuEventRecord).
func (c *Context) EventRecord(e Event, s Stream) error {
	return c.callRaw("cuEventRecord", c.drv.api.rawEventRecord, uintptr(e), uintptr(s))
}

// EventSynchronize waits until e has completed (cuEventSynchronize).
func (c *Context) EventSynchronize(e Event) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuEventSynchronize(e), "cuEventSynchronize")
	})
}

// EventElapsed returns the milliseconds between two completed events
// (cuEventElapsedTime_v2, or cuEventElapsedTime on drivers before 12.8).
func (c *Context) EventElapsed(start, end Event) (float32, error) {
	var ms float32
	err := c.call(func() error {
		return c.check(c.drv.api.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime")
	})
	if err != nil {
		return 0, fmt.Errorf("device %d: %w", c.dev, err)
	}
	return ms, nil
}
