// Package bench measures GPU-to-GPU links within one process: it discovers
// the topology (Discover), sorts the pairs into link classes (Classify),
// plans the selected tests over the devices and pairs (NewPlan: the
// matrices on every pair, in groups of pairs that share no device where the
// class's fabric should carry them at once and an interference check
// agrees; the other pair tests on each class's representatives, sampled
// peers on a large domain, or every pair; Preview prints it with an
// estimate, cost.go), and measures bandwidth (copy engine and SM kernels: between devices
// one way, both ways and in groups; between pinned host memory and the
// devices one way, both ways and every device at once), latency (pointer
// chase through device and host memory, ping-pong, small-copy completion)
// and atomics, with an optional search of the SM copy configurations
// (tuning), appending figures to a results.Run as they come. Each figure's
// samples are taken in rounds (Settings.Rounds): every round is a pass over
// the whole plan, and between rounds the devices renew what Settings.Renew
// names, so the rounds vary as separate runs do. Conformance checks the
// driver's documented peer-access errors.
//
// It imports cuda, gpu (the machine behind the Driver and Monitor
// interfaces, NVML among it), kernels, results, internal/busid (bus ids) and
// measure, where the devices' resources, timing, verification and
// peer bookkeeping live; the tests across processes are package ipc, its
// sibling on the same core. Nothing it exports serves the command line's
// parsing (see internal/units and results.ParseTests).
package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// Options are the settings of a measurement run: those shared with the
// runs across processes, and those of this engine alone.
type Options struct {
	measure.Settings
	// Sweep lists the sizes of the size sweep (empty: no sweep).
	Sweep []uint64
	// Tune makes the run search the SM copy configurations first (bw --tune).
	Tune bool
	// WarmUp is how long every device is kept busy before the first
	// measurement, so clocks have left their idle state (0: no warm-up).
	WarmUp time.Duration
	// AfterWarmUp, when set, is called once the warm-up is over (the CLI
	// reads the clocks there).
	AfterWarmUp func()
	// Trace, when set, is told how long setup and each step took.
	Trace func(step string, took time.Duration)
	// Plan chooses the pairs measured in detail (see NewPlan).
	Plan PlanOptions
}

// Engine runs tests on a driver and appends what it measures to a results.Run.
type Engine struct {
	drv   gpu.Driver
	opt   Options
	timer measure.Timer
	peers *measure.Peers
	seeds *measure.Seeds
	devs  map[int]*measure.Device
	order []int
	// sched is the run's plan: its link classes and detail pairs;
	// linkGBps and hostLinkGBps the theoretical bandwidths its estimate
	// reads (cost.go), of each pair and of a device's PCIe link.
	sched        *results.Plan
	linkGBps     map[results.PairID]float64
	hostLinkGBps float64

	// hostRegions are the pinned buffers of the host tests, pinned from
	// setup on (startPinning); hostSM is their SM copy configuration
	// (hostSMConfig).
	hostRegions []hostRegion
	// chaseKept are the chases' own allocations beyond L2, kept to the end
	// of the run (Engine.chase), freed by teardown.
	chaseKept []keptAlloc
	// pinning delivers the regions being pinned since setup (startPinning).
	pinning chan pinned
	hostSM  measure.SMConfig

	mu   sync.Mutex
	run  *results.Run
	coll *measure.Collector
	// round is the round being measured (from 0), of rounds; timings holds
	// the timing each group of transfers calibrated in its first round, by
	// the key of its first figure, so that every round's samples are alike.
	round, rounds int
	timings       map[string]measure.Timing
	// checked holds the families whose method check was taken, and
	// checkWindowMs the length of their plain windows (check.go).
	checked       map[string]bool
	checkWindowMs map[string]float64
	// notes collects problems that do not belong to one figure.
	notes []string
	// traffic reads NVLink counters around figures (nil: none).
	traffic *measure.Meter
}

// NewEngine prepares an engine; nothing is allocated until Run.
func NewEngine(drv gpu.Driver, opt Options) *Engine {
	opt.SetDefaults()
	e := &Engine{drv: drv, opt: opt, timer: measure.Timer{LatchTimeout: opt.LatchTimeout}, peers: measure.NewPeers(),
		seeds: measure.NewSeeds(0x5eed), devs: map[int]*measure.Device{}, rounds: opt.Rounds, timings: map[string]measure.Timing{},
		checked: map[string]bool{}, checkWindowMs: map[string]float64{}}
	e.traffic = measure.NewMeter(opt.Monitor, e.busID, e.note)
	return e
}

