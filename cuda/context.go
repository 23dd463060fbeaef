package cuda

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/p2pbench/p2pbench/internal/dl"
)

// Context is one device's primary context, bound to an OS thread of its own.
//
// The driver keeps the current context per OS thread, and goroutines move
// between threads, so each Context owns a goroutine locked to one thread on
// which its context was made current once. Every method sends its driver
// calls there and waits for the answer. Methods may be called from any
// goroutine; calls from several goroutines are served one at a time. Calls
// made on that thread itself (inside Do) run at once.
type Context struct {
	drv    *Driver
	dev    int
	cu     int32   // the CUdevice
	handle uintptr // the CUcontext
	green  uintptr // the CUgreenCtx of a context from Green, 0 for the primary

	jobs     chan job
	quit     chan struct{} // closed by stop
	done     chan struct{} // closed when the thread has exited
	stopOnce sync.Once
	tid      int // the thread's id, set before startContext returns
}

// job is one closure to run on the context's thread.
type job struct {
	fn    func() error
	reply chan<- outcome
}

// outcome carries a job's result back, including a panic, which is raised
// again in the caller's goroutine instead of killing the context's thread.
type outcome struct {
	err      error
	panicked bool
	value    any
}

// startContext starts the thread of device dev's primary context h and makes
// h current there.
func startContext(d *Driver, dev int, cu int32, h uintptr) (*Context, error) {
	c := &Context{
		drv:    d,
		dev:    dev,
		cu:     cu,
		handle: h,
		jobs:   make(chan job),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	ready := make(chan error, 1)
	go c.serve(ready)
	if err := <-ready; err != nil {
		<-c.done
		return nil, err
	}
	return c, nil
}

// serve is the context's thread: bind the context, then run jobs until stop.
func (c *Context) serve(ready chan<- error) {
	defer close(c.done)
	// Never unlocked: when serve returns, the runtime ends the thread, and
	// the current-context binding goes with it instead of leaking to
	// whatever goroutine would run there next.
	runtime.LockOSThread()
	c.tid = dl.ThreadID()
	if err := c.bind(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for {
		select {
		case j := <-c.jobs:
			j.reply <- run(j.fn)
		case <-c.quit:
			return
		}
	}
}

// bind makes the context current on the calling thread and checks that the
// driver agrees on the device.
func (c *Context) bind() error {
	api := c.drv.api
	if err := c.drv.check(api.cuCtxSetCurrent(c.handle), "cuCtxSetCurrent"); err != nil {
		return fmt.Errorf("device %d: %w", c.dev, err)
	}
	var got int32
	if err := c.drv.check(api.cuCtxGetDevice(&got), "cuCtxGetDevice"); err != nil {
		return fmt.Errorf("device %d: %w", c.dev, err)
	}
	if got != c.cu {
		return fmt.Errorf("device %d: its primary context reports device %d", c.dev, got)
	}
	return nil
}

// run calls fn, turning a panic into an outcome.
func run(fn func() error) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{panicked: true, value: p}
		}
	}()
	return outcome{err: fn()}
}

// call runs fn on the context's thread and returns its error. It runs fn
// directly when already on that thread, so nested calls cannot deadlock.
func (c *Context) call(fn func() error) error {
	here, err := c.onThread()
	if err != nil {
		return err
	}
	if here {
		return fn()
	}
	reply := make(chan outcome, 1)
	select {
	case c.jobs <- job{fn: fn, reply: reply}:
	case <-c.quit:
		return c.closedError()
	}
	o := <-reply
	if o.panicked {
		panic(o.value)
	}
	return o.err
}

// callRaw calls the entry point name at addr (bound by address: dl.Call)
// with args on the context's thread: straight away, without a closure to
// hand over, when the caller is there already, as a sample's enqueueing
// is (inside Do).
func (c *Context) callRaw(name string, addr uintptr, args ...uintptr) error {
	here, err := c.onThread()
	switch {
	case err != nil:
		return err
	case here:
		return c.check(Result(int32(dl.Call(addr, args...))), name)
	}
	return c.call(func() error { return c.check(Result(int32(dl.Call(addr, args...))), name) })
}

