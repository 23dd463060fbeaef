package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/internal/measure"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// copyLatSamples is the number of samples of each small-copy figure.
const copyLatSamples = 50

// latencySteps plans the selected latency tests.
func (e *Engine) latencySteps() []step {
	var steps []step
	if e.opt.Selected(results.LatChase) {
		for _, ws := range measure.ChaseWorkingSets {
			for _, o := range e.devices() {
				for _, r := range e.devices() {
					steps = append(steps, step{fmt.Sprintf("chase %s %d→%d", results.FormatBytes(ws), o.Index, r.Index), func(ctx context.Context) {
						e.chase(ctx, o, r, ws)
					}})
				}
			}
		}
	}
	if e.opt.Selected(results.LatPingPong) {
		for _, p := range e.orderedPairs() {
			a, b := p[0], p[1]
			steps = append(steps, step{fmt.Sprintf("ping-pong %d↔%d", a.Index, b.Index), func(ctx context.Context) { e.pingPong(ctx, a, b) }})
		}
	}
	if e.opt.Selected(results.LatCopyDevice) || e.opt.Selected(results.LatCopyHost) {
		for _, p := range e.orderedPairs() {
			s, d := p[0], p[1]
			steps = append(steps, step{fmt.Sprintf("copy latency %d→%d", s.Index, d.Index), func(ctx context.Context) { e.copyLatency(ctx, s, d) }})
		}
	}
	return steps
}

// chase follows a chain through owner's memory from runner.
func (e *Engine) chase(ctx context.Context, owner, runner *measure.Device, ws uint64) {
	memory := "peer"
	if owner == runner {
		memory = "local"
	}
	f := results.Figure{Test: results.LatChase, Engine: results.EngineSM, Src: owner.Index, Dst: runner.Index, Size: ws, Unit: results.UnitNs,
		Params: measure.ChaseParams(ws, memory, owner.Info.L2CacheBytes)}
	err := func() error {
		if owner != runner {
			if err := e.peers.Enable(runner.Ctx, owner.Ctx); err != nil {
				return err
			}
			defer func() { e.peers.Release(runner.Ctx, owner.Ctx); e.disableIdle() }()
		}
		buf, err := owner.Scratch(ws)
		if err != nil {
			return err
		}
		if err := owner.BuildChain(buf, ws, e.seeds.Next()); err != nil {
			return err
		}
		f.Samples, err = runner.Chase(buf, ws)
		return err
	}()
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			e.add(measure.Fail(f, err))
		}
		return
	}
	e.add(f)
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
// or relaxed ones (PingPongRelaxed, what a polling protocol without fences sees).
func (e *Engine) pingPongWith(ctx context.Context, a, b *measure.Device, k kernels.Kernel) {
	ordering := "release_acquire"
	if k.Entry == kernels.PingPongRelaxed.Entry {
		ordering = "relaxed"
	}
	base := results.Figure{Test: results.LatPingPong, Engine: results.EngineSM, Src: a.Index, Dst: b.Index, Size: 4, Unit: results.UnitNs}
	rt, ow := base, base
	rt.Params = map[string]string{"measure": "round_trip", "ordering": ordering, "round_trips_per_sample": strconv.Itoa(measure.PingChunk)}
	ow.Params = map[string]string{"measure": "one_way", "ordering": ordering, "round_trips_per_sample": strconv.Itoa(measure.PingChunk)}
	err := func() error {
		if err := e.enablePair(a, b); err != nil {
			return err
		}
		defer func() { e.releasePair(a, b); e.disableIdle() }()
		times, err := bounce(a, b, k)
		for j := 0; j+1 < len(times); j++ {
			per := float64(times[j+1]-times[j]) / measure.PingChunk
			rt.Samples = append(rt.Samples, per)
			ow.Samples = append(ow.Samples, per/2)
		}
		return err
	}()
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			e.add(measure.Fail(rt, err))
			e.add(measure.Fail(ow, err))
		}
		return
	}
	e.add(rt)
	e.add(ow)
}

