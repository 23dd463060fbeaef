package gpu

import (
	"fmt"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/results"
)

// Driver is what measuring needs of the CUDA driver. The real binding
// (through CUDADriver) and the simulator in gpu/sim implement it.
//
// Device-level queries may be called from any goroutine. Everything that needs
// a current context goes through a Context.
type Driver interface {
	// Simulated reports whether this driver is a simulation (its figures are not measurements).
	Simulated() bool
	// Describe names the driver: the library path, or the simulated machine.
	Describe() string
	// HostClock is the host's monotonic clock: real time on GPUs, the
	// simulator's virtual host clock (what the calls it models cost) under
	// simulation. Host-timed figures read it, never the wall clock.
	HostClock() time.Duration
	DriverVersion() (int, error)
	DeviceCount() (int, error)
	DeviceInfo(dev int) (cuda.DeviceInfo, error)
	CanAccessPeer(dev, peer int) (bool, error)
	P2PAttribute(attr cuda.P2PAttribute, src, dst int) (int, error)
	// P2PAtomicCapabilities returns one capability bitmask per operation.
	// It returns cuda.ErrUnavailable when the driver lacks the entry point.
	P2PAtomicCapabilities(ops []cuda.AtomicOperation, src, dst int) ([]uint32, error)
	// Context returns the device's primary context (retained on first use,
	// released by Close). The same Context is returned for the same device.
	Context(dev int) (Context, error)
	// Close releases every context. Safe to call more than once.
	Close() error
}

