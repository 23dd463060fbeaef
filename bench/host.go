package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// The tests between pinned host memory and the devices: copies to and from
// one device (h2d, d2h and their SM twins), both ways at once on one
// device, every device at once (each way and both), and the pointer chase
// through host memory. Their copies go to and from regions of pinned,
// mapped, portable host memory of the transfer size, each its own
// allocation (as the suite's host buffers are): device k of the selection
// copies from region 2k and into region 2k+1 when every device copies at
// once; device by device, every device uses regions 0 and 1.

// hostWay says which way a host test copies: to the devices, from them, or both at once.
type hostWay int

const (
	toDevice hostWay = 1 << iota
	fromDevice
	bothWays = toDevice | fromDevice
)

// hostShape is how a host bandwidth test copies: which way, and whether
// every device copies at once (else one device at a time).
type hostShape struct {
	way hostWay
	all bool
}

// hostShapeOf is the host shape of a test, from its catalogue shape; ok is
// false for a test that does not copy between host memory and devices.
func hostShapeOf(t results.Test) (sh hostShape, ok bool) {
	shape := t.Info().Shape
	switch shape.Ends {
	case results.EndsHostToDevice:
		sh.way = toDevice
	case results.EndsDeviceToHost:
		sh.way = fromDevice
	case results.EndsHostBothWays:
		sh.way = bothWays
	default:
		return hostShape{}, false
	}
	sh.all = shape.AllDevices
	return sh, true
}

// hostTests are the tests between host memory and devices, in catalogue order.
func hostTests() []results.Test {
	var out []results.Test
	for _, info := range results.Catalogue() {
		if _, ok := hostShapeOf(info.Name); ok {
			out = append(out, info.Name)
		}
	}
	return out
}

// hostChaseBytes is the working set of lat_host_chase, the buffer the
// single-node suite's host_device_latency_sm chases through.
const hostChaseBytes = 2 << 20

// hostSMConfig is the SM copy configuration of the host tests: the variant
// the settings name, else the default register-path kernel. The bulk-copy
// path (the default on sm_90 for device memory) is left out on host memory:
// PCIe needs far fewer bytes in flight than any variant keeps, and its
// cp.async.bulk on mapped host memory has not been checked on hardware.
func hostSMConfig(s measure.Settings, devs []cuda.DeviceInfo) measure.SMConfig {
	if s.SM.Variant == "" {
		s.SM.Variant = kernels.DefaultCopyVariant
	}
	s.ResolveSM(devs)
	return s.SM
}

// hostSteps are the selected host bandwidth tests of devs, in catalogue
// order: those of one device (all false) or of every device at once; where
// names the devices for the steps' names.
func (e *Engine) hostSteps(all bool, devs []*measure.Device, where string) []step {
	var steps []step
	for _, info := range results.Catalogue() {
		if sh, ok := hostShapeOf(info.Name); ok && sh.all == all && e.opt.Selected(info.Name) {
			steps = append(steps, step{fmt.Sprintf("%s, %s", info.Name, where), func(ctx context.Context) { e.hostCopies(ctx, info.Name, devs) }, e.hostCost(sh.way == bothWays, heldOn(info.Name, len(devs)))})
		}
	}
	return steps
}

// sampledHostNote says, on a sampled plan that selected them, that the
// host copies of every device at once are left out.
func (e *Engine) sampledHostNote() {
	if e.sched.Mode != results.PlanSampled {
		return
	}
	for _, name := range hostTests() {
		if sh, _ := hostShapeOf(name); sh.all && e.opt.Selected(name) {
			e.note("plan: sampled, so no host copies of every device at once (a domain of %d GPUs spans several hosts); each device's own host copies are measured", len(e.order))
			return
		}
	}
}

// hostChaseSteps are the host memory chases, one per device.
func (e *Engine) hostChaseSteps() []step {
	if !e.opt.Selected(results.LatHostChase) {
		return nil
	}
	var steps []step
	for _, dv := range e.devices() {
		steps = append(steps, step{fmt.Sprintf("host memory chase from %d", dv.Index), func(ctx context.Context) { e.hostChase(ctx, dv) }, hostChaseCost})
	}
	return steps
}

// hostRegion is one region of host memory and the device whose context
// allocated it. Copies only read a region they copy from, so its pattern,
// once written (seed, over filled bytes), serves every later figure that
// verifies it: a region of its own seed still tells a copy from the wrong
// region, and the destination is poisoned for each figure.
type hostRegion struct {
	buf    cuda.HostBuffer
	owner  *measure.Device
	seed   uint32
	filled int
}

