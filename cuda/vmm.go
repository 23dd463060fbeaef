package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// The virtual memory management (VMM) calls: physical memory (MemCreate)
// mapped into reserved address ranges (MemAddressReserve, MemMap), made
// accessible per device (MemSetAccess), and shared with other processes as a
// POSIX file descriptor or, across the nodes of one NVLink domain, as a
// fabric handle (MemExport*, MemImport*). Tear down in the order cuda.h
// documents: MemUnmap, MemAddressFree, MemRelease; the memory lives until
// every handle to it, in every process, is released.

// MemHandle is a CUmemGenericAllocationHandle: physical memory from MemCreate
// or an import.
type MemHandle uint64

// MemHandleType is a CUmemAllocationHandleType: a kind of shareable handle.
type MemHandleType int32

// The handle types p2pbench exports.
const (
	// HandleTypePOSIXFD is a file descriptor, for another process of the
	// node (passed with SCM_RIGHTS over a Unix socket).
	HandleTypePOSIXFD MemHandleType = 0x1
	// HandleTypeFabric is a CUmemFabricHandle, for a process on another node
	// of the same NVLink domain; it needs the IMEX service.
	HandleTypeFabric MemHandleType = 0x8
)

func (t MemHandleType) String() string {
	switch t {
	case HandleTypePOSIXFD:
		return "POSIX file descriptor"
	case HandleTypeFabric:
		return "fabric handle"
	}
	return fmt.Sprintf("handle type %#x", int32(t))
}

// FabricHandle is a CUmemFabricHandle: 64 opaque bytes.
type FabricHandle [64]byte

// The C layouts of CUmemLocation, CUmemAllocationProp and CUmemAccessDesc
// (cuda.h, LP64): 8, 32 and 12 bytes. They are passed by pointer only.
type (
	memLocation struct {
		Type int32 // CUmemLocationType: 1 = device
		ID   int32 // the CUdevice
	}
	allocationProp struct {
		Type                 int32 // CUmemAllocationType: 1 = pinned
		RequestedHandleTypes MemHandleType
		Location             memLocation
		Win32HandleMetaData  uintptr
		AllocFlags           [8]byte // compression, GPUDirect RDMA, usage: all 0
	}
	accessDesc struct {
		Location memLocation
		Flags    int32 // CUmemAccess_flags: 3 = read and write
	}
)

const (
	memLocationDevice      = 1
	memAllocationPinned    = 1
	memAccessReadWrite     = 3
	granularityMinimum     = 0
	granularityRecommended = 1
)

// prop describes pinned memory on the context's device, exportable as t.
func (c *Context) prop(t MemHandleType) allocationProp {
	return allocationProp{Type: memAllocationPinned, RequestedHandleTypes: t, Location: memLocation{Type: memLocationDevice, ID: c.cu}}
}

// MemAllocationGranularity returns the size and alignment unit of MemCreate
// on this context's device for memory exportable as t: the minimum, or the
// size recommended for performance (cuMemGetAllocationGranularity).
func (c *Context) MemAllocationGranularity(t MemHandleType, recommended bool) (uint64, error) {
	prop := c.prop(t)
	option := int32(granularityMinimum)
	if recommended {
		option = granularityRecommended
	}
	var g uint64
	err := c.call(func() error {
		return c.check(c.drv.api.cuMemGetAllocationGranularity(&g, &prop, option), "cuMemGetAllocationGranularity")
	})
	return g, err
}

// MemCreate allocates bytes of physical memory on this context's device,
// exportable as t (cuMemCreate). bytes must be a multiple of the
// granularity.
func (c *Context) MemCreate(bytes uint64, t MemHandleType) (MemHandle, error) {
	prop := c.prop(t)
	var h MemHandle
	err := c.call(func() error {
		return c.check(c.drv.api.cuMemCreate(&h, bytes, &prop, 0), "cuMemCreate")
	})
	return h, err
}

// MemRelease releases a handle from MemCreate or an import (cuMemRelease).
func (c *Context) MemRelease(h MemHandle) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuMemRelease(h), "cuMemRelease")
	})
}

