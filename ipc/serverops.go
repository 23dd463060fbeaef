package ipc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
)

// The measurements a child makes for the parent: on the buffers of the
// ranks it hosts, and on those it mapped from other processes.

// data fills, poisons or checks a buffer in its owner's process.
func (c *server) data(op string, req dataReq) (checkReply, error) {
	h := c.hosted[req.Buf.Rank]
	if h == nil {
		return checkReply{}, fmt.Errorf("ipc-child: rank %d's memory is checked by its own process", req.Buf.Rank)
	}
	p, err := c.ptr(req.Buf.Rank, req.Buf, req.Bytes)
	if err != nil {
		return checkReply{}, err
	}
	switch op {
	case opFill:
		return checkReply{}, h.dv.Fill(p, req.Bytes, req.Seed)
	case opPoison:
		return checkReply{}, h.dv.Poison(p, req.Bytes)
	}
	err = h.dv.Check(p, req.Bytes, req.Seed)
	var mm *measure.Mismatch
	if errors.As(err, &mm) {
		return checkReply{BadWords: mm.BadWords, FirstBadByte: mm.FirstBadByte}, nil
	}
	return checkReply{}, err
}

// transfer builds the transfer of x, issued by x.Issuer: cuMemcpyAsync on
// the (mapped) addresses for the copy engine, cuMemcpyPeerAsync for a
// PeerContext copy, else the SM copy kernel.
func (c *server) transfer(x flow) (*hostedRank, measure.Transfer, error) {
	h, err := c.issuer(x.Issuer)
	if err != nil {
		return nil, measure.Transfer{}, err
	}
	src, err := c.ptr(x.Issuer, x.Src, x.Bytes)
	if err != nil {
		return nil, measure.Transfer{}, err
	}
	dst, err := c.ptr(x.Issuer, x.Dst, x.Bytes)
	if err != nil {
		return nil, measure.Transfer{}, err
	}
	if c.pending[x.Issuer] != nil {
		return nil, measure.Transfer{}, fmt.Errorf("ipc-child: rank %d already has a sample queued", x.Issuer)
	}
	t := measure.Transfer{Dev: h.dv}
	switch {
	case x.SM != nil:
		// Repetitions travel as they always have (the requests' Reps and
		// Warmup): the child's SMCopy decides, by the size, whether they
		// are one launch each or one launch together (measure.InKernelReps,
		// which the parent's figure records by the same rule).
		t, err = h.dv.SMCopy(*x.SM, dst, src, x.Bytes)
	case x.PeerContext:
		t.Op, err = c.peerContextOp(h, x)
	default:
		t.Op = h.dv.Copy(dst, src, x.Bytes)
	}
	if err != nil {
		return nil, measure.Transfer{}, err
	}
	return h, t, nil
}

// peerContextOp builds a PeerContext copy of x: the issuer's own buffer on
// one side, on the other the other rank's buffer as opened in this process's
// context on that rank's device, copied with cuMemcpyPeerAsync between the
// two contexts on the issuer's stream.
func (c *server) peerContextOp(h *hostedRank, x flow) (func(cuda.Stream) error, error) {
	own, other := x.Src, x.Dst
	if own.Rank != x.Issuer {
		own, other = other, own
	}
	if own.Rank != x.Issuer || other.Rank == x.Issuer {
		return nil, fmt.Errorf("ipc-child: a peer-context copy issued by rank %d must involve its own buffer and another rank's", x.Issuer)
	}
	ownPtr, err := c.ptr(x.Issuer, own, x.Bytes)
	if err != nil {
		return nil, err
	}
	otherPtr, otherCtx, err := c.onPeerDevice(h, other, x.Bytes)
	if err != nil {
		return nil, err
	}
	op := h.dv.PeerCopy(otherPtr, otherCtx, ownPtr, h.dv.Ctx, x.Bytes)
	if own == x.Dst {
		op = h.dv.PeerCopy(ownPtr, h.dv.Ctx, otherPtr, otherCtx, x.Bytes)
	}
	return func(s cuda.Stream) error {
		if err := op(s); err != nil {
			return fmt.Errorf("%w (the peer's buffer opened in a context on device %d)", err, otherCtx.Device())
		}
		return nil
	}, nil
}

