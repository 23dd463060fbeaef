package nvml

import (
	"fmt"
	"math"
)

// What NVML says of a device's health: NVLink error counters, ECC error
// counts, remapped memory rows, why its clocks are held down, and the
// processes that hold a compute context on it. Each call binds an optional
// entry point: a library without it answers an error matching
// ErrUnavailable, and a device that does not support the query answers
// ErrNotSupported. Neither is a reason to stop measuring.

// LinkErrorCounter is an nvmlNvLinkErrorCounter_t: which error counter of
// an NVLink to read.
type LinkErrorCounter uint32

// The NVLink data-link error counters. Values are those of nvml.h.
const (
	// LinkReplay counts transmissions the link had to replay.
	LinkReplay LinkErrorCounter = 0
	// LinkRecovery counts times the link had to be retrained.
	LinkRecovery LinkErrorCounter = 1
	// LinkCRCFlit counts received flow-control units with a CRC error.
	LinkCRCFlit LinkErrorCounter = 2
	// LinkCRCData counts received data with a CRC error.
	LinkCRCData LinkErrorCounter = 3
	// LinkECCData counts received data with an ECC error (NVLink 4 and later).
	LinkECCData LinkErrorCounter = 4
)

// LinkErrorCounters are the counters p2pbench reads, in nvml.h's order.
var LinkErrorCounters = []LinkErrorCounter{LinkReplay, LinkRecovery, LinkCRCFlit, LinkCRCData, LinkECCData}

// LinkErrors reads one error counter of one NVLink
// (nvmlDeviceGetNvLinkErrorCounter). The counters run from the driver's
// start: an increase between two readings is what matters.
func (d Device) LinkErrors(link int, c LinkErrorCounter) (uint64, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	a := d.n.api
	if a.nvmlDeviceGetNvLinkErrorCounter == nil {
		return 0, d.unavailable("nvmlDeviceGetNvLinkErrorCounter")
	}
	var v uint64
	if err := d.n.check(a.nvmlDeviceGetNvLinkErrorCounter(d.handle, uint32(link), c, &v), "nvmlDeviceGetNvLinkErrorCounter"); err != nil {
		return 0, fmt.Errorf("%s link %d: %w", d.BusID, link, err)
	}
	return v, nil
}

// MemoryErrorType is an nvmlMemoryErrorType_t.
type MemoryErrorType int32

// ECC error types (nvml.h).
const (
	Corrected   MemoryErrorType = 0 // single-bit errors, fixed by ECC
	Uncorrected MemoryErrorType = 1 // double-bit errors, which ECC could not fix
)

// ECCCounterType is an nvmlEccCounterType_t.
type ECCCounterType int32

// ECC counter types (nvml.h).
const (
	// Volatile counts reset when the driver loads (on Linux without
	// persistence mode, whenever a first client starts).
	Volatile ECCCounterType = 0
	// Aggregate counts persist for the life of the device.
	Aggregate ECCCounterType = 1
)

// ECCErrors reads the device's total ECC error count of one type and
// counter (nvmlDeviceGetTotalEccErrors). Devices without ECC, or with ECC
// off, answer ErrNotSupported.
func (d Device) ECCErrors(t MemoryErrorType, c ECCCounterType) (uint64, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	a := d.n.api
	if a.nvmlDeviceGetTotalEccErrors == nil {
		return 0, d.unavailable("nvmlDeviceGetTotalEccErrors")
	}
	var v uint64
	if err := d.n.check(a.nvmlDeviceGetTotalEccErrors(d.handle, t, c, &v), "nvmlDeviceGetTotalEccErrors"); err != nil {
		return 0, fmt.Errorf("%s: %w", d.BusID, err)
	}
	return v, nil
}

// RemappedRows is the state of a device's memory row remapping (Ampere and
// later): rows remapped because of correctable and of uncorrectable errors,
// whether a remapping waits for a GPU reset, and whether one ever failed.
type RemappedRows struct {
	Correctable, Uncorrectable int
	Pending, Failed            bool
}

