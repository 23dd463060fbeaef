package cuda

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// cuMemHostAlloc flags of cuda.h; cuMemHostRegister's
// CU_MEMHOSTREGISTER_PORTABLE and _DEVICEMAP have the same values.
const (
	memHostAllocPortable  = 0x1 // usable from every context, not only the allocating one
	memHostAllocDeviceMap = 0x2 // mapped into the device address space
)

// HostRegisterMin is the size from which HostAlloc pins memory the process
// maps itself, its pages faulted in by every CPU at once, with
// cuMemHostRegister, where the platform can (mapHost): registering pages
// already faulted in takes a small part of what cuMemHostAlloc takes, and
// the faults spread over every CPU (docs/findings.md, "Behind the code").
// Both are ordinary 4 KiB pages,
// pinned and mapped alike, so the copies read and write the same kind of
// memory (mapHost keeps transparent huge pages off).
const HostRegisterMin = 64 << 20

// MemAlloc allocates device memory (cuMemAlloc_v2).
func (c *Context) MemAlloc(bytes uint64) (DevicePtr, error) {
	var p DevicePtr
	err := c.call(func() error {
		return c.check(c.drv.api.cuMemAlloc(&p, bytes), "cuMemAlloc")
	})
	return p, err
}

// MemFree frees memory from MemAlloc (cuMemFree_v2).
func (c *Context) MemFree(p DevicePtr) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuMemFree(p), "cuMemFree")
	})
}

// MemGetInfo returns the free and total memory of the device (cuMemGetInfo_v2).
func (c *Context) MemGetInfo() (free, total uint64, err error) {
	err = c.call(func() error {
		return c.check(c.drv.api.cuMemGetInfo(&free, &total), "cuMemGetInfo")
	})
	return free, total, err
}

// HostAlloc allocates page-locked host memory usable from every context
// (cuMemHostAlloc with CU_MEMHOSTALLOC_PORTABLE). When mapped is true it is
// also mapped into the device address space (CU_MEMHOSTALLOC_DEVICEMAP) and
// the buffer's Device field holds its device address.
//
// It runs on a thread of its own with the context current there too
// (aside), not on the context's thread: pinning takes the kernel tenths of
// a second a GiB, during which the context's thread goes on
// serving the device's copies and launches, and several allocations pin at
// once.
func (c *Context) HostAlloc(bytes uint64, mapped bool) (HostBuffer, error) {
	if bytes > math.MaxInt {
		return HostBuffer{}, fmt.Errorf("cuda: HostAlloc of %d bytes: too large for this platform", bytes)
	}
	flags := uint32(memHostAllocPortable)
	if mapped {
		flags |= memHostAllocDeviceMap
	}
	if bytes >= HostRegisterMin && c.drv.api.cuMemHostRegister != nil && c.drv.api.cuMemHostUnregister != nil {
		if mem := takePrefaulted(int(bytes)); mem != nil {
			return c.register(mem, mapped)
		}
		if mem, ok := mapHost(int(bytes)); ok {
			return c.register(mem, mapped)
		}
	}
	var (
		host unsafe.Pointer
		dev  DevicePtr
	)
	err := c.aside(func() error {
		api := c.drv.api
		if err := c.check(api.cuMemHostAlloc(&host, bytes, flags), "cuMemHostAlloc"); err != nil {
			return err
		}
		if !mapped {
			return nil
		}
		if err := c.check(api.cuMemHostGetDevicePointer(&dev, host, 0), "cuMemHostGetDevicePointer"); err != nil {
			if ferr := c.check(api.cuMemFreeHost(host), "cuMemFreeHost"); ferr != nil {
				err = errors.Join(err, ferr)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return HostBuffer{}, err
	}
	return HostBuffer{Host: unsafe.Slice((*byte)(host), int(bytes)), Device: dev}, nil
}

// register pins mem, the process's own mapping (mapHost), for every
// context (cuMemHostRegister with CU_MEMHOSTREGISTER_PORTABLE, and
// _DEVICEMAP when mapped), aside as HostAlloc pins; on failure it unmaps mem.
func (c *Context) register(mem []byte, mapped bool) (HostBuffer, error) {
	flags := uint32(memHostAllocPortable)
	if mapped {
		flags |= memHostAllocDeviceMap
	}
	p := unsafe.Pointer(unsafe.SliceData(mem))
	var dev DevicePtr
	err := c.aside(func() error {
		api := c.drv.api
		if err := c.check(api.cuMemHostRegister(p, uint64(len(mem)), flags), "cuMemHostRegister"); err != nil {
			return err
		}
		if !mapped {
			return nil
		}
		if err := c.check(api.cuMemHostGetDevicePointer(&dev, p, 0), "cuMemHostGetDevicePointer"); err != nil {
			if uerr := c.check(api.cuMemHostUnregister(p), "cuMemHostUnregister"); uerr != nil {
				err = errors.Join(err, uerr)
			}
			return err
		}
		return nil
	})
	if err != nil {
		unmapHost(mem)
		return HostBuffer{}, err
	}
	return HostBuffer{Host: mem, Device: dev, registered: true}, nil
}

// HostFree frees memory from HostAlloc (cuMemFreeHost, or cuMemHostUnregister
// and unmapping what it registered), aside as HostAlloc pins it: unpinning
// takes time too.
func (c *Context) HostFree(h HostBuffer) error {
	p := unsafe.Pointer(unsafe.SliceData(h.Host))
	if p == nil {
		return errors.New("cuda: HostFree of a buffer that HostAlloc did not return")
	}
	if h.registered {
		err := c.aside(func() error {
			return c.check(c.drv.api.cuMemHostUnregister(p), "cuMemHostUnregister")
		})
		if err == nil {
			unmapHost(h.Host)
		}
		return err
	}
	return c.aside(func() error {
		return c.check(c.drv.api.cuMemFreeHost(p), "cuMemFreeHost")
	})
}

// MemsetD32Async sets words 32-bit words at p to value, in stream order.
func (c *Context) MemsetD32Async(p DevicePtr, value uint32, words uint64, s Stream) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuMemsetD32Async(p, value, words, s), "cuMemsetD32Async")
	})
}

