package gpu

import (
	"sync"

	"github.com/p2pbench/p2pbench/cuda"
)

// CUDADriver adapts the real binding (*cuda.Driver) to Driver.
type CUDADriver struct {
	d    *cuda.Driver
	mu   sync.Mutex
	ctxs map[int]*cudaContext
}

// NewCUDADriver wraps an opened driver.
func NewCUDADriver(d *cuda.Driver) *CUDADriver {
	return &CUDADriver{d: d, ctxs: map[int]*cudaContext{}}
}

func (c *CUDADriver) Simulated() bool             { return false }
func (c *CUDADriver) Describe() string            { return c.d.Path() }
func (c *CUDADriver) DriverVersion() (int, error) { return c.d.DriverVersion() }
func (c *CUDADriver) DeviceCount() (int, error)   { return c.d.DeviceCount() }
func (c *CUDADriver) DeviceInfo(dev int) (cuda.DeviceInfo, error) {
	return c.d.DeviceInfo(dev)
}
func (c *CUDADriver) CanAccessPeer(dev, peer int) (bool, error) { return c.d.CanAccessPeer(dev, peer) }
func (c *CUDADriver) P2PAttribute(a cuda.P2PAttribute, src, dst int) (int, error) {
	return c.d.P2PAttribute(a, src, dst)
}
func (c *CUDADriver) P2PAtomicCapabilities(ops []cuda.AtomicOperation, src, dst int) ([]uint32, error) {
	return c.d.P2PAtomicCapabilities(ops, src, dst)
}
func (c *CUDADriver) Close() error { return c.d.Close() }

// Context returns the adapter of the device's primary context; one per device,
// so peer calls can unwrap the other side.
func (c *CUDADriver) Context(dev int) (Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if x, ok := c.ctxs[dev]; ok {
		return x, nil
	}
	ctx, err := c.d.Context(dev)
	if err != nil {
		return nil, err
	}
	x := &cudaContext{Context: ctx}
	c.ctxs[dev] = x
	return x, nil
}

// cudaContext embeds *cuda.Context and overrides the methods whose parameters
// name the other side as a Context.
type cudaContext struct {
	*cuda.Context
}

func unwrap(c Context) *cuda.Context {
	if x, ok := c.(*cudaContext); ok {
		return x.Context
	}
	return nil
}

func (c *cudaContext) EnablePeerAccess(peer Context, flags uint32) error {
	return c.Context.EnablePeerAccess(unwrap(peer), flags)
}

func (c *cudaContext) DisablePeerAccess(peer Context) error {
	return c.Context.DisablePeerAccess(unwrap(peer))
}

func (c *cudaContext) MemcpyPeerAsync(dst cuda.DevicePtr, dstCtx Context, src cuda.DevicePtr, srcCtx Context, n uint64, s cuda.Stream) error {
	return c.Context.MemcpyPeerAsync(dst, unwrap(dstCtx), src, unwrap(srcCtx), n, s)
}

func (c *cudaContext) Do(fn func(Context) error) error {
	return c.Context.Do(func(direct *cuda.Context) error {
		return fn(&cudaContext{Context: direct})
	})
}
