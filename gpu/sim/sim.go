package sim

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

var (
	_ gpu.Driver  = (*Driver)(nil)
	_ gpu.Context = (*devContext)(nil)
)

// Driver is a whole simulated machine behind the gpu.Driver interface.
// All state sits behind one mutex: contexts may be used from any goroutine.
type Driver struct {
	mu sync.Mutex
	m  *machine
	id uint32 // tells this instance's IPC handles from another's

	seed   int64
	faults []Fault
	// traffic holds the NVLink throughput counters (traffic.go).
	traffic traffic
	// ipcChild: the machine of an IPC child (AsIPCChild).
	ipcChild bool
	// born is the wall-clock time the machine was built: the Monitor's
	// readings are timed born + virtual time (Driver.now).
	born      time.Time
	peerLimit int // < 0: none
	sticky    bool
	grace     time.Duration
	closed    bool
	// hostWaiting, when set (by tests), is told when a synchronising call
	// starts its grace for the host: their signal to release a latch.
	hostWaiting chan<- struct{}

	ctxs []*devContext // by device; nil until Context is first called

	lastPlacement placementDraw // the latest copy's placement (placement)
	segBuf        []segment     // copySpan's list of segments

	sched
	mem addressSpace

	nextHandle uintptr
	streams    map[cuda.Stream]*stream
	events     map[cuda.Event]*event
	modules    map[cuda.Module]*module
	funcs      map[cuda.Function]*function

	memExports   map[uint64]*allocation // IPC tag → allocation
	eventExports map[uint64]*eventState // IPC tag → event
	vmm          vmmState
	nextSerial   uint64

	// version counts enqueued operations; a scheduler waiting for another
	// goroutine's work (a ping-pong partner) watches it without the lock.
	version atomic.Int64
	// load is each device's recent utilisation (0..1), for the Monitor's
	// power; heat the same over minutes (heatTau), for its temperature.
	load, heat []float64
	// busyNs is each device's virtual time with work running (corrected
	// link errors rise with it, health.go).
	busyNs []float64
	// hostCopied says a device's copy engine moved host memory since its
	// last peer access was enabled; coldPull how many of its next pulls pay
	// the model's firstPull (copy.go), coldPulls how many do after each
	// such enabling (1; WithColdPulls).
	hostCopied []bool
	coldPull   []int
	coldPulls  int
	// linkUsed is when a device (second) last started a pull from another
	// (first), for model.linkWake.
	linkUsed map[[2]int]linkUse
	// pullTurn counts each device's small pulls, whose fixed time
	// alternates (model.pullTurn, timing.go).
	pullTurn []int
	// health holds the injected health conditions (health.go).
	health health
}

// Option configures New.
type Option func(*Driver) error

// WithSeed sets the seed of the timing jitter (default 1). The same seed and
// the same calls give the same figures.
func WithSeed(seed int64) Option {
	return func(d *Driver) error { d.seed = seed; return nil }
}

// WithColdPulls makes the first n pulls a device issues after its peer
// access was enabled again following a host copy pay the cold cost the
// 2× H100 showed for the first one (model.firstPull): a machine where one
// untimed copy does not absorb it, for the tests of the run's method check.
func WithColdPulls(n int) Option {
	return func(d *Driver) error {
		if n < 0 {
			return fmt.Errorf("sim: %d cold pulls", n)
		}
		d.coldPulls = n
		return nil
	}
}

// AsIPCChild makes the machine an IPC child's: it hosts stand-ins of the
// child's peers and sees only the child's own copies, so the link's waking
// (model.linkWake), which follows the copies of every process on it, is
// not modelled there: between two of the child's windows its clock stands
// for its waits on the parent, not for an idle link. On the 2× H200 the
// copies across processes read what the same copies in one process read
// (ipc_ce_read 395.8 against 394 GB/s, docs/findings.md), where a wake paid
// by every window would take 3.5%.
func AsIPCChild() Option {
	return func(d *Driver) error { d.ipcChild = true; return nil }
}

// WithFault injects a failure (see FaultKind). Several may be given.
func WithFault(f Fault) Option {
	return func(d *Driver) error {
		if err := f.validate(d.m.n); err != nil {
			return err
		}
		d.faults = append(d.faults, f)
		return nil
	}
}

// WithPeerLimit makes EnablePeerAccess (and an IPC open that enables peer
// access) return CUDA_ERROR_TOO_MANY_PEERS once a context has n peers enabled.
func WithPeerLimit(n int) Option {
	return func(d *Driver) error {
		if n < 0 {
			return fmt.Errorf("sim: peer limit %d < 0", n)
		}
		d.peerLimit = n
		return nil
	}
}

// WithStickyErrors makes a failed kernel or copy poison its context as on a
// real GPU: every later call of that context returns the error. By default
// the simulator reports such an error once, at the next synchronising call,
// and the context stays usable.
func WithStickyErrors() Option {
	return func(d *Driver) error { d.sticky = true; return nil }
}

// WithLatchGrace sets how long, in real time, a synchronising call waits for
// another goroutine to release a latch (or launch a ping-pong partner) before
// the simulated kernel runs into its timeout. Default 10 ms; 0 times out at once.
func WithLatchGrace(g time.Duration) Option {
	return func(d *Driver) error { d.grace = g; return nil }
}

// instances numbers drivers, so an IPC handle of one simulated machine is
// INVALID_HANDLE to another in the same process (as handles of unrelated
// processes are).
var instances atomic.Uint32

