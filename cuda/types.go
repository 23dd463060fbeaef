package cuda

// DevicePtr is a CUdeviceptr: an address in the unified virtual address space.
type DevicePtr uint64

// IpcMemHandle is a CUipcMemHandle: 64 opaque bytes, passed by value.
type IpcMemHandle [64]byte

// IpcEventHandle is a CUipcEventHandle: 64 opaque bytes, passed by value.
type IpcEventHandle [64]byte

// P2PAttribute is a CUdevice_P2PAttribute.
type P2PAttribute int32

// The P2P attributes of cuda.h.
const (
	P2PPerformanceRank             P2PAttribute = 1
	P2PAccessSupported             P2PAttribute = 2
	P2PNativeAtomicSupported       P2PAttribute = 3
	P2PCudaArrayAccessSupported    P2PAttribute = 4
	P2POnlyPartialNativeAtomicSupp P2PAttribute = 5
)

// P2PAttributes lists every attribute with the name p2pbench reports it under.
var P2PAttributes = []struct {
	Attr P2PAttribute
	Name string
}{
	{P2PPerformanceRank, "performance_rank"},
	{P2PAccessSupported, "access_supported"},
	{P2PNativeAtomicSupported, "native_atomic_supported"},
	{P2PCudaArrayAccessSupported, "cuda_array_access_supported"},
	{P2POnlyPartialNativeAtomicSupp, "only_partial_native_atomic_supported"},
}

// AtomicOperation is a CUatomicOperation (CUDA 13).
type AtomicOperation int32

// The atomic operations of cuda.h (CUDA 13).
const (
	AtomicIntegerAdd       AtomicOperation = 0
	AtomicIntegerMin       AtomicOperation = 1
	AtomicIntegerMax       AtomicOperation = 2
	AtomicIntegerIncrement AtomicOperation = 3
	AtomicIntegerDecrement AtomicOperation = 4
	AtomicAnd              AtomicOperation = 5
	AtomicOr               AtomicOperation = 6
	AtomicXor              AtomicOperation = 7
	AtomicExchange         AtomicOperation = 8
	AtomicCAS              AtomicOperation = 9
	AtomicFloatAdd         AtomicOperation = 10
	AtomicFloatMin         AtomicOperation = 11
	AtomicFloatMax         AtomicOperation = 12
)

// AtomicOperations lists every operation with its report name.
var AtomicOperations = []struct {
	Op   AtomicOperation
	Name string
}{
	{AtomicIntegerAdd, "integer_add"},
	{AtomicIntegerMin, "integer_min"},
	{AtomicIntegerMax, "integer_max"},
	{AtomicIntegerIncrement, "integer_increment"},
	{AtomicIntegerDecrement, "integer_decrement"},
	{AtomicAnd, "and"},
	{AtomicOr, "or"},
	{AtomicXor, "xor"},
	{AtomicExchange, "exchange"},
	{AtomicCAS, "cas"},
	{AtomicFloatAdd, "float_add"},
	{AtomicFloatMin, "float_min"},
	{AtomicFloatMax, "float_max"},
}

// AtomicCapability flags (CUatomicOperationCapability), as a bitmask.
const (
	AtomicCapSigned     uint32 = 1 << 0
	AtomicCapUnsigned   uint32 = 1 << 1
	AtomicCapReduction  uint32 = 1 << 2
	AtomicCapScalar32   uint32 = 1 << 3
	AtomicCapScalar64   uint32 = 1 << 4
	AtomicCapScalar128  uint32 = 1 << 5
	AtomicCapVector32x4 uint32 = 1 << 6
)

// AtomicCapabilityNames decodes a capability bitmask into flag names.
func AtomicCapabilityNames(mask uint32) []string {
	names := []string{"signed", "unsigned", "reduction", "scalar32", "scalar64", "scalar128", "vector32x4"}
	var out []string
	for i, n := range names {
		if mask&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// DeviceInfo is what p2pbench records about one device.
type DeviceInfo struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	UUID              string `json:"uuid"`       // GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
	PCIBusID          string `json:"pci_bus_id"` // 0000:18:00.0
	ComputeMajor      int    `json:"cc_major"`
	ComputeMinor      int    `json:"cc_minor"`
	SMCount           int    `json:"sm_count"`
	TotalMemory       uint64 `json:"total_memory_bytes"`
	UnifiedAddressing bool   `json:"unified_addressing"`
	AsyncEngineCount  int    `json:"async_engine_count"`
	L2CacheBytes      int    `json:"l2_cache_bytes"`
	ClockKHz          int    `json:"clock_khz"`
	MemoryClockKHz    int    `json:"memory_clock_khz"`
	MemoryBusWidth    int    `json:"memory_bus_width_bits"`
	IPCEventSupported bool   `json:"ipc_event_supported"`
	MaxThreadsPerSM   int    `json:"max_threads_per_sm"`
	// VMMSupported: the virtual memory management calls (vmm.go) work on
	// the device; POSIXFDHandles and FabricHandles: its memory can be
	// exported as that handle type. False where the driver does not know
	// the attribute.
	VMMSupported   bool `json:"vmm_supported"`
	POSIXFDHandles bool `json:"posix_fd_handles"`
	FabricHandles  bool `json:"fabric_handles"`
}
