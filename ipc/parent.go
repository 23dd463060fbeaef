// Package ipc measures the tests of package bench across processes, through
// CUDA IPC: the parent (Run) starts one child process per device (and a
// second on the first device for a same-GPU baseline), the children serve
// it (Serve) over a private socketpair each, exchange memory and event
// handles, and measure copies, SM copy kernels, the pointer chase and the
// ping-pong on each other's memory. Memory is shared with legacy cuIpc*
// handles or through the VMM API as POSIX file descriptors (vmm.go; the
// descriptors travel on the same socketpairs, descriptors.go), each kind
// with children of its own. RunFabric (fabric.go) runs the same tests
// across the nodes of a multi-node NVLink domain: one process per GPU under
// a launcher, memory shared as fabric handles, the ranks met at a TCP
// rendezvous and checked before anything is measured. The wire protocol is
// documented in proto.go; the process hygiene (process groups, death with
// the parent, the shutdown order the IPC rules need, test faults) in
// childproc.go and fault.go.
//
// It imports cuda, gpu, kernels, results, measure (the measuring
// core it shares with bench) and internal/rendezvous; it does not import
// bench.
package ipc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// Options are the settings of an IPC run: those shared with the runs in
// one process (the tests must be IPC tests; none means all), and those of
// the processes.
type Options struct {
	measure.Settings
	// SkipSameGPU leaves out the baseline of two processes on Devices[0].
	SkipSameGPU bool
	// Pairs, when not nil, are the ordered pairs of devices to measure
	// (a plan's detail pairs); nil measures every ordered pair.
	Pairs []results.PairID
	// Handles are the ways the children share memory, each measured in
	// turn with children of its own (default: legacy only).
	Handles []Handles
	// Child is the command line that starts one child: the program and its
	// arguments, for example the running binary with "ipc-child" (and
	// "--simulate <machine>" on a simulated run). The child finds its channel
	// on descriptor 3; nothing else is passed.
	Child []string
	// Timeout bounds every wait for a child's reply (default 60 s); a child
	// that does not answer in time is killed and its pairs fail.
	Timeout time.Duration
	// OpTime, when set, is told how long each request to a child took,
	// from its sending to its reply, with the round it belongs to
	// (P2PBENCH_TRACE: where the time across processes goes).
	OpTime func(op string, round int, took time.Duration)
	// Trace, when set, is told how long the children took to stop at the
	// end (P2PBENCH_TRACE).
	Trace func(step string, took time.Duration)
	// Reaping, when set, waits in the background for the children's
	// processes to end once they have freed their memory and answered
	// their last request: Run returns meanwhile, and the caller waits on
	// Reaping before it exits. Nil waits before Run returns.
	Reaping *sync.WaitGroup

	// fabric, set by RunFabric, is how the ranks of a run across nodes are
	// reached.
	fabric *fabricRanks

	// afterMap, set by tests, sees the children once they have mapped each
	// other; trace sees every request a child answered, as it is answered.
	afterMap func([]childInfo)
	trace    func(rank int, op string)
}

// childInfo is what a test learns of one child after the handshake.
type childInfo struct {
	Rank, Device, Pid int
	// Handles are every handle the child exported (memory, then its event).
	Handles [][]byte
}

// Defaults of an IPC run.
const (
	defaultTimeout = 60 * time.Second
	// cancelGrace bounds each shutdown phase once the run is cancelled.
	cancelGrace = time.Second
)