// hostSource returns the seed of the pattern in the host memory b, mapped
// at p (a source of flows), reads, writing it with a new seed from seeds
// unless the region b lies at the start of already holds one over b. dv
// writes it through p, as it poisons host destinations: the fill kernel
// over PCIe takes milliseconds where the CPU's pass over 512 MiB takes
// tenths of a second.
func (e *Engine) hostSource(b []byte, p cuda.DevicePtr, dv *measure.Device) (uint32, error) {
	for i := range e.hostRegions {
		r := &e.hostRegions[i]
		if len(b) > 0 && len(r.buf.Host) > 0 && &r.buf.Host[0] == &b[0] {
			if r.filled < len(b) {
				r.seed, r.filled = e.seeds.Next(), 0
				if err := dv.Fill(p, uint64(len(b)), r.seed); err != nil {
					return 0, err
				}
				r.filled = len(b)
			}
			return r.seed, nil
		}
	}
	seed := e.seeds.Next()
	return seed, dv.Fill(p, uint64(len(b)), seed)
}

// hostRegionsWanted is how many host regions the plan's host tests use:
// two per device when a test of every device at once is selected, else
// two (0 without host tests).
func (e *Engine) hostRegionsWanted() int {
	n := 0
	for _, name := range hostTests() {
		if !e.opt.Selected(name) {
			continue
		}
		n = max(n, 2)
		if sh, _ := hostShapeOf(name); sh.all && e.sched.Mode != results.PlanSampled {
			n = max(n, 2*len(e.order))
		}
	}
	return n
}

// HostRegionsFor is how many host regions of opt's transfer size a run of
// opt on devices would pin for its host tests (hostRegionsWanted, the plan
// made from the device count alone): what the caller may have faulted in
// ahead (cuda.PrefaultHost).
func HostRegionsFor(opt Options, devices []int) int {
	e := NewEngine(nil, opt)
	e.order = devices
	e.sched = NewPlan(&results.Topology{Devices: devices}, opt.Plan)
	return e.hostRegionsWanted()
}

// pinned is the outcome of pinning host regions: each region, or its error.
type pinned struct {
	regions []hostRegion
	errs    []error
}

// startPinning pins the host regions the plan's host tests will use, all
// at once and in the background, from setup on; hostRegion takes the
// outcome. Pinning takes the kernel tenths of a second a GiB, and a driver
// may hold the devices' other calls meanwhile, so it starts as early as it
// can (docs/findings.md, "Behind the code"); cuda.Context.HostAlloc faults
// large regions in on every CPU and registers them (cuda.HostRegisterMin).
func (e *Engine) startPinning() {
	n := e.hostRegionsWanted()
	if n == 0 || len(e.order) == 0 {
		return
	}
	owners := make([]*measure.Device, n)
	for k := range owners {
		owners[k] = e.devs[e.order[k%len(e.order)]]
	}
	done := make(chan pinned, 1)
	e.pinning = done
	go func() { done <- pinRegions(owners, e.opt.Size) }()
}

// pinRegions allocates one region of size bytes in each owner's context,
// all at once.
func pinRegions(owners []*measure.Device, size uint64) pinned {
	p := pinned{regions: make([]hostRegion, len(owners)), errs: make([]error, len(owners))}
	var wg sync.WaitGroup
	for k, owner := range owners {
		p.regions[k].owner = owner
		wg.Go(func() { p.regions[k].buf, p.errs[k] = owner.Primary.HostAlloc(size, true) })
	}
	wg.Wait()
	return p
}

// takePinned waits for the regions startPinning pins, if it pins any, and
// keeps them; if any failed, it frees the others and returns that error.
func (e *Engine) takePinned() error {
	if e.pinning == nil {
		return nil
	}
	p := <-e.pinning
	e.pinning = nil
	if err := errors.Join(p.errs...); err != nil {
		for k, r := range p.regions {
			if p.errs[k] == nil {
				_ = r.owner.Primary.HostFree(r.buf)
			}
		}
		return err
	}
	e.hostRegions = append(e.hostRegions, p.regions...)
	return nil
}

// hostRegion returns region r of host memory, of the transfer size: one
// of those startPinning pinned, or, where those are not enough or could
// not all be pinned, allocated here in dv's context (with those before
// it), one by one.
func (e *Engine) hostRegion(r int, dv *measure.Device) (cuda.HostBuffer, error) {
	_ = e.takePinned() // whatever failed there, what this test needs is tried alone below
	for len(e.hostRegions) <= r {
		h, err := dv.Primary.HostAlloc(e.opt.Size, true)
		if err != nil {
			return cuda.HostBuffer{}, fmt.Errorf("allocating %s of pinned host memory: %w", results.FormatBytes(e.opt.Size), err)
		}
		e.hostRegions = append(e.hostRegions, hostRegion{buf: h, owner: dv})
	}
	return e.hostRegions[r].buf, nil
}

