package cuda

import (
	"errors"
	"fmt"
)

// Result is a CUresult code as the driver returns it.
type Result int32

// The CUresult codes p2pbench names. Values are those of cuda.h.
const (
	Success                    Result = 0
	ErrorInvalidValue          Result = 1
	ErrorOutOfMemory           Result = 2
	ErrorNotInitialized        Result = 3
	ErrorDeinitialized         Result = 4
	ErrorNoDevice              Result = 100
	ErrorInvalidDevice         Result = 101
	ErrorInvalidPTX            Result = 218
	ErrorInvalidImage          Result = 200
	ErrorInvalidContext        Result = 201
	ErrorMapFailed             Result = 205
	ErrorNoBinaryForGPU        Result = 209
	ErrorInvalidHandle         Result = 400
	ErrorNotFound              Result = 500
	ErrorNotReady              Result = 600
	ErrorIllegalAddress        Result = 700
	ErrorLaunchOutOfResources  Result = 701
	ErrorLaunchTimeout         Result = 702
	ErrorPeerAccessAlreadyOn   Result = 704
	ErrorPeerAccessNotEnabled  Result = 705
	ErrorContextIsDestroyed    Result = 709
	ErrorLaunchFailed          Result = 719
	ErrorTooManyPeers          Result = 711
	ErrorPeerAccessUnsupported Result = 217
	ErrorNotPermitted          Result = 800
	ErrorNotSupported          Result = 801
	ErrorUnknown               Result = 999
)

// knownNames lets errors name themselves even when cuGetErrorName is not
// reachable (no driver, or the fake driver).
var knownNames = map[Result][2]string{
	Success:                    {"CUDA_SUCCESS", "no error"},
	ErrorInvalidValue:          {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	ErrorOutOfMemory:           {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	ErrorNotInitialized:        {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	ErrorDeinitialized:         {"CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
	ErrorNoDevice:              {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	ErrorInvalidDevice:         {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	ErrorInvalidPTX:            {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	ErrorInvalidImage:          {"CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	ErrorInvalidContext:        {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	ErrorMapFailed:             {"CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed"},
	ErrorNoBinaryForGPU:        {"CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
	ErrorInvalidHandle:         {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	ErrorNotFound:              {"CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	ErrorNotReady:              {"CUDA_ERROR_NOT_READY", "device not ready"},
	ErrorIllegalAddress:        {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	ErrorLaunchOutOfResources:  {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	ErrorLaunchTimeout:         {"CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
	ErrorPeerAccessAlreadyOn:   {"CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"},
	ErrorPeerAccessNotEnabled:  {"CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled"},
	ErrorContextIsDestroyed:    {"CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
	ErrorLaunchFailed:          {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
	ErrorTooManyPeers:          {"CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted"},
	ErrorPeerAccessUnsupported: {"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these devices"},
	ErrorNotPermitted:          {"CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
	ErrorNotSupported:          {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
	ErrorUnknown:               {"CUDA_ERROR_UNKNOWN", "unknown error"},
}

// Error is a failed driver call: the code, its name and its description,
// and the call that returned it.
type Error struct {
	Code   Result
	Name   string // e.g. CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
	String string // e.g. peer access is not supported between these devices
	Call   string // the driver entry point, e.g. cuCtxEnablePeerAccess
}

func (e *Error) Error() string {
	if e.Call != "" {
		return fmt.Sprintf("%s: %s: %s", e.Call, e.Name, e.String)
	}
	return fmt.Sprintf("%s: %s", e.Name, e.String)
}

// Is makes errors.Is(err, cuda.ErrTooManyPeers) match on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// NewError builds the error for code without asking the driver for names;
// names come from a built-in table, falling back to the number.
func NewError(code Result, call string) *Error {
	if n, ok := knownNames[code]; ok {
		return &Error{Code: code, Name: n[0], String: n[1], Call: call}
	}
	return &Error{Code: code, Name: fmt.Sprintf("CUDA_ERROR_%d", int32(code)), String: "unrecognised CUDA error code", Call: call}
}

// CodeOf returns the CUresult carried by err, or -1 when err is no CUDA error.
func CodeOf(err error) Result {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return -1
}

// NameOf returns the CUDA error name carried by err ("" when it has none).
func NameOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Name
	}
	return ""
}

// Sentinels for errors.Is. They compare by code only.
var (
	ErrInvalidValue          = NewError(ErrorInvalidValue, "")
	ErrOutOfMemory           = NewError(ErrorOutOfMemory, "")
	ErrNotInitialized        = NewError(ErrorNotInitialized, "")
	ErrDeinitialized         = NewError(ErrorDeinitialized, "")
	ErrInvalidDevice         = NewError(ErrorInvalidDevice, "")
	ErrInvalidContext        = NewError(ErrorInvalidContext, "")
	ErrMapFailed             = NewError(ErrorMapFailed, "")
	ErrInvalidHandle         = NewError(ErrorInvalidHandle, "")
	ErrPeerAccessAlreadyOn   = NewError(ErrorPeerAccessAlreadyOn, "")
	ErrPeerAccessNotEnabled  = NewError(ErrorPeerAccessNotEnabled, "")
	ErrTooManyPeers          = NewError(ErrorTooManyPeers, "")
	ErrPeerAccessUnsupported = NewError(ErrorPeerAccessUnsupported, "")
	ErrNotPermitted          = NewError(ErrorNotPermitted, "")
	ErrNotSupported          = NewError(ErrorNotSupported, "")
)

// ErrUnavailable is returned for a driver entry point this libcuda does not
// export (for example cuDeviceGetP2PAtomicCapabilities before CUDA 13).
var ErrUnavailable = errors.New("not available in this driver")

// ErrNoLibrary is returned when libcuda.so.1 cannot be loaded at all.
var ErrNoLibrary = errors.New("libcuda.so.1 could not be loaded")

// ErrClosed is returned by calls on a Driver or Context after Driver.Close.
var ErrClosed = errors.New("cuda: driver is closed")
