package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// IPCTests lists the tests of `p2pbench ipc` (they are also in Tests, under
// the command "ipc").
func IPCTests() []string { return TestNames("ipc") }

// IPCOptions are the settings of an IPC run.
type IPCOptions struct {
	// Devices are the selected devices (already checked): one child each.
	Devices []int
	// Tests are IPC test names (IPCTests); empty means all.
	Tests []string
	// Size is the bandwidth transfer size (default DefaultSize).
	Size uint64
	// Samples per bandwidth figure (default 20).
	Samples int
	// Verify checks the data that moved, in the processes that own it.
	Verify bool
	// LatchTimeout bounds how long a latch may hold a stream (default 5 s).
	LatchTimeout time.Duration
	// SMVariant, BlocksPerSM and BlockSize are the SM copy kernel and grid,
	// as in Options: "" is the variant best suited to the devices, 0 the
	// variant's own grid. Tuned overrides them per pair and direction.
	SMVariant   string
	BlocksPerSM int
	BlockSize   int
	Tuned       map[TuneKey]SMConfig
	// SkipSameGPU leaves out the baseline of two processes on Devices[0].
	SkipSameGPU bool
	// Child is the command line that starts one child: the program and its
	// arguments, for example the running binary with "ipc-child" (and
	// "--simulate <machine>" on a simulated run). The child finds its channel
	// on descriptor 3; nothing else is passed.
	Child []string
	// Timeout bounds every wait for a child's reply (default 60 s); a child
	// that does not answer in time is killed and its pairs fail.
	Timeout time.Duration
	// Progress, when set, is told about each step.
	Progress func(done, total int, step string)
	// Monitor, when set, gives the NVLink counters that bandwidth figures
	// between two devices record.
	Monitor gpu.Monitor

	// afterMap, set by tests, sees the children once they have mapped each
	// other; trace sees every request a child answered, as it is answered.
	afterMap func([]ipcChildInfo)
	trace    func(rank int, op string)
}

// ipcChildInfo is what a test learns of one child after the handshake.
type ipcChildInfo struct {
	Rank, Device, Pid int
	// Handles are every handle the child exported (memory, then its event).
	Handles [][]byte
}

// Defaults of an IPC run.
const (
	ipcDefaultTimeout = 60 * time.Second
	// ipcCancelGrace bounds each shutdown phase once the run is cancelled.
	ipcCancelGrace = time.Second
	// Two processes on one GPU share it by time-slicing (without MPS), so
	// every ping-pong round trip waits for a switch: far fewer of them.
	ipcSameGPUPingIters = 100
	ipcSameGPUPingChunk = 10
	ipcPingTimeout      = 2 * time.Second
)

