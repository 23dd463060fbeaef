package cuda

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/p2pbench/p2pbench/internal/dl"
)

// LibraryEnv names the environment variable that overrides the path of the
// driver library (tests point it at a fake libcuda).
const LibraryEnv = "P2PBENCH_LIBCUDA"

// defaultLibrary is what the loader searches for when LibraryEnv is unset.
const defaultLibrary = "libcuda.so.1"

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
	cuMemsetD32Async          func(p DevicePtr, value uint32, words uint64, s Stream) Result
	cuMemcpyHtoD              func(dst DevicePtr, src unsafe.Pointer, bytes uint64) Result
	cuMemcpyDtoH              func(dst unsafe.Pointer, src DevicePtr, bytes uint64) Result
	cuMemcpyAsync             func(dst, src DevicePtr, bytes uint64, s Stream) Result
	cuMemcpyPeer              func(dst DevicePtr, dstCtx uintptr, src DevicePtr, srcCtx uintptr, bytes uint64) Result
	cuMemcpyPeerAsync         func(dst DevicePtr, dstCtx uintptr, src DevicePtr, srcCtx uintptr, bytes uint64, s Stream) Result

	cuModuleLoadDataEx  func(m *Module, image *byte, numOptions uint32, options *int32, values *uintptr) Result
	cuModuleUnload      func(m Module) Result
	cuModuleGetFunction func(f *Function, m Module, name string) Result
	cuFuncSetAttribute  func(f Function, attr int32, value int32) Result
	cuLaunchKernel      func(f Function, gx, gy, gz, bx, by, bz, sharedBytes uint32, s Stream, params, extra *uintptr) Result

	cuStreamCreate      func(s *Stream, flags uint32) Result
	cuStreamDestroy     func(s Stream) Result
	cuStreamSynchronize func(s Stream) Result
	cuStreamWaitEvent   func(s Stream, e Event, flags uint32) Result
	cuEventCreate       func(e *Event, flags uint32) Result
	cuEventDestroy      func(e Event) Result
	cuEventRecord       func(e Event, s Stream) Result
	cuEventSynchronize  func(e Event) Result
	cuEventElapsedTime  func(ms *float32, start, end Event) Result

	cuIpcGetMemHandle    func(h *IpcMemHandle, p DevicePtr) Result
	cuIpcOpenMemHandle   func(p *DevicePtr, h ipcHandle, flags uint32) Result
	cuIpcCloseMemHandle  func(p DevicePtr) Result
	cuIpcGetEventHandle  func(h *IpcEventHandle, e Event) Result
	cuIpcOpenEventHandle func(e *Event, h ipcHandle) Result

	cuGetErrorName   func(code Result, s **byte) Result
	cuGetErrorString func(code Result, s **byte) Result

	// resolved maps each API name (as the documentation spells it) to the
	// symbol actually bound, for error messages: cuMemAlloc -> cuMemAlloc_v2.
	resolved map[string]string
}

// binding describes how one api field is found in the library.
type binding struct {
	fn   any    // pointer to the api field
	name string // the documented API name
	// symbols are tried in order. The first is the one cuda.h maps name to
	// (the versioned symbol where there is one); the legacy symbol follows
	// only where its ABI is the same. cuMemAlloc, for instance, has a 32-bit
	// size in its legacy form, so there is no fallback from cuMemAlloc_v2.
	symbols  []string
	optional bool
	// byValue marks entry points that take a struct by value; they are left
	// unbound where purego cannot pass structs.
	byValue bool
}

