package cuda

import (
	"errors"
	"fmt"
)

// Green contexts (CUDA 12.4 and later): a context of its own on a device,
// made from a share of its SMs, that shares the device's primary context's
// memory. Small SM copies between GPUs take one of two times a copy, which
// every new context draws afresh (fresh contexts and green contexts alike)
// and every stream of one context keeps; a green context costs a few ms
// where a fresh one costs a fifth of a second to make and a tenth to
// destroy (docs/findings.md, "Behind the code").

// devResource is a CUdevResource: 144 bytes in CUDA 12.4-12.9, held in a
// larger buffer so that a driver whose struct grew cannot write past it.
type devResource [512]byte

// CUDA's resource type and green context flag values.
const (
	devResourceTypeSM     = 1
	greenCtxDefaultStream = 0x1
)

// ErrNoGreenContexts means the driver has no green contexts (older than
// CUDA 12.4, or a library without the entry points).
var ErrNoGreenContexts = errors.New("cuda: the driver has no green contexts (CUDA 12.4 or later)")

// Green makes a green context of all of the device's SMs
// (cuDeviceGetDevResource, cuDevResourceGenerateDesc, cuGreenCtxCreate,
// cuCtxFromGreenCtx) with a thread of its own, as the primary context has.
// It reaches the primary context's memory and peers; its streams are its own
// (StreamCreate: cuGreenCtxStreamCreate). Destroy it when done.
func (c *Context) Green() (*Context, error) {
	api := c.drv.api
	if api.cuDeviceGetDevResource == nil || api.cuDevResourceGenerateDesc == nil || api.cuGreenCtxCreate == nil ||
		api.cuCtxFromGreenCtx == nil || api.cuGreenCtxDestroy == nil || api.cuGreenCtxStreamCreate == nil {
		return nil, ErrNoGreenContexts
	}
	if c.green != 0 {
		return nil, errors.New("cuda: Green of a green context: make it from the primary context")
	}
	var g, h uintptr
	err := c.call(func() error {
		var res devResource
		if err := c.check(api.cuDeviceGetDevResource(c.cu, &res, devResourceTypeSM), "cuDeviceGetDevResource"); err != nil {
			return err
		}
		var desc uintptr
		if err := c.check(api.cuDevResourceGenerateDesc(&desc, &res, 1), "cuDevResourceGenerateDesc"); err != nil {
			return err
		}
		if err := c.check(api.cuGreenCtxCreate(&g, desc, c.cu, greenCtxDefaultStream), "cuGreenCtxCreate"); err != nil {
			return err
		}
		if err := c.check(api.cuCtxFromGreenCtx(&h, g), "cuCtxFromGreenCtx"); err != nil {
			return errors.Join(err, c.check(api.cuGreenCtxDestroy(g), "cuGreenCtxDestroy"))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("device %d: a green context: %w", c.dev, err)
	}
	gc, err := startContext(c.drv, c.dev, c.cu, h)
	if err != nil {
		return nil, errors.Join(err, c.drv.check(api.cuGreenCtxDestroy(g), "cuGreenCtxDestroy"))
	}
	gc.green = g
	c.drv.mu.Lock()
	if c.drv.greens == nil { // the driver closed meanwhile
		c.drv.mu.Unlock()
		gc.stop()
		_ = c.drv.check(api.cuGreenCtxDestroy(g), "cuGreenCtxDestroy")
		return nil, gc.closedError()
	}
	c.drv.greens[gc] = true
	c.drv.mu.Unlock()
	return gc, nil
}

// Destroy ends a context from Green: its thread stops and the green
// context is destroyed (cuGreenCtxDestroy), with what was made in it.
// The primary context cannot be destroyed.
func (c *Context) Destroy() error {
	if c.green == 0 {
		return errors.New("cuda: Destroy of a primary context (Driver.Close releases it)")
	}
	c.drv.mu.Lock()
	mine := c.drv.greens[c]
	delete(c.drv.greens, c)
	c.drv.mu.Unlock()
	if !mine {
		return c.closedError()
	}
	c.stop()
	if err := c.drv.check(c.drv.api.cuGreenCtxDestroy(c.green), "cuGreenCtxDestroy"); err != nil {
		return fmt.Errorf("device %d: %w", c.dev, err)
	}
	return nil
}