// freeHostRegions frees the host regions, those still being pinned
// included, whatever happened before.
func (e *Engine) freeHostRegions() []error {
	_ = e.takePinned()
	var errs []error
	for _, r := range e.hostRegions {
		if err := r.owner.Primary.HostFree(r.buf); err != nil {
			errs = append(errs, fmt.Errorf("freeing pinned host memory: %w", err))
		}
	}
	e.hostRegions = nil
	return errs
}

// hostFlow is the flow of test on dv one way through host region r: into
// dv's receive buffer (toDevice), or out of its send buffer. Without the
// region (an error) it has its figure only.
func (e *Engine) hostFlow(test results.Test, dv *measure.Device, way hostWay, r int) (flow, error) {
	size := e.opt.Size
	fl := flow{fig: results.Figure{Test: test, Engine: results.EngineCopy, Src: results.HostDevice, Dst: dv.Index, Size: size, Unit: results.UnitGBps},
		issuer: dv, dst: dv, dstPtr: dv.Recv, size: size}
	if way == fromDevice {
		fl.fig.Src, fl.fig.Dst = dv.Index, results.HostDevice
		fl.src, fl.dst, fl.srcPtr = dv, nil, dv.Send
	}
	if sm, _ := measure.CopyOf(test); sm {
		fl.sm = e.hostSM
		fl.fig.Engine, fl.fig.Params = fl.sm.Engine(), fl.sm.FigureParams(size)
	}
	host, err := e.hostRegion(r, dv)
	if err != nil {
		return fl, err
	}
	if way == toDevice {
		fl.srcHost, fl.srcPtr = host.Host[:size], host.Device
	} else {
		fl.dstHost, fl.dstPtr = host.Host[:size], host.Device
	}
	return fl, nil
}

// hostCopies measures a host bandwidth test on devs at once: each device's
// copies (forward and reverse, both filed under host → device, when both
// ways) and their total.
func (e *Engine) hostCopies(ctx context.Context, test results.Test, devs []*measure.Device) {
	sh, _ := hostShapeOf(test)
	var flows []flow
	var err error
	for i, dv := range devs {
		for _, way := range []hostWay{toDevice, fromDevice} {
			if sh.way&way == 0 {
				continue
			}
			// Device i's regions: 2i to it, 2i+1 from it.
			r := 2 * i
			if way == fromDevice {
				r++
			}
			fl, ferr := e.hostFlow(test, dv, way, r)
			if err == nil {
				err = ferr
			}
			switch {
			case sh.way == bothWays && way == toDevice:
				fl.fig.Part = results.PartForward
			case sh.way == bothWays:
				fl.fig.Part = results.PartReverse
				fl.fig.Src, fl.fig.Dst = results.HostDevice, dv.Index
			case sh.all:
				fl.fig.Part = results.PartPair
			}
			flows = append(flows, fl)
		}
	}
	var sums []sum
	if sh.all || sh.way == bothWays {
		t := flows[0].fig
		t.Part = results.PartTotal
		if sh.all {
			t.Src, t.Dst = results.HostDevice, results.HostDevice
			t.Params = measure.WithParam(t.Params, "devices", strconv.Itoa(len(devs)))
		}
		sums = append(sums, sum{fig: t})
	}
	if err != nil {
		for _, fl := range flows {
			e.add(measure.Fail(fl.fig, err))
		}
		for _, t := range sums {
			e.add(measure.Fail(t.fig, err))
		}
		return
	}
	e.measureFlows(ctx, flows, sums...)
}

// hostChase follows a chain through pinned host memory of its own from dv:
// the latency of one load from the GPU to host memory and back.
func (e *Engine) hostChase(ctx context.Context, dv *measure.Device) {
	chunks := e.share(measure.ChaseChunks)
	if chunks == 0 {
		return
	}
	f := results.Figure{Test: results.LatHostChase, Engine: results.EngineSM, Src: results.HostDevice, Dst: dv.Index, Size: hostChaseBytes,
		Unit: results.UnitNs, Params: measure.ChaseParams(hostChaseBytes, "host", 0)}
	err := func() error {
		host, err := dv.Primary.HostAlloc(hostChaseBytes, true)
		if err != nil {
			return fmt.Errorf("allocating %s of pinned host memory: %w", results.FormatBytes(hostChaseBytes), err)
		}
		defer func() {
			if err := dv.Primary.HostFree(host); err != nil {
				e.note("freeing the host chase's memory: %v", err)
			}
		}()
		start, err := dv.BuildChain(host.Device, hostChaseBytes, e.seeds.Next())
		if err != nil {
			return err
		}
		f.Samples, err = dv.Chase(start, hostChaseBytes, chunks)
		return err
	}()
	e.addResult(err, f)
}
