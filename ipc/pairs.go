package ipc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// pairTests runs every selected test on p. Between two devices the
// copy-engine tests run twice: as every one-GPU-per-process job copies (the
// peer's buffer opened in the process's own context, cuMemcpyAsync), and
// with the peer's buffer opened in a context on the peer's device (see
// flow.PeerContext).
func (r *parent) pairTests(ctx context.Context, p pair) {
	// Counter windows back to back share a reading (measure.Meter); what
	// moves NVLink traffic outside them (another pair, the latency tests,
	// SM copies) breaks the chain.
	r.traffic.Invalidate()
	for _, t := range r.opt.Tests {
		if ctx.Err() != nil {
			return
		}
		switch t {
		case results.IPCLatChase:
			r.traffic.Invalidate()
			for _, ws := range measure.ChaseWorkingSets {
				r.chase(ctx, p, ws)
			}
			continue
		case results.IPCLatPingPong:
			r.traffic.Invalidate()
			if !p.sameGPU { // see noteStart
				r.pingPong(ctx, p)
			}
			continue
		}
		sm, dir := measure.CopyOf(t)
		opens := []bool{false}
		if !sm && !p.sameGPU && r.handles != HandlesFabric {
			opens = append(opens, true)
		}
		for _, o := range opens {
			switch {
			case dir != "":
				r.uni(ctx, p, t, dir, o)
			case !p.sameGPU && r.handles != HandlesFabric: // see the notes of noteStart
				r.bidir(ctx, p, t, results.DirRead, o)
				r.bidir(ctx, p, t, results.DirWrite, o)
			}
		}
	}
}

// figure starts an IPC figure of pair p.
func (r *parent) figure(p pair, test results.Test, engine results.Engine, size uint64) results.Figure {
	f := results.Figure{Test: test, Engine: engine, Src: r.dev(p.a), Dst: r.dev(p.b), Size: size, Unit: test.Info().Unit,
		Params: map[string]string{"processes": "2", "same_gpu": strconv.FormatBool(p.sameGPU)}}
	if r.sim {
		f.Params["ipc_mapping"] = "simulated"
	}
	switch r.handles {
	case HandlesVMM:
		f.Params[results.ParamIPCHandle] = results.IPCHandleVMM
	case HandlesFabric:
		f.Params[results.ParamIPCHandle] = results.IPCHandleFabric
	}
	return f
}

// flowOf returns the transfer and figure of one direction of a bandwidth
// test: data from src's send buffer to dst's receive buffer, issued by dst
// (read) or src (write).
func (r *parent) flowOf(p pair, test results.Test, dir results.Direction, src, dst int, peerCtx bool) (flow, results.Figure) {
	x := flow{Issuer: dst, Src: bufRef{src, bufSend}, Dst: bufRef{dst, bufRecv}, Bytes: r.opt.Size}
	if dir == results.DirWrite {
		x.Issuer = src
	}
	engine := results.EngineCopy
	var params map[string]string
	if sm, _ := measure.CopyOf(test); sm {
		sm := r.opt.SMForTest(test, r.dev(p.a), r.dev(p.b), measure.TuneDirection(dir, test.Info().BothWays), r.opt.Size)
		x.SM = &sm
		engine, params = sm.Engine(), sm.FigureParams(r.opt.Size)
	} else {
		x.PeerContext = peerCtx
	}
	f := r.figure(p, test, engine, r.opt.Size)
	f.Direction = dir
	maps.Copy(f.Params, params)
	switch {
	case x.PeerContext:
		f.Params["copy_call"] = "cuMemcpyPeerAsync"
		f.Params[results.ParamIPCOpen] = results.IPCOpenPeerDevice
	case x.SM == nil:
		f.Params["copy_call"] = "cuMemcpyAsync"
	}
	return x, f
}

// uni measures one direction of p alone.
func (r *parent) uni(ctx context.Context, p pair, test results.Test, dir results.Direction, peerCtx bool) {
	if r.share(r.opt.Samples) == 0 {
		return
	}
	x, f := r.flowOf(p, test, dir, p.a, p.b, peerCtx)
	figs := []results.Figure{f}
	err := r.usable(p)
	if err == nil {
		err = r.bandwidth(ctx, p, []flow{x}, figs)
	}
	r.record(ctx, p, figs, err)
}

