// Package cuda is p2pbench's binding to the CUDA driver API.
//
// It loads libcuda.so.1 at run time through github.com/ebitengine/purego,
// so p2pbench builds with CGO_ENABLED=0 and runs on any Linux machine with an
// NVIDIA driver, without the CUDA toolkit. Every CUresult becomes a typed
// *Error whose name and description come from the driver itself.
//
// A Driver answers device-level questions (versions, device attributes, peer
// capabilities) from any goroutine. Work that needs a current context goes
// through a Context: each device's primary context is bound to one locked OS
// thread, and every Context method runs its driver calls there, so callers
// never juggle cuCtxSetCurrent.
//
// The package knows nothing of benchmarks: package gpu adapts it to the
// gpu.Driver interface that measuring uses. It imports only internal/dl, the
// loader it shares with package nvml.
package cuda
