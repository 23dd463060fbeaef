package cuda

import (
	"bytes"
	"slices"
	"unsafe"

	"github.com/p2pbench/p2pbench/internal/dl"
)

// LibraryEnv names the environment variable that overrides the path of the
// driver library (tests point it at a fake libcuda).
const LibraryEnv = "P2PBENCH_LIBCUDA"

// ipcHandle has the C layout of CUipcMemHandle and CUipcEventHandle
// (struct { char reserved[64]; }), which cuIpcOpenMemHandle_v2 and
// cuIpcOpenEventHandle take by value. purego passes a Go struct argument the
// way the platform ABI passes the C struct of the same layout: on x86-64 a
// 64-byte aggregate is of class MEMORY and is copied onto the stack, on
// AArch64 it is copied to memory and passed by reference. A plain [64]byte
// argument would not do: purego rejects arrays outside structs.
type ipcHandle struct {
	Reserved [64]byte
}

// api holds libcuda's entry points as typed Go functions. The types follow
// cuda.h: CUresult and enums are int32, CUdevice is int32, CUdeviceptr is
// uint64 (DevicePtr), size_t is uint64 (Linux is LP64), opaque handles are
// uintptr, and out-parameters are pointers.
type api struct {
	cuInit                           func(flags uint32) Result
	cuDriverGetVersion               func(version *int32) Result
	cuDeviceGetCount                 func(count *int32) Result
	cuDeviceGet                      func(dev *int32, ordinal int32) Result
	cuDeviceGetName                  func(name *byte, length int32, dev int32) Result
	cuDeviceGetUuid                  func(uuid *[16]byte, dev int32) Result
	cuDeviceGetPCIBusId              func(bus *byte, length int32, dev int32) Result
	cuDeviceTotalMem                 func(bytes *uint64, dev int32) Result
	cuDeviceGetAttribute             func(value *int32, attr int32, dev int32) Result
	cuDeviceCanAccessPeer            func(can *int32, dev, peer int32) Result
	cuDeviceGetP2PAttribute          func(value *int32, attr P2PAttribute, src, dst int32) Result
	cuDeviceGetP2PAtomicCapabilities func(caps *uint32, ops *AtomicOperation, count uint32, src, dst int32) Result

	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) Result
	cuDevicePrimaryCtxRelease func(dev int32) Result
	cuCtxSetCurrent           func(ctx uintptr) Result
	cuCtxGetDevice            func(dev *int32) Result
	cuCtxSynchronize          func() Result
	cuCtxEnablePeerAccess     func(peer uintptr, flags uint32) Result
	cuCtxDisablePeerAccess    func(peer uintptr) Result

	cuMemAlloc                func(p *DevicePtr, bytes uint64) Result
	cuMemFree                 func(p DevicePtr) Result
	cuMemGetInfo              func(free, total *uint64) Result
	cuMemHostAlloc            func(p *unsafe.Pointer, bytes uint64, flags uint32) Result
	cuMemHostGetDevicePointer func(d *DevicePtr, p unsafe.Pointer, flags uint32) Result
	cuMemFreeHost             func(p unsafe.Pointer) Result
	cuMemHostRegister         func(p unsafe.Pointer, bytes uint64, flags uint32) Result
	cuMemHostUnregister       func(p unsafe.Pointer) Result
	cuMemsetD32Async          func(p DevicePtr, value uint32, words uint64, s Stream) Result
	cuMemcpyHtoD              func(dst DevicePtr, src unsafe.Pointer, bytes uint64) Result
	cuMemcpyDtoH              func(dst unsafe.Pointer, src DevicePtr, bytes uint64) Result
	cuMemcpyPeer              func(dst DevicePtr, dstCtx uintptr, src DevicePtr, srcCtx uintptr, bytes uint64) Result

	cuModuleLoadDataEx  func(m *Module, image *byte, numOptions uint32, options *int32, values *uintptr) Result
	cuModuleUnload      func(m Module) Result
	cuModuleGetFunction func(f *Function, m Module, name string) Result
	cuFuncSetAttribute  func(f Function, attr int32, value int32) Result
	cuLaunchKernel      func(f Function, gx, gy, gz, bx, by, bz, sharedBytes uint32, s Stream, params, extra *uintptr) Result

	cuStreamCreate func(s *Stream, flags uint32) Result

	// Green contexts (CUDA 12.4): optional.
	cuDeviceGetDevResource    func(dev int32, res *devResource, typ int32) Result
	cuDevResourceGenerateDesc func(desc *uintptr, res *devResource, n uint32) Result
	cuGreenCtxCreate          func(g *uintptr, desc uintptr, dev int32, flags uint32) Result
	cuCtxFromGreenCtx         func(ctx *uintptr, g uintptr) Result
	cuGreenCtxDestroy         func(g uintptr) Result
	cuGreenCtxStreamCreate    func(s *Stream, g uintptr, flags uint32, priority int32) Result
	cuStreamDestroy           func(s Stream) Result
	cuStreamSynchronize       func(s Stream) Result
	cuStreamWaitEvent         func(s Stream, e Event, flags uint32) Result
	cuEventCreate             func(e *Event, flags uint32) Result
	cuEventDestroy            func(e Event) Result
	cuEventSynchronize        func(e Event) Result
	cuEventElapsedTime        func(ms *float32, start, end Event) Result

	cuIpcGetMemHandle    func(h *IpcMemHandle, p DevicePtr) Result
	cuIpcOpenMemHandle   func(p *DevicePtr, h ipcHandle, flags uint32) Result
	cuIpcCloseMemHandle  func(p DevicePtr) Result
	cuIpcGetEventHandle  func(h *IpcEventHandle, e Event) Result
	cuIpcOpenEventHandle func(e *Event, h ipcHandle) Result

	cuMemGetAllocationGranularity func(g *uint64, prop *allocationProp, option int32) Result
	cuMemCreate                   func(h *MemHandle, bytes uint64, prop *allocationProp, flags uint64) Result
	cuMemRelease                  func(h MemHandle) Result
	cuMemAddressReserve           func(p *DevicePtr, bytes, alignment uint64, addr DevicePtr, flags uint64) Result
	cuMemAddressFree              func(p DevicePtr, bytes uint64) Result
	cuMemMap                      func(p DevicePtr, bytes, offset uint64, h MemHandle, flags uint64) Result
	cuMemUnmap                    func(p DevicePtr, bytes uint64) Result
	cuMemSetAccess                func(p DevicePtr, bytes uint64, desc *accessDesc, count uint64) Result
	// The shareable handle is written through out: an int for a file
	// descriptor, 64 bytes for a fabric handle. osHandle is the descriptor's
	// value, or the address of the fabric handle.
	cuMemExportToShareableHandle   func(out unsafe.Pointer, h MemHandle, t MemHandleType, flags uint64) Result
	cuMemImportFromShareableHandle func(h *MemHandle, osHandle uintptr, t MemHandleType) Result

	cuGetErrorName   func(code Result, s **byte) Result
	cuGetErrorString func(code Result, s **byte) Result

	lib *dl.Bound // the loaded library, for the symbol bound to each name
	// The entry points a sample enqueues over and over, called by address
	// (dl.Entry.Raw, dl.Call): cuMemcpyAsync(dst, src, bytes, stream),
	// cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream),
	// cuEventRecord(event, stream).
	rawMemcpyAsync, rawMemcpyPeerAsync, rawEventRecord uintptr
}

