package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// Conventions, said with every figure.
const (
	convRead  = "decimal GB/s (1e9 B/s) of one direction's bytes; read = pull: issued in the destination's context, reading the source's memory; row = source, column = destination"
	convWrite = "decimal GB/s (1e9 B/s) of one direction's bytes; write = push: issued in the source's context, writing the destination's memory; row = source, column = destination"
	convBidir = "decimal GB/s; both directions at once on two streams, each timed with its own events; forward = source→destination, reverse = destination→source, total = both directions' bytes over the longer of the two times"
	convStage = "decimal GB/s of one direction's bytes; cuMemcpyPeerAsync with peer access disabled (the driver stages through host memory); row = source, column = destination"
	convHost  = "decimal GB/s of one direction's bytes, pinned host memory, cuMemcpyAsync; -1 = host"
	convLocal = "decimal GB/s of bytes copied (each byte read once and written once) within one device's memory, cuMemcpyAsync"
	convAggr  = "decimal GB/s; every listed pair copying at once (copy engine, pushed from the source), each pair timed with its own events; total = all bytes over the longest pair's time"
)

// bandwidth converts a size and per-repetition milliseconds to GB/s samples.
func bandwidth(size uint64, ms []float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		if m > 0 {
			out[i] = float64(size) / (m * 1e-3) / 1e9
		}
	}
	return out
}

// totalBandwidth is, per sample, all bytes over the longest transfer's time.
func totalBandwidth(sizes []uint64, ms [][]float64) []float64 {
	if len(ms) == 0 {
		return nil
	}
	var bytes float64
	for _, s := range sizes {
		bytes += float64(s)
	}
	out := make([]float64, len(ms[0]))
	for k := range out {
		longest := 0.0
		for i := range ms {
			longest = max(longest, ms[i][k])
		}
		if longest > 0 {
			out[k] = bytes / (longest * 1e-3) / 1e9
		}
	}
	return out
}

// SMConfig is an SM copy kernel and its grid.
type SMConfig struct {
	Variant     string
	BlocksPerSM int
	BlockSize   int
}

func (c SMConfig) engine() string { return "sm:" + c.Variant }

func (c SMConfig) params() map[string]string {
	return map[string]string{
		"variant":       c.Variant,
		"blocks_per_sm": strconv.Itoa(c.BlocksPerSM),
		"block_size":    strconv.Itoa(c.BlockSize),
	}
}

// smConfig is the configuration the run uses for SM copies on s → d in the
// given direction: a tuned one when the options carry it, else the default.
func (e *Engine) smConfig(s, d int, direction string) SMConfig {
	if c, ok := e.opt.Tuned[TuneKey{s, d, direction}]; ok {
		return c
	}
	return SMConfig{e.opt.SMVariant, e.opt.BlocksPerSM, e.opt.BlockSize}
}

// copyOp returns the operation one transfer repeats: a copy-engine peer copy
// issued in issuer's context, or the SM copy kernel launched on issuer.
func (e *Engine) copyOp(issuer *device, engine string, sm SMConfig, dst cuda.DevicePtr, dstDev *device, src cuda.DevicePtr, srcDev *device, size uint64) (func(cuda.Stream) error, error) {
	switch engine {
	case "copy_engine", "staged":
		return func(s cuda.Stream) error {
			if err := issuer.ctx.MemcpyPeerAsync(dst, dstDev.ctx, src, srcDev.ctx, size, s); err != nil {
				return fmt.Errorf("cuMemcpyPeerAsync on device %d: %w", issuer.idx, err)
			}
			return nil
		}, nil
	}
	k, ok := kernels.CopyKernelByVariant(sm.Variant)
	if !ok {
		return nil, fmt.Errorf("unknown SM copy variant %q", sm.Variant)
	}
	f, err := issuer.function(k.Kernel)
	if err != nil {
		return nil, err
	}
	block := sm.BlockSize
	shared := 0
	if k.SharedBytes != nil {
		shared = k.SharedBytes(block)
		if shared > 48<<10 {
			if err := issuer.ctx.SetMaxDynamicShared(f, shared); err != nil {
				return nil, err
			}
		}
	}
	grid := uint32(max(1, issuer.info.SMCount) * sm.BlocksPerSM)
	args := kernels.CopyArgs{Dst: uint64(dst), Src: uint64(src), Bytes: size}.Params()
	return func(s cuda.Stream) error {
		if err := issuer.ctx.Launch(f, [3]uint32{grid, 1, 1}, [3]uint32{uint32(block), 1, 1}, uint32(shared), s, args...); err != nil {
			return fmt.Errorf("launching %s on device %d: %w", k.Entry, issuer.idx, err)
		}
		return nil
	}, nil
}