// aside runs fn on a new thread with the context current there, and waits
// for it: for driver calls that take long on the host alone (pinning host
// memory), which would hold up the context's own thread. A context may be
// current on several threads at once. The thread ends with fn, as it is
// never unlocked, and its current-context binding with it.
func (c *Context) aside(fn func() error) error {
	select {
	case <-c.done:
		return c.closedError()
	default:
	}
	reply := make(chan outcome, 1)
	go func() {
		runtime.LockOSThread()
		if err := c.check(c.drv.api.cuCtxSetCurrent(c.handle), "cuCtxSetCurrent"); err != nil {
			reply <- outcome{err: fmt.Errorf("device %d: %w", c.dev, err)}
			return
		}
		reply <- run(fn)
	}()
	o := <-reply
	if o.panicked {
		panic(o.value)
	}
	return o.err
}

// onThread says whether the caller runs on the context's thread, or that
// the context is closed.
func (c *Context) onThread() (bool, error) {
	select {
	case <-c.done:
		return false, c.closedError()
	default:
	}
	// Only the locked goroutine ever runs on thread c.tid while it is
	// alive, and it is alive: done is still open.
	return c.tid > 0 && dl.ThreadID() == c.tid, nil
}

func (c *Context) closedError() error {
	return fmt.Errorf("device %d context: %w", c.dev, ErrClosed)
}

// stop ends the context's thread after the job in progress, if any.
func (c *Context) stop() {
	c.stopOnce.Do(func() { close(c.quit) })
	<-c.done
}

// check is Driver.check.
func (c *Context) check(code Result, name string) error { return c.drv.check(code, name) }

// Device returns the device ordinal of the context.
func (c *Context) Device() int { return c.dev }

// Handle returns the CUcontext.
func (c *Context) Handle() uintptr { return c.handle }

// handleOf returns c's CUcontext, or 0 (no context) for a nil c, so that the
// driver is the one to reject it.
func handleOf(c *Context) uintptr {
	if c == nil {
		return 0
	}
	return c.handle
}

// Do runs fn on the context's thread with the context current. Calls on c
// (or on the Context passed to fn, which is c) inside fn run on that thread
// directly, so a sequence of calls costs no thread switches. fn must not
// wait for work on another Context that itself waits for this one.
func (c *Context) Do(fn func(c *Context) error) error {
	return c.call(func() error { return fn(c) })
}

// Synchronize waits for all work in the context (cuCtxSynchronize).
func (c *Context) Synchronize() error {
	return c.call(func() error {
		return c.check(c.drv.api.cuCtxSynchronize(), "cuCtxSynchronize")
	})
}

// EnablePeerAccess lets this context access peer's memory
// (cuCtxEnablePeerAccess with this context current). flags must be 0 for the
// driver to accept it; other values are passed through so the driver's answer
// can be checked. A nil peer is passed as a NULL context.
func (c *Context) EnablePeerAccess(peer *Context, flags uint32) error {
	h := handleOf(peer)
	err := c.call(func() error {
		return c.check(c.drv.api.cuCtxEnablePeerAccess(h, flags), "cuCtxEnablePeerAccess")
	})
	if err != nil {
		return fmt.Errorf("device %d→%s: %w", c.dev, peerName(peer), err)
	}
	return nil
}

// DisablePeerAccess undoes EnablePeerAccess (cuCtxDisablePeerAccess).
func (c *Context) DisablePeerAccess(peer *Context) error {
	h := handleOf(peer)
	err := c.call(func() error {
		return c.check(c.drv.api.cuCtxDisablePeerAccess(h), "cuCtxDisablePeerAccess")
	})
	if err != nil {
		return fmt.Errorf("device %d→%s: %w", c.dev, peerName(peer), err)
	}
	return nil
}

func peerName(peer *Context) string {
	if peer == nil {
		return "nil context"
	}
	return fmt.Sprint(peer.dev)
}