// onPeerDevice returns ref's buffer as opened in this process's context on
// its own device, and that context. The context is the device's primary
// context (retained by the driver binding, released when the process ends
// its driver); peer access is enabled both ways between it and the issuer's,
// and the handle is opened there once (VMM memory, mapped once per process,
// is made accessible to that device). On a simulated driver the other
// rank is hosted in this process (a stand-in, or this process's own rank
// when a stand-in issues): its buffer is used as it is (VMM memory made
// accessible to the issuer's device).
func (c *server) onPeerDevice(h *hostedRank, ref bufRef, bytes uint64) (cuda.DevicePtr, gpu.Context, error) {
	if st := c.hosted[ref.Rank]; c.sim && st != nil {
		p, err := c.ptr(ref.Rank, ref, bytes)
		if err == nil {
			err = h.enableBothWays(st.dv.Ctx)
		}
		if _, ok := c.handles.vmm(); ok && err == nil {
			err = st.grantVMM(h.dv.Index)
		}
		return p, st.dv.Ctx, err
	}
	imp := c.imports[ref.Rank]
	if imp == nil {
		return 0, nil, fmt.Errorf("ipc-child: rank %d has not mapped rank %d's memory", h.rank, ref.Rank)
	}
	hd, ok := imp.handles[ref.Name]
	a, isVMM := imp.vmm[ref.Name]
	if !ok && !isVMM {
		return 0, nil, fmt.Errorf("ipc-child: rank %d has no %s buffer", ref.Rank, ref.Name)
	}
	if bytes > imp.sizes[ref.Name] {
		return 0, nil, fmt.Errorf("ipc-child: %d bytes of rank %d's %s buffer of %d", bytes, ref.Rank, ref.Name, imp.sizes[ref.Name])
	}
	if imp.dev == h.dv.Index {
		return 0, nil, fmt.Errorf("ipc-child: rank %d is on this process's device %d: no other device's context to open its buffer in", ref.Rank, imp.dev)
	}
	if imp.peerCtx == nil {
		pc, err := c.drv.Context(imp.dev)
		if err != nil {
			return 0, nil, fmt.Errorf("opening device %d's primary context in rank %d's process: %w", imp.dev, h.rank, err)
		}
		if err := h.enableBothWays(pc); err != nil {
			return 0, nil, err
		}
		imp.peerCtx = pc
	}
	if p := imp.onPeer[ref.Name]; p != 0 {
		return p, imp.peerCtx, nil
	}
	var p cuda.DevicePtr
	var err error
	if isVMM {
		// VMM memory is mapped once in the process: the peer's device is
		// granted access to that mapping too.
		p, err = a.p, h.dv.Ctx.MemSetAccess(a.p, a.span, h.dv.Index, imp.dev)
	} else {
		p, err = imp.peerCtx.IpcOpenMemHandle(hd, lazyEnablePeerAccess)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("opening rank %d's %s buffer in a context on its own device %d: %w", ref.Rank, ref.Name, imp.dev, err)
	}
	imp.onPeer[ref.Name] = p
	return p, imp.peerCtx, nil
}

// enableBothWays enables peer access between h's context and pc, both ways,
// once, with h's bookkeeping (its release disables what it enabled).
func (h *hostedRank) enableBothWays(pc gpu.Context) error {
	if h.peers.Enabled(h.dv.Index, pc.Device()) && h.peers.Enabled(pc.Device(), h.dv.Index) {
		return nil
	}
	return h.peers.EnableBoth(h.dv.Ctx, pc)
}

