package cuda

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// Driver is an initialised libcuda. Its device-level methods need no current
// context and may be called from any goroutine; everything else goes through
// the per-device Context.
type Driver struct {
	api *api

	closed atomic.Bool
	mu     sync.Mutex // guards ctxs; serialises Context creation with Close
	ctxs   map[int]*Context
	greens map[*Context]bool // contexts from Context.Green not yet destroyed
}

// Open loads the driver library (libcuda.so.1, or the file named by
// P2PBENCH_LIBCUDA), binds its entry points and calls cuInit(0).
//
// When the library cannot be loaded the error matches ErrNoLibrary and its
// text is one line saying what to do. When the library lacks an entry point
// p2pbench needs, the error names it and matches ErrUnavailable.
func Open() (*Driver, error) {
	a, err := loadAPI()
	if err != nil {
		return nil, err
	}
	d := &Driver{api: a, ctxs: make(map[int]*Context), greens: map[*Context]bool{}}
	if err := d.check(a.cuInit(0), "cuInit"); err != nil {
		return nil, fmt.Errorf("initialise the CUDA driver in %s: %w", d.Path(), err)
	}
	return d, nil
}

// Path returns the library that was loaded, as it was named to the loader.
func (d *Driver) Path() string { return d.api.lib.Path }

// check turns a CUresult into nil or an *Error for the named entry point,
// with the driver's own name and description of the code.
func (d *Driver) check(code Result, name string) error {
	if code == Success {
		return nil
	}
	e := NewError(code, d.api.lib.Symbol(name))
	e.Name, e.String = d.ErrorName(code)
	return e
}

// ErrorName returns the name (CUDA_ERROR_...) and the description of code, as
// cuGetErrorName and cuGetErrorString give them, falling back to NewError's
// table for codes or libraries that have none.
func (d *Driver) ErrorName(code Result) (name, desc string) {
	fallback := NewError(code, "")
	name, desc = fallback.Name, fallback.String
	var p *byte
	if d.api.cuGetErrorName != nil && d.api.cuGetErrorName(code, &p) == Success && p != nil {
		name = cString(p)
	}
	p = nil
	if d.api.cuGetErrorString != nil && d.api.cuGetErrorString(code, &p) == Success && p != nil {
		desc = cString(p)
	}
	return name, desc
}

// usable returns ErrClosed once the driver is closed.
func (d *Driver) usable() error {
	if d.closed.Load() {
		return ErrClosed
	}
	return nil
}

// DriverVersion returns cuDriverGetVersion: 1000×major + 10×minor, for
// example 13000 for CUDA 13.0. See CUDAVersionString.
func (d *Driver) DriverVersion() (int, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	var v int32
	if err := d.check(d.api.cuDriverGetVersion(&v), "cuDriverGetVersion"); err != nil {
		return 0, err
	}
	return int(v), nil
}

// DeviceCount returns the number of devices the driver shows this process.
func (d *Driver) DeviceCount() (int, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	var n int32
	if err := d.check(d.api.cuDeviceGetCount(&n), "cuDeviceGetCount"); err != nil {
		return 0, err
	}
	return int(n), nil
}

// device returns the CUdevice of ordinal dev. Out-of-range ordinals are passed
// on as -1 so that the driver itself rejects them.
func (d *Driver) device(dev int) (int32, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	ord := int32(-1)
	if dev >= 0 && dev <= math.MaxInt32 {
		ord = int32(dev)
	}
	var cu int32
	if err := d.check(d.api.cuDeviceGet(&cu, ord), "cuDeviceGet"); err != nil {
		return 0, fmt.Errorf("device %d: %w", dev, err)
	}
	return cu, nil
}

// CUdevice_attribute values of cuda.h used by DeviceInfo.
const (
	attrClockRate                   = 13
	attrMultiprocessorCount         = 16
	attrMemoryClockRate             = 36
	attrGlobalMemoryBusWidth        = 37
	attrL2CacheSize                 = 38
	attrMaxThreadsPerMultiprocessor = 39
	attrAsyncEngineCount            = 40
	attrUnifiedAddressing           = 41
	attrComputeCapabilityMajor      = 75
	attrComputeCapabilityMinor      = 76
	attrVMMSupported                = 102
	attrPOSIXFDHandles              = 103
	attrIPCEventSupported           = 125
	attrFabricHandles               = 128 // CUDA 12.3
)

