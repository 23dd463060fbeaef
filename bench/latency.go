package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// chaseKeepMargin is the device memory a chase leaves free beside the
// allocations it keeps (Engine.chase).
const chaseKeepMargin = 1 << 30

// The small-copy latency test: samples of each figure (over all its
// rounds), and the copies in each sample of the back-to-back figure.
const (
	copyLatSamples   = results.DefaultSamples
	copyLatB2BCopies = 50
)

// latencySteps plans the selected latency tests.
func (e *Engine) latencySteps() []step {
	var steps []step
	if e.opt.Selected(results.LatChase) {
		for _, ws := range measure.ChaseWorkingSets {
			for _, p := range e.localAndDetailPairs() {
				o, r := p[0], p[1]
				steps = append(steps, step{fmt.Sprintf("chase %s %d→%d", results.FormatBytes(ws), o.Index, r.Index), func(ctx context.Context) {
					e.chase(ctx, o, r, ws)
				}, e.chaseCost(o, ws)})
			}
		}
	}
	if e.opt.Selected(results.LatPingPong) {
		for _, p := range e.detailPairs() {
			a, b := p[0], p[1]
			steps = append(steps, step{fmt.Sprintf("ping-pong %d↔%d", a.Index, b.Index), func(ctx context.Context) { e.pingPong(ctx, a, b) }, pingPongCost})
		}
	}
	if slices.ContainsFunc(copyLatTests, e.opt.Selected) {
		for _, p := range e.detailPairs() {
			s, d := p[0], p[1]
			steps = append(steps, step{fmt.Sprintf("copy latency %d→%d", s.Index, d.Index), func(ctx context.Context) { e.copyLatency(ctx, s, d) }, copyLatencyCost})
		}
	}
	return steps
}

// chase follows a chain through owner's memory from runner.
func (e *Engine) chase(ctx context.Context, owner, runner *measure.Device, ws uint64) {
	chunks := e.share(measure.ChaseChunks)
	if chunks == 0 {
		return
	}
	memory := "peer"
	if owner == runner {
		memory = "local"
	}
	f := results.Figure{Test: results.LatChase, Engine: results.EngineSM, Src: owner.Index, Dst: runner.Index, Size: ws, Unit: results.UnitNs,
		Params: measure.ChaseParams(ws, memory, owner.Info.L2CacheBytes)}
	err := func() error {
		if owner != runner {
			if err := e.peers.Enable(runner.Primary, owner.Primary); err != nil {
				return err
			}
			defer e.peers.Release(runner.Primary, owner.Primary)
		}
		buf, err := owner.Scratch(ws)
		if err != nil {
			return err
		}
		if ws > uint64(max(0, owner.Info.L2CacheBytes)) {
			// Beyond L2, a chain of its own allocation every round, so
			// that the rounds show where another process's memory would
			// lie (docs/methods.md, "Pointer chase"). Freed at once, the
			// next round's allocation would get the same memory back, so
			// each round's is kept to the end of the run while the device
			// has room for the rounds to come.
			fresh, err := owner.Primary.MemAlloc(ws)
			if err != nil {
				return fmt.Errorf("device %d: allocating the chase's %s: %w", owner.Index, results.FormatBytes(ws), err)
			}
			if free, _, ferr := owner.Primary.MemGetInfo(); ferr == nil && free > uint64(2*e.rounds)*ws+chaseKeepMargin {
				e.mu.Lock()
				e.chaseKept = append(e.chaseKept, keptAlloc{owner, fresh})
				e.mu.Unlock()
			} else {
				defer func() { _ = owner.Primary.MemFree(fresh) }()
			}
			buf = fresh
		}
		// The same chains every round (measure.ChaseChains): one chain
		// beyond L2 keeps one of two modes by its seed.
		shares := measure.ChainShares(chunks, ws, uint64(max(0, owner.Info.L2CacheBytes)))
		for i, n := range shares {
			start, err := owner.BuildChain(buf, ws, measure.ChainSeed(f.Key(), i))
			if err != nil {
				return err
			}
			s, err := runner.Chase(start, ws, n)
			if err != nil {
				return err
			}
			f.Samples = append(f.Samples, s...)
		}
		f.Params["chains"] = strconv.Itoa(len(shares))
		return nil
	}()
	e.addResult(err, f)
}