func (o *IPCOptions) prepare() error {
	if len(o.Tests) == 0 {
		o.Tests = IPCTests()
	}
	for _, t := range o.Tests {
		if _, err := ParseTests(t, "ipc"); err != nil {
			return err
		}
	}
	if o.Samples <= 0 {
		o.Samples = 20
	}
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	if err := CheckTransferSize(o.Size); err != nil {
		return err
	}
	if o.LatchTimeout <= 0 {
		o.LatchTimeout = 5 * time.Second
	}
	if _, ok := kernels.CopyKernelByVariant(o.SMVariant); o.SMVariant != "" && !ok {
		return fmt.Errorf("unknown SM copy variant %q", o.SMVariant)
	}
	if o.Timeout <= 0 {
		o.Timeout = ipcDefaultTimeout
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

func (o *IPCOptions) selected(test string) bool { return slices.Contains(o.Tests, test) }

// ipcRun is the parent's state during RunIPC.
type ipcRun struct {
	opt   IPCOptions
	run   *results.Run
	infos map[int]cuda.DeviceInfo
	kids  []*ipcKid // by rank
	sim   bool
	// mapErr holds why importer could not map owner, by {importer, owner}.
	mapErr map[[2]int]error
	// dropped marks children whose death the others were told of.
	dropped map[int]bool
	sizes   map[string]uint64
	seed    uint32
	notes   []string
	traffic *trafficMeter
}

// ipcPair is an ordered pair of ranks: data moves a → b (b reads, a writes).
type ipcPair struct {
	a, b    int
	sameGPU bool
}

// RunIPC measures P2P across processes: it starts one child process per
// selected device (and a second one on the first device for the same-GPU
// baseline) with opt.Child, lets them exchange CUDA IPC handles over private
// socketpairs, and drives the ipc_* tests on every ordered pair. Figures are
// appended to run as they come. drv serves only to describe the devices: the
// parent opens no context.
//
// A child that crashes, hangs or breaks the protocol fails its pairs (the
// figures say why) and the run goes on. When ctx is cancelled, every child is
// stopped and RunIPC returns ctx.Err() with what was measured so far in run.
// No child outlives RunIPC, nor a parent killed meanwhile (the children die
// with the thread that started them: do not call RunIPC from a goroutine
// locked to its thread that ends before the run).
func RunIPC(ctx context.Context, drv gpu.Driver, opt IPCOptions, run *results.Run) error {
	if err := opt.prepare(); err != nil {
		return err
	}
	r := &ipcRun{opt: opt, run: run, infos: map[int]cuda.DeviceInfo{}, mapErr: map[[2]int]error{},
		dropped: map[int]bool{}, seed: 0x1bc5eed}
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
		r.infos[d] = info
	}
	r.traffic = newTrafficMeter(opt.Monitor, func(dev int) string { return r.infos[dev].PCIBusID },
		func(format string, args ...any) { r.notes = append(r.notes, fmt.Sprintf(format, args...)) })
	r.resolveSM()
	r.sizes = r.bufferSizes()
	defer func() {
		r.shutdown(ctx.Err() != nil)
		run.Notes = append(run.Notes, r.notes...)
	}()
	if err := r.start(ctx, drv.Simulated()); err != nil {
		return err
	}
	pairs := r.pairs()
	for i, p := range pairs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if opt.Progress != nil {
			opt.Progress(i, len(pairs), "ipc "+r.pairName(p))
		}
		r.pairTests(ctx, p)
	}
	if opt.Progress != nil {
		opt.Progress(len(pairs), len(pairs), "done")
	}
	return ctx.Err()
}

// resolveSM fills the SM copy settings left open as Engine does: the
// variant for the lowest compute capability of the devices, and its grid.
func (r *ipcRun) resolveSM() {
	o := &r.opt
	if o.SMVariant == "" {
		cc := 0
		for _, info := range r.infos {
			if c := info.ComputeMajor*10 + info.ComputeMinor; cc == 0 || c < cc {
				cc = c
			}
		}
		o.SMVariant = kernels.CopyVariantFor(cc)
	}
	k, _ := kernels.CopyKernelByVariant(o.SMVariant)
	b, t := k.DefaultGrid()
	if o.BlocksPerSM <= 0 {
		o.BlocksPerSM = b
	}
	if o.BlockSize <= 0 {
		o.BlockSize = t
	}
}

// bufferSizes are the buffers each child allocates and exports.
func (r *ipcRun) bufferSizes() map[string]uint64 {
	sizes := map[string]uint64{}
	for _, t := range r.opt.Tests {
		switch t {
		case "ipc_lat_chase":
			sizes[bufScratch] = slices.Max(ChaseWorkingSets)
			sizes[bufSmall] = smallBytes
		case "ipc_lat_pingpong":
			sizes[bufSmall] = smallBytes
		default:
			sizes[bufSend] = roundUp(r.opt.Size, 256)
			sizes[bufRecv] = sizes[bufSend]
		}
	}
	return sizes
}