func (a *api) bindings() []binding {
	b := func(fn any, name string, symbols ...string) binding {
		if len(symbols) == 0 {
			symbols = []string{name}
		}
		return binding{fn: fn, name: name, symbols: symbols}
	}
	optional := func(x binding) binding { x.optional = true; return x }
	byValue := func(x binding) binding { x.byValue = true; return x }
	return []binding{
		b(&a.cuInit, "cuInit"),
		b(&a.cuDriverGetVersion, "cuDriverGetVersion"),
		b(&a.cuDeviceGetCount, "cuDeviceGetCount"),
		b(&a.cuDeviceGet, "cuDeviceGet"),
		b(&a.cuDeviceGetName, "cuDeviceGetName"),
		b(&a.cuDeviceGetUuid, "cuDeviceGetUuid", "cuDeviceGetUuid_v2", "cuDeviceGetUuid"),
		b(&a.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId"),
		b(&a.cuDeviceTotalMem, "cuDeviceTotalMem", "cuDeviceTotalMem_v2"),
		b(&a.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
		b(&a.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer"),
		b(&a.cuDeviceGetP2PAttribute, "cuDeviceGetP2PAttribute"),
		optional(b(&a.cuDeviceGetP2PAtomicCapabilities, "cuDeviceGetP2PAtomicCapabilities")),

		b(&a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		b(&a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
		b(&a.cuCtxSetCurrent, "cuCtxSetCurrent"),
		// CUDA 13 adds cuCtxGetDevice_v2(CUdevice*, CUcontext) with another
		// signature; cuda.h keeps cuCtxGetDevice unmapped.
		b(&a.cuCtxGetDevice, "cuCtxGetDevice"),
		b(&a.cuCtxSynchronize, "cuCtxSynchronize"),
		b(&a.cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess"),
		b(&a.cuCtxDisablePeerAccess, "cuCtxDisablePeerAccess"),

		b(&a.cuMemAlloc, "cuMemAlloc", "cuMemAlloc_v2"),
		b(&a.cuMemFree, "cuMemFree", "cuMemFree_v2"),
		b(&a.cuMemGetInfo, "cuMemGetInfo", "cuMemGetInfo_v2"),
		b(&a.cuMemHostAlloc, "cuMemHostAlloc"),
		b(&a.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer", "cuMemHostGetDevicePointer_v2"),
		b(&a.cuMemFreeHost, "cuMemFreeHost"),
		// The asynchronous memset and copies have no _v2: their first
		// versions already took 64-bit sizes and pointers.
		b(&a.cuMemsetD32Async, "cuMemsetD32Async"),
		b(&a.cuMemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2"),
		b(&a.cuMemcpyDtoH, "cuMemcpyDtoH", "cuMemcpyDtoH_v2"),
		b(&a.cuMemcpyAsync, "cuMemcpyAsync"),
		b(&a.cuMemcpyPeer, "cuMemcpyPeer"),
		b(&a.cuMemcpyPeerAsync, "cuMemcpyPeerAsync"),

		b(&a.cuModuleLoadDataEx, "cuModuleLoadDataEx"),
		b(&a.cuModuleUnload, "cuModuleUnload"),
		b(&a.cuModuleGetFunction, "cuModuleGetFunction"),
		b(&a.cuFuncSetAttribute, "cuFuncSetAttribute"),
		b(&a.cuLaunchKernel, "cuLaunchKernel"),

		b(&a.cuStreamCreate, "cuStreamCreate"),
		b(&a.cuStreamDestroy, "cuStreamDestroy", "cuStreamDestroy_v2"),
		b(&a.cuStreamSynchronize, "cuStreamSynchronize"),
		b(&a.cuStreamWaitEvent, "cuStreamWaitEvent"),
		b(&a.cuEventCreate, "cuEventCreate"),
		b(&a.cuEventDestroy, "cuEventDestroy", "cuEventDestroy_v2"),
		b(&a.cuEventRecord, "cuEventRecord"),
		b(&a.cuEventSynchronize, "cuEventSynchronize"),
		b(&a.cuEventElapsedTime, "cuEventElapsedTime", "cuEventElapsedTime_v2", "cuEventElapsedTime"),

		b(&a.cuIpcGetMemHandle, "cuIpcGetMemHandle"),
		byValue(b(&a.cuIpcOpenMemHandle, "cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2")),
		b(&a.cuIpcCloseMemHandle, "cuIpcCloseMemHandle"),
		b(&a.cuIpcGetEventHandle, "cuIpcGetEventHandle"),
		byValue(b(&a.cuIpcOpenEventHandle, "cuIpcOpenEventHandle")),

		// Without these, errors are named from NewError's table.
		optional(b(&a.cuGetErrorName, "cuGetErrorName")),
		optional(b(&a.cuGetErrorString, "cuGetErrorString")),
	}
}

// libraryPath returns the library to load: LibraryEnv if set, else libcuda.so.1.
func libraryPath() string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return p
	}
	return defaultLibrary
}

// loadError is the failure to load the library at all. Its text is one line
// that says what to do; it matches ErrNoLibrary.
type loadError struct {
	path   string
	reason string // the loader's message
}

func (e *loadError) Error() string {
	return fmt.Sprintf("cannot load %s (the NVIDIA driver library): %s; install the NVIDIA driver or set %s to its path",
		e.path, e.reason, LibraryEnv)
}

func (e *loadError) Unwrap() error { return ErrNoLibrary }

// loadAPI opens the library at path and binds every entry point. A missing
// required symbol is an error naming it; a missing optional one leaves its
// field nil.
func loadAPI(path string) (*api, error) {
	lib, err := dl.Open(path)
	if err != nil {
		return nil, &loadError{path: path, reason: err.Error()}
	}
	a := &api{resolved: make(map[string]string)}
	var missing []string
	for _, b := range a.bindings() {
		if b.byValue && !dl.StructArgs {
			continue // reported as ErrUnavailable when called
		}
		sym := lib.Bind(b.fn, b.symbols...)
		if sym == "" {
			if !b.optional {
				missing = append(missing, strings.Join(b.symbols, " or "))
			}
			continue
		}
		a.resolved[b.name] = sym
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s lacks %s, which p2pbench needs (is the driver too old?): %w",
			path, strings.Join(missing, ", "), ErrUnavailable)
	}
	return a, nil
}

// symbol returns the symbol bound for the documented API name.
func (a *api) symbol(name string) string {
	if s, ok := a.resolved[name]; ok {
		return s
	}
	return name
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