// library is libcuda as dl.Load finds it and speaks of it.
var library = dl.Library{
	Name:      "libcuda.so.1",
	Env:       LibraryEnv,
	About:     "the NVIDIA driver library",
	NoLibrary: ErrNoLibrary,
	Missing:   ErrUnavailable,
}

// entries says how each api field is found in the library. Symbols are
// tried in order: first the one cuda.h maps the name to (the versioned
// symbol where there is one), then the legacy symbol only where its ABI is
// the same. cuMemAlloc, for instance, has a 32-bit size in its legacy form,
// so there is no fallback from cuMemAlloc_v2. Entry points that take an IPC
// handle by value are left unbound where purego cannot pass structs
// (ErrUnavailable when called).
func (a *api) entries() []dl.Entry {
	return slices.Concat(a.deviceEntries(), a.memoryEntries(), a.streamEntries(), a.sharingEntries())
}

// deviceEntries are the entries of the driver, its devices and their contexts.
func (a *api) deviceEntries() []dl.Entry {
	return []dl.Entry{
		{Fn: &a.cuInit, Name: "cuInit"},
		{Fn: &a.cuDriverGetVersion, Name: "cuDriverGetVersion"},
		{Fn: &a.cuDeviceGetCount, Name: "cuDeviceGetCount"},
		{Fn: &a.cuDeviceGet, Name: "cuDeviceGet"},
		{Fn: &a.cuDeviceGetName, Name: "cuDeviceGetName"},
		{Fn: &a.cuDeviceGetUuid, Name: "cuDeviceGetUuid", Symbols: []string{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}},
		{Fn: &a.cuDeviceGetPCIBusId, Name: "cuDeviceGetPCIBusId"},
		{Fn: &a.cuDeviceTotalMem, Name: "cuDeviceTotalMem", Symbols: []string{"cuDeviceTotalMem_v2"}},
		{Fn: &a.cuDeviceGetAttribute, Name: "cuDeviceGetAttribute"},
		{Fn: &a.cuDeviceCanAccessPeer, Name: "cuDeviceCanAccessPeer"},
		{Fn: &a.cuDeviceGetP2PAttribute, Name: "cuDeviceGetP2PAttribute"},
		{Fn: &a.cuDeviceGetP2PAtomicCapabilities, Name: "cuDeviceGetP2PAtomicCapabilities", Optional: true},

		{Fn: &a.cuDevicePrimaryCtxRetain, Name: "cuDevicePrimaryCtxRetain"},
		{Fn: &a.cuDevicePrimaryCtxRelease, Name: "cuDevicePrimaryCtxRelease", Symbols: []string{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}},
		{Fn: &a.cuCtxSetCurrent, Name: "cuCtxSetCurrent"},
		// CUDA 13 adds cuCtxGetDevice_v2(CUdevice*, CUcontext) with another
		// signature; cuda.h keeps cuCtxGetDevice unmapped.
		{Fn: &a.cuCtxGetDevice, Name: "cuCtxGetDevice"},
		{Fn: &a.cuCtxSynchronize, Name: "cuCtxSynchronize"},
		{Fn: &a.cuCtxEnablePeerAccess, Name: "cuCtxEnablePeerAccess"},
		{Fn: &a.cuCtxDisablePeerAccess, Name: "cuCtxDisablePeerAccess"},
	}
}

