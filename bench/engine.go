package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// Options are the settings of a measurement run.
type Options struct {
	Devices []int // selected device indices (already checked)
	Tests   []string
	// Size is the transfer size of the pairwise matrices.
	Size uint64
	// Sweep lists the sizes of the size sweep (empty: no sweep).
	Sweep []uint64
	// Samples per figure (default 20).
	Samples int
	// Verify checks the data of every test and pair once.
	Verify bool
	// LatchTimeout bounds how long a latch may hold a stream.
	LatchTimeout time.Duration
	// SMVariant is the SM copy kernel variant ("": the best for the devices);
	// BlocksPerSM and BlockSize its grid (0: the variant's default).
	SMVariant   string
	BlocksPerSM int
	BlockSize   int
	// Tuned holds tuned SM configurations per pair and direction (from a
	// --tune run); pairs not in it use SMVariant and its grid.
	Tuned map[TuneKey]SMConfig
	// Tune makes the run search the SM copy configurations first (bw --tune).
	Tune bool
	// Progress, when set, is told about each step.
	Progress func(done, total int, step string)
	// WarmUp is how long every device is kept busy before the first
	// measurement, so clocks have left their idle state (0: no warm-up).
	WarmUp time.Duration
	// AfterWarmUp, when set, is called once the warm-up is over (the CLI
	// reads the clocks there).
	AfterWarmUp func()
	// Trace, when set, is told how long setup and each step took.
	Trace func(step string, took time.Duration)
	// Monitor, when set, gives the NVLink counters that bandwidth figures
	// between two devices record (results.Figure.Traffic).
	Monitor gpu.Monitor
}

// DefaultSize is the transfer size of the pairwise matrices.
const DefaultSize = 512 << 20

func (o *Options) setDefaults() {
	if o.Samples <= 0 {
		o.Samples = 20
	}
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	if o.LatchTimeout <= 0 {
		o.LatchTimeout = 5 * time.Second
	}
}

// resolveSM fills the SM copy settings left open: the variant best suited to
// the devices (the lowest compute capability among them decides) and that
// variant's own grid.
func (e *Engine) resolveSM() {
	o := &e.opt
	if o.SMVariant == "" {
		cc := 0
		for _, d := range e.order {
			c := e.devs[d].info.ComputeMajor*10 + e.devs[d].info.ComputeMinor
			if cc == 0 || c < cc {
				cc = c
			}
		}
		o.SMVariant = kernels.CopyVariantFor(cc)
	}
	k, ok := kernels.CopyKernelByVariant(o.SMVariant)
	b, t := 2, 512
	if ok {
		b, t = k.DefaultGrid()
	}
	if o.BlocksPerSM <= 0 {
		o.BlocksPerSM = b
	}
	if o.BlockSize <= 0 {
		o.BlockSize = t
	}
}

// Engine runs tests on a driver and appends what it measures to a results.Run.
type Engine struct {
	drv   gpu.Driver
	opt   Options
	peers *Peers
	devs  map[int]*device
	order []int

	// host is the pinned buffer of h2d and d2h, allocated on first use.
	host      cuda.HostBuffer
	hostOwner *device

	mu   sync.Mutex
	run  *results.Run
	seed uint32 // the last verification seed handed out
	// notes collects problems that do not belong to one figure.
	notes []string
	// traffic reads NVLink counters around figures (nil: none).
	traffic *trafficMeter
}

// device is one GPU's resources for the run.
type device struct {
	idx  int
	ctx  gpu.Context
	info cuda.DeviceInfo
	mods map[string]cuda.Module
	fns  map[string]cuda.Function
	// latch is mapped pinned host memory: the flag at 0, the status at 64.
	latch cuda.HostBuffer
	// result holds {first_bad, bad_count} for the check kernel.
	result cuda.DevicePtr
	// send and recv are the bandwidth buffers (bufBytes each).
	send, recv cuda.DevicePtr
	bufBytes   uint64
	streams    []cuda.Stream
	events     []cuda.Event
	// scratch serves the latency and atomic tests; small holds flags,
	// statuses and timestamps.
	scratch      cuda.DevicePtr
	scratchBytes uint64
	small        cuda.DevicePtr
}

// NewEngine prepares an engine; nothing is allocated until Run.
func NewEngine(drv gpu.Driver, opt Options) *Engine {
	opt.setDefaults()
	e := &Engine{drv: drv, opt: opt, peers: NewPeers(), devs: map[int]*device{}, seed: 0x5eed}
	e.traffic = newTrafficMeter(opt.Monitor, e.busID, e.note)
	return e
}

// busID is the PCI bus id of an open device ("" for one not open).
func (e *Engine) busID(dev int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if dv := e.devs[dev]; dv != nil {
		return dv.info.PCIBusID
	}
	return ""
}

// Notes returns the problems seen that belong to no single figure.
func (e *Engine) Notes() []string { return append([]string(nil), e.notes...) }

