// Package nvml reads the NVIDIA Management Library (libnvidia-ml.so.1) for
// what p2pbench records about a machine besides CUDA: the driver version,
// the NVLink links of each GPU and where they lead, clocks, temperature
// and power around a run, and the machine's health and hygiene (NVLink
// error counters, ECC counts, remapped rows, why clocks are held down, the
// processes using each GPU; health.go), each GPU's PCIe link (pcie.go), the
// multi-node NVLink domain it belongs to (fabric.go) and the board's serial,
// part number and firmware versions (identity.go).
//
// It loads the library at run time on the loader package cuda uses
// (internal/dl, purego underneath), so p2pbench needs no cgo, and imports
// nothing else of p2pbench but internal/busid. CUDA and NVML number devices differently;
// p2pbench matches them by PCI bus id (see DeviceByPCIBusID and
// busid.Normalize). Package gpu adapts it to the gpu.Monitor interface.
package nvml

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/p2pbench/p2pbench/internal/busid"
	"github.com/p2pbench/p2pbench/internal/dl"
)

// LibraryEnv names the environment variable that overrides the path of
// libnvidia-ml (tests point it at a fake).
const LibraryEnv = "P2PBENCH_LIBNVML"

// ErrNoLibrary is matched by the error of Open when libnvidia-ml.so.1
// cannot be loaded at all.
var ErrNoLibrary = errors.New("libnvidia-ml.so.1 could not be loaded")

// ErrUnavailable is matched by errors for an entry point this
// libnvidia-ml does not export.
var ErrUnavailable = errors.New("not available in this NVML")

// ErrClosed is returned by calls after NVML.Close.
var ErrClosed = errors.New("nvml: closed")

// Return is an nvmlReturn_t.
type Return int32

// The nvmlReturn_t codes p2pbench tells apart. Values are those of nvml.h.
const (
	Success               Return = 0
	ErrorUninitialized    Return = 1
	ErrorInvalidArgument  Return = 2
	ErrorNotSupported     Return = 3
	ErrorNoPermission     Return = 4
	ErrorNotFound         Return = 6
	ErrorInsufficientSize Return = 7
	ErrorGPUIsLost        Return = 15
	ErrorUnknown          Return = 999
)

// Error is a failed NVML call: its code, the library's description of it
// (nvmlErrorString) and the call.
type Error struct {
	Code    Return
	Message string // e.g. "Not Supported"
	Call    string // e.g. nvmlDeviceGetNvLinkState
}