// flow is one directed copy of a test: its figure template and its transfer.
type flow struct {
	fig    results.Figure
	issuer *device
	src    *device
	dst    *device
	srcPtr cuda.DevicePtr
	dstPtr cuda.DevicePtr
	size   uint64
	seed   uint32
	sm     SMConfig
}

func (e *Engine) nextSeed() uint32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	// A new pattern per verification, so data left by an earlier test
	// never passes for this one's.
	e.seed = e.seed*1664525 + 1013904223
	return e.seed
}

// measureFlows runs flows concurrently and records their figures.
func (e *Engine) measureFlows(ctx context.Context, flows []flow, total *results.Figure) {
	for _, f := range e.flowFigures(ctx, flows, total, e.opt.Samples) {
		e.add(f)
	}
}

// flowFigures runs flows concurrently: prepares and verifies their data,
// times them, and returns one figure per flow, plus a total when total is not
// nil. A failure fails every figure of the group; a cancelled run returns none.
func (e *Engine) flowFigures(ctx context.Context, flows []flow, total *results.Figure, samples int) (out []results.Figure) {
	fail := func(err error) []results.Figure {
		if errors.Is(err, context.Canceled) {
			return nil
		}
		for _, fl := range flows {
			out = append(out, failFigure(fl.fig, err))
		}
		if total != nil {
			out = append(out, failFigure(*total, err))
		}
		return out
	}
	// Flows that read the same source buffer (one_to_all, all_pairs) share
	// one pattern, written once over the longest of their ranges: filling it
	// per flow would leave only the last seed in place.
	type source struct {
		dv *device
		p  cuda.DevicePtr
	}
	span := map[source]uint64{}
	for _, fl := range flows {
		k := source{fl.src, fl.srcPtr}
		span[k] = max(span[k], fl.size)
	}
	seeds := map[source]uint32{}
	if e.opt.Verify {
		for k, n := range span {
			seeds[k] = e.nextSeed()
			if err := k.dv.fill(k.p, n, seeds[k]); err != nil {
				return fail(err)
			}
		}
	}
	ts := make([]transfer, len(flows))
	for i, fl := range flows {
		engine := fl.fig.Engine
		op, err := e.copyOp(fl.issuer, engine, fl.sm, fl.dstPtr, fl.dst, fl.srcPtr, fl.src, fl.size)
		if err != nil {
			return fail(err)
		}
		// Staged copies (no peer access) go through the host and block it
		// until the stream reaches them: they cannot wait behind a latch.
		ts[i] = transfer{dv: fl.issuer, op: op, unlatched: engine == "staged"}
		if e.opt.Verify {
			flows[i].seed = seeds[source{fl.src, fl.srcPtr}]
			if err := fl.dst.poison(fl.dstPtr, fl.size); err != nil {
				return fail(err)
			}
		}
	}
	win := e.traffic.begin(linkPair(flows))
	tm, err := e.calibrate(ctx, ts)
	if err != nil {
		return fail(err)
	}
	ms, err := e.timeTransfers(ctx, ts, tm, samples)
	if err != nil {
		return fail(err)
	}
	traffic := win.end()
	sizes := make([]uint64, len(flows))
	verify := results.VerifySkipped
	if e.opt.Verify {
		verify = results.VerifyPassed
	}
	for i := range flows {
		fl := flows[i]
		sizes[i] = fl.size
		f := fl.fig
		f.Samples = bandwidth(fl.size, ms[i])
		f.Params = withParam(f.Params, "reps_per_sample", strconv.Itoa(tm.reps))
		f.Verify = results.VerifySkipped
		if e.opt.Verify {
			f.Verify = results.VerifyPassed
			if err := fl.dst.check(fl.dstPtr, fl.size, fl.seed); err != nil {
				f.Verify = results.VerifyFailed
				f.VerifyDetail = err.Error()
				verify = results.VerifyFailed
				var mm *Mismatch
				if !errors.As(err, &mm) {
					f.Error = "verification could not run: " + err.Error()
					f.ErrorName = cuda.NameOf(err)
				}
			}
		}
		out = append(out, f)
	}
	if total != nil {
		t := *total
		t.Samples = totalBandwidth(sizes, ms)
		t.Verify = verify
		t.Params = withParam(t.Params, "reps_per_sample", strconv.Itoa(tm.reps))
		out = append(out, t)
	}
	for i := range out {
		if len(out[i].Samples) > 0 {
			out[i].Stats = results.ComputeStats(out[i].Samples)
		}
	}
	attachTraffic(out, win, traffic)
	return out
}