func (e *Engine) note(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.notes = append(e.notes, fmt.Sprintf(format, args...))
}

// add appends a figure to the run, computing its statistics.
func (e *Engine) add(f results.Figure) {
	if len(f.Samples) > 0 {
		f.Samples = results.RoundSamples(f.Samples)
		f.Stats = results.ComputeStats(f.Samples)
	}
	if f.Verify == "" {
		f.Verify = results.VerifyNA
	}
	if f.Error != "" && f.Samples == nil {
		f.Stats = nil
	}
	e.mu.Lock()
	e.run.Figures = append(e.run.Figures, f)
	e.mu.Unlock()
}

// failFigure records a figure that could not be measured.
func failFigure(f results.Figure, err error) results.Figure {
	f.Error = err.Error()
	f.ErrorName = cuda.NameOf(err)
	f.Samples = nil
	f.Stats = nil
	if f.Verify == "" || f.Verify == results.VerifyPassed {
		f.Verify = results.VerifyNA
	}
	return f
}

// Run measures every selected test and appends the figures to run as they
// come, so an error or a cancelled ctx leaves everything measured so far in
// run. It returns ctx.Err() when cancelled; failures of single tests and pairs
// are recorded in the figures, not returned.
func (e *Engine) Run(ctx context.Context, run *results.Run) (err error) {
	e.run = run
	defer func() {
		if cerr := e.teardown(); cerr != nil && err == nil {
			e.note("cleanup: %v", cerr)
		}
	}()
	t0 := time.Now()
	if err := e.setup(ctx); err != nil {
		return err
	}
	e.trace("setup", t0)
	t0 = time.Now()
	if err := e.warmUp(); err != nil {
		e.note("warm-up: %v", err)
	}
	e.trace("warm-up", t0)
	if e.opt.AfterWarmUp != nil {
		e.opt.AfterWarmUp()
	}
	e.resolveSM()
	steps := e.plan()
	for i, st := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.opt.Progress != nil {
			e.opt.Progress(i, len(steps), st.name)
		}
		t0 := time.Now()
		st.run(ctx)
		e.trace(st.name, t0)
	}
	if e.opt.Progress != nil {
		e.opt.Progress(len(steps), len(steps), "done")
	}
	return ctx.Err()
}

func (e *Engine) trace(step string, since time.Time) {
	if e.opt.Trace != nil {
		e.opt.Trace(step, time.Since(since))
	}
}

// step is one unit of work of the plan (a test on one pair, say).
type step struct {
	name string
	run  func(ctx context.Context)
}

// setup opens each device's context, loads the modules and allocates the buffers.
func (e *Engine) setup(ctx context.Context) error {
	need := e.bufferBytes()
	for _, d := range e.opt.Devices {
		if err := ctx.Err(); err != nil {
			return err
		}
		dv, err := e.openDevice(d, need)
		if err != nil {
			return err
		}
		e.devs[d] = dv
		e.order = append(e.order, d)
	}
	return nil
}