// Error says which call failed, with NVML's code and description.
func (e *Error) Error() string {
	if e.Call == "" {
		return fmt.Sprintf("NVML error %d: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s: NVML error %d: %s", e.Call, e.Code, e.Message)
}

// Is makes errors.Is(err, nvml.ErrNotSupported) match on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is. They compare by code only.
var (
	ErrInvalidArgument = &Error{Code: ErrorInvalidArgument, Message: "invalid argument"}
	ErrNotSupported    = &Error{Code: ErrorNotSupported, Message: "not supported"}
	ErrNoPermission    = &Error{Code: ErrorNoPermission, Message: "no permission"}
	ErrNotFound        = &Error{Code: ErrorNotFound, Message: "not found"}
)

// api holds the entry points of libnvidia-ml as typed Go functions.
// nvmlDevice_t is an opaque pointer (uintptr); enums are int32.
type api struct {
	nvmlInit                         func() Return
	nvmlShutdown                     func() Return
	nvmlErrorString                  func(r Return) string
	nvmlSystemGetDriverVersion       func(buf *byte, length uint32) Return
	nvmlDeviceGetHandleByPciBusId    func(bus string, dev *uintptr) Return
	nvmlDeviceGetNvLinkState         func(dev uintptr, link uint32, active *int32) Return
	nvmlDeviceGetNvLinkVersion       func(dev uintptr, link uint32, version *uint32) Return
	nvmlDeviceGetNvLinkRemotePciInfo func(dev uintptr, link uint32, pci *pciInfo) Return
	nvmlDeviceGetFieldValues         func(dev uintptr, count int32, values *fieldValue) Return
	nvmlDeviceGetClockInfo           func(dev uintptr, clock int32, mhz *uint32) Return
	nvmlDeviceGetTemperature         func(dev uintptr, sensor int32, celsius *uint32) Return
	nvmlDeviceGetPowerUsage          func(dev uintptr, milliwatts *uint32) Return

	nvmlDeviceGetNvLinkErrorCounter        func(dev uintptr, link uint32, counter LinkErrorCounter, value *uint64) Return
	nvmlDeviceGetTotalEccErrors            func(dev uintptr, errorType MemoryErrorType, counterType ECCCounterType, count *uint64) Return
	nvmlDeviceGetRemappedRows              func(dev uintptr, corrRows, uncRows, isPending, failureOccurred *uint32) Return
	nvmlDeviceGetCurrentClocksEventReasons func(dev uintptr, reasons *uint64) Return
	nvmlDeviceGetComputeRunningProcesses   func(dev uintptr, count *uint32, infos *processInfo) Return

	nvmlDeviceGetCurrPcieLinkGeneration func(dev uintptr, gen *uint32) Return
	nvmlDeviceGetCurrPcieLinkWidth      func(dev uintptr, width *uint32) Return
	nvmlDeviceGetMaxPcieLinkGeneration  func(dev uintptr, gen *uint32) Return
	nvmlDeviceGetMaxPcieLinkWidth       func(dev uintptr, width *uint32) Return

	nvmlDeviceGetTopologyCommonAncestor func(a, b uintptr, level *int32) Return

	nvmlDeviceGetGpuFabricInfoV func(dev uintptr, info *fabricInfoV2) Return
	nvmlDeviceGetGpuFabricInfo  func(dev uintptr, info *fabricInfoV1) Return

	nvmlDeviceGetSerial              func(dev uintptr, buf *byte, length uint32) Return
	nvmlDeviceGetBoardPartNumber     func(dev uintptr, buf *byte, length uint32) Return
	nvmlDeviceGetVbiosVersion        func(dev uintptr, buf *byte, length uint32) Return
	nvmlDeviceGetInforomImageVersion func(dev uintptr, buf *byte, length uint32) Return

	lib *dl.Bound // the loaded library, for the symbol bound to each name
}

// library is libnvidia-ml as dl.Load finds it and speaks of it.
var library = dl.Library{
	Name:      "libnvidia-ml.so.1",
	Env:       LibraryEnv,
	About:     "the NVIDIA management library",
	NoLibrary: ErrNoLibrary,
	Missing:   ErrUnavailable,
}

// entries says how each api field is found in the library.
func (a *api) entries() []dl.Entry {
	return []dl.Entry{
		// nvml.h maps nvmlInit and the two below to their _v2 forms; the
		// first versions handle devices the process may not see differently.
		{Fn: &a.nvmlInit, Name: "nvmlInit", Symbols: []string{"nvmlInit_v2"}},
		{Fn: &a.nvmlShutdown, Name: "nvmlShutdown"},
		{Fn: &a.nvmlErrorString, Name: "nvmlErrorString"},
		{Fn: &a.nvmlSystemGetDriverVersion, Name: "nvmlSystemGetDriverVersion"},
		{Fn: &a.nvmlDeviceGetHandleByPciBusId, Name: "nvmlDeviceGetHandleByPciBusId", Symbols: []string{"nvmlDeviceGetHandleByPciBusId_v2"}},
		{Fn: &a.nvmlDeviceGetNvLinkState, Name: "nvmlDeviceGetNvLinkState"},
		{Fn: &a.nvmlDeviceGetNvLinkVersion, Name: "nvmlDeviceGetNvLinkVersion"},
		{Fn: &a.nvmlDeviceGetNvLinkRemotePciInfo, Name: "nvmlDeviceGetNvLinkRemotePciInfo", Symbols: []string{"nvmlDeviceGetNvLinkRemotePciInfo_v2"}},
		{Fn: &a.nvmlDeviceGetFieldValues, Name: "nvmlDeviceGetFieldValues", Optional: true},
		{Fn: &a.nvmlDeviceGetClockInfo, Name: "nvmlDeviceGetClockInfo"},
		// Deprecated in CUDA 13 (nvmlDeviceGetTemperatureV replaces it) and
		// due to go in CUDA 14: without it the temperature stays zero.
		{Fn: &a.nvmlDeviceGetTemperature, Name: "nvmlDeviceGetTemperature", Optional: true},
		{Fn: &a.nvmlDeviceGetPowerUsage, Name: "nvmlDeviceGetPowerUsage"},
		// Health and hygiene (health.go): all optional, as any of them may
		// be missing from an old or a future library.
		{Fn: &a.nvmlDeviceGetNvLinkErrorCounter, Name: "nvmlDeviceGetNvLinkErrorCounter", Optional: true},
		{Fn: &a.nvmlDeviceGetTotalEccErrors, Name: "nvmlDeviceGetTotalEccErrors", Optional: true},
		{Fn: &a.nvmlDeviceGetRemappedRows, Name: "nvmlDeviceGetRemappedRows", Optional: true},
		// The same call under its former name (deprecated in CUDA 13).
		{Fn: &a.nvmlDeviceGetCurrentClocksEventReasons, Name: "nvmlDeviceGetCurrentClocksEventReasons", Optional: true,
			Symbols: []string{"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}},
		// _v3 and _v2 fill nvmlProcessInfo_v2_t; the unversioned first
		// version fills a smaller struct and is not bound.
		{Fn: &a.nvmlDeviceGetComputeRunningProcesses, Name: "nvmlDeviceGetComputeRunningProcesses", Optional: true,
			Symbols: []string{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"}},
		// The PCIe link (pcie.go): optional too.
		{Fn: &a.nvmlDeviceGetCurrPcieLinkGeneration, Name: "nvmlDeviceGetCurrPcieLinkGeneration", Optional: true},
		{Fn: &a.nvmlDeviceGetCurrPcieLinkWidth, Name: "nvmlDeviceGetCurrPcieLinkWidth", Optional: true},
		{Fn: &a.nvmlDeviceGetMaxPcieLinkGeneration, Name: "nvmlDeviceGetMaxPcieLinkGeneration", Optional: true},
		{Fn: &a.nvmlDeviceGetMaxPcieLinkWidth, Name: "nvmlDeviceGetMaxPcieLinkWidth", Optional: true},
		{Fn: &a.nvmlDeviceGetTopologyCommonAncestor, Name: "nvmlDeviceGetTopologyCommonAncestor", Optional: true},
		// The NVLink domain of the GPU (fabric.go): optional, newer than
		// some drivers (the V form since CUDA 12.4, the other since 12.2).
		{Fn: &a.nvmlDeviceGetGpuFabricInfoV, Name: "nvmlDeviceGetGpuFabricInfoV", Optional: true},
		{Fn: &a.nvmlDeviceGetGpuFabricInfo, Name: "nvmlDeviceGetGpuFabricInfo", Optional: true},
		// The board's identity (identity.go): optional, as a machine is
		// measured without it.
		{Fn: &a.nvmlDeviceGetSerial, Name: "nvmlDeviceGetSerial", Optional: true},
		{Fn: &a.nvmlDeviceGetBoardPartNumber, Name: "nvmlDeviceGetBoardPartNumber", Optional: true},
		{Fn: &a.nvmlDeviceGetVbiosVersion, Name: "nvmlDeviceGetVbiosVersion", Optional: true},
		{Fn: &a.nvmlDeviceGetInforomImageVersion, Name: "nvmlDeviceGetInforomImageVersion", Optional: true},
	}
}

// NVML is an initialised libnvidia-ml. Its methods may be called from any
// goroutine.
type NVML struct {
	api    *api
	closed atomic.Bool
	// totals holds, per device handle, the links a reading of every link
	// found answering (int), once a reading of the totals over all links
	// has agreed to run; false where the driver has no such totals.
	totals sync.Map
}

// Open loads libnvidia-ml.so.1 (or the file named by P2PBENCH_LIBNVML),
// binds its entry points and calls nvmlInit_v2. When the library cannot be
// loaded the error matches ErrNoLibrary.
func Open() (*NVML, error) {
	a := &api{}
	lib, err := dl.Load(library, a.entries())
	if err != nil {
		return nil, err
	}
	a.lib = lib
	n := &NVML{api: a}
	if err := n.check(a.nvmlInit(), "nvmlInit"); err != nil {
		return nil, fmt.Errorf("initialise NVML from %s: %w", lib.Path, err)
	}
	return n, nil
}

// Path returns the library that was loaded, as it was named to the loader.
func (n *NVML) Path() string { return n.api.lib.Path }

// Close shuts NVML down (nvmlShutdown). Later calls return ErrClosed; Close
// itself is safe to call more than once.
func (n *NVML) Close() error {
	if n.closed.Swap(true) {
		return nil
	}
	return n.check(n.api.nvmlShutdown(), "nvmlShutdown")
}

// check turns an nvmlReturn_t into nil or an *Error for the named call.
func (n *NVML) check(r Return, name string) error {
	if r == Success {
		return nil
	}
	return &Error{Code: r, Message: n.api.nvmlErrorString(r), Call: n.api.lib.Symbol(name)}
}

func (n *NVML) usable() error {
	if n.closed.Load() {
		return ErrClosed
	}
	return nil
}

// DriverVersion returns the display driver version, such as "580.159.04"
// (nvmlSystemGetDriverVersion).
func (n *NVML) DriverVersion() (string, error) {
	if err := n.usable(); err != nil {
		return "", err
	}
	buf := make([]byte, 80) // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
	if err := n.check(n.api.nvmlSystemGetDriverVersion(&buf[0], uint32(len(buf))), "nvmlSystemGetDriverVersion"); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// Device is one GPU as NVML sees it.
type Device struct {
	n      *NVML
	handle uintptr
	// BusID is the PCI bus id the device was found by, normalized.
	BusID string
}

// DeviceByPCIBusID returns the device at PCI bus id bus
// (nvmlDeviceGetHandleByPciBusId_v2). Both CUDA's form ("0000:18:00.0") and
// NVML's ("00000000:18:00.0") are accepted.
func (n *NVML) DeviceByPCIBusID(bus string) (Device, error) {
	if err := n.usable(); err != nil {
		return Device{}, err
	}
	var h uintptr
	if err := n.check(n.api.nvmlDeviceGetHandleByPciBusId(bus, &h), "nvmlDeviceGetHandleByPciBusId"); err != nil {
		return Device{}, fmt.Errorf("PCI bus id %s: %w", bus, err)
	}
	return Device{n: n, handle: h, BusID: busid.Normalize(bus)}, nil
}

// usable returns an error for a Device that did not come from
// DeviceByPCIBusID or whose NVML is closed.
func (d Device) usable() error {
	if d.n == nil {
		return errors.New("nvml: Device was not returned by DeviceByPCIBusID")
	}
	return d.n.usable()
}

// cString returns the text of a NUL-padded buffer NVML filled.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
