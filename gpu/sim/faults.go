package sim

import (
	"fmt"

	"github.com/p2pbench/p2pbench/cuda"
)

// FaultKind names a failure the simulator injects on request (WithFault), so
// tests can drive the engine's error paths.
type FaultKind int

const (
	// FaultCorrupt flips every bit of the 4-byte word at byte Offset (rounded
	// down to a word) of the data each copy delivers from Src's memory to
	// Dst's (devices, or HostMemory): copy-engine copies and SM copy kernels
	// alike, when the copy is longer than Offset+4 bytes.
	FaultCorrupt FaultKind = iota + 1
	// FaultError makes the pair's operations fail at the call with Code:
	// EnablePeerAccess from Src's context to Dst; copies, copy-engine or SM,
	// moving data from Src's memory to Dst's; the other kernels launched on
	// Src that touch Dst's memory (fill, check, atomics, chase, ping-pong).
	FaultError
	// FaultAsyncError makes the same work fail when it runs: the call
	// succeeds and the next synchronising call of the issuing context returns
	// Code, as the real driver reports a failed kernel or copy.
	FaultAsyncError
	// FaultLatchStuck makes latch kernels on device Src (AnyDevice: every
	// device) ignore their flag, so they always run into their timeout.
	FaultLatchStuck
	// FaultAtomicCount makes atomic kernels launched on Src on Dst's memory
	// lose one update: the element(s) they leave are off by one.
	FaultAtomicCount
	// FaultSlowLink makes data moving from Src's memory to Dst's memory
	// over their link (copy engine or SM, not staged through the host)
	// take 1/Scale of the link's capacity per payload byte, as on a link
	// that replays or trained on fewer lanes: alone on the link, such a
	// copy runs at Scale of its rate.
	FaultSlowLink
)

// AnyDevice in a Fault's Src or Dst matches every device; HostMemory names
// pinned host memory, which AnyDevice does not match, in the faults of
// work that moves data (FaultCorrupt, FaultError, FaultAsyncError).
const (
	AnyDevice  = -1
	HostMemory = -2
)

// Fault is one injected failure. Src and Dst name devices (or AnyDevice,
// or HostMemory);
// Offset is used by FaultCorrupt, Code by FaultError and FaultAsyncError,
// and Scale by FaultSlowLink.
type Fault struct {
	Kind     FaultKind
	Src, Dst int
	Offset   uint64
	Code     cuda.Result
	Scale    float64
}

func (k FaultKind) String() string {
	switch k {
	case FaultCorrupt:
		return "corrupt"
	case FaultError:
		return "error"
	case FaultAsyncError:
		return "async-error"
	case FaultLatchStuck:
		return "latch-stuck"
	case FaultAtomicCount:
		return "atomic-count"
	case FaultSlowLink:
		return "slow-link"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

func (f Fault) validate(devices int) error {
	if f.Kind < FaultCorrupt || f.Kind > FaultSlowLink {
		return fmt.Errorf("sim: unknown fault kind %d", int(f.Kind))
	}
	for _, d := range []int{f.Src, f.Dst} {
		if d == HostMemory && f.Kind != FaultCorrupt && f.Kind != FaultError && f.Kind != FaultAsyncError {
			return fmt.Errorf("sim: fault %v cannot name host memory", f.Kind)
		}
		if d != AnyDevice && d != HostMemory && (d < 0 || d >= devices) {
			return fmt.Errorf("sim: fault %v names device %d; the machine has %d", f.Kind, d, devices)
		}
	}
	if (f.Kind == FaultError || f.Kind == FaultAsyncError) && f.Code == cuda.Success {
		return fmt.Errorf("sim: fault %v needs a non-zero Code", f.Kind)
	}
	if f.Kind == FaultSlowLink && !(f.Scale > 0 && f.Scale < 1) {
		return fmt.Errorf("sim: fault %v needs a Scale above 0 and below 1 (got %v)", f.Kind, f.Scale)
	}
	return nil
}

// matches reports whether f is of kind and names src and dst (HostMemory
// for host memory).
func (f Fault) matches(kind FaultKind, src, dst int) bool {
	names := func(end, dev int) bool { return end == dev || (end == AnyDevice && dev >= 0) }
	return f.Kind == kind && names(f.Src, src) && names(f.Dst, dst)
}

// fault returns the first injected fault of kind on the pair (device -1:
// host memory), if any.
func (d *Driver) fault(kind FaultKind, src, dst int) (Fault, bool) {
	end := func(dev int) int {
		if dev < 0 {
			return HostMemory
		}
		return dev
	}
	for _, f := range d.faults {
		if f.matches(kind, end(src), end(dst)) {
			return f, true
		}
	}
	return Fault{}, false
}

// pairError is the error FaultError injects on the pair for call, or nil.
func (d *Driver) pairError(src, dst int, call string) error {
	if f, ok := d.fault(FaultError, src, dst); ok {
		return cuda.NewError(f.Code, call)
	}
	return nil
}

// pairAsyncError is the failure FaultAsyncError injects into work on the pair.
func (d *Driver) pairAsyncError(src, dst int) *asyncError {
	if f, ok := d.fault(FaultAsyncError, src, dst); ok {
		return &asyncError{code: f.Code, detail: fmt.Sprintf("injected fault on %d→%d", src, dst)}
	}
	return nil
}

// linkScale is the share of its rate that data from src's memory to dst's
// gets over their link: a FaultSlowLink's Scale, else 1.
func (d *Driver) linkScale(src, dst int) float64 {
	if f, ok := d.fault(FaultSlowLink, src, dst); ok {
		return f.Scale
	}
	return 1
}

// latchStuck reports whether latches on dev ignore their flag.
func (d *Driver) latchStuck(dev int) bool {
	for _, f := range d.faults {
		if f.Kind == FaultLatchStuck && (f.Src == AnyDevice || f.Src == dev) {
			return true
		}
	}
	return false
}