// bounce runs one ping-pong between a (initiator) and b (responder) and
// returns a's timestamps.
func bounce(a, b *measure.Device, k kernels.Kernel) ([]uint64, error) {
	small := map[*measure.Device]cuda.DevicePtr{}
	for _, d := range []*measure.Device{a, b} {
		if err := d.PreparePingPong(k); err != nil {
			return nil, err
		}
		small[d], _ = d.Small()
	}
	// The responder goes first so the initiator's first store finds it waiting.
	if err := b.LaunchPingPong(k, small[a], 1, measure.PingIters, measure.PingChunk, measure.PingTimeout); err != nil {
		return nil, err
	}
	if err := a.LaunchPingPong(k, small[b], 0, measure.PingIters, measure.PingChunk, measure.PingTimeout); err != nil {
		return nil, err
	}
	for _, d := range []*measure.Device{a, b} {
		st, err := d.WaitPingPong()
		if err != nil {
			return nil, err
		}
		if st != 1 {
			return nil, fmt.Errorf("device %d: ping-pong timed out after %v (status %d): the peer's stores never became visible", d.Index, measure.PingTimeout, st)
		}
	}
	return a.PingPongTimes(measure.PingIters, measure.PingChunk)
}

// copyLatencySizes are the sizes of the small-copy latency test.
func copyLatencySizes() []uint64 {
	var out []uint64
	for n := uint64(4); n <= 64<<10; n *= 4 {
		out = append(out, n)
	}
	return out
}

// copyLatency times one small cuMemcpyPeerAsync s → d at each size, issued
// by d: on the GPU's events (lat_copy_device) and from the host
// (lat_copy_host).
func (e *Engine) copyLatency(ctx context.Context, s, d *measure.Device) {
	if err := e.enablePair(s, d); err != nil {
		for _, z := range copyLatencySizes() {
			for _, t := range []results.Test{results.LatCopyDevice, results.LatCopyHost} {
				e.add(measure.Fail(copyLatFigure(t, s, d, z), err))
			}
		}
		return
	}
	defer func() { e.releasePair(s, d); e.disableIdle() }()
	src, err := s.Scratch(64 << 10)
	var dst cuda.DevicePtr
	if err == nil {
		dst, err = d.Scratch(64 << 10)
	}
	for _, z := range copyLatencySizes() {
		if ctx.Err() != nil {
			return
		}
		dev, host := copyLatFigure(results.LatCopyDevice, s, d, z), copyLatFigure(results.LatCopyHost, s, d, z)
		if err != nil {
			e.add(measure.Fail(dev, err))
			e.add(measure.Fail(host, err))
			continue
		}
		op := d.PeerCopy(dst, d.Ctx, src, s.Ctx, z)
		ms, terr := e.timer.Measure(ctx, []measure.Transfer{{Dev: d, Op: op}}, measure.Timing{Reps: 1, Warmup: 2}, copyLatSamples)
		if terr != nil {
			e.add(measure.Fail(dev, terr))
		} else {
			for _, m := range ms[0] {
				dev.Samples = append(dev.Samples, m*1e6)
			}
			e.add(dev)
		}
		var herr error
		if host.Samples, herr = hostCopyLatency(e.drv.HostClock, s, d, dst, src, z); herr != nil {
			e.add(measure.Fail(host, herr))
		} else {
			e.add(host)
		}
	}
}

// hostCopyLatency times copyLatSamples copies of size bytes from src on s
// to dst on d from the host: enqueue and wait, each, after five untimed.
func hostCopyLatency(clock func() time.Duration, s, d *measure.Device, dst, src cuda.DevicePtr, size uint64) ([]float64, error) {
	st, err := d.Stream(0)
	if err != nil {
		return nil, err
	}
	var out []float64
	err = d.Ctx.Do(func(c gpu.Context) error {
		for i := range copyLatSamples + 5 {
			t0 := clock()
			if err := c.MemcpyPeerAsync(dst, d.Ctx, src, s.Ctx, size, st); err != nil {
				return fmt.Errorf("cuMemcpyPeerAsync on device %d: %w", d.Index, err)
			}
			if err := c.StreamSynchronize(st); err != nil {
				return fmt.Errorf("device %d: %w", d.Index, err)
			}
			if i >= 5 {
				out = append(out, float64((clock() - t0).Nanoseconds()))
			}
		}
		return nil
	})
	return out, err
}

func copyLatFigure(test results.Test, s, d *measure.Device, size uint64) results.Figure {
	return results.Figure{Test: test, Engine: results.EngineCopy, Direction: results.DirRead, Src: s.Index, Dst: d.Index, Size: size, Unit: results.UnitNs}
}