// bidir measures both directions of p at once, each issued by its own
// process: forward a → b, reverse b → a (filed under the pair a, b), total.
func (r *parent) bidir(ctx context.Context, p pair, test results.Test, dir results.Direction, peerCtx bool) {
	if r.share(r.opt.Samples) == 0 {
		return
	}
	fx, ff := r.flowOf(p, test, dir, p.a, p.b, peerCtx)
	rx, rf := r.flowOf(p, test, dir, p.b, p.a, peerCtx)
	ff.Part, rf.Part = results.PartForward, results.PartReverse
	rf.Src, rf.Dst = ff.Src, ff.Dst
	tf := ff
	tf.Part = results.PartTotal
	tf.Params = maps.Clone(ff.Params)
	figs := []results.Figure{ff, rf, tf}
	err := r.usable(p)
	if err == nil {
		err = r.bandwidth(ctx, p, []flow{fx, rx}, figs)
	}
	r.record(ctx, p, figs, err)
}

// bandwidth measures this round's samples of one transfer alone, or two at
// once (the first issuer leads), verifies them in the processes that own the
// data (in the first round), and fills figs: one figure per transfer, then
// the total when there are two.
func (r *parent) bandwidth(ctx context.Context, p pair, xs []flow, figs []results.Figure) error {
	seeds := make([]uint32, len(xs))
	if r.verifying() {
		for i, x := range xs {
			seeds[i] = r.seeds.Next()
			if err := r.call(ctx, p, x.Src.Rank, opFill, dataReq{Buf: x.Src, Bytes: x.Bytes, Seed: seeds[i]}, nil); err != nil {
				return err
			}
			if err := r.call(ctx, p, x.Dst.Rank, opPoison, dataReq{Buf: x.Dst, Bytes: x.Bytes}, nil); err != nil {
				return err
			}
		}
	}
	// The wire of the copy engine's figures only: they are what the
	// arrangements of the buffers change (the engine of the GPU that holds
	// the buffer makes the copy); SM copies across processes run the
	// kernels whose wire the same run measured in one process, and each
	// window costs two readings of about 22 ms.
	var win *measure.Window
	if !p.sameGPU && r.round == 0 && figs[0].Engine == results.EngineCopy {
		win = r.traffic.Begin(r.dev(xs[0].Src.Rank), r.dev(xs[0].Dst.Rank), xs[0].Bytes)
	}
	if win == nil {
		r.traffic.Invalidate()
	}
	// Windows of a millisecond or more take a quarter of the samples, as in
	// one process (measure.Timing.Samples); the rounds stay as many. Before
	// the timing is known (the first round), the child chooses once it has
	// calibrated: samples, or few for long windows.
	key := figs[0].Key()
	tm, known := r.timings[key]
	samples := r.share(tm.Samples(r.opt.Samples, r.opt.Rounds))
	few := r.share(measure.Timing{Few: true}.Samples(r.opt.Samples, r.opt.Rounds))
	var ms [][]float64
	if len(xs) == 1 {
		var rep timeReply
		if err := r.call(ctx, p, xs[0].Issuer, opTime, timeReq{X: xs[0], Samples: samples, FewSamples: few, Reps: tm.Reps, Warmup: tm.Warmup}, &rep); err != nil {
			return err
		}
		ms, tm = [][]float64{rep.Ms}, measure.Timing{Reps: rep.Reps, Warmup: rep.Warmup, Few: rep.Few}
	} else {
		var err error
		if ms, tm, err = r.together(ctx, p, xs[0], xs[1], tm, samples); err != nil {
			return err
		}
	}
	if !known {
		r.timings[key] = tm
	}
	win.End()
	verify := results.VerifySkipped
	if r.verifying() {
		verify = results.VerifyPassed
	}
	sizes := make([]uint64, len(xs))
	for i, x := range xs {
		sizes[i] = x.Bytes
		f := &figs[i]
		f.Samples = measure.GBps(x.Bytes, ms[i])
		f.Params = tm.Record(f.Params)
		f.Verify = results.VerifySkipped
		if !r.verifying() {
			continue
		}
		if err := r.check(ctx, p, x, seeds[i], f); err != nil {
			return err
		}
		if f.Verify == results.VerifyFailed {
			verify = results.VerifyFailed
		}
	}
	if len(xs) == 2 {
		t := &figs[2]
		t.Samples = measure.TotalGBps(sizes, ms)
		t.Params = tm.Record(t.Params)
		t.Verify = verify
	}
	win.Attach(figs)
	return nil
}

