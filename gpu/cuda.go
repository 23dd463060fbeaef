package gpu

import (
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
)

var (
	_ Driver  = (*CUDADriver)(nil)
	_ Context = (*cudaContext)(nil)
)

// CUDADriver adapts the real binding to Driver. It embeds *cuda.Driver,
// whose device-level methods are Driver's own, and wraps each device's
// *cuda.Context so that peer calls can take the other side as a Context.
type CUDADriver struct {
	*cuda.Driver
	mu   sync.Mutex
	ctxs map[int]*cudaContext
}

// NewCUDADriver wraps an opened driver.
func NewCUDADriver(d *cuda.Driver) *CUDADriver {
	return &CUDADriver{Driver: d, ctxs: map[int]*cudaContext{}}
}

// Simulated reports false: the figures are measurements.
func (c *CUDADriver) Simulated() bool { return false }

// Describe names the driver library that was loaded.
func (c *CUDADriver) Describe() string { return c.Path() }

// processStart is the origin of HostClock on GPUs.
var processStart = time.Now()

// HostClock is the time since the process started, on the monotonic clock.
func (c *CUDADriver) HostClock() time.Duration { return time.Since(processStart) }

// Context returns the adapter of the device's primary context; one per device,
// so peer calls can unwrap the other side.
func (c *CUDADriver) Context(dev int) (Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if x, ok := c.ctxs[dev]; ok {
		return x, nil
	}
	ctx, err := c.Driver.Context(dev)
	if err != nil {
		return nil, err
	}
	x := &cudaContext{Context: ctx}
	c.ctxs[dev] = x
	return x, nil
}

// cudaContext embeds *cuda.Context, whose methods implement most of Context,
// and overrides those whose parameters name the other side as a Context.
type cudaContext struct {
	*cuda.Context
}

// unwrap returns the binding's context behind c; nil for a Context of
// another Driver, which the driver then refuses (CUDA_ERROR_INVALID_CONTEXT).
func unwrap(c Context) *cuda.Context {
	if x, ok := c.(*cudaContext); ok {
		return x.Context
	}
	return nil
}

// HostRead needs nothing: the CPU reads pinned memory as the GPUs left it.
func (c *cudaContext) HostRead([]byte) {}

// HostWritten needs nothing: the GPUs read pinned memory as the CPU left it.
func (c *cudaContext) HostWritten([]byte) {}

func (c *cudaContext) EnablePeerAccess(peer Context, flags uint32) error {
	return c.Context.EnablePeerAccess(unwrap(peer), flags)
}

func (c *cudaContext) DisablePeerAccess(peer Context) error {
	return c.Context.DisablePeerAccess(unwrap(peer))
}

func (c *cudaContext) MemcpyPeerAsync(dst cuda.DevicePtr, dstCtx Context, src cuda.DevicePtr, srcCtx Context, n uint64, s cuda.Stream) error {
	return c.Context.MemcpyPeerAsync(dst, unwrap(dstCtx), src, unwrap(srcCtx), n, s)
}

// Green makes a green context of the device (cuda.Context.Green).
func (c *cudaContext) Green() (Context, error) {
	g, err := c.Context.Green()
	if err != nil {
		return nil, err
	}
	return &cudaContext{Context: g}, nil
}

// Do runs fn on the context's thread, with the same context as fn's argument.
func (c *cudaContext) Do(fn func(Context) error) error {
	return c.Context.Do(func(direct *cuda.Context) error {
		return fn(&cudaContext{Context: direct})
	})
}