// Context is one device's primary context. Every method runs with that
// context current on an OS thread owned by the context, so callers never
// deal with cuCtxSetCurrent or thread locking.
type Context interface {
	Device() int

	// EnablePeerAccess lets this context access peer's memory (cuCtxEnablePeerAccess
	// with this context current). flags must be 0 for the driver to accept it; other
	// values are passed through so the conformance check can test the driver.
	EnablePeerAccess(peer Context, flags uint32) error
	DisablePeerAccess(peer Context) error

	MemAlloc(bytes uint64) (cuda.DevicePtr, error)
	MemFree(p cuda.DevicePtr) error
	MemGetInfo() (free, total uint64, err error)
	// HostAlloc allocates pinned host memory, device-mapped (cuMemHostAlloc with
	// CU_MEMHOSTALLOC_DEVICEMAP|PORTABLE) when mapped is true.
	HostAlloc(bytes uint64, mapped bool) (cuda.HostBuffer, error)
	HostFree(h cuda.HostBuffer) error
	// HostRead says the CPU is about to read b, bytes of pinned host memory
	// (from HostAlloc of any context), and HostWritten that it has written
	// every byte of b. The GPUs and the CPU share that memory, so the CUDA
	// driver needs neither; the simulator holds what the GPUs copy to and
	// from it symbolically, and moves the bytes only here (a CPU that reads
	// pinned memory without HostRead may see stale bytes there). Bytes
	// outside pinned memory need nothing.
	HostRead(b []byte)
	HostWritten(b []byte)
	MemsetD32Async(p cuda.DevicePtr, value uint32, words uint64, s cuda.Stream) error
	MemcpyHtoD(dst cuda.DevicePtr, src []byte) error
	MemcpyDtoH(dst []byte, src cuda.DevicePtr) error
	// MemcpyAsync copies within the unified address space (D2D, H2D, D2H by address).
	MemcpyAsync(dst, src cuda.DevicePtr, bytes uint64, s cuda.Stream) error
	// MemcpyPeerAsync is cuMemcpyPeerAsync issued from this context.
	MemcpyPeerAsync(dst cuda.DevicePtr, dstCtx Context, src cuda.DevicePtr, srcCtx Context, bytes uint64, s cuda.Stream) error

	// LoadModule JIT-compiles PTX text; a failure carries the JIT error log.
	LoadModule(ptx string) (cuda.Module, error)
	UnloadModule(m cuda.Module) error
	Function(m cuda.Module, name string) (cuda.Function, error)
	// Launch runs f with the given kernel parameters; each parameter is one of
	// uint64, uint32, int32, float32 or cuda.DevicePtr, in the kernel's order.
	Launch(f cuda.Function, grid, block [3]uint32, sharedBytes uint32, s cuda.Stream, params ...any) error
	// SetMaxDynamicShared raises a function's dynamic shared memory limit.
	SetMaxDynamicShared(f cuda.Function, bytes int) error

	// StreamCreate creates a non-blocking stream.
	StreamCreate() (cuda.Stream, error)
	StreamDestroy(s cuda.Stream) error
	StreamSynchronize(s cuda.Stream) error
	StreamWaitEvent(s cuda.Stream, e cuda.Event) error
	EventCreate() (cuda.Event, error)
	// EventCreateInterprocess creates an event usable with IpcGetEventHandle
	// (CU_EVENT_INTERPROCESS|CU_EVENT_DISABLE_TIMING).
	EventCreateInterprocess() (cuda.Event, error)
	EventDestroy(e cuda.Event) error
	EventRecord(e cuda.Event, s cuda.Stream) error
	EventSynchronize(e cuda.Event) error
	// EventElapsed returns the milliseconds between two recorded events.
	EventElapsed(start, end cuda.Event) (float32, error)
	Synchronize() error

	IpcGetMemHandle(p cuda.DevicePtr) (cuda.IpcMemHandle, error)
	// IpcOpenMemHandle is cuIpcOpenMemHandle_v2; flags is normally 1 (lazy peer enable).
	IpcOpenMemHandle(h cuda.IpcMemHandle, flags uint32) (cuda.DevicePtr, error)
	IpcCloseMemHandle(p cuda.DevicePtr) error
	IpcGetEventHandle(e cuda.Event) (cuda.IpcEventHandle, error)
	IpcOpenEventHandle(h cuda.IpcEventHandle) (cuda.Event, error)

	// Virtual memory management (package cuda's vmm.go): physical memory on
	// this context's device exportable as a handle type, mapped into
	// reserved addresses, readable and writable by the devices granted
	// access, shared as a POSIX file descriptor (owned by the caller) or a
	// fabric handle. Released in the order unmap, free the addresses,
	// release the handle.
	MemAllocationGranularity(t cuda.MemHandleType, recommended bool) (uint64, error)
	MemCreate(bytes uint64, t cuda.MemHandleType) (cuda.MemHandle, error)
	MemRelease(h cuda.MemHandle) error
	MemAddressReserve(bytes, alignment uint64) (cuda.DevicePtr, error)
	MemAddressFree(p cuda.DevicePtr, bytes uint64) error
	MemMap(p cuda.DevicePtr, bytes uint64, h cuda.MemHandle) error
	MemUnmap(p cuda.DevicePtr, bytes uint64) error
	MemSetAccess(p cuda.DevicePtr, bytes uint64, devs ...int) error
	MemExportFD(h cuda.MemHandle) (int, error)
	MemExportFabric(h cuda.MemHandle) (cuda.FabricHandle, error)
	MemImportFD(fd int) (cuda.MemHandle, error)
	MemImportFabric(f cuda.FabricHandle) (cuda.MemHandle, error)

	// Do runs fn on this context's thread; inside fn, calls on c do not hop
	// threads, so a sequence of calls (for example a host-timed copy) costs no
	// extra switches.
	Do(fn func(c Context) error) error

	// Green makes another context on this primary context's device that
	// reaches its memory and peers: a green context of all the device's SMs
	// (cuda.Context.Green), with streams, events and modules of its own.
	// What a new process changes in small copies' time on real GPUs, every
	// new context changes too (docs/methods.md, "Rounds").
	// cuda.ErrNoGreenContexts where the driver has none.
	Green() (Context, error)
	// Destroy ends a context from Green, with what was made in it.
	Destroy() error
}

// DeviceRecord is the driver's description of a device in the form a
// results file records it.
func DeviceRecord(info cuda.DeviceInfo) results.Device {
	return results.Device{
		Index:             info.Index,
		Name:              info.Name,
		UUID:              info.UUID,
		PCIBusID:          info.PCIBusID,
		ComputeCapability: fmt.Sprintf("%d.%d", info.ComputeMajor, info.ComputeMinor),
		SMCount:           info.SMCount,
		MemoryBytes:       info.TotalMemory,
		UnifiedAddressing: info.UnifiedAddressing,
		AsyncEngines:      info.AsyncEngineCount,
		L2CacheBytes:      info.L2CacheBytes,
	}
}