// time measures one transfer alone, with this process's latch.
func (c *server) time(ctx context.Context, req timeReq) (timeReply, error) {
	_, t, err := c.transfer(req.X)
	if err != nil {
		return timeReply{}, err
	}
	ts := []measure.Transfer{t}
	tm := measure.Timing{Reps: req.Reps, Warmup: req.Warmup}
	switch {
	case req.Reps < 0 || req.Warmup < 0:
		return timeReply{}, fmt.Errorf("ipc-child: %d repetitions and %d warm-ups", req.Reps, req.Warmup)
	case req.Reps == 0:
		longest, err := c.timer.Longest(ctx, ts)
		if err != nil {
			return timeReply{}, err
		}
		tm = measure.WindowTimingFor(longest, measure.SampleTarget)
	}
	n := req.Samples
	if tm.Few && req.FewSamples > 0 {
		n = req.FewSamples
	}
	ms, err := c.timer.Measure(ctx, ts, tm, max(1, n))
	if err != nil {
		return timeReply{}, err
	}
	return timeReply{Reps: tm.Reps, Warmup: tm.Warmup, Few: tm.Few, Ms: ms[0]}, nil
}

// queue enqueues one sample of a transfer that runs with another process's.
// The leader holds its stream with the latch and records its start event
// behind it; a follower's stream waits on that event, so the leader's one
// release starts both.
func (c *server) queue(req sampleReq, lead bool) error {
	h, t, err := c.transfer(req.X)
	if err != nil {
		return err
	}
	if req.Reps < 1 || req.Warmup < 0 {
		return fmt.Errorf("ipc-child: %d repetitions and %d warm-ups", req.Reps, req.Warmup)
	}
	dv := h.dv
	var wait cuda.Event
	if !lead {
		if wait, err = c.startEvent(h.rank, req.Leader); err != nil {
			return err
		}
	}
	s, err := dv.Stream(0)
	if err != nil {
		return err
	}
	var ev [2]cuda.Event
	for i := range ev {
		if ev[i], err = dv.Event(i); err != nil {
			return err
		}
	}
	if lead {
		if err := dv.Hold(s, c.timer.LatchTimeout); err != nil {
			return err
		}
		err = dv.Ctx.EventRecord(h.start, s)
		if err != nil {
			err = fmt.Errorf("device %d: recording the interprocess start event: %w", dv.Index, err)
		}
	} else if err = dv.Ctx.StreamWaitEvent(s, wait); err != nil {
		err = fmt.Errorf("device %d: waiting on rank %d's start event: %w", dv.Index, req.Leader, err)
	}
	if err == nil {
		err = t.Enqueue(dv.Ctx, s, ev[0], ev[1], measure.Timing{Reps: req.Reps, Warmup: req.Warmup})
	}
	if err != nil {
		if lead {
			dv.Release()
		}
		return err
	}
	c.pending[h.rank] = &queuedSample{h: h, start: ev[0], end: ev[1], reps: req.Reps, latched: lead}
	return nil
}

// finish releases (leader) or collects (follower) the sample queued for rank
// and returns the milliseconds of one repetition.
func (c *server) finish(rank int, release bool) (float64, error) {
	q := c.pending[rank]
	if q == nil || q.latched != release {
		return 0, fmt.Errorf("ipc-child: rank %d has no sample queued by %s", rank, map[bool]string{true: opArm, false: opFollow}[release])
	}
	delete(c.pending, rank)
	dv := q.h.dv
	if release {
		dv.Release()
	}
	ms, err := dv.Elapsed(q.start, q.end, q.reps)
	if err != nil {
		return 0, err
	}
	if release {
		if err := dv.HeldTooLong(); err != nil {
			return 0, err
		}
	}
	return ms, nil
}