func (o *Options) prepare() error {
	if len(o.Tests) == 0 {
		o.Tests, _ = results.ParseTests("all", results.CommandIPC)
	}
	for _, t := range o.Tests {
		if !t.IsIPC() {
			return fmt.Errorf("ipc: %q is not a test across processes", t)
		}
	}
	o.SetDefaults()
	if err := measure.CheckTransferSize(o.Size); err != nil {
		return err
	}
	if _, ok := kernels.CopyKernelByVariant(o.SM.Variant); o.SM.Variant != "" && !ok {
		return fmt.Errorf("unknown SM copy variant %q", o.SM.Variant)
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if len(o.Handles) == 0 {
		o.Handles = []Handles{HandlesLegacy}
	}
	for _, h := range o.Handles {
		if !h.valid() {
			return fmt.Errorf("ipc: unknown handles %q", h)
		}
	}
	switch {
	case len(o.Child) == 0:
		return errors.New("ipc: no command to start the children with")
	case len(o.Devices) == 0:
		return errors.New("ipc: no device selected")
	case len(o.Devices) < 2 && o.SkipSameGPU:
		return errors.New("ipc: one device and no same-GPU baseline: there is no pair to measure")
	}
	return nil
}

// parent is the parent's state during Run.
type parent struct {
	opt   Options
	run   *results.Run
	infos map[int]cuda.DeviceInfo
	kids  []*childProc // by rank
	sim   bool
	// mapErr holds why importer could not map owner, by {importer, owner}.
	mapErr map[[2]int]error
	// dropped marks children whose death the others were told of.
	dropped map[int]bool
	sizes   map[string]uint64
	seeds   *measure.Seeds
	// chains holds each chase figure's chain seeds (chainSeeds).
	chains  map[string][]uint32
	notes   []string
	traffic *measure.Meter
	coll    *measure.Collector
	// round is the round being measured (from 0), of opt.Rounds; timings
	// holds the timing each figure's first round found, by the key of its
	// first figure, so that every round's samples are alike.
	round   int
	timings map[string]measure.Timing
	// handles is how this arrangement's children share memory.
	handles Handles
}

// pair is an ordered pair of ranks: data moves a → b (b reads, a writes).
type pair struct {
	a, b    int
	sameGPU bool
}

// Run measures P2P across processes: it starts one child process per
// selected device (and a second one on the first device for the same-GPU
// baseline) with opt.Child, lets them exchange CUDA IPC handles over private
// socketpairs, and drives the ipc_* tests on every ordered pair; then again
// with fresh children for each further kind of opt.Handles (the figures of
// VMM handles carry results.ParamIPCHandle). Figures are appended to run as
// they come. drv serves only to describe the devices: the parent opens no
// context.
//
// A child that crashes, hangs or breaks the protocol fails its pairs (the
// figures say why) and the run goes on. When ctx is cancelled, every child is
// stopped and Run returns ctx.Err() with what was measured so far in run;
// likewise with the *measure.BusyError of the settings' Watch when another
// program is on the GPUs before the children start or after a pair and busy
// GPUs are not allowed.
// No child outlives Run, nor a parent killed meanwhile (the children die
// with the thread that started them: Run must not be called from a
// goroutine locked to its thread that ends before the run).
func Run(ctx context.Context, drv gpu.Driver, opt Options, run *results.Run) error {
	if err := opt.prepare(); err != nil {
		return err
	}
	var infos []cuda.DeviceInfo
	for _, d := range opt.Devices {
		info, err := drv.DeviceInfo(d)
		if err != nil {
			return fmt.Errorf("ipc: describing device %d: %w", d, err)
		}
		if !info.UnifiedAddressing {
			return fmt.Errorf("ipc: device %d has no unified addressing, which CUDA IPC needs", d)
		}
		if !info.IPCEventSupported {
			return fmt.Errorf("ipc: device %d does not support IPC events (CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED is 0)", d)
		}
		for _, h := range opt.Handles {
			if err := h.checkDevice(info); err != nil {
				return fmt.Errorf("ipc: %w", err)
			}
		}
		infos = append(infos, info)
	}
	for i, h := range opt.Handles {
		o := opt
		if i < len(opt.Handles)-1 {
			// The next arrangement's children measure while these end.
			o.Reaping = nil
		}
		if err := runHandles(ctx, drv, o, h, infos, run); err != nil {
			return err
		}
	}
	return nil
}

// runHandles is one arrangement of Run: its children share memory with
// handles h.
func runHandles(ctx context.Context, drv gpu.Driver, opt Options, h Handles, infos []cuda.DeviceInfo, run *results.Run) error {
	r := &parent{opt: opt, handles: h, run: run, infos: map[int]cuda.DeviceInfo{}, mapErr: map[[2]int]error{},
		dropped: map[int]bool{}, seeds: measure.NewSeeds(0x1bc5eed), coll: measure.NewCollector(run), timings: map[string]measure.Timing{}}
	for _, info := range infos {
		r.infos[info.Index] = info
	}
	r.traffic = measure.NewMeter(opt.Monitor, func(dev int) string { return r.infos[dev].PCIBusID },
		func(format string, args ...any) { r.notes = append(r.notes, fmt.Sprintf(format, args...)) })
	r.opt.ResolveSM(infos)
	r.sizes = r.bufferSizes()
	buses := map[int]string{}
	for d, info := range r.infos {
		buses[d] = info.PCIBusID
	}
	// Before the children start (NVML lists them too, by their own pids).
	if err := opt.Watch.Check(run, buses, nil, nil); err != nil {
		return err
	}
	defer func() {
		t0 := time.Now()
		r.shutdown(ctx.Err() != nil)
		if opt.Trace != nil {
			opt.Trace("ipc: stopping the children ("+r.label()+")", time.Since(t0))
		}
		for _, n := range r.notes {
			// Each arrangement notes what the last one may have noted.
			if n = results.ClipText(n); !slices.Contains(run.Notes, n) {
				run.Notes = append(run.Notes, n)
			}
		}
	}()
	if err := r.start(ctx, drv.Simulated()); err != nil {
		return err
	}
	// Round after round over every pair, in the same children: the rounds
	// spread each figure's samples over the run (measure.Loop, as in one
	// process).
	var steps []measure.Step
	for _, p := range r.pairs() {
		steps = append(steps, measure.Step{Name: r.label() + " " + r.pairName(p), Run: func(ctx context.Context) { r.pairTests(ctx, p) }})
	}
	loop := measure.Loop{
		Rounds:   r.opt.Rounds,
		SetRound: func(round int) { r.round = round },
		Renew:    func(int) { r.renew(ctx) },
		Progress: opt.Progress,
	}
	if opt.Watch != nil {
		loop.AfterStep = func() error { return opt.Watch.Check(run, buses, r.childPIDs(), r.coll.Grown()) }
	}
	return loop.Run(ctx, nil, func() []measure.Step { return steps })
}

// renew asks every live child to renew what the settings say before this
// round; what fails goes to the notes, and the round goes on.
func (r *parent) renew(ctx context.Context) {
	if r.opt.Renew&renewable == 0 {
		return
	}
	for _, k := range r.live() {
		if err := k.call(ctx, opRenew, renewReq{What: r.opt.Renew, Round: r.round}, nil, r.opt.Timeout); err != nil && ctx.Err() == nil {
			r.notes = append(r.notes, fmt.Sprintf("ipc: round %d: rank %d (device %d) renewing %s: %v", r.round+1, k.rank, k.dev, r.opt.Renew&renewable, err))
			if !k.alive() {
				r.drop(ctx, k)
			}
		}
	}
}

// share is this round's part of n samples.
func (r *parent) share(n int) int { return results.SplitSamples(n, r.opt.Rounds)[r.round] }

// verifying says whether this round verifies the data it moves (the first).
func (r *parent) verifying() bool { return r.opt.Verify && r.round == 0 }

// childPIDs are the pids of the children, which the watch leaves out.
func (r *parent) childPIDs() []int {
	pids := make([]int, len(r.kids))
	for i, k := range r.kids {
		pids[i] = k.pid
	}
	return pids
}

// bufferSizes are the buffers each child allocates and exports.
func (r *parent) bufferSizes() map[string]uint64 {
	sizes := map[string]uint64{}
	for _, t := range r.opt.Tests {
		switch t {
		case results.IPCLatChase:
			sizes[bufScratch] = slices.Max(measure.ChaseWorkingSets)
			sizes[bufSmall] = measure.SmallBytes
		case results.IPCLatPingPong:
			sizes[bufSmall] = measure.SmallBytes
		default:
			sizes[bufSend] = measure.BufferBytes(r.opt.Size)
			sizes[bufRecv] = sizes[bufSend]
		}
	}
	return sizes
}

// devices returns the device of every rank.
func (r *parent) devices() []int {
	devs := append([]int(nil), r.opt.Devices...)
	if !r.opt.SkipSameGPU {
		devs = append(devs, r.opt.Devices[0])
	}
	return devs
}

// start starts the children, says hello to each and lets them map each other.
func (r *parent) start(ctx context.Context, simulated bool) error {
	for rank, dev := range r.devices() {
		k, err := r.startRank(rank, dev)
		if err != nil {
			return err
		}
		k.trace = r.opt.trace
		r.kids = append(r.kids, k)
	}
	r.each(func(k *childProc) {
		req := helloReq{Rank: k.rank, Device: k.local, Buffers: r.sizes, LatchTimeoutNs: r.opt.LatchTimeout.Nanoseconds(), Handles: r.handles}
		if err := k.call(ctx, opHello, req, &k.hello, r.opt.Timeout); err != nil && ctx.Err() == nil {
			// A child that could not set up has exported nothing: end it.
			k.giveUp(opHello, err)
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.checkSimulated(simulated); err != nil {
		return err
	}
	r.noteStart()
	r.mapAll(ctx)
	r.closeExports()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, k := range r.kids {
		if !k.alive() {
			r.drop(ctx, k)
		}
	}
	if r.opt.afterMap != nil {
		r.opt.afterMap(r.childInfos())
	}
	return nil
}

// checkSimulated requires the children to run on a driver of the parent's
// kind, and labels a simulated run.
func (r *parent) checkSimulated(simulated bool) error {
	sims := 0
	for _, k := range r.kids {
		if k.alive() && k.hello.Simulated {
			sims++
		}
	}
	r.sim = simulated
	if live := len(r.live()); live > 0 && ((sims > 0) != simulated || (sims > 0 && sims != live)) {
		return fmt.Errorf("ipc: the parent's driver is simulated=%v but %d of %d children run on a simulated one; start the children the way the parent was (--simulate)",
			simulated, sims, live)
	}
	if r.sim {
		r.run.Simulated = true
		r.notes = append(r.notes, "ipc (simulated): handles travel between the processes for real, but a simulated driver cannot share memory between processes; "+
			"each child hosts stand-ins for its peers in its own simulated machine and maps those through the simulated IPC calls, so the figures come from the simulator's model")
	}
	return nil
}

// mapAll sends every live child the handles of every other live child.
func (r *parent) mapAll(ctx context.Context) {
	live := r.live()
	var mu sync.Mutex
	reopened := 0
	r.each(func(k *childProc) {
		var req mapReq
		for _, o := range live {
			if o != k {
				req.Peers = append(req.Peers, peerHandles{Rank: o.rank, Device: o.dev, Exports: o.hello.Exports, Event: o.hello.Event})
				req.files = append(req.files, o.hello.files...)
			}
		}
		var rep mapReply
		if err := k.call(ctx, opMap, req, &rep, r.opt.Timeout); err != nil {
			if ctx.Err() == nil {
				k.giveUp(opMap, err)
			}
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, res := range rep.Results {
			reopened += res.Reopened
			if err := fromFields(res.Err, res.CUDA); err != nil {
				r.mapErr[[2]int{k.rank, res.Rank}] = fmt.Errorf("rank %d (device %d) mapping rank %d's memory: %w", k.rank, k.dev, res.Rank, err)
			}
		}
	})
	if reopened > 0 {
		r.notes = append(r.notes, fmt.Sprintf("ipc: each child opened every peer handle twice: %d second opens returned the first pointer (reference counted), and each was closed again", reopened))
	}
}

func (r *parent) noteStart() {
	var pids []string
	for _, k := range r.kids {
		pids = append(pids, k.describe())
	}
	how := r.processes()
	if !r.opt.SkipSameGPU {
		how += fmt.Sprintf(", and a second on device %d for the same-GPU baseline", r.opt.Devices[0])
	}
	r.notes = append(r.notes, r.label()+": "+how+"; "+r.handles.passed()+": "+strings.Join(pids, ", "))
	if !r.opt.SkipSameGPU && (r.opt.Selected(results.IPCCEBidir) || r.opt.Selected(results.IPCSMBidir)) {
		// Measured on an H200: each "direction" ran at the full local-copy
		// rate, one after the other, so a total would count the time twice.
		r.notes = append(r.notes, "ipc: the same-GPU baseline has no bidirectional figures: without MPS, two processes on one GPU take turns (time-slicing) instead of running at once")
	}
	if !r.opt.SkipSameGPU && r.opt.Selected(results.IPCLatPingPong) {
		r.notes = append(r.notes, "ipc: the same-GPU baseline has no ping-pong: without MPS, two processes on one GPU take turns (time-slicing), so each bounce waits for the other process's time slice (2.19 ms one way on an H100, 2026-11-25): the scheduler's slice, not a latency")
	}
}

func (r *parent) childInfos() []childInfo {
	var out []childInfo
	for _, k := range r.kids {
		ci := childInfo{Rank: k.rank, Device: k.dev, Pid: k.pid}
		for _, x := range k.hello.Exports {
			ci.Handles = append(ci.Handles, append([]byte(nil), x.Handle[:]...))
		}
		if k.alive() {
			ci.Handles = append(ci.Handles, append([]byte(nil), k.hello.Event[:]...))
		}
		out = append(out, ci)
	}
	return out
}

// live returns the children still worked with.
func (r *parent) live() []*childProc {
	var out []*childProc
	for _, k := range r.kids {
		if k.alive() {
			out = append(out, k)
		}
	}
	return out
}

// each runs fn on every live child at once and waits.
func (r *parent) each(fn func(k *childProc)) {
	var wg sync.WaitGroup
	for _, k := range r.live() {
		wg.Go(func() { fn(k) })
	}
	wg.Wait()
}

// shutdown stops every child in the order the IPC rules need: every live
// child closes its mappings; those that do not confirm are killed and reaped;
// only then are the rest told to free their memory and exit. Whatever is
// still running at the end is killed.
func (r *parent) shutdown(cancelled bool) {
	grace := r.opt.Timeout
	if cancelled {
		grace = min(grace, cancelGrace)
	}
	r.closeExports()
	bg := context.Background()
	r.each(func(k *childProc) {
		if err := k.call(bg, opUnmap, unmapReq{}, nil, grace); err != nil {
			k.giveUp(opUnmap, err)
		}
	})
	for _, k := range r.kids {
		if !k.alive() {
			k.reap(grace)
		}
	}
	exiting := r.live()
	r.each(func(k *childProc) {
		if err := k.call(bg, opExit, struct{}{}, nil, grace); err != nil {
			k.giveUp(opExit, err)
		}
	})
	for _, k := range exiting {
		if !k.alive() {
			r.notes = append(r.notes, "ipc: "+k.failed.Error())
		}
	}
	// Every child has freed what it had, or been killed: what is left is
	// their processes' end, which takes tenths of a second, and need not
	// hold up the parent's.
	kids := r.kids
	reap := func() {
		var wg sync.WaitGroup
		for _, k := range kids {
			wg.Go(func() { k.reap(grace) })
		}
		wg.Wait()
	}
	if r.opt.Reaping != nil && !cancelled {
		r.opt.Reaping.Go(reap)
		return
	}
	reap()
}

// pairs lists the ordered pairs: every two distinct devices (those of
// Options.Pairs when given), then the same-GPU baseline.
func (r *parent) pairs() []pair {
	n := len(r.opt.Devices)
	var out []pair
	for a := range n {
		for b := range n {
			if a != b && (r.opt.Pairs == nil || slices.Contains(r.opt.Pairs, results.PairID{r.opt.Devices[a], r.opt.Devices[b]})) {
				out = append(out, pair{a: a, b: b})
			}
		}
	}
	if !r.opt.SkipSameGPU {
		out = append(out, pair{a: 0, b: n, sameGPU: true})
	}
	return out
}

func (r *parent) dev(rank int) int { return r.kids[rank].dev }

func (r *parent) pairName(p pair) string {
	if p.sameGPU {
		return fmt.Sprintf("%d→%d (same GPU, ranks %d→%d)", r.dev(p.a), r.dev(p.b), p.a, p.b)
	}
	return fmt.Sprintf("%d→%d", r.dev(p.a), r.dev(p.b))
}

// usable returns why the pair cannot be measured, or nil.
func (r *parent) usable(p pair) error {
	for _, x := range []int{p.a, p.b} {
		if k := r.kids[x]; !k.alive() {
			return k.failed
		}
	}
	for _, key := range [][2]int{{p.b, p.a}, {p.a, p.b}} {
		if err := r.mapErr[key]; err != nil {
			return err
		}
	}
	return nil
}

// call sends a request for rank's part of pair p: to rank's own process, or
// on a simulated run to the pair's host, which holds a stand-in of the peer.
// A child that fails is dropped by the others.
func (r *parent) call(ctx context.Context, p pair, rank int, op string, req, resp any) error {
	k := r.host(p, rank)
	t0 := time.Now()
	err := k.call(ctx, op, req, resp, r.opt.Timeout)
	if r.opt.OpTime != nil {
		r.opt.OpTime(op, r.round, time.Since(t0))
	}
	if !k.alive() {
		r.drop(ctx, k)
	}
	return err
}

// host returns the child that serves rank's part of pair p.
func (r *parent) host(p pair, rank int) *childProc {
	if r.sim {
		return r.kids[p.a]
	}
	return r.kids[rank]
}

// drop tells every live child to close its mappings of a failed child.
func (r *parent) drop(ctx context.Context, gone *childProc) {
	if r.dropped[gone.rank] || ctx.Err() != nil {
		return
	}
	r.dropped[gone.rank] = true
	r.notes = append(r.notes, "ipc: "+gone.failed.Error())
	r.each(func(k *childProc) {
		if err := k.call(ctx, opUnmap, unmapReq{Ranks: []int{gone.rank}}, nil, r.opt.Timeout); err != nil && ctx.Err() == nil {
			k.giveUp(opUnmap, err)
		}
	})
}

// record adds the figures of one test of pair p in this round, or fails
// them all with err. Nothing is recorded for a test cut short by
// cancellation.
func (r *parent) record(ctx context.Context, p pair, figs []results.Figure, err error) {
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		err = fmt.Errorf("ipc pair %s: %w", r.pairName(p), err)
		for i := range figs {
			figs[i] = measure.Fail(figs[i], err)
		}
	}
	for _, f := range figs {
		r.coll.Add(f, r.round)
	}
}