// memoryEntries are the entries of memory, copies and modules.
func (a *api) memoryEntries() []dl.Entry {
	return []dl.Entry{
		{Fn: &a.cuMemAlloc, Name: "cuMemAlloc", Symbols: []string{"cuMemAlloc_v2"}},
		{Fn: &a.cuMemFree, Name: "cuMemFree", Symbols: []string{"cuMemFree_v2"}},
		{Fn: &a.cuMemGetInfo, Name: "cuMemGetInfo", Symbols: []string{"cuMemGetInfo_v2"}},
		{Fn: &a.cuMemHostAlloc, Name: "cuMemHostAlloc"},
		{Fn: &a.cuMemHostGetDevicePointer, Name: "cuMemHostGetDevicePointer", Symbols: []string{"cuMemHostGetDevicePointer_v2"}},
		{Fn: &a.cuMemFreeHost, Name: "cuMemFreeHost"},
		// Optional: without them HostAlloc pins every region with cuMemHostAlloc.
		{Fn: &a.cuMemHostRegister, Name: "cuMemHostRegister", Symbols: []string{"cuMemHostRegister_v2"}, Optional: true},
		{Fn: &a.cuMemHostUnregister, Name: "cuMemHostUnregister", Optional: true},
		// The asynchronous memset and copies have no _v2: their first
		// versions already took 64-bit sizes and pointers.
		{Fn: &a.cuMemsetD32Async, Name: "cuMemsetD32Async"},
		{Fn: &a.cuMemcpyHtoD, Name: "cuMemcpyHtoD", Symbols: []string{"cuMemcpyHtoD_v2"}},
		{Fn: &a.cuMemcpyDtoH, Name: "cuMemcpyDtoH", Symbols: []string{"cuMemcpyDtoH_v2"}},
		{Raw: &a.rawMemcpyAsync, Name: "cuMemcpyAsync"},
		{Fn: &a.cuMemcpyPeer, Name: "cuMemcpyPeer"},
		{Raw: &a.rawMemcpyPeerAsync, Name: "cuMemcpyPeerAsync"},

		{Fn: &a.cuModuleLoadDataEx, Name: "cuModuleLoadDataEx"},
		{Fn: &a.cuModuleUnload, Name: "cuModuleUnload"},
		{Fn: &a.cuModuleGetFunction, Name: "cuModuleGetFunction"},
		{Fn: &a.cuFuncSetAttribute, Name: "cuFuncSetAttribute"},
		{Fn: &a.cuLaunchKernel, Name: "cuLaunchKernel"},
	}
}

