package sim

import "github.com/p2pbench/p2pbench/cuda"

// Every simulated driver call starts the same way: it locks the driver (all
// state sits behind one mutex, so contexts may be used from any goroutine)
// and makes the checks every call of its kind makes first. The helpers
// below are that start, written once; call is the entry point's name, as
// the errors the call returns name it ("cuMemcpyAsync"). The lookups most
// calls make next (a stream, an event, a module, a function) follow.

// query runs a device-level call: DEINITIALIZED after Close,
// INVALID_DEVICE for any of devs out of range, else body.
func query[T any](d *Driver, call string, devs []int, body func() (T, error)) (T, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(call, devs...); err != nil {
		var zero T
		return zero, err
	}
	return body()
}

// check returns DEINITIALIZED after Close, INVALID_DEVICE for a bad ordinal.
func (d *Driver) check(call string, devs ...int) error {
	if d.closed {
		return deinitialized(call)
	}
	for _, dev := range devs {
		if dev < 0 || dev >= d.m.n {
			return cuda.NewError(cuda.ErrorInvalidDevice, call)
		}
	}
	return nil
}

// lockedValue runs a call of context c that returns a value: DEINITIALIZED
// after Close, the sticky error of a poisoned context, else body.
func lockedValue[T any](c *devContext, call string, body func(d *Driver) (T, error)) (T, error) {
	d := c.d
	d.mu.Lock()
	defer d.mu.Unlock()
	var zero T
	if d.closed {
		return zero, deinitialized(call)
	}
	if c.sticky != nil {
		return zero, c.sticky.report(call)
	}
	if c.destroyed {
		return zero, cuda.NewError(cuda.ErrorInvalidContext, call)
	}
	return body(d)
}

// locked is lockedValue for a call that returns only an error.
func (c *devContext) locked(call string, body func(d *Driver) error) error {
	_, err := lockedValue(c, call, func(d *Driver) (struct{}, error) { return struct{}{}, body(d) })
	return err
}

// liveStream resolves a stream of any context that was not destroyed;
// INVALID_HANDLE otherwise.
func (d *Driver) liveStream(s cuda.Stream, call string) (*stream, error) {
	st := d.streams[s]
	if st == nil || st.destroyed {
		return nil, cuda.NewError(cuda.ErrorInvalidHandle, call)
	}
	return st, nil
}

// streamFor resolves a stream handle for enqueueing in c: 0 is c's legacy
// stream; a stream of another context is INVALID_HANDLE, as in the driver.
func (c *devContext) streamFor(s cuda.Stream, call string) (*stream, error) {
	if s == 0 {
		return c.legacy, nil
	}
	st, err := c.d.liveStream(s, call)
	if err == nil && st.ctx != c {
		return nil, cuda.NewError(cuda.ErrorInvalidHandle, call)
	}
	return st, err
}

// liveEvent resolves an event of any context that was not destroyed;
// INVALID_HANDLE otherwise.
func (d *Driver) liveEvent(e cuda.Event, call string) (*event, error) {
	ev := d.events[e]
	if ev == nil || ev.destroyed {
		return nil, cuda.NewError(cuda.ErrorInvalidHandle, call)
	}
	return ev, nil
}

// loadedModule resolves a module loaded in c; INVALID_HANDLE otherwise.
func (c *devContext) loadedModule(h cuda.Module, call string) (*module, error) {
	m := c.d.modules[h]
	if m == nil || m.unloaded || m.ctx != c {
		return nil, cuda.NewError(cuda.ErrorInvalidHandle, call)
	}
	return m, nil
}

// loadedFunction resolves a function of a module loaded in c (unloading a
// module forgets its functions); INVALID_HANDLE otherwise.
func (c *devContext) loadedFunction(h cuda.Function, call string) (*function, error) {
	f := c.d.funcs[h]
	if f == nil || f.mod.unloaded || f.mod.ctx != c {
		return nil, cuda.NewError(cuda.ErrorInvalidHandle, call)
	}
	return f, nil
}