func (e *Engine) pingPong(ctx context.Context, a, b *measure.Device) {
	for _, k := range []kernels.Kernel{kernels.PingPong, kernels.PingPongRelaxed} {
		if ctx.Err() != nil {
			return
		}
		e.pingPongWith(ctx, a, b, k)
	}
}

// pingPongWith runs one ping-pong kernel: release/acquire flags (PingPong)
// or relaxed ones (PingPongRelaxed, what a polling protocol without fences
// sees). A round takes one sample at every flag slot, in an order drawn
// afresh (measure.PingSlotOrder): a ping-pong takes the time of where its
// flags sit, so a round's median is over the same places as any other's.
func (e *Engine) pingPongWith(ctx context.Context, a, b *measure.Device, k kernels.Kernel) {
	ordering := "release_acquire"
	if k.Entry == kernels.PingPongRelaxed.Entry {
		ordering = "relaxed"
	}
	base := results.Figure{Test: results.LatPingPong, Engine: results.EngineSM, Src: a.Index, Dst: b.Index, Size: 4, Unit: results.UnitNs}
	rt, ow := base, base
	rt.Params = map[string]string{"measure": "round_trip", "ordering": ordering, "round_trips_per_sample": strconv.Itoa(measure.PingRoundTrips)}
	ow.Params = map[string]string{"measure": "one_way", "ordering": ordering, "round_trips_per_sample": strconv.Itoa(measure.PingRoundTrips)}
	err := func() error {
		if err := e.enablePair(a, b); err != nil {
			return err
		}
		defer e.releasePair(a, b)
		for _, slot := range measure.PingSlotOrder() {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			per, err := bounce(a, b, k, slot)
			if err != nil {
				return err
			}
			rt.Samples = append(rt.Samples, per)
			ow.Samples = append(ow.Samples, per/2)
		}
		return nil
	}()
	e.addResult(err, rt, ow)
}

// bounce runs one ping-pong between a (initiator) and b (responder), the
// flags at slot: measure.PingRoundTrips untimed round trips, then as many
// timed; it returns the timed ones' mean, in ns.
func bounce(a, b *measure.Device, k kernels.Kernel, slot int) (float64, error) {
	const chunk = measure.PingRoundTrips
	small := map[*measure.Device]cuda.DevicePtr{}
	for _, d := range []*measure.Device{a, b} {
		if err := d.PreparePingPong(k, slot); err != nil {
			return 0, err
		}
		small[d], _ = d.Small()
	}
	// The responder goes first so the initiator's first store finds it waiting.
	if err := b.LaunchPingPong(k, small[a], slot, 1, 2*chunk, chunk, measure.PingTimeout); err != nil {
		return 0, err
	}
	if err := a.LaunchPingPong(k, small[b], slot, 0, 2*chunk, chunk, measure.PingTimeout); err != nil {
		return 0, err
	}
	for _, d := range []*measure.Device{a, b} {
		st, err := d.WaitPingPong()
		if err != nil {
			return 0, err
		}
		if st != 1 {
			return 0, fmt.Errorf("device %d: ping-pong timed out after %v (status %d): the peer's stores never became visible", d.Index, measure.PingTimeout, st)
		}
	}
	times, err := a.PingPongTimes(2*chunk, chunk)
	if err != nil {
		return 0, err
	}
	return float64(times[2]-times[1]) / chunk, nil
}

// ParamAloneCopies is the param of lat_copy_device: how many copies, each
// timed alone, one after the other, a sample is the mean of.
const ParamAloneCopies = "alone_copies_per_sample"