// MemcpyHtoD copies src to device memory at dst and returns when it is done
// (cuMemcpyHtoD_v2).
func (c *Context) MemcpyHtoD(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return c.call(func() error {
		return c.check(c.drv.api.cuMemcpyHtoD(dst, unsafe.Pointer(&src[0]), uint64(len(src))), "cuMemcpyHtoD")
	})
}

// MemcpyDtoH fills dst from device memory at src and returns when it is done
// (cuMemcpyDtoH_v2).
func (c *Context) MemcpyDtoH(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	return c.call(func() error {
		return c.check(c.drv.api.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src, uint64(len(dst))), "cuMemcpyDtoH")
	})
}

// MemcpyAsync copies bytes within the unified address space (device to
// device, or to and from mapped host memory), in stream order.
func (c *Context) MemcpyAsync(dst, src DevicePtr, bytes uint64, s Stream) error {
	return c.callRaw("cuMemcpyAsync", c.drv.api.rawMemcpyAsync, uintptr(dst), uintptr(src), uintptr(bytes), uintptr(s))
}

// MemcpyPeerAsync copies bytes from src in srcCtx to dst in dstCtx with the
// copy engines, issued from this context (cuMemcpyPeerAsync).
func (c *Context) MemcpyPeerAsync(dst DevicePtr, dstCtx *Context, src DevicePtr, srcCtx *Context, bytes uint64, s Stream) error {
	dh, sh := handleOf(dstCtx), handleOf(srcCtx)
	return c.callRaw("cuMemcpyPeerAsync", c.drv.api.rawMemcpyPeerAsync, uintptr(dst), dh, uintptr(src), sh, uintptr(bytes), uintptr(s))
}

// MemcpyPeer is MemcpyPeerAsync on the legacy default stream, returning
// when the copy is done (cuMemcpyPeer).
func (c *Context) MemcpyPeer(dst DevicePtr, dstCtx *Context, src DevicePtr, srcCtx *Context, bytes uint64) error {
	dh, sh := handleOf(dstCtx), handleOf(srcCtx)
	return c.call(func() error {
		return c.check(c.drv.api.cuMemcpyPeer(dst, dh, src, sh, bytes), "cuMemcpyPeer")
	})
}