// linkPair says which two devices' links a group of flows uses: one flow
// between two devices, or two flows between the same two in opposite
// directions (its first flow's src and dst); size is the largest transfer.
// Other groups (aggregates over many pairs, host copies, staged copies)
// give -1, -1.
func linkPair(flows []flow) (src, dst int, size uint64) {
	if len(flows) == 0 || len(flows) > 2 {
		return -1, -1, 0
	}
	f := flows[0]
	if f.src == nil || f.dst == nil || f.fig.Engine == "staged" {
		return -1, -1, 0
	}
	if len(flows) == 2 {
		g := flows[1]
		if g.src != f.dst || g.dst != f.src {
			return -1, -1, 0
		}
	}
	for _, fl := range flows {
		size = max(size, fl.size)
	}
	return f.src.idx, f.dst.idx, size
}

func withParam(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// pairFlow builds the flow of test (ce_*, sm_*, nop2p_copy) for data moving
// s → d. direction is "read" (issued by d) or "write" (issued by s).
func (e *Engine) pairFlow(test, direction string, s, d *device, size uint64, srcPtr, dstPtr cuda.DevicePtr) flow {
	engine := "copy_engine"
	var params map[string]string
	var sm SMConfig
	conv := convRead
	if direction == "write" {
		conv = convWrite
	}
	switch {
	case test == "nop2p_copy":
		engine, conv = "staged", convStage
	case len(test) > 3 && test[:3] == "sm_":
		tuneDir := direction
		if test == "sm_bidir" {
			tuneDir = "bidir_" + direction
		}
		sm = e.smConfig(s.idx, d.idx, tuneDir)
		engine, params = sm.engine(), sm.params()
	}
	if test == "ce_bidir" || test == "sm_bidir" {
		conv = convBidir
	}
	issuer := d
	if direction == "write" {
		issuer = s
	}
	return flow{
		fig: results.Figure{
			Test: test, Engine: engine, Direction: direction, Src: s.idx, Dst: d.idx,
			Size: size, Unit: "GB/s", Convention: conv, Params: params,
		},
		issuer: issuer, src: s, dst: d, srcPtr: srcPtr, dstPtr: dstPtr, size: size, sm: sm,
	}
}

// uniPair measures a one-direction test on s → d at size.
func (e *Engine) uniPair(ctx context.Context, test string, s, d *device, size uint64) {
	dir := "read"
	if test == "ce_write" || test == "sm_write" {
		dir = "write"
	}
	e.measureFlows(ctx, []flow{e.pairFlow(test, dir, s, d, size, s.send, d.recv)}, nil)
}

// bidirPair measures both directions between s and d at once.
func (e *Engine) bidirPair(ctx context.Context, test, dir string, s, d *device, size uint64) {
	fwd := e.pairFlow(test, dir, s, d, size, s.send, d.recv)
	fwd.fig.Part = "forward"
	rev := e.pairFlow(test, dir, d, s, size, d.send, s.recv)
	rev.fig.Part = "reverse"
	// Both parts are filed under the pair (s, d) of the matrix.
	rev.fig.Src, rev.fig.Dst = s.idx, d.idx
	tot := fwd.fig
	tot.Part = "total"
	e.measureFlows(ctx, []flow{fwd, rev}, &tot)
}

// hostCopy measures host→device (h2d) or device→host (d2h) on dv.
func (e *Engine) hostCopy(ctx context.Context, test string, dv *device, host cuda.HostBuffer, size uint64) {
	f := results.Figure{Test: test, Engine: "copy_engine", Src: -1, Dst: dv.idx, Size: size, Unit: "GB/s", Convention: convHost}
	var dst, src cuda.DevicePtr = dv.recv, host.Device
	if test == "d2h" {
		f.Src, f.Dst = dv.idx, -1
		dst, src = host.Device, dv.send
	}
	var seed uint32
	if e.opt.Verify {
		seed = e.nextSeed()
		if test == "h2d" {
			fillHost(host.Host[:size], seed)
			if err := dv.poison(dst, size); err != nil {
				e.add(failFigure(f, err))
				return
			}
		} else {
			if err := dv.fill(src, size, seed); err != nil {
				e.add(failFigure(f, err))
				return
			}
			poisonHost(host.Host[:size])
		}
	}
	op := func(s cuda.Stream) error {
		if err := dv.ctx.MemcpyAsync(dst, src, size, s); err != nil {
			return fmt.Errorf("cuMemcpyAsync on device %d: %w", dv.idx, err)
		}
		return nil
	}
	e.timeOneFor(ctx, f, []transfer{{dv: dv, op: op}}, size, hostSampleTarget, func() error {
		if test == "h2d" {
			return dv.check(dst, size, seed)
		}
		return checkHost(host.Host[:size], seed)
	})
}

// localCopy measures a device-to-device copy within dv.
func (e *Engine) localCopy(ctx context.Context, dv *device, size uint64) {
	f := results.Figure{Test: "local_copy", Engine: "copy_engine", Src: dv.idx, Dst: dv.idx, Size: size, Unit: "GB/s", Convention: convLocal}
	var seed uint32
	if e.opt.Verify {
		seed = e.nextSeed()
		if err := dv.fill(dv.send, size, seed); err != nil {
			e.add(failFigure(f, err))
			return
		}
		if err := dv.poison(dv.recv, size); err != nil {
			e.add(failFigure(f, err))
			return
		}
	}
	op := func(s cuda.Stream) error {
		if err := dv.ctx.MemcpyAsync(dv.recv, dv.send, size, s); err != nil {
			return fmt.Errorf("cuMemcpyAsync on device %d: %w", dv.idx, err)
		}
		return nil
	}
	e.timeOne(ctx, f, []transfer{{dv: dv, op: op}}, size, func() error { return dv.check(dv.recv, size, seed) })
}

// timeOne times a single-transfer figure and verifies it with check.
func (e *Engine) timeOne(ctx context.Context, f results.Figure, ts []transfer, size uint64, check func() error) {
	e.timeOneFor(ctx, f, ts, size, sampleTarget, check)
}

// timeOneFor is timeOne with another target sample time.
func (e *Engine) timeOneFor(ctx context.Context, f results.Figure, ts []transfer, size uint64, target time.Duration, check func() error) {
	tm, err := e.calibrateFor(ctx, ts, target)
	if err == nil {
		var ms [][]float64
		ms, err = e.timeTransfers(ctx, ts, tm, e.opt.Samples)
		if err == nil {
			f.Samples = bandwidth(size, ms[0])
			f.Params = withParam(f.Params, "reps_per_sample", strconv.Itoa(tm.reps))
		}
	}
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			e.add(failFigure(f, err))
		}
		return
	}
	f.Verify = results.VerifySkipped
	if e.opt.Verify {
		f.Verify = results.VerifyPassed
		if err := check(); err != nil {
			f.Verify, f.VerifyDetail = results.VerifyFailed, err.Error()
		}
	}
	e.add(f)
}