// copyLatTests are the tests of the small-copy latency step.
var copyLatTests = []results.Test{results.LatCopyHost, results.LatCopyB2B, results.LatCopyDevice}

// copyLatency times small cuMemcpyPeerAsync copies s → d at each size,
// pulled (issued by d) and pushed (issued by s): one copy from the host
// (lat_copy_host), back-to-back copies on the GPU's events (lat_copy_b2b),
// and one copy on the GPU's events (lat_copy_device).
func (e *Engine) copyLatency(ctx context.Context, s, d *measure.Device) {
	var want []results.Test
	for _, t := range copyLatTests {
		if e.opt.Selected(t) {
			want = append(want, t)
		}
	}
	samples := e.share(copyLatSamples)
	if samples == 0 {
		return
	}
	dirs := []results.Direction{results.DirRead, results.DirWrite}
	if err := e.enablePair(s, d); err != nil {
		for _, dir := range dirs {
			for _, z := range results.CopyLatencySizes() {
				for _, t := range want {
					e.add(measure.Fail(copyLatFigure(t, dir, s, d, z), err))
				}
			}
		}
		return
	}
	defer e.releasePair(s, d)
	src, err := s.Scratch(64 << 10)
	var dst cuda.DevicePtr
	if err == nil {
		dst, err = d.Scratch(64 << 10)
	}
	for _, dir := range dirs {
		issuer := d
		if dir == results.DirWrite {
			issuer = s
		}
		for _, z := range results.CopyLatencySizes() {
			if ctx.Err() != nil {
				return
			}
			for _, t := range want {
				f := copyLatFigure(t, dir, s, d, z)
				ferr := err
				if ferr == nil {
					f.Samples, ferr = e.copyLatSamples(ctx, t, issuer, s, d, dst, src, z, samples)
				}
				switch t {
				case results.LatCopyB2B:
					f.Params = map[string]string{"copies_per_sample": strconv.Itoa(copyLatB2BCopies), results.ParamQueue: results.QueueUnheld}
				case results.LatCopyDevice:
					f.Params = map[string]string{ParamAloneCopies: "2"}
				}
				switch {
				case errors.Is(ferr, context.Canceled):
					return
				case ferr != nil:
					e.add(measure.Fail(f, ferr))
				default:
					e.add(f)
				}
			}
		}
	}
}