// check verifies the data x moved in the process that owns its destination
// and records the outcome in f; it returns an error only when the pair
// cannot go on (the run cancelled, the checking process gone).
func (r *parent) check(ctx context.Context, p pair, x flow, seed uint32, f *results.Figure) error {
	f.Verify = results.VerifyPassed
	var rep checkReply
	if err := r.call(ctx, p, x.Dst.Rank, opCheck, dataReq{Buf: x.Dst, Bytes: x.Bytes, Seed: seed}, &rep); err != nil {
		if ctx.Err() != nil || !r.kids[x.Dst.Rank].alive() {
			return err
		}
		f.Verify, f.VerifyDetail = results.VerifyFailed, err.Error()
		f.Error, f.ErrorName = "verification could not run: "+err.Error(), cuda.NameOf(err)
	} else if rep.BadWords > 0 {
		f.Verify = results.VerifyFailed
		f.VerifyDetail = (&measure.Mismatch{FirstBadByte: rep.FirstBadByte, BadWords: rep.BadWords}).Error() + fmt.Sprintf(" (checked by device %d's process)", r.dev(x.Dst.Rank))
	}
	return nil
}

// together times samples of lead and follow at once, each in its own
// process (see sample), with timing tm (a tm of no repetitions: calibrated
// first, as in a figure's first round). It returns the milliseconds of one
// repetition per sample for each, and the timing.
func (r *parent) together(ctx context.Context, p pair, lead, follow flow, tm measure.Timing, samples int) ([][]float64, measure.Timing, error) {
	if tm.Reps == 0 {
		m1, m2, err := r.sample(ctx, p, lead, follow, measure.Timing{Reps: 1, Warmup: 1})
		if err != nil {
			return nil, tm, err
		}
		tm = measure.WindowTimingFor(math.Max(m1, m2), measure.SampleTarget)
		samples = r.share(tm.Samples(r.opt.Samples, r.opt.Rounds))
	}
	ms := make([][]float64, 2)
	for range samples {
		if err := ctx.Err(); err != nil {
			return nil, tm, err
		}
		a, b, err := r.sample(ctx, p, lead, follow, tm)
		if err != nil {
			return nil, tm, err
		}
		ms[0], ms[1] = append(ms[0], a), append(ms[1], b)
	}
	return ms, tm, nil
}