// DeviceInfo describes device dev: name, UUID, PCI bus id, memory and the
// attributes p2pbench records.
func (d *Driver) DeviceInfo(dev int) (DeviceInfo, error) {
	info := DeviceInfo{Index: dev}
	cu, err := d.device(dev)
	if err != nil {
		return info, err
	}
	wrap := func(err error) error { return fmt.Errorf("device %d: %w", dev, err) }

	name := make([]byte, 256)
	if err := d.check(d.api.cuDeviceGetName(&name[0], int32(len(name)), cu), "cuDeviceGetName"); err != nil {
		return info, wrap(err)
	}
	info.Name = bufString(name)

	var uuid [16]byte
	if err := d.check(d.api.cuDeviceGetUuid(&uuid, cu), "cuDeviceGetUuid"); err != nil {
		return info, wrap(err)
	}
	info.UUID = formatUUID(uuid)

	// cuda.h asks for at least 13 bytes ("0000:18:00.0" and a NUL); the
	// domain may be printed wider on some systems.
	bus := make([]byte, 64)
	if err := d.check(d.api.cuDeviceGetPCIBusId(&bus[0], int32(len(bus)), cu), "cuDeviceGetPCIBusId"); err != nil {
		return info, wrap(err)
	}
	info.PCIBusID = bufString(bus)

	if err := d.check(d.api.cuDeviceTotalMem(&info.TotalMemory, cu), "cuDeviceTotalMem"); err != nil {
		return info, wrap(err)
	}

	var unified, ipcEvents int
	attrs := []struct {
		attr int32
		dst  *int
	}{
		{attrComputeCapabilityMajor, &info.ComputeMajor},
		{attrComputeCapabilityMinor, &info.ComputeMinor},
		{attrMultiprocessorCount, &info.SMCount},
		{attrUnifiedAddressing, &unified},
		{attrAsyncEngineCount, &info.AsyncEngineCount},
		{attrL2CacheSize, &info.L2CacheBytes},
		{attrClockRate, &info.ClockKHz},
		{attrMemoryClockRate, &info.MemoryClockKHz},
		{attrGlobalMemoryBusWidth, &info.MemoryBusWidth},
		{attrIPCEventSupported, &ipcEvents},
		{attrMaxThreadsPerMultiprocessor, &info.MaxThreadsPerSM},
	}
	for _, a := range attrs {
		var v int32
		if err := d.check(d.api.cuDeviceGetAttribute(&v, a.attr, cu), "cuDeviceGetAttribute"); err != nil {
			return info, fmt.Errorf("device %d attribute %d: %w", dev, a.attr, err)
		}
		*a.dst = int(v)
	}
	info.UnifiedAddressing = unified != 0
	info.IPCEventSupported = ipcEvents != 0
	// Attributes newer than some drivers p2pbench runs on: an attribute the
	// driver does not know (INVALID_VALUE) means the feature is not there.
	for _, a := range []struct {
		attr int32
		dst  *bool
	}{
		{attrVMMSupported, &info.VMMSupported},
		{attrPOSIXFDHandles, &info.POSIXFDHandles},
		{attrFabricHandles, &info.FabricHandles},
	} {
		var v int32
		err := d.check(d.api.cuDeviceGetAttribute(&v, a.attr, cu), "cuDeviceGetAttribute")
		if err != nil && CodeOf(err) != ErrorInvalidValue {
			return info, fmt.Errorf("device %d attribute %d: %w", dev, a.attr, err)
		}
		*a.dst = err == nil && v != 0
	}
	return info, nil
}

// formatUUID writes a CUuuid the way nvidia-smi shows it.
func formatUUID(u [16]byte) string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// CanAccessPeer reports cuDeviceCanAccessPeer: whether contexts on dev can
// map memory of peer.
func (d *Driver) CanAccessPeer(dev, peer int) (bool, error) {
	a, err := d.device(dev)
	if err != nil {
		return false, err
	}
	b, err := d.device(peer)
	if err != nil {
		return false, err
	}
	var can int32
	if err := d.check(d.api.cuDeviceCanAccessPeer(&can, a, b), "cuDeviceCanAccessPeer"); err != nil {
		return false, fmt.Errorf("devices %d→%d: %w", dev, peer, err)
	}
	return can != 0, nil
}