// devices returns the device of every rank.
func (r *ipcRun) devices() []int {
	devs := append([]int(nil), r.opt.Devices...)
	if !r.opt.SkipSameGPU {
		devs = append(devs, r.opt.Devices[0])
	}
	return devs
}

// start starts the children, says hello to each and lets them map each other.
func (r *ipcRun) start(ctx context.Context, simulated bool) error {
	for rank, dev := range r.devices() {
		k, err := startKid(r.opt.Child, rank, dev)
		if err != nil {
			return err
		}
		k.trace = r.opt.trace
		r.kids = append(r.kids, k)
	}
	r.each(func(k *ipcKid) {
		req := helloReq{Rank: k.rank, Device: k.dev, Buffers: r.sizes, Verify: r.opt.Verify, LatchTimeoutNs: r.opt.LatchTimeout.Nanoseconds()}
		if err := k.call(ctx, opHello, req, &k.hello, r.opt.Timeout); err != nil && ctx.Err() == nil {
			// A child that could not set up has exported nothing: end it.
			k.giveUp(opHello, err)
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
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
	r.noteStart()
	r.mapAll(ctx)
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

// mapAll sends every live child the handles of every other live child.
func (r *ipcRun) mapAll(ctx context.Context) {
	live := r.live()
	var mu sync.Mutex
	reopened := 0
	r.each(func(k *ipcKid) {
		var req mapReq
		for _, o := range live {
			if o != k {
				req.Peers = append(req.Peers, ipcPeer{Rank: o.rank, Device: o.dev, Exports: o.hello.Exports, Event: o.hello.Event})
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

func (r *ipcRun) noteStart() {
	var pids []string
	for _, k := range r.kids {
		pids = append(pids, fmt.Sprintf("rank %d = device %d (pid %d)", k.rank, k.dev, k.pid))
	}
	how := "one child process per device"
	if !r.opt.SkipSameGPU {
		how += fmt.Sprintf(", and a second on device %d for the same-GPU baseline", r.opt.Devices[0])
	}
	r.notes = append(r.notes, "ipc: "+how+"; handles passed over a private socketpair per child: "+strings.Join(pids, ", "))
	if !r.opt.SkipSameGPU && (r.opt.selected("ipc_ce_bidir") || r.opt.selected("ipc_sm_bidir")) {
		// Measured on an H200: each "direction" ran at the full local-copy
		// rate, one after the other, so a total would count the time twice.
		r.notes = append(r.notes, "ipc: the same-GPU baseline has no bidirectional figures: without MPS, two processes on one GPU take turns (time-slicing) instead of running at once")
	}
}

func (r *ipcRun) childInfos() []ipcChildInfo {
	var out []ipcChildInfo
	for _, k := range r.kids {
		ci := ipcChildInfo{Rank: k.rank, Device: k.dev, Pid: k.pid}
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
func (r *ipcRun) live() []*ipcKid {
	var out []*ipcKid
	for _, k := range r.kids {
		if k.alive() {
			out = append(out, k)
		}
	}
	return out
}

// each runs fn on every live child at once and waits.
func (r *ipcRun) each(fn func(k *ipcKid)) {
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
func (r *ipcRun) shutdown(cancelled bool) {
	grace := r.opt.Timeout
	if cancelled {
		grace = min(grace, ipcCancelGrace)
	}
	bg := context.Background()
	r.each(func(k *ipcKid) {
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
	r.each(func(k *ipcKid) {
		if err := k.call(bg, opExit, struct{}{}, nil, grace); err != nil {
			k.giveUp(opExit, err)
		}
		k.reap(grace)
	})
	for _, k := range exiting {
		if !k.alive() {
			r.notes = append(r.notes, "ipc: "+k.failed.Error())
		}
	}
	for _, k := range r.kids {
		k.kill()
		k.reap(grace)
	}
}

// pairs lists the ordered pairs: every two distinct devices, then the
// same-GPU baseline.
func (r *ipcRun) pairs() []ipcPair {
	n := len(r.opt.Devices)
	var out []ipcPair
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a != b {
				out = append(out, ipcPair{a: a, b: b})
			}
		}
	}
	if !r.opt.SkipSameGPU {
		out = append(out, ipcPair{a: 0, b: n, sameGPU: true})
	}
	return out
}

func (r *ipcRun) dev(rank int) int { return r.kids[rank].dev }

func (r *ipcRun) pairName(p ipcPair) string {
	if p.sameGPU {
		return fmt.Sprintf("%d→%d (same GPU, ranks %d→%d)", r.dev(p.a), r.dev(p.b), p.a, p.b)
	}
	return fmt.Sprintf("%d→%d", r.dev(p.a), r.dev(p.b))
}

// usable returns why the pair cannot be measured, or nil.
func (r *ipcRun) usable(p ipcPair) error {
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
func (r *ipcRun) call(ctx context.Context, p ipcPair, rank int, op string, req, resp any) error {
	k := r.host(p, rank)
	err := k.call(ctx, op, req, resp, r.opt.Timeout)
	if !k.alive() {
		r.drop(ctx, k)
	}
	return err
}

// host returns the child that serves rank's part of pair p.
func (r *ipcRun) host(p ipcPair, rank int) *ipcKid {
	if r.sim {
		return r.kids[p.a]
	}
	return r.kids[rank]
}

// drop tells every live child to close its mappings of a failed child.
func (r *ipcRun) drop(ctx context.Context, gone *ipcKid) {
	if r.dropped[gone.rank] || ctx.Err() != nil {
		return
	}
	r.dropped[gone.rank] = true
	r.notes = append(r.notes, "ipc: "+gone.failed.Error())
	r.each(func(k *ipcKid) {
		if err := k.call(ctx, opUnmap, unmapReq{Ranks: []int{gone.rank}}, nil, r.opt.Timeout); err != nil && ctx.Err() == nil {
			k.giveUp(opUnmap, err)
		}
	})
}

// record adds the figures of one test of pair p, or fails them all with err.
// Nothing is recorded for a test cut short by cancellation.
func (r *ipcRun) record(ctx context.Context, p ipcPair, figs []results.Figure, err error) {
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		err = fmt.Errorf("ipc pair %s: %w", r.pairName(p), err)
		for i := range figs {
			figs[i] = failFigure(figs[i], err)
		}
	}
	for _, f := range figs {
		if len(f.Samples) > 0 {
			f.Samples = results.RoundSamples(f.Samples)
			f.Stats = results.ComputeStats(f.Samples)
		}
		if f.Verify == "" {
			f.Verify = results.VerifyNA
		}
		r.run.Figures = append(r.run.Figures, f)
	}
}

func (r *ipcRun) nextSeed() uint32 {
	r.seed = r.seed*1664525 + 1013904223
	return r.seed
}

// pairTests runs every selected test on p. Between two devices the
// copy-engine tests run twice: as every one-GPU-per-process job copies (the
// peer's buffer opened in the process's own context, cuMemcpyAsync), and
// with the peer's buffer opened in a context on the peer's device (see
// xfer.PeerContext).
func (r *ipcRun) pairTests(ctx context.Context, p ipcPair) {
	for _, t := range r.opt.Tests {
		if ctx.Err() != nil {
			return
		}
		opens := []bool{false}
		if strings.HasPrefix(t, "ipc_ce_") && !p.sameGPU {
			opens = append(opens, true)
		}
		switch t {
		case "ipc_ce_read", "ipc_sm_read":
			for _, o := range opens {
				r.uni(ctx, p, t, "read", o)
			}
		case "ipc_ce_write", "ipc_sm_write":
			for _, o := range opens {
				r.uni(ctx, p, t, "write", o)
			}
		case "ipc_ce_bidir", "ipc_sm_bidir":
			if p.sameGPU {
				continue // see the note of noteStart
			}
			for _, o := range opens {
				r.bidir(ctx, p, t, "read", o)
				r.bidir(ctx, p, t, "write", o)
			}
		case "ipc_lat_chase":
			for _, ws := range ChaseWorkingSets {
				r.chase(ctx, p, ws)
			}
		case "ipc_lat_pingpong":
			r.pingPong(ctx, p)
		}
	}
}

// Conventions of the IPC figures: the in-process ones with these added.
const (
	convIPC      = "; across processes (CUDA IPC): one process per GPU, the peer's buffer exported with cuIpcGetMemHandle and mapped with cuIpcOpenMemHandle_v2 (lazy peer access)"
	convIPCSame  = "; same GPU: both processes on one device (the IPC path without a link)"
	convIPCCE    = "; copy engine through cuMemcpyAsync on the mapped address (cuMemcpyPeerAsync would need the peer's context, which another process owns)"
	convIPCPeer  = "; copy engine through cuMemcpyPeerAsync between the issuing process's contexts on both devices: the peer's buffer is opened (cuIpcOpenMemHandle_v2) a second time, in the issuing process's primary context on the peer's device, with peer access enabled both ways (ipc_open=peer_device_context)"
	convIPCBidir = "; one latch release starts both processes: the second process's stream waits on an IPC event the first records behind its latch"
	convIPCChase = "; the chain is written by the reading process through its own mapping, since addresses differ between processes"
	convIPCPing  = "; each flag in its own process's memory, the peer's flag mapped through IPC"
)

// figure starts an IPC figure of pair p.
func (r *ipcRun) figure(p ipcPair, test, engine, unit, conv string, size uint64) results.Figure {
	conv += convIPC
	if p.sameGPU {
		conv += convIPCSame
	}
	f := results.Figure{Test: test, Engine: engine, Src: r.dev(p.a), Dst: r.dev(p.b), Size: size, Unit: unit, Convention: conv,
		Params: map[string]string{"processes": "2", "same_gpu": strconv.FormatBool(p.sameGPU)}}
	if r.sim {
		f.Params["ipc_mapping"] = "simulated"
	}
	return f
}

// smConfig is the SM copy configuration for a → b in a direction.
func (r *ipcRun) smConfig(p ipcPair, direction string) SMConfig {
	if c, ok := r.opt.Tuned[TuneKey{r.dev(p.a), r.dev(p.b), direction}]; ok {
		return c
	}
	return SMConfig{r.opt.SMVariant, r.opt.BlocksPerSM, r.opt.BlockSize}
}

// flowOf returns the transfer and figure of one direction of a bandwidth
// test: data from src's send buffer to dst's receive buffer, issued by dst
// (read) or src (write).
func (r *ipcRun) flowOf(p ipcPair, test, direction string, src, dst int, peerCtx bool) (xfer, results.Figure) {
	x := xfer{Issuer: dst, Src: bufRef{src, bufSend}, Dst: bufRef{dst, bufRecv}, Bytes: r.opt.Size}
	if direction == "write" {
		x.Issuer = src
	}
	conv := convRead
	if direction == "write" {
		conv = convWrite
	}
	bidir := strings.HasSuffix(test, "_bidir")
	if bidir {
		conv = convBidir
	}
	engine := "copy_engine"
	var params map[string]string
	if strings.HasPrefix(test, "ipc_sm_") {
		dir := direction
		if bidir {
			dir = "bidir_" + direction
		}
		sm := r.smConfig(p, dir)
		x.SM = &sm
		engine, params = sm.engine(), sm.params()
	} else if peerCtx {
		x.PeerContext = true
		conv += convIPCPeer
	} else {
		conv += convIPCCE
	}
	if bidir {
		conv += convIPCBidir
	}
	f := r.figure(p, test, engine, "GB/s", conv, r.opt.Size)
	f.Direction = direction
	for k, v := range params {
		f.Params[k] = v
	}
	if x.SM == nil {
		f.Params["copy_call"] = "cuMemcpyAsync"
	}
	if x.PeerContext {
		f.Params["copy_call"] = "cuMemcpyPeerAsync"
		f.Params[results.ParamIPCOpen] = results.IPCOpenPeerDevice
	}
	return x, f
}

// uni measures one direction of p alone.
func (r *ipcRun) uni(ctx context.Context, p ipcPair, test, direction string, peerCtx bool) {
	x, f := r.flowOf(p, test, direction, p.a, p.b, peerCtx)
	figs := []results.Figure{f}
	err := r.usable(p)
	if err == nil {
		err = r.bandwidth(ctx, p, []xfer{x}, figs)
	}
	r.record(ctx, p, figs, err)
}

// bidir measures both directions of p at once, each issued by its own
// process: forward a → b, reverse b → a (filed under the pair a, b), total.
func (r *ipcRun) bidir(ctx context.Context, p ipcPair, test, direction string, peerCtx bool) {
	fx, ff := r.flowOf(p, test, direction, p.a, p.b, peerCtx)
	rx, rf := r.flowOf(p, test, direction, p.b, p.a, peerCtx)
	ff.Part, rf.Part = "forward", "reverse"
	rf.Src, rf.Dst = ff.Src, ff.Dst
	tf := ff
	tf.Part = "total"
	tf.Params = maps.Clone(ff.Params)
	figs := []results.Figure{ff, rf, tf}
	err := r.usable(p)
	if err == nil {
		err = r.bandwidth(ctx, p, []xfer{fx, rx}, figs)
	}
	r.record(ctx, p, figs, err)
}

// bandwidth measures one transfer alone, or two at once (the first issuer
// leads), verifies them in the processes that own the data, and fills figs:
// one figure per transfer, then the total when there are two.
func (r *ipcRun) bandwidth(ctx context.Context, p ipcPair, xs []xfer, figs []results.Figure) error {
	seeds := make([]uint32, len(xs))
	if r.opt.Verify {
		for i, x := range xs {
			seeds[i] = r.nextSeed()
			if err := r.call(ctx, p, x.Src.Rank, opFill, dataReq{Buf: x.Src, Bytes: x.Bytes, Seed: seeds[i]}, nil); err != nil {
				return err
			}
			if err := r.call(ctx, p, x.Dst.Rank, opPoison, dataReq{Buf: x.Dst, Bytes: x.Bytes}, nil); err != nil {
				return err
			}
		}
	}
	var win *trafficWindow
	if !p.sameGPU {
		win = r.traffic.begin(r.dev(xs[0].Src.Rank), r.dev(xs[0].Dst.Rank), xs[0].Bytes)
	}
	var ms [][]float64
	var reps int
	if len(xs) == 1 {
		var rep timeReply
		if err := r.call(ctx, p, xs[0].Issuer, opTime, timeReq{X: xs[0], Samples: r.opt.Samples}, &rep); err != nil {
			return err
		}
		ms, reps = [][]float64{rep.Ms}, rep.Reps
	} else {
		var err error
		if ms, reps, err = r.together(ctx, p, xs[0], xs[1]); err != nil {
			return err
		}
	}
	traffic := win.end()
	verify := results.VerifySkipped
	if r.opt.Verify {
		verify = results.VerifyPassed
	}
	sizes := make([]uint64, len(xs))
	for i, x := range xs {
		sizes[i] = x.Bytes
		f := &figs[i]
		f.Samples = bandwidth(x.Bytes, ms[i])
		f.Params["reps_per_sample"] = strconv.Itoa(reps)
		f.Verify = results.VerifySkipped
		if !r.opt.Verify {
			continue
		}
		f.Verify = results.VerifyPassed
		var rep checkReply
		if err := r.call(ctx, p, x.Dst.Rank, opCheck, dataReq{Buf: x.Dst, Bytes: x.Bytes, Seed: seeds[i]}, &rep); err != nil {
			if ctx.Err() != nil || !r.kids[x.Dst.Rank].alive() {
				return err
			}
			f.Verify, f.VerifyDetail = results.VerifyFailed, err.Error()
			f.Error, f.ErrorName = "verification could not run: "+err.Error(), cuda.NameOf(err)
		} else if rep.BadWords > 0 {
			f.Verify = results.VerifyFailed
			f.VerifyDetail = (&Mismatch{FirstBadByte: rep.FirstBadByte, BadWords: rep.BadWords}).Error() + fmt.Sprintf(" (checked by device %d's process)", r.dev(x.Dst.Rank))
		}
		if f.Verify == results.VerifyFailed {
			verify = results.VerifyFailed
		}
	}
	if len(xs) == 2 {
		t := &figs[2]
		t.Samples = totalBandwidth(sizes, ms)
		t.Params["reps_per_sample"] = strconv.Itoa(reps)
		t.Verify = verify
	}
	attachTraffic(figs, win, traffic)
	return nil
}

// together times lead and follow at once, each in its own process: per
// sample, the leader arms its latch and records its start event behind it,
// the follower's stream waits on that event through IPC, and one release of
// the leader's latch starts both. It returns the milliseconds of one
// repetition per sample for each, and the repetitions per sample.
func (r *ipcRun) together(ctx context.Context, p ipcPair, lead, follow xfer) ([][]float64, int, error) {
	sample := func(reps, warmup int) (float64, float64, error) {
		L, F := lead.Issuer, follow.Issuer
		if err := r.call(ctx, p, L, opArm, sampleReq{X: lead, Reps: reps, Warmup: warmup, Leader: L}, nil); err != nil {
			return 0, 0, err
		}
		if err := r.call(ctx, p, F, opFollow, sampleReq{X: follow, Reps: reps, Warmup: warmup, Leader: L}, nil); err != nil {
			// Let the leader's stream go; its time alone is not kept.
			_ = r.call(ctx, p, L, opRelease, rankReq{Rank: L}, nil)
			return 0, 0, err
		}
		var lm, fm msReply
		lk := r.host(p, L)
		errL := lk.call(ctx, opRelease, rankReq{Rank: L}, &lm, r.opt.Timeout)
		if !lk.alive() {
			// The follower's stream waits on the start event of a process
			// that is gone; the event never completes (seen on H200s: every
			// synchronising call of the follower then blocks), so the
			// follower can do nothing more either.
			if fk := r.host(p, F); fk != lk {
				fk.giveUp(opCollect, fmt.Errorf("%w: its stream waits on an IPC event of rank %d's process, which failed mid-sample; killed", ErrIPCChildHung, L))
				r.drop(ctx, fk)
			}
			r.drop(ctx, lk)
			return 0, 0, errL
		}
		errF := r.call(ctx, p, F, opCollect, rankReq{Rank: F}, &fm)
		if err := errors.Join(errL, errF); err != nil {
			return 0, 0, err
		}
		return lm.Ms, fm.Ms, nil
	}
	m1, m2, err := sample(1, 1)
	if err != nil {
		return nil, 0, err
	}
	reps := 1
	if longest := math.Max(m1, m2); longest > 0 {
		reps = int(math.Ceil(float64(sampleTarget) / float64(time.Millisecond) / longest))
	}
	reps = max(1, min(reps, maxReps))
	warmup := min(reps, 4)
	ms := make([][]float64, 2)
	for s := 0; s < r.opt.Samples; s++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		a, b, err := sample(reps, warmup)
		if err != nil {
			return nil, 0, err
		}
		ms[0], ms[1] = append(ms[0], a), append(ms[1], b)
	}
	return ms, reps, nil
}

// chase follows a chain through a's scratch memory from b's device: a is the
// memory's owner (the figure's source), b runs the chase (its destination).
func (r *ipcRun) chase(ctx context.Context, p ipcPair, ws uint64) {
	f := r.figure(p, "ipc_lat_chase", "sm", "ns", convChase+convIPCChase, ws)
	f.Params["working_set"] = FormatBytes(ws)
	f.Params["stride"] = strconv.Itoa(chaseStride)
	f.Params["hops_per_sample"] = strconv.Itoa(chaseHops)
	f.Params["memory"] = "ipc"
	if l2 := r.infos[f.Src].L2CacheBytes; l2 > 0 {
		if ws <= uint64(l2)/2 {
			f.Params["cache"] = "in_l2"
		} else if ws > 2*uint64(l2) {
			f.Params["cache"] = "beyond_l2"
		}
	}
	err := r.usable(p)
	if err == nil {
		var rep samplesReply
		err = r.call(ctx, p, p.b, opChase, chaseReq{Owner: p.a, Runner: p.b, Bytes: ws, Seed: r.nextSeed()}, &rep)
		f.Samples = rep.Samples
	}
	r.record(ctx, p, []results.Figure{f}, err)
}

// pingPong bounces a flag between a (initiator) and b (responder), each
// kernel in its own process.
func (r *ipcRun) pingPong(ctx context.Context, p ipcPair) {
	iters, chunk := uint32(pingIters), uint32(pingChunk)
	if p.sameGPU {
		iters, chunk = ipcSameGPUPingIters, ipcSameGPUPingChunk
	}
	rt := r.figure(p, "ipc_lat_pingpong", "sm", "ns", convPing+convIPCPing, 4)
	rt.Params["round_trips_per_sample"] = strconv.Itoa(int(chunk))
	ow := rt
	ow.Params = withParam(rt.Params, "measure", "one_way")
	rt.Params["measure"] = "round_trip"
	figs := []results.Figure{rt, ow}
	err := r.usable(p)
	if err == nil {
		var times []uint64
		times, err = r.bounce(ctx, p, iters, chunk)
		for j := 0; j+1 < len(times); j++ {
			per := float64(times[j+1]-times[j]) / float64(chunk)
			figs[0].Samples = append(figs[0].Samples, per)
			figs[1].Samples = append(figs[1].Samples, per/2)
		}
	}
	r.record(ctx, p, figs, err)
}

// bounce runs one ping-pong and returns the initiator's timestamps.
func (r *ipcRun) bounce(ctx context.Context, p ipcPair, iters, chunk uint32) ([]uint64, error) {
	timeout := uint64(ipcPingTimeout.Nanoseconds())
	side := func(me, peer int, role uint32) pingPongReq {
		return pingPongReq{Me: me, Peer: peer, Role: role, Iters: iters, Chunk: chunk, TimeoutNs: timeout}
	}
	// The responder goes first, so the initiator's first store finds it waiting.
	if err := r.call(ctx, p, p.b, opPingPong, side(p.b, p.a, 1), nil); err != nil {
		return nil, err
	}
	errA := r.call(ctx, p, p.a, opPingPong, side(p.a, p.b, 0), nil)
	// Either kernel gives up by itself after its timeout, so both waits end.
	var ra, rb pingPongReply
	errB := r.call(ctx, p, p.b, opPingPongWait, rankReq{Rank: p.b}, &rb)
	if errA == nil {
		errA = r.call(ctx, p, p.a, opPingPongWait, rankReq{Rank: p.a}, &ra)
	}
	if err := errors.Join(errA, errB); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		rank   int
		status uint32
	}{{p.a, ra.Status}, {p.b, rb.Status}} {
		if s.status != 1 {
			return nil, fmt.Errorf("device %d: ping-pong timed out after %v (status %d): the peer process's stores never became visible", r.dev(s.rank), ipcPingTimeout, s.status)
		}
	}
	return ra.Times, nil
}