// chase builds a random chain through owner's scratch buffer as the runner
// maps it (addresses differ between processes, so the runner writes it) and
// follows it from the runner's device.
func (c *server) chase(req chaseReq) ([]float64, error) {
	h, err := c.issuer(req.Runner)
	if err != nil {
		return nil, err
	}
	buf, err := c.ptr(req.Runner, bufRef{req.Owner, bufScratch}, req.Bytes)
	if err != nil {
		return nil, err
	}
	if h.bufs[bufSmall] == 0 {
		return nil, fmt.Errorf("ipc-child: a chase of %d bytes needs the small buffer", req.Bytes)
	}
	dv := h.latency()
	// BuildChain refuses a chain that is not a power of two of nodes.
	start, err := dv.BuildChain(buf, req.Bytes, req.Seed)
	if err != nil {
		return nil, fmt.Errorf("through the IPC mapping: %w", err)
	}
	return dv.Chase(start, req.Bytes, req.Chunks)
}

// pingPong launches one side of a ping-pong: this rank's flag in its own
// memory, the peer's flag through the IPC mapping. It does not wait.
func (c *server) pingPong(req pingPongReq) error {
	h, err := c.issuer(req.Me)
	if err != nil {
		return err
	}
	if _, busy := c.pings[req.Me]; busy {
		return fmt.Errorf("ipc-child: rank %d's ping-pong is already running", req.Me)
	}
	if _, err := c.ptr(req.Me, bufRef{req.Me, bufSmall}, measure.SmallBytes); err != nil {
		return err
	}
	peer, err := c.ptr(req.Me, bufRef{req.Peer, bufSmall}, measure.SmallBytes)
	if err != nil {
		return err
	}
	// The flag must be 0 before the peer's kernel can store to it: clear it
	// and wait, before this side (and so the peer) starts.
	dv := h.latency()
	if req.Slot < 0 || req.Slot >= measure.FlagSlots {
		return fmt.Errorf("ipc-child: flag slot %d is not one of the %d", req.Slot, measure.FlagSlots)
	}
	if err := dv.PreparePingPong(kernels.PingPong, req.Slot); err != nil {
		return err
	}
	if err := dv.LaunchPingPong(kernels.PingPong, peer, req.Slot, req.Role, req.Iters, req.Chunk, time.Duration(req.TimeoutNs)); err != nil {
		return err
	}
	c.pings[req.Me] = req
	return nil
}

// pingPongWait waits for rank's ping-pong kernel and returns its status and,
// for the initiator, its timestamps.
func (c *server) pingPongWait(rank int) (pingPongReply, error) {
	req, ok := c.pings[rank]
	if !ok {
		return pingPongReply{}, fmt.Errorf("ipc-child: no ping-pong of rank %d to wait for", rank)
	}
	delete(c.pings, rank)
	dv := c.hosted[rank].latency()
	st, err := dv.WaitPingPong()
	if err != nil {
		return pingPongReply{}, err
	}
	out := pingPongReply{Status: st}
	if st == 1 && req.Role == 0 {
		if out.Times, err = dv.PingPongTimes(req.Iters, req.Chunk); err != nil {
			return pingPongReply{}, err
		}
	}
	return out, nil
}

// renewable is what a child renews between rounds: not the buffers (the
// flag buffer among them), which other processes have mapped at their
// addresses, nor the context of its copies, where its interprocess start
// event lives; the context of its latency kernels (hostedRank.lat), with
// their streams and modules, is.
const (
	renewable    = measure.RenewStreams | measure.RenewEvents | measure.RenewModules | measure.RenewContext
	latRenewable = measure.RenewContext | measure.RenewStreams | measure.RenewModules | measure.RenewOffset
)

// renew makes afresh, on every rank this process hosts, what req names of
// renewable.
func (c *server) renew(req renewReq) error {
	var errs []error
	for _, h := range c.hosted {
		errs = append(errs, h.dv.Renew(req.What&renewable&^measure.RenewContext, req.Round))
		if h.lat != nil {
			errs = append(errs, h.lat.Renew(req.What&latRenewable, req.Round))
		}
	}
	return errors.Join(errs...)
}