// P2PAttribute returns cuDeviceGetP2PAttribute for the link src→dst. The
// driver answers ErrInvalidDevice when src and dst are the same device.
func (d *Driver) P2PAttribute(attr P2PAttribute, src, dst int) (int, error) {
	a, err := d.device(src)
	if err != nil {
		return 0, err
	}
	b, err := d.device(dst)
	if err != nil {
		return 0, err
	}
	var v int32
	if err := d.check(d.api.cuDeviceGetP2PAttribute(&v, attr, a, b), "cuDeviceGetP2PAttribute"); err != nil {
		return 0, fmt.Errorf("devices %d→%d attribute %d: %w", src, dst, attr, err)
	}
	return int(v), nil
}

// P2PAtomicCapabilities returns, for each of ops, the bitmask of
// AtomicCap* flags the link src→dst supports natively
// (cuDeviceGetP2PAtomicCapabilities, CUDA 13). It returns an error matching
// ErrUnavailable when the driver lacks the entry point.
func (d *Driver) P2PAtomicCapabilities(ops []AtomicOperation, src, dst int) ([]uint32, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if d.api.cuDeviceGetP2PAtomicCapabilities == nil {
		return nil, fmt.Errorf("cuDeviceGetP2PAtomicCapabilities: %w", ErrUnavailable)
	}
	a, err := d.device(src)
	if err != nil {
		return nil, err
	}
	b, err := d.device(dst)
	if err != nil {
		return nil, err
	}
	caps := make([]uint32, len(ops))
	// An empty ops goes to the driver as NULL with count 0, which it rejects
	// with its own INVALID_VALUE.
	code := d.api.cuDeviceGetP2PAtomicCapabilities(first(caps), first(ops), uint32(len(ops)), a, b)
	if err := d.check(code, "cuDeviceGetP2PAtomicCapabilities"); err != nil {
		return nil, fmt.Errorf("devices %d→%d: %w", src, dst, err)
	}
	return caps, nil
}

// first returns a pointer to s[0], or nil for an empty slice.
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// Context returns device dev's primary context, retaining it and starting
// its thread on first use. Later calls return the same *Context.
func (d *Driver) Context(dev int) (*Context, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	if c, ok := d.ctxs[dev]; ok {
		return c, nil
	}
	cu, err := d.device(dev)
	if err != nil {
		return nil, err
	}
	var h uintptr
	if err := d.check(d.api.cuDevicePrimaryCtxRetain(&h, cu), "cuDevicePrimaryCtxRetain"); err != nil {
		return nil, fmt.Errorf("device %d: %w", dev, err)
	}
	c, err := startContext(d, dev, cu, h)
	if err != nil {
		// Not current anywhere (its thread has exited), so it can go.
		if rerr := d.check(d.api.cuDevicePrimaryCtxRelease(cu), "cuDevicePrimaryCtxRelease"); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	d.ctxs[dev] = c
	return c, nil
}

// Close stops every context's thread and releases the primary contexts it
// retained (cuDevicePrimaryCtxRelease_v2). Later calls on the driver and its
// contexts return ErrClosed. Close is safe to call more than once; only the
// first call does anything. It waits for calls in progress on the contexts,
// so it must not be called from inside Context.Do. The library stays
// loaded: the driver's own threads may still run code in it.
func (d *Driver) Close() error {
	// Take the contexts under the lock but stop them outside it: a job still
	// running on a context thread may itself be waiting for d.mu.
	d.mu.Lock()
	if d.closed.Swap(true) {
		d.mu.Unlock()
		return nil
	}
	ctxs := d.ctxs
	d.ctxs = nil
	greens := d.greens
	d.greens = nil
	d.mu.Unlock()

	var errs []error
	// Green contexts first: they live on the primary contexts' resources.
	for g := range greens {
		g.stop()
		if err := d.check(d.api.cuGreenCtxDestroy(g.green), "cuGreenCtxDestroy"); err != nil {
			errs = append(errs, fmt.Errorf("device %d: %w", g.dev, err))
		}
	}

	devs := make([]int, 0, len(ctxs))
	for dev := range ctxs {
		devs = append(devs, dev)
	}
	slices.Sort(devs)
	for _, dev := range devs {
		c := ctxs[dev]
		c.stop()
		// The context's thread has exited, so the context is current
		// nowhere and the last reference can go.
		if err := d.check(d.api.cuDevicePrimaryCtxRelease(c.cu), "cuDevicePrimaryCtxRelease"); err != nil {
			errs = append(errs, fmt.Errorf("device %d: %w", dev, err))
		}
	}
	return errors.Join(errs...)
}

// CUDAVersionString formats a cuDriverGetVersion value: 13000 -> "13.0",
// 12080 -> "12.8".
func CUDAVersionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