// MemAddressReserve reserves bytes of virtual addresses, aligned to
// alignment (0: the default) anywhere the driver chooses (cuMemAddressReserve).
func (c *Context) MemAddressReserve(bytes, alignment uint64) (DevicePtr, error) {
	var p DevicePtr
	err := c.call(func() error {
		return c.check(c.drv.api.cuMemAddressReserve(&p, bytes, alignment, 0, 0), "cuMemAddressReserve")
	})
	return p, err
}

// MemAddressFree frees a range from MemAddressReserve (cuMemAddressFree).
func (c *Context) MemAddressFree(p DevicePtr, bytes uint64) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuMemAddressFree(p, bytes), "cuMemAddressFree")
	})
}

// MemMap maps the whole of h (bytes long) at p, in a reserved range (cuMemMap).
func (c *Context) MemMap(p DevicePtr, bytes uint64, h MemHandle) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuMemMap(p, bytes, 0, h, 0), "cuMemMap")
	})
}

// MemUnmap unmaps [p, p+bytes) (cuMemUnmap).
func (c *Context) MemUnmap(p DevicePtr, bytes uint64) error {
	return c.call(func() error {
		return c.check(c.drv.api.cuMemUnmap(p, bytes), "cuMemUnmap")
	})
}

// MemSetAccess lets each of devs (ordinals) read and write the mapped
// range [p, p+bytes) (cuMemSetAccess). No device may touch a mapping
// before it is granted access, not even the one that holds the memory.
func (c *Context) MemSetAccess(p DevicePtr, bytes uint64, devs ...int) error {
	descs := make([]accessDesc, len(devs))
	for i, dev := range devs {
		cu, err := c.drv.device(dev)
		if err != nil {
			return err
		}
		descs[i] = accessDesc{Location: memLocation{Type: memLocationDevice, ID: cu}, Flags: memAccessReadWrite}
	}
	// An empty list goes to the driver as NULL with count 0, which it
	// rejects with its own error.
	return c.call(func() error {
		return c.check(c.drv.api.cuMemSetAccess(p, bytes, first(descs), uint64(len(descs))), "cuMemSetAccess")
	})
}

// MemExportFD exports h as a new file descriptor, which the caller owns and
// closes (cuMemExportToShareableHandle, POSIX file descriptor). h must have
// been created exportable as HandleTypePOSIXFD.
func (c *Context) MemExportFD(h MemHandle) (int, error) {
	var fd int32
	err := c.call(func() error {
		return c.check(c.drv.api.cuMemExportToShareableHandle(unsafe.Pointer(&fd), h, HandleTypePOSIXFD, 0), "cuMemExportToShareableHandle")
	})
	return int(fd), err
}

// MemExportFabric exports h as a fabric handle (cuMemExportToShareableHandle,
// fabric). h must have been created exportable as HandleTypeFabric.
func (c *Context) MemExportFabric(h MemHandle) (FabricHandle, error) {
	var f FabricHandle
	err := c.call(func() error {
		return c.check(c.drv.api.cuMemExportToShareableHandle(unsafe.Pointer(&f), h, HandleTypeFabric, 0), "cuMemExportToShareableHandle")
	})
	return f, err
}

// MemImportFD returns this process's handle to the memory behind a file
// descriptor from MemExportFD in another process
// (cuMemImportFromShareableHandle; the value of the descriptor is passed as
// the pointer). The descriptor stays the caller's to close.
func (c *Context) MemImportFD(fd int) (MemHandle, error) {
	if fd < 0 || fd > math.MaxInt32 {
		return 0, fmt.Errorf("cuda: MemImportFD of descriptor %d", fd)
	}
	var h MemHandle
	err := c.call(func() error {
		return c.check(c.drv.api.cuMemImportFromShareableHandle(&h, uintptr(fd), HandleTypePOSIXFD), "cuMemImportFromShareableHandle")
	})
	return h, err
}

// MemImportFabric returns this process's handle to the memory a fabric
// handle names (cuMemImportFromShareableHandle; a pointer to the 64 bytes is
// passed).
func (c *Context) MemImportFabric(f FabricHandle) (MemHandle, error) {
	var h MemHandle
	err := c.call(func() error {
		// The driver reads the handle during the call only; f stays alive
		// until it returns.
		code := c.drv.api.cuMemImportFromShareableHandle(&h, uintptr(unsafe.Pointer(&f)), HandleTypeFabric)
		runtime.KeepAlive(&f)
		return c.check(code, "cuMemImportFromShareableHandle")
	})
	return h, err
}
