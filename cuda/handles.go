package cuda

// Opaque driver handles. Their zero value is "none".
type (
	Stream   uintptr // CUstream; 0 is the legacy default stream
	Event    uintptr // CUevent
	Module   uintptr // CUmodule
	Function uintptr // CUfunction
)

// HostBuffer is page-locked host memory from Context.HostAlloc.
type HostBuffer struct {
	// Host is the CPU view of the whole allocation.
	Host []byte
	// Device is the device-side address of mapped memory (cuMemHostGetDevicePointer),
	// 0 when the buffer was not allocated as mapped.
	Device DevicePtr
	// registered says the memory is the process's own mapping, pinned
	// with cuMemHostRegister (HostAlloc of large regions); HostFree then
	// unregisters and unmaps it.
	registered bool
}