// warmUp keeps every device busy for WarmUp at once (a latch kernel that is
// never released spins until its timeout), so that the first figures are
// not taken while the clocks climb out of idle.
func (e *Engine) warmUp() error {
	if e.opt.WarmUp <= 0 {
		return nil
	}
	for _, d := range e.order {
		dv := e.devs[d]
		f, err := dv.function(kernels.Latch)
		if err != nil {
			return err
		}
		armLatch(dv)
		status := uint64(dv.latch.Device) + latchStatusOffset
		args := kernels.LatchArgs{Flag: uint64(dv.latch.Device), Status: status, TimeoutNs: uint64(e.opt.WarmUp.Nanoseconds())}
		if err := dv.ctx.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, dv.streams[0], args.Params()...); err != nil {
			return fmt.Errorf("device %d: %w", d, err)
		}
	}
	var errs []error
	for _, d := range e.order {
		dv := e.devs[d]
		if err := dv.ctx.StreamSynchronize(dv.streams[0]); err != nil {
			errs = append(errs, fmt.Errorf("device %d: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// bufferBytes is the size of each device's send and receive buffers: the
// largest transfer any selected test makes.
func (e *Engine) bufferBytes() uint64 {
	if !e.needsBandwidthBuffers() {
		return 0
	}
	n := e.opt.Size
	for _, s := range e.opt.Sweep {
		if s > n {
			n = s
		}
	}
	return roundUp(n, 256)
}

func roundUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

func (e *Engine) openDevice(d int, bufBytes uint64) (*device, error) {
	info, err := e.drv.DeviceInfo(d)
	if err != nil {
		return nil, fmt.Errorf("device %d: %w", d, err)
	}
	c, err := e.drv.Context(d)
	if err != nil {
		return nil, fmt.Errorf("device %d: opening its primary context: %w", d, err)
	}
	dv := &device{idx: d, ctx: c, info: info, mods: map[string]cuda.Module{}, fns: map[string]cuda.Function{}}
	if bufBytes > 0 {
		free, _, err := c.MemGetInfo()
		if err != nil {
			return nil, fmt.Errorf("device %d: reading free memory: %w", d, err)
		}
		if 2*bufBytes+(64<<20) > free {
			return nil, fmt.Errorf("device %d: transfers of %s need 2 × %s of device memory, but only %s is free; choose a smaller --size/--sizes",
				d, FormatBytes(bufBytes), FormatBytes(bufBytes), FormatBytes(free))
		}
		if dv.send, err = c.MemAlloc(bufBytes); err != nil {
			return nil, fmt.Errorf("device %d: allocating %s: %w", d, FormatBytes(bufBytes), err)
		}
		if dv.recv, err = c.MemAlloc(bufBytes); err != nil {
			_ = c.MemFree(dv.send)
			return nil, fmt.Errorf("device %d: allocating %s: %w", d, FormatBytes(bufBytes), err)
		}
		dv.bufBytes = bufBytes
	}
	if dv.latch, err = c.HostAlloc(4096, true); err != nil {
		return nil, fmt.Errorf("device %d: allocating the latch flag in mapped host memory: %w", d, err)
	}
	if dv.result, err = c.MemAlloc(256); err != nil {
		return nil, fmt.Errorf("device %d: %w", d, err)
	}
	for i := 0; i < 2; i++ {
		s, err := c.StreamCreate()
		if err != nil {
			return nil, fmt.Errorf("device %d: creating a stream: %w", d, err)
		}
		dv.streams = append(dv.streams, s)
	}
	return dv, nil
}

// function loads (once per device) the module of k and returns its entry point.
func (dv *device) function(k kernels.Kernel) (cuda.Function, error) {
	if f, ok := dv.fns[k.Entry]; ok {
		return f, nil
	}
	cc := dv.info.ComputeMajor*10 + dv.info.ComputeMinor
	if k.MinCC > cc {
		return 0, fmt.Errorf("kernel %s needs compute capability %d.%d; device %d has %d.%d",
			k.Entry, k.MinCC/10, k.MinCC%10, dv.idx, dv.info.ComputeMajor, dv.info.ComputeMinor)
	}
	m, ok := dv.mods[k.Module]
	if !ok {
		ptx, err := kernels.PTX(k.Module)
		if err != nil {
			return 0, err
		}
		m, err = dv.ctx.LoadModule(ptx)
		if err != nil {
			return 0, fmt.Errorf("device %d: loading PTX module %s: %w", dv.idx, k.Module, err)
		}
		dv.mods[k.Module] = m
	}
	f, err := dv.ctx.Function(m, k.Entry)
	if err != nil {
		return 0, fmt.Errorf("device %d: kernel %s: %w", dv.idx, k.Entry, err)
	}
	dv.fns[k.Entry] = f
	return f, nil
}

// stream returns the device's i-th stream, creating more as needed.
func (dv *device) stream(i int) (cuda.Stream, error) {
	for len(dv.streams) <= i {
		s, err := dv.ctx.StreamCreate()
		if err != nil {
			return 0, err
		}
		dv.streams = append(dv.streams, s)
	}
	return dv.streams[i], nil
}

// event returns the device's i-th timing event, creating more as needed.
func (dv *device) event(i int) (cuda.Event, error) {
	for len(dv.events) <= i {
		ev, err := dv.ctx.EventCreate()
		if err != nil {
			return 0, err
		}
		dv.events = append(dv.events, ev)
	}
	return dv.events[i], nil
}

// teardown disables peer access, frees memory and destroys streams and events,
// whatever happened before.
func (e *Engine) teardown() error {
	var errs []error
	errs = append(errs, e.peers.ReleaseAll()...)
	for _, d := range e.order {
		dv := e.devs[d]
		c := dv.ctx
		// Let a held latch go, so synchronising cannot wait on it.
		releaseLatch(dv)
		if err := c.Synchronize(); err != nil {
			errs = append(errs, fmt.Errorf("device %d: %w", d, err))
		}
		for _, ev := range dv.events {
			_ = c.EventDestroy(ev)
		}
		for _, s := range dv.streams {
			_ = c.StreamDestroy(s)
		}
		for _, p := range []cuda.DevicePtr{dv.send, dv.recv, dv.result, dv.scratch, dv.small} {
			if p != 0 {
				if err := c.MemFree(p); err != nil {
					errs = append(errs, fmt.Errorf("device %d: freeing memory: %w", d, err))
				}
			}
		}
		if dv.latch.Host != nil {
			_ = c.HostFree(dv.latch)
		}
		for _, m := range dv.mods {
			_ = c.UnloadModule(m)
		}
	}
	if e.hostOwner != nil {
		if err := e.hostOwner.ctx.HostFree(e.host); err != nil {
			errs = append(errs, fmt.Errorf("freeing pinned host memory: %w", err))
		}
		e.host, e.hostOwner = cuda.HostBuffer{}, nil
	}
	e.devs = map[int]*device{}
	e.order = nil
	return errors.Join(errs...)
}