// buses maps each selected device to its PCI bus id, for the watch (none
// without one).
func (e *Engine) buses() (map[int]string, error) {
	if e.opt.Watch == nil {
		return nil, nil
	}
	out := map[int]string{}
	for _, d := range e.opt.Devices {
		info, err := e.drv.DeviceInfo(d)
		if err != nil {
			return nil, fmt.Errorf("describing device %d: %w", d, err)
		}
		out[d] = info.PCIBusID
	}
	return out, nil
}

// busID is the PCI bus id of an open device ("" for one not open).
func (e *Engine) busID(dev int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if dv := e.devs[dev]; dv != nil {
		return dv.Info.PCIBusID
	}
	return ""
}

// Notes returns the problems seen that belong to no single figure.
func (e *Engine) Notes() []string { return append([]string(nil), e.notes...) }

func (e *Engine) note(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := results.ClipText(fmt.Sprintf(format, args...)); !slices.Contains(e.notes, n) {
		e.notes = append(e.notes, n) // a note said once (the plan is laid out for the estimate and again to run)
	}
}

// add records a figure of the current round.
func (e *Engine) add(f results.Figure) { e.coll.Add(f, e.round) }

// addResult records figures measured together: as they are, or failed
// with err; nothing when the run was cancelled.
func (e *Engine) addResult(err error, figs ...results.Figure) {
	for _, f := range figs {
		switch {
		case err == nil:
			e.add(f)
		case !errors.Is(err, context.Canceled):
			e.add(measure.Fail(f, err))
		}
	}
}

// share is this round's part of n samples.
func (e *Engine) share(n int) int { return results.SplitSamples(n, e.rounds)[e.round] }

// verifying says whether this round verifies the data it moves: the first
// does, once for every test and pair, as Settings.Verify promises.
func (e *Engine) verifying() bool { return e.opt.Verify && e.round == 0 }

// Run measures every selected test and appends the figures to run as they
// come, so an error or a cancelled ctx leaves everything measured so far in
// run. It returns ctx.Err() when cancelled, and the *measure.BusyError of
// the settings' Watch when another program is on the GPUs before measuring
// or after a test and busy GPUs are not allowed; failures of single tests
// and pairs are recorded in the figures, not returned.
func (e *Engine) Run(ctx context.Context, run *results.Run) (err error) {
	e.run, e.coll = run, measure.NewCollector(run)
	defer func() {
		if cerr := e.teardown(); cerr != nil && err == nil {
			e.note("cleanup: %v", cerr)
		}
	}()
	buses, err := e.buses()
	if err != nil {
		return err
	}
	// Before any context of this run exists on the GPUs.
	if err := e.opt.Watch.Check(run, buses, nil, nil); err != nil {
		return err
	}
	t0 := time.Now()
	if err := e.setup(ctx); err != nil {
		return err
	}
	e.trace("setup", t0)
	e.schedule(run)
	e.startPinning()
	t0 = time.Now()
	if err := measure.WarmUp(e.devices(), e.opt.WarmUp); err != nil {
		e.note("warm-up: %v", err)
	}
	e.trace("warm-up", t0)
	if e.opt.AfterWarmUp != nil {
		e.opt.AfterWarmUp()
	}
	var infos []cuda.DeviceInfo
	for _, dv := range e.devices() {
		infos = append(infos, dv.Info)
	}
	e.hostSM = hostSMConfig(e.opt.Settings, infos)
	e.opt.ResolveSM(infos)
	once := append(e.tuneSteps(), e.interferenceSteps()...)
	// The plan's groups follow the interference check's verdicts: the
	// rounds' steps are planned once it has run.
	var planned []measure.Step
	loop := measure.Loop{
		Rounds: e.rounds,
		SetRound: func(round int) {
			e.round = round
			if planned == nil {
				planned = measureSteps(e.plan())
			}
			// Each round's NVLink error rates start with a reading.
			e.opt.Watch.Round(run, buses, round+1)
		},
		Renew: func(int) { e.renew() },
		// Each step starts its counter windows afresh (measure.Meter).
		BeforeStep: e.traffic.Invalidate,
		Progress:   e.opt.Progress,
		Trace:      e.opt.Trace,
	}
	if e.opt.Watch != nil {
		loop.AfterStep = func() error { return e.opt.Watch.Check(run, buses, nil, e.coll.Grown()) }
	}
	err = loop.Run(ctx, measureSteps(once), func() []measure.Step {
		if planned != nil {
			return planned
		}
		return measureSteps(e.plan())
	})
	e.opt.Watch.Round(run, buses, 0)
	e.judgeChecks()
	if n, d := e.traffic.Spent(); n > 0 && e.opt.Trace != nil {
		e.opt.Trace(fmt.Sprintf("NVLink counter readings, %d of them (within the steps above)", n), d)
	}
	return err
}