// copyLatSamples takes samples of test on copies of size bytes from src on s
// to dst on d, issued by issuer, in ns per copy.
func (e *Engine) copyLatSamples(ctx context.Context, test results.Test, issuer, s, d *measure.Device, dst, src cuda.DevicePtr, size uint64, samples int) ([]float64, error) {
	if test == results.LatCopyHost {
		return hostCopyLatency(e.drv.HostClock, issuer, s, d, dst, src, size, samples)
	}
	tm := measure.Timing{Reps: 1, Warmup: 2}
	t := measure.Transfer{Dev: issuer, Op: issuer.PeerCopy(dst, d.Primary, src, s.Primary, size)}
	var ms [][]float64
	var err error
	if test == results.LatCopyB2B {
		ms, err = e.b2bSamples(ctx, t, samples)
	} else {
		// Each sample is the mean of two copies, each timed alone, one
		// after the other. A pull timed alone can take one of two times
		// turn about, so a sample of one copy lands in either mode and a
		// figure's median flips between them from run to run
		// (docs/methods.md, "One small copy's device time"). The mean of
		// two consecutive ones is what a copy costs on average, the same
		// in every run. With two untimed copies before each timed one
		// (Timing.Warmup), consecutive timed copies are three copies apart,
		// and so fall in turn on either mode.
		if ms, err = e.timer.Measure(ctx, []measure.Transfer{t}, tm, 2*samples); err == nil {
			pairs := make([]float64, samples)
			for i := range pairs {
				pairs[i] = (ms[0][2*i] + ms[0][2*i+1]) / 2
			}
			ms[0] = pairs
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(ms[0]))
	for i, m := range ms[0] {
		out[i] = m * 1e6
	}
	return out, nil
}

// hostBound is how much longer than the host's enqueueing a window of
// copies queued on a stream nothing holds must run for the GPU to have set
// its pace: a window the host queued in about the time the GPU ran it
// timed the host.
const hostBound = 1.1

// b2bSamples takes samples of copies back to back (lat_copy_b2b), tm.Reps
// a sample, in ms per copy: each sample a window queued as an application
// queues copies, on a stream nothing holds, unless the host queued it
// about as fast as the GPU ran it (hostBound). Such a sample timed
// p2pbench's own enqueueing and is the faster of it and a window queued
// behind a latch, which times the GPU but has a cost of its own. Small
// pushes can be host-bound; small pulls never are, and behind a held
// stream cost about twice what they cost queued as issued (docs/methods.md,
// "Small copies back to back"): the held window never wins for pulls, and
// is not taken for them.
func (e *Engine) b2bSamples(ctx context.Context, t measure.Transfer, samples int) ([][]float64, error) {
	return e.unheldSamples(ctx, t, measure.Timing{Reps: copyLatB2BCopies, Warmup: 2}, samples)
}

// unheldSamples takes samples of t with timing tm, in ms a repetition, each
// a window queued on a stream nothing holds, unless the host queued it
// about as fast as the GPU ran it (hostBound): such a sample is the faster
// of it and a window queued behind a latch (b2bSamples, results.UnheldPullBelow).
func (e *Engine) unheldSamples(ctx context.Context, t measure.Transfer, tm measure.Timing, samples int) ([][]float64, error) {
	var enq []time.Duration
	t.Unlatched = true
	t.HostClock = e.drv.HostClock
	t.Enqueued = func(d time.Duration) { enq = append(enq, d) }
	ms, err := e.timer.Measure(ctx, []measure.Transfer{t}, tm, samples)
	if err != nil {
		return nil, err
	}
	// enq holds the samples' windows only: Measure reports no other.
	var bound []int
	for i, m := range ms[0] {
		if i >= len(enq) || m*float64(time.Millisecond)*float64(tm.Reps) < hostBound*float64(enq[i]) {
			bound = append(bound, i)
		}
	}
	if len(bound) == 0 {
		return ms, nil
	}
	held := t
	held.Unlatched, held.Enqueued, held.HostClock = false, nil, nil
	hm, err := e.timer.Measure(ctx, []measure.Transfer{held}, tm, len(bound))
	if err != nil {
		return nil, err
	}
	for j, i := range bound {
		ms[0][i] = min(ms[0][i], hm[0][j])
	}
	return ms, nil
}

// hostCopyLatency times samples copies of size bytes from src on s to dst
// on d from the host, issued in issuer's context: enqueue and wait, each,
// after two untimed.
func hostCopyLatency(clock func() time.Duration, issuer, s, d *measure.Device, dst, src cuda.DevicePtr, size uint64, samples int) ([]float64, error) {
	const untimed = 2
	st, err := issuer.Stream(0)
	if err != nil {
		return nil, err
	}
	var out []float64
	err = issuer.Ctx.Do(func(c gpu.Context) error {
		for i := range samples + untimed {
			t0 := clock()
			if err := c.MemcpyPeerAsync(dst, d.Primary, src, s.Primary, size, st); err != nil {
				return fmt.Errorf("cuMemcpyPeerAsync on device %d: %w", issuer.Index, err)
			}
			if err := c.StreamSynchronize(st); err != nil {
				return fmt.Errorf("device %d: %w", issuer.Index, err)
			}
			if i >= untimed {
				out = append(out, float64((clock() - t0).Nanoseconds()))
			}
		}
		return nil
	})
	return out, err
}

func copyLatFigure(test results.Test, dir results.Direction, s, d *measure.Device, size uint64) results.Figure {
	return results.Figure{Test: test, Engine: results.EngineCopy, Direction: dir, Src: s.Index, Dst: d.Index, Size: size, Unit: results.UnitNs}
}