// streamEntries are the entries of streams, green contexts and events.
func (a *api) streamEntries() []dl.Entry {
	return []dl.Entry{
		{Fn: &a.cuStreamCreate, Name: "cuStreamCreate"},
		{Fn: &a.cuDeviceGetDevResource, Name: "cuDeviceGetDevResource", Optional: true},
		{Fn: &a.cuDevResourceGenerateDesc, Name: "cuDevResourceGenerateDesc", Optional: true},
		{Fn: &a.cuGreenCtxCreate, Name: "cuGreenCtxCreate", Optional: true},
		{Fn: &a.cuCtxFromGreenCtx, Name: "cuCtxFromGreenCtx", Optional: true},
		{Fn: &a.cuGreenCtxDestroy, Name: "cuGreenCtxDestroy", Optional: true},
		{Fn: &a.cuGreenCtxStreamCreate, Name: "cuGreenCtxStreamCreate", Optional: true},
		{Fn: &a.cuStreamDestroy, Name: "cuStreamDestroy", Symbols: []string{"cuStreamDestroy_v2"}},
		{Fn: &a.cuStreamSynchronize, Name: "cuStreamSynchronize"},
		{Fn: &a.cuStreamWaitEvent, Name: "cuStreamWaitEvent"},
		{Fn: &a.cuEventCreate, Name: "cuEventCreate"},
		{Fn: &a.cuEventDestroy, Name: "cuEventDestroy", Symbols: []string{"cuEventDestroy_v2"}},
		{Raw: &a.rawEventRecord, Name: "cuEventRecord"},
		{Fn: &a.cuEventSynchronize, Name: "cuEventSynchronize"},
		{Fn: &a.cuEventElapsedTime, Name: "cuEventElapsedTime", Symbols: []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}},
	}
}

// sharingEntries are the entries of memory and events shared between processes (legacy IPC handles, VMM) and of the error names.
func (a *api) sharingEntries() []dl.Entry {
	return []dl.Entry{
		{Fn: &a.cuIpcGetMemHandle, Name: "cuIpcGetMemHandle"},
		{Fn: &a.cuIpcOpenMemHandle, Name: "cuIpcOpenMemHandle", Symbols: []string{"cuIpcOpenMemHandle_v2"}, ByValue: true},
		{Fn: &a.cuIpcCloseMemHandle, Name: "cuIpcCloseMemHandle"},
		{Fn: &a.cuIpcGetEventHandle, Name: "cuIpcGetEventHandle"},
		{Fn: &a.cuIpcOpenEventHandle, Name: "cuIpcOpenEventHandle", ByValue: true},

		// Virtual memory management (vmm.go), in every driver since CUDA 10.2.
		{Fn: &a.cuMemGetAllocationGranularity, Name: "cuMemGetAllocationGranularity"},
		{Fn: &a.cuMemCreate, Name: "cuMemCreate"},
		{Fn: &a.cuMemRelease, Name: "cuMemRelease"},
		{Fn: &a.cuMemAddressReserve, Name: "cuMemAddressReserve"},
		{Fn: &a.cuMemAddressFree, Name: "cuMemAddressFree"},
		{Fn: &a.cuMemMap, Name: "cuMemMap"},
		{Fn: &a.cuMemUnmap, Name: "cuMemUnmap"},
		{Fn: &a.cuMemSetAccess, Name: "cuMemSetAccess"},
		{Fn: &a.cuMemExportToShareableHandle, Name: "cuMemExportToShareableHandle"},
		{Fn: &a.cuMemImportFromShareableHandle, Name: "cuMemImportFromShareableHandle"},

		// Without these, errors are named from NewError's table.
		{Fn: &a.cuGetErrorName, Name: "cuGetErrorName", Optional: true},
		{Fn: &a.cuGetErrorString, Name: "cuGetErrorString", Optional: true},
	}
}

// loadAPI loads the driver library and binds every entry point. A missing
// required symbol is an error naming it that matches ErrUnavailable; a
// missing optional one leaves its field nil.
func loadAPI() (*api, error) {
	a := &api{}
	lib, err := dl.Load(library, a.entries())
	if err != nil {
		return nil, err
	}
	a.lib = lib
	return a, nil
}

// cString copies the NUL-terminated C string at p. The driver's error
// strings are static, so reading them needs no further care.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// bufString returns the text of a NUL-padded buffer the driver filled.
func bufString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