// schedule plans the run from its topology (where the caller did not
// discover it, from what the driver says of the pairs) and records the
// plan in run.
func (e *Engine) schedule(run *results.Run) {
	topo := run.Topology
	if topo == nil {
		topo = &results.Topology{Devices: e.order, Pairs: readPairs(e.drv, e.order, nil)}
	}
	e.sched = NewPlan(topo, e.opt.Plan)
	run.Plan = e.sched
	e.note("plan: %s", PlanText(e.sched, len(topo.Pairs)))
	e.sampledHostNote()
	e.linkGBps = map[results.PairID]float64{}
	for _, p := range topo.Pairs {
		e.linkGBps[results.PairID{p.Src, p.Dst}] = p.LinkGBps
	}
	for _, d := range run.Environment.Devices {
		if d.PCIe != nil {
			e.hostLinkGBps = d.PCIe.GBps()
		}
	}
}

// renew makes afresh, on every device, what the settings renew between
// rounds; what fails goes to the notes, and the round goes on with what
// there is.
func (e *Engine) renew() {
	if e.opt.Renew == 0 {
		return
	}
	for _, dv := range e.devices() {
		if err := dv.Renew(e.opt.Renew, e.round); err != nil {
			e.note("round %d: renewing %s: %v", e.round+1, e.opt.Renew, err)
		}
	}
}

// measureSteps are steps as the round loop takes them.
func measureSteps(steps []step) []measure.Step {
	out := make([]measure.Step, len(steps))
	for i, st := range steps {
		out[i] = measure.Step{Name: st.name, Run: st.run}
	}
	return out
}

func (e *Engine) trace(step string, since time.Time) {
	if e.opt.Trace != nil {
		e.opt.Trace(step, time.Since(since))
	}
}

// setup opens each device with its buffers.
func (e *Engine) setup(ctx context.Context) error {
	need, err := e.bufferBytes()
	if err != nil {
		return err
	}
	for _, d := range e.opt.Devices {
		if err := ctx.Err(); err != nil {
			return err
		}
		dv, err := measure.Open(e.drv, d, need)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.devs[d] = dv
		e.mu.Unlock()
		e.order = append(e.order, d)
	}
	return nil
}

// devices returns the open devices in the order of the selection.
func (e *Engine) devices() []*measure.Device {
	out := make([]*measure.Device, len(e.order))
	for i, d := range e.order {
		out[i] = e.devs[d]
	}
	return out
}

// bufferBytes is the size of each device's send and receive buffers: the
// largest transfer any selected test makes. A size the tests cannot move
// (measure.CheckTransferSize) is an error, before anything is allocated.
func (e *Engine) bufferBytes() (uint64, error) {
	if !e.needsBandwidthBuffers() {
		return 0, nil
	}
	n := e.opt.Size
	for _, s := range append([]uint64{n}, e.opt.Sweep...) {
		if err := measure.CheckTransferSize(s); err != nil {
			return 0, err
		}
		n = max(n, s)
	}
	return measure.BufferBytes(n), nil
}

func roundUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// teardown disables peer access and closes every device, whatever
// happened before.
func (e *Engine) teardown() error {
	errs := e.peers.ReleaseAll()
	for _, k := range e.chaseKept {
		if err := k.dv.Primary.MemFree(k.p); err != nil {
			errs = append(errs, fmt.Errorf("device %d: freeing a chase's memory: %w", k.dv.Index, err))
		}
	}
	e.chaseKept = nil
	for _, dv := range e.devices() {
		if err := dv.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, e.freeHostRegions()...)
	e.mu.Lock()
	e.devs = map[int]*measure.Device{}
	e.mu.Unlock()
	e.order = nil
	return errors.Join(errs...)
}

// keptAlloc is device memory a test keeps to the end of the run.
type keptAlloc struct {
	dv *measure.Device
	p  cuda.DevicePtr
}

// enablePair enables access both ways between a and b.
func (e *Engine) enablePair(a, b *measure.Device) error {
	return e.peers.EnableBoth(a.Primary, b.Primary)
}

func (e *Engine) releasePair(a, b *measure.Device) { e.peers.ReleaseBoth(a.Primary, b.Primary) }

// disableIdle disables every pair of peers that no measurement holds;
// failures go to the notes. Only the staged copies need it: peer access
// otherwise stays enabled between steps, as enabling it again maps every
// allocation of the peer anew (a step that enables and disables its pair
// takes several times its copies' time: docs/findings.md, "Behind the
// code"), and
// Peers.Enable disables the least recently used idle pair when the
// driver's limit of peers is reached.
func (e *Engine) disableIdle() {
	for _, err := range e.peers.DisableIdle() {
		e.note("%v", err)
	}
}