// New builds the simulated machine named machine (see Machines).
func New(machine string, opts ...Option) (*Driver, error) {
	build, ok := machines[machine]
	if !ok {
		return nil, fmt.Errorf("sim: unknown machine %s (have %s)", results.QuoteShort(machine), strings.Join(Machines(), ", "))
	}
	m := build()
	d := &Driver{
		m:            m,
		born:         time.Now().UTC(),
		id:           instances.Add(1),
		seed:         1,
		peerLimit:    -1,
		grace:        10 * time.Millisecond,
		ctxs:         make([]*devContext, m.n),
		nextHandle:   0x5100,
		streams:      map[cuda.Stream]*stream{},
		events:       map[cuda.Event]*event{},
		modules:      map[cuda.Module]*module{},
		funcs:        map[cuda.Function]*function{},
		memExports:   map[uint64]*allocation{},
		eventExports: map[uint64]*eventState{},
		load:         make([]float64, m.n),
		heat:         make([]float64, m.n),
		busyNs:       make([]float64, m.n),
		hostCopied:   make([]bool, m.n),
		coldPull:     make([]int, m.n),
		pullTurn:     make([]int, m.n),
		coldPulls:    1,
		linkUsed:     map[[2]int]linkUse{},
	}
	d.traffic.n = m.n
	d.sched.init(d)
	d.mem.init(m.n)
	d.vmm.init()
	for _, o := range opts {
		if err := o(d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Machine returns the name of the simulated machine.
func (d *Driver) Machine() string { return d.m.name }

// Simulated reports true: figures from this driver are not measurements.
func (d *Driver) Simulated() bool { return true }

// Describe names the simulated machine.
func (d *Driver) Describe() string { return "simulated " + d.m.name + ": " + d.m.summary }

// handle returns a fresh non-zero handle value, unique across the driver.
func (d *Driver) handle() uintptr {
	d.nextHandle += 0x10
	return d.nextHandle
}

func (d *Driver) serial() uint64 {
	d.nextSerial++
	return d.nextSerial
}

// DriverVersion is cuDriverGetVersion: 13000 (CUDA 13.0, driver 580).
func (d *Driver) DriverVersion() (int, error) {
	return query(d, "cuDriverGetVersion", nil, func() (int, error) {
		return 13000, nil
	})
}

// DeviceCount is cuDeviceGetCount.
func (d *Driver) DeviceCount() (int, error) {
	return query(d, "cuDeviceGetCount", nil, func() (int, error) {
		return d.m.n, nil
	})
}

// DeviceInfo describes device dev as the real driver's attribute queries would.
func (d *Driver) DeviceInfo(dev int) (cuda.DeviceInfo, error) {
	return query(d, "cuDeviceGetAttribute", []int{dev}, func() (cuda.DeviceInfo, error) {
		g := d.m.gpu
		return cuda.DeviceInfo{
			Index:             dev,
			Name:              g.name,
			UUID:              d.m.uuid(dev),
			PCIBusID:          d.m.busIDs[dev],
			ComputeMajor:      g.ccMajor,
			ComputeMinor:      g.ccMinor,
			SMCount:           g.sms,
			TotalMemory:       g.memMiB << 20,
			UnifiedAddressing: true,
			AsyncEngineCount:  g.asyncEngines,
			L2CacheBytes:      g.l2Bytes,
			ClockKHz:          g.clockMHz * 1000,
			MemoryClockKHz:    g.memClockMHz * 1000,
			MemoryBusWidth:    g.busWidthBits,
			IPCEventSupported: true,
			MaxThreadsPerSM:   g.maxThreadsPerSM,
			VMMSupported:      true,
			POSIXFDHandles:    true,
		}, nil
	})
}

// Context returns device dev's primary context, created on first use.
func (d *Driver) Context(dev int) (gpu.Context, error) {
	return query(d, "cuDevicePrimaryCtxRetain", []int{dev}, func() (gpu.Context, error) {
		if c := d.ctxs[dev]; c != nil {
			return c, nil
		}
		c := newContext(d, dev)
		d.ctxs[dev] = c
		return c, nil
	})
}

// Close releases every context; later calls return CUDA_ERROR_DEINITIALIZED.
// Work still queued is dropped. Safe to call more than once.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	d.sched.drop()
	d.mem.drop()
	d.streams, d.events, d.modules, d.funcs = nil, nil, nil, nil
	d.memExports, d.eventExports = nil, nil
	for a := range d.vmm.live {
		a.freed = true
	}
	d.vmm = vmmState{}
	d.traffic.close()
	return nil
}

// asyncError is a failure of queued work, reported by a later synchronising
// call of the context that issued it (as the real driver does).
type asyncError struct {
	code   cuda.Result
	detail string
}

// report builds the error a call returns for the failure.
func (e *asyncError) report(call string) error {
	return fmt.Errorf("%w (simulated: %s)", cuda.NewError(e.code, call), e.detail)
}

func illegalAddress(format string, args ...any) *asyncError {
	return &asyncError{code: cuda.ErrorIllegalAddress, detail: fmt.Sprintf(format, args...)}
}

// errorMisaligned is CUDA_ERROR_MISALIGNED_ADDRESS (cuda.h), which the cuda
// package does not name.
const errorMisaligned cuda.Result = 716

func misaligned(format string, args ...any) *asyncError {
	return &asyncError{code: errorMisaligned, detail: fmt.Sprintf(format, args...)}
}

// deinitialized is the error of any call after Close: CUDA_ERROR_DEINITIALIZED,
// which also matches cuda.ErrClosed as the real binding's errors do.
func deinitialized(call string) error {
	return fmt.Errorf("%w (%w)", cuda.NewError(cuda.ErrorDeinitialized, call), cuda.ErrClosed)
}