// aggregate measures concurrent copy-engine pushes over the given pairs; test
// is all_to_one, one_to_all or all_pairs. Each destination receives into its
// own slot of the receive buffer.
func (e *Engine) aggregate(ctx context.Context, test string, pairs [][2]int, size uint64) {
	n := len(e.order)
	slot := roundDown(e.devs[e.order[0]].bufBytes/uint64(max(1, n-1)), 256)
	size = min(size, slot)
	index := map[int]int{}
	for i, d := range e.order {
		index[d] = i
	}
	var flows []flow
	totalSrc, totalDst := -1, -1
	for _, p := range pairs {
		s, d := e.devs[p[0]], e.devs[p[1]]
		// Source slot: position of s among d's senders.
		k := index[s.idx]
		if k > index[d.idx] {
			k--
		}
		fl := e.pairFlow("ce_write", "write", s, d, size, s.send, d.recv+cuda.DevicePtr(uint64(k)*slot))
		fl.fig.Test, fl.fig.Part, fl.fig.Convention = test, "pair", convAggr
		flows = append(flows, fl)
	}
	switch test {
	case "all_to_one":
		totalDst = pairs[0][1]
	case "one_to_all":
		totalSrc = pairs[0][0]
	}
	tot := results.Figure{Test: test, Engine: "copy_engine", Direction: "write", Part: "total", Src: totalSrc, Dst: totalDst,
		Size: size, Unit: "GB/s", Convention: convAggr, Params: map[string]string{"pairs": strconv.Itoa(len(pairs))}}
	// Peer access for every pair (both ways: the copy engine may need either).
	var ok []flow
	for _, fl := range flows {
		if err := e.enablePair(fl.src, fl.dst); err != nil {
			e.add(failFigure(fl.fig, err))
			continue
		}
		ok = append(ok, fl)
	}
	if len(ok) > 0 {
		e.measureFlows(ctx, ok, &tot)
	} else {
		e.add(failFigure(tot, errors.New("no pair of the group has peer access")))
	}
	for _, fl := range ok {
		e.releasePair(fl.src, fl.dst)
	}
	e.disableIdle()
}

func roundDown(n, a uint64) uint64 { return n / a * a }

// enablePair enables access both ways between a and b.
func (e *Engine) enablePair(a, b *device) error {
	if err := e.peers.Enable(a.ctx, b.ctx); err != nil {
		return err
	}
	if err := e.peers.Enable(b.ctx, a.ctx); err != nil {
		e.peers.Release(a.ctx, b.ctx)
		return err
	}
	return nil
}

func (e *Engine) releasePair(a, b *device) {
	e.peers.Release(a.ctx, b.ctx)
	e.peers.Release(b.ctx, a.ctx)
}

func (e *Engine) disableIdle() {
	for _, err := range e.peers.DisableIdle() {
		e.note("%v", err)
	}
}