// sample times one sample of lead and follow at once: the leader arms its
// latch and records its start event behind it, the follower's stream waits
// on that event through IPC, and one release of the leader's latch starts
// both.
func (r *parent) sample(ctx context.Context, p pair, lead, follow flow, tm measure.Timing) (float64, float64, error) {
	L, F := lead.Issuer, follow.Issuer
	if err := r.call(ctx, p, L, opArm, sampleReq{X: lead, Reps: tm.Reps, Warmup: tm.Warmup, Leader: L}, nil); err != nil {
		return 0, 0, err
	}
	if err := r.call(ctx, p, F, opFollow, sampleReq{X: follow, Reps: tm.Reps, Warmup: tm.Warmup, Leader: L}, nil); err != nil {
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
			fk.giveUp(opCollect, fmt.Errorf("%w: its stream waits on an IPC event of rank %d's process, which failed mid-sample; killed", errChildHung, L))
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

// chase follows a chain through a's scratch memory from b's device: a is the
// memory's owner (the figure's source), b runs the chase (its destination).
func (r *parent) chase(ctx context.Context, p pair, ws uint64) {
	chunks := r.share(measure.ChaseChunks)
	if chunks == 0 {
		return
	}
	f := r.figure(p, results.IPCLatChase, results.EngineSM, ws)
	maps.Copy(f.Params, measure.ChaseParams(ws, "ipc", r.infos[f.Src].L2CacheBytes))
	err := r.usable(p)
	// The same chains every round (measure.ChaseChains), as in one process.
	shares := measure.ChainShares(chunks, ws, uint64(max(0, r.infos[f.Src].L2CacheBytes)))
	for i, n := range shares {
		if err != nil {
			break
		}
		var rep samplesReply
		err = r.call(ctx, p, p.b, opChase, chaseReq{Owner: p.a, Runner: p.b, Bytes: ws, Seed: measure.ChainSeed(f.Key(), i), Chunks: n}, &rep)
		f.Samples = append(f.Samples, rep.Samples...)
	}
	f.Params["chains"] = strconv.Itoa(len(shares))
	r.record(ctx, p, []results.Figure{f}, err)
}

// pingPong bounces a flag between a (initiator) and b (responder), each
// kernel in its own process: a sample at every flag slot of the round, in
// an order drawn afresh (measure.PingSlotOrder), as in one process.
func (r *parent) pingPong(ctx context.Context, p pair) {
	rt := r.figure(p, results.IPCLatPingPong, results.EngineSM, 4)
	rt.Params["round_trips_per_sample"] = strconv.Itoa(measure.PingRoundTrips)
	ow := rt
	ow.Params = measure.WithParam(rt.Params, "measure", "one_way")
	rt.Params["measure"] = "round_trip"
	figs := []results.Figure{rt, ow}
	err := r.usable(p)
	for _, slot := range measure.PingSlotOrder() {
		if err != nil || ctx.Err() != nil {
			break
		}
		var per float64
		if per, err = r.bounce(ctx, p, slot); err == nil {
			figs[0].Samples = append(figs[0].Samples, per)
			figs[1].Samples = append(figs[1].Samples, per/2)
		}
	}
	r.record(ctx, p, figs, err)
}

// bounce runs one ping-pong, the flags at slot: measure.PingRoundTrips
// untimed round trips, then as many timed; it returns the timed ones'
// mean, in ns.
func (r *parent) bounce(ctx context.Context, p pair, slot int) (float64, error) {
	const chunk = measure.PingRoundTrips
	timeout := uint64(measure.PingTimeout.Nanoseconds())
	side := func(me, peer int, role uint32) pingPongReq {
		return pingPongReq{Me: me, Peer: peer, Slot: slot, Role: role, Iters: 2 * chunk, Chunk: chunk, TimeoutNs: timeout}
	}
	// The responder goes first, so the initiator's first store finds it waiting.
	if err := r.call(ctx, p, p.b, opPingPong, side(p.b, p.a, 1), nil); err != nil {
		return 0, err
	}
	errA := r.call(ctx, p, p.a, opPingPong, side(p.a, p.b, 0), nil)
	// Either kernel gives up by itself after its timeout, so both waits end.
	var ra, rb pingPongReply
	errB := r.call(ctx, p, p.b, opPingPongWait, rankReq{Rank: p.b}, &rb)
	if errA == nil {
		errA = r.call(ctx, p, p.a, opPingPongWait, rankReq{Rank: p.a}, &ra)
	}
	if err := errors.Join(errA, errB); err != nil {
		return 0, err
	}
	for _, s := range []struct {
		rank   int
		status uint32
	}{{p.a, ra.Status}, {p.b, rb.Status}} {
		if s.status != 1 {
			return 0, fmt.Errorf("device %d: ping-pong timed out after %v (status %d): the peer process's stores never became visible", r.dev(s.rank), measure.PingTimeout, s.status)
		}
	}
	if len(ra.Times) != 3 {
		return 0, fmt.Errorf("device %d: the ping-pong returned %d timestamps, want 3", r.dev(p.a), len(ra.Times))
	}
	return float64(ra.Times[2]-ra.Times[1]) / chunk, nil
}