// RemappedRows reads the row remapping state (nvmlDeviceGetRemappedRows).
func (d Device) RemappedRows() (RemappedRows, error) {
	if err := d.usable(); err != nil {
		return RemappedRows{}, err
	}
	a := d.n.api
	if a.nvmlDeviceGetRemappedRows == nil {
		return RemappedRows{}, d.unavailable("nvmlDeviceGetRemappedRows")
	}
	var corr, unc, pending, failed uint32
	if err := d.n.check(a.nvmlDeviceGetRemappedRows(d.handle, &corr, &unc, &pending, &failed), "nvmlDeviceGetRemappedRows"); err != nil {
		return RemappedRows{}, fmt.Errorf("%s: %w", d.BusID, err)
	}
	return RemappedRows{Correctable: int(corr), Uncorrectable: int(unc), Pending: pending != 0, Failed: failed != 0}, nil
}

// ClocksEventReasons reads why the device's clocks are below their maximum
// now, as nvml.h's bitmask of nvmlClocksEventReason* values
// (nvmlDeviceGetCurrentClocksEventReasons, or the older
// nvmlDeviceGetCurrentClocksThrottleReasons, the same call by its former
// name). 0 means nothing holds the clocks down.
func (d Device) ClocksEventReasons() (uint64, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	a := d.n.api
	if a.nvmlDeviceGetCurrentClocksEventReasons == nil {
		return 0, d.unavailable("nvmlDeviceGetCurrentClocksEventReasons")
	}
	var mask uint64
	if err := d.n.check(a.nvmlDeviceGetCurrentClocksEventReasons(d.handle, &mask), "nvmlDeviceGetCurrentClocksEventReasons"); err != nil {
		return 0, fmt.Errorf("%s: %w", d.BusID, err)
	}
	return mask, nil
}

// Process is a process with a compute context on a device.
type Process struct {
	// PID is the process id as the driver knows it: in the host's pid
	// namespace, which is not the caller's inside a container.
	PID int
	// UsedBytes is the device memory the process uses; UsedKnown is false
	// where NVML does not say (NVML_VALUE_NOT_AVAILABLE).
	UsedBytes uint64
	UsedKnown bool
}

// nvmlProcessInfo_v2_t (= nvmlProcessInfo_t), which the _v2 and _v3 entry
// points fill: 24 bytes, 8-byte aligned. The MIG instance ids are
// 0xFFFFFFFF outside MIG mode.
type processInfo struct {
	PID               uint32
	UsedGPUMemory     uint64
	GPUInstanceID     uint32
	ComputeInstanceID uint32
}

// valueNotAvailable is NVML_VALUE_NOT_AVAILABLE for unsigned long long fields.
const valueNotAvailable = math.MaxUint64

// processTries bounds the retries when processes start between asking how
// many there are and listing them.
const processTries = 4

// ComputeProcesses lists the processes with a compute context on the
// device, the caller included when it has one
// (nvmlDeviceGetComputeRunningProcesses_v3, or _v2 on older drivers).
func (d Device) ComputeProcesses() ([]Process, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	a := d.n.api
	if a.nvmlDeviceGetComputeRunningProcesses == nil {
		return nil, d.unavailable("nvmlDeviceGetComputeRunningProcesses")
	}
	const call = "nvmlDeviceGetComputeRunningProcesses"
	var n uint32
	var infos []processInfo
	r := a.nvmlDeviceGetComputeRunningProcesses(d.handle, &n, nil)
	// INSUFFICIENT_SIZE says how many there are now; more may start before
	// the next call.
	for try := 0; r == ErrorInsufficientSize && try < processTries; try++ {
		infos = make([]processInfo, max(n, 1))
		n = uint32(len(infos))
		r = a.nvmlDeviceGetComputeRunningProcesses(d.handle, &n, &infos[0])
	}
	if err := d.n.check(r, call); err != nil {
		return nil, fmt.Errorf("%s: %w", d.BusID, err)
	}
	var out []Process
	for _, p := range infos[:min(int(n), len(infos))] {
		pr := Process{PID: int(p.PID), UsedBytes: p.UsedGPUMemory, UsedKnown: p.UsedGPUMemory != valueNotAvailable}
		if !pr.UsedKnown {
			pr.UsedBytes = 0
		}
		out = append(out, pr)
	}
	return out, nil
}

// unavailable is the error of an optional entry point this library lacks.
func (d Device) unavailable(call string) error {
	return fmt.Errorf("%s: %s: %w", d.BusID, call, ErrUnavailable)
}
