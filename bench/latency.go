package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// Latency test settings.
const (
	chaseStride     = 128 // bytes between chase nodes: one node per cache line
	chaseChunks     = 100 // timed chunks per chase figure
	chaseHops       = 512 // dependent loads per chunk
	chaseWarmupHops = 16384
	pingIters       = 10000 // round trips per ping-pong figure
	pingChunk       = 100   // round trips per timed chunk
	copyLatSamples  = 50
)

// ChaseWorkingSets are the chase's working sets: inside L2 and well beyond it.
var ChaseWorkingSets = []uint64{1 << 20, 256 << 20}

const (
	convChase = "ns per dependent load (one thread following a random cyclic chain, 128-byte stride, L1 bypassed); each sample is one timed chunk of 512 loads (%globaltimer); row = source (memory holding the chain), column = destination (GPU running the thread); src = dst is local memory"
	convPing  = "ns; one thread per GPU bouncing a flag through system-scope stores and loads (ordering release_acquire: st.release.sys / ld.acquire.sys; relaxed: relaxed system-scope, no fences); round_trip = one full exchange, one_way = half of it; each sample is the mean of 100 consecutive round trips (%globaltimer); row = initiator, column = responder"
	convCopyD = "ns of device time for one cuMemcpyPeerAsync (latch-held stream, CUDA events around a single copy): what the GPU spends, launch excluded; row = source, column = destination, issued by the destination"
	convCopyH = "ns end to end from the host: cuMemcpyPeerAsync enqueue plus cuStreamSynchronize, what an application waits for; row = source, column = destination, issued by the destination"
)

// latencySteps plans the selected latency tests.
func (e *Engine) latencySteps() []step {
	var steps []step
	if e.selected("lat_chase") {
		for _, ws := range ChaseWorkingSets {
			for _, owner := range e.order {
				for _, runner := range e.order {
					o, r, ws := e.devs[owner], e.devs[runner], ws
					steps = append(steps, step{fmt.Sprintf("chase %s %d→%d", FormatBytes(ws), owner, runner), func(ctx context.Context) {
						e.chase(ctx, o, r, ws)
					}})
				}
			}
		}
	}
	if e.selected("lat_pingpong") {
		for _, a := range e.order {
			for _, b := range e.order {
				if a != b {
					x, y := e.devs[a], e.devs[b]
					steps = append(steps, step{fmt.Sprintf("ping-pong %d↔%d", a, b), func(ctx context.Context) { e.pingPong(ctx, x, y) }})
				}
			}
		}
	}
	if e.selected("lat_copy") {
		for _, s := range e.order {
			for _, d := range e.order {
				if s != d {
					x, y := e.devs[s], e.devs[d]
					steps = append(steps, step{fmt.Sprintf("copy latency %d→%d", s, d), func(ctx context.Context) { e.copyLatency(ctx, x, y) }})
				}
			}
		}
	}
	return steps
}

// scratch returns a device buffer of at least n bytes for latency and atomic
// tests, reusing the largest one allocated so far.
func (dv *device) scratchBuf(n uint64) (cuda.DevicePtr, error) {
	if dv.scratch != 0 && dv.scratchBytes >= n {
		return dv.scratch, nil
	}
	if dv.scratch != 0 {
		if err := dv.ctx.MemFree(dv.scratch); err != nil {
			return 0, fmt.Errorf("device %d: %w", dv.idx, err)
		}
		dv.scratch, dv.scratchBytes = 0, 0
	}
	p, err := dv.ctx.MemAlloc(n)
	if err != nil {
		return 0, fmt.Errorf("device %d: allocating %s: %w", dv.idx, FormatBytes(n), err)
	}
	dv.scratch, dv.scratchBytes = p, n
	return p, nil
}

// small returns a per-device buffer for timestamps, flags and statuses.
func (dv *device) smallBuf() (cuda.DevicePtr, error) {
	if dv.small != 0 {
		return dv.small, nil
	}
	p, err := dv.ctx.MemAlloc(smallBytes)
	if err != nil {
		return 0, fmt.Errorf("device %d: %w", dv.idx, err)
	}
	dv.small = p
	return p, nil
}

// Layout of the small buffer.
const (
	smallBytes   = 64 << 10
	smallFlag    = 0    // u32 ping-pong flag
	smallStatus  = 256  // u32 status
	smallSink    = 512  // u64 chase sink
	smallTimes   = 1024 // u64 timestamps
	maxTimestamp = (smallBytes - smallTimes) / 8
)

func (e *Engine) chase(ctx context.Context, owner, runner *device, ws uint64) {
	f := results.Figure{Test: "lat_chase", Engine: "sm", Src: owner.idx, Dst: runner.idx, Size: ws, Unit: "ns", Convention: convChase,
		Params: map[string]string{"working_set": FormatBytes(ws), "stride": strconv.Itoa(chaseStride), "hops_per_sample": strconv.Itoa(chaseHops)}}
	if owner == runner {
		f.Params["memory"] = "local"
	} else {
		f.Params["memory"] = "peer"
	}
	if l2 := owner.info.L2CacheBytes; l2 > 0 {
		if ws <= uint64(l2)/2 {
			f.Params["cache"] = "in_l2"
		} else if ws > 2*uint64(l2) {
			f.Params["cache"] = "beyond_l2"
		}
	}
	err := func() error {
		if owner != runner {
			if err := e.peers.Enable(runner.ctx, owner.ctx); err != nil {
				return err
			}
			defer func() { e.peers.Release(runner.ctx, owner.ctx); e.disableIdle() }()
		}
		buf, err := owner.scratchBuf(ws)
		if err != nil {
			return err
		}
		small, err := runner.smallBuf()
		if err != nil {
			return err
		}
		nodes := ws / chaseStride
		build, err := owner.function(kernels.ChaseBuild)
		if err != nil {
			return err
		}
		bargs := kernels.ChaseBuildArgs{Buf: uint64(buf), Nodes: nodes, Stride: chaseStride, Seed: e.nextSeed()}
		if err := owner.ctx.Launch(build, owner.launchGrid(), [3]uint32{256, 1, 1}, 0, owner.streams[0], bargs.Params()...); err != nil {
			return fmt.Errorf("device %d: launching the chain build: %w", owner.idx, err)
		}
		if err := owner.ctx.StreamSynchronize(owner.streams[0]); err != nil {
			return fmt.Errorf("device %d: chain build: %w", owner.idx, err)
		}
		f.Samples, err = runner.chaseSamples(buf, nodes, small)
		if err != nil {
			return err
		}
		return nil
	}()
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			e.add(failFigure(f, err))
		}
		return
	}
	e.add(f)
}

// chaseSamples runs the pointer chase on dv through the chain at buf (built
// for dv's view of it) and returns ns per dependent load of each timed chunk.
// An untimed pass first warms the TLB (and, for a chain that fits, the cache);
// the timed pass carries on from where it stopped, so a chain larger than the
// cache is not timed over lines the warm-up has just brought in.
func (dv *device) chaseSamples(buf cuda.DevicePtr, nodes uint64, small cuda.DevicePtr) ([]float64, error) {
	fn, err := dv.function(kernels.Chase)
	if err != nil {
		return nil, err
	}
	s := dv.streams[0]
	run := func(start uint64, chunks, hops uint32) ([]uint64, error) {
		a := kernels.ChaseArgs{Start: start, Chunks: chunks, Hops: hops, Times: uint64(small + smallTimes), Sink: uint64(small + smallSink)}
		if err := dv.ctx.Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, a.Params()...); err != nil {
			return nil, fmt.Errorf("device %d: launching the chase: %w", dv.idx, err)
		}
		if err := dv.ctx.StreamSynchronize(s); err != nil {
			return nil, fmt.Errorf("device %d: chase: %w", dv.idx, err)
		}
		return dv.readU64(small+smallTimes, int(chunks)+1)
	}
	if _, err := run(uint64(buf), 1, uint32(min(nodes, chaseWarmupHops))); err != nil {
		return nil, err
	}
	next, err := dv.readU64(small+smallSink, 1)
	if err != nil {
		return nil, err
	}
	if next[0] == 0 {
		return nil, errors.New("the chase's warm-up ended on a null pointer: the chain is broken")
	}
	times, err := run(next[0], chaseChunks, chaseHops)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, chaseChunks)
	for c := 0; c < chaseChunks; c++ {
		if times[c+1] < times[c] {
			return nil, errors.New("chase timestamps went backwards (%globaltimer)")
		}
		out = append(out, float64(times[c+1]-times[c])/chaseHops)
	}
	return out, nil
}

// readU64 copies n little-endian u64 values from device memory.
func (dv *device) readU64(p cuda.DevicePtr, n int) ([]uint64, error) {
	b := make([]byte, 8*n)
	if err := dv.ctx.MemcpyDtoH(b, p); err != nil {
		return nil, fmt.Errorf("device %d: reading results: %w", dv.idx, err)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out, nil
}

func (dv *device) readU32(p cuda.DevicePtr) (uint32, error) {
	var b [4]byte
	if err := dv.ctx.MemcpyDtoH(b[:], p); err != nil {
		return 0, fmt.Errorf("device %d: reading results: %w", dv.idx, err)
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func (e *Engine) pingPong(ctx context.Context, a, b *device) {
	for _, k := range []kernels.Kernel{kernels.PingPong, kernels.PingPongRelaxed} {
		if ctx.Err() != nil {
			return
		}
		e.pingPongWith(ctx, a, b, k)
	}
}

// pingPongWith runs one ping-pong kernel: release/acquire flags (PingPong)
// or relaxed ones (PingPongRelaxed, what a polling protocol without fences sees).
func (e *Engine) pingPongWith(ctx context.Context, a, b *device, k kernels.Kernel) {
	ordering := "release_acquire"
	if k.Entry == kernels.PingPongRelaxed.Entry {
		ordering = "relaxed"
	}
	base := results.Figure{Test: "lat_pingpong", Engine: "sm", Src: a.idx, Dst: b.idx, Size: 4, Unit: "ns", Convention: convPing}
	rt, ow := base, base
	rt.Params = map[string]string{"measure": "round_trip", "ordering": ordering, "round_trips_per_sample": strconv.Itoa(pingChunk)}
	ow.Params = map[string]string{"measure": "one_way", "ordering": ordering, "round_trips_per_sample": strconv.Itoa(pingChunk)}
	err := func() error {
		if err := e.enablePair(a, b); err != nil {
			return err
		}
		defer func() { e.releasePair(a, b); e.disableIdle() }()
		fn := map[*device]cuda.Function{}
		small := map[*device]cuda.DevicePtr{}
		for _, d := range []*device{a, b} {
			f, err := d.function(k)
			if err != nil {
				return err
			}
			fn[d] = f
			p, err := d.smallBuf()
			if err != nil {
				return err
			}
			small[d] = p
			if err := d.ctx.MemsetD32Async(p, 0, smallTimes/4, d.streams[0]); err != nil {
				return fmt.Errorf("device %d: %w", d.idx, err)
			}
			if err := d.ctx.StreamSynchronize(d.streams[0]); err != nil {
				return fmt.Errorf("device %d: %w", d.idx, err)
			}
		}
		timeout := uint64((2 * time.Second).Nanoseconds())
		launch := func(me, peer *device, role uint32) error {
			args := kernels.PingPongArgs{
				MyFlag: uint64(small[me] + smallFlag), PeerFlag: uint64(small[peer] + smallFlag),
				Iters: pingIters, Chunk: pingChunk, Role: role,
				Times: uint64(small[me] + smallTimes), TimeoutNs: timeout, Status: uint64(small[me] + smallStatus),
			}
			if err := me.ctx.Launch(fn[me], [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, me.streams[1], args.Params()...); err != nil {
				return fmt.Errorf("device %d: launching the ping-pong: %w", me.idx, err)
			}
			return nil
		}
		// The responder goes first so the initiator's first store finds it waiting.
		if err := launch(b, a, 1); err != nil {
			return err
		}
		if err := launch(a, b, 0); err != nil {
			return err
		}
		for _, d := range []*device{a, b} {
			if err := d.ctx.StreamSynchronize(d.streams[1]); err != nil {
				return fmt.Errorf("device %d: ping-pong: %w", d.idx, err)
			}
			st, err := d.readU32(small[d] + smallStatus)
			if err != nil {
				return err
			}
			if st != 1 {
				return fmt.Errorf("device %d: ping-pong timed out after %v (status %d): the peer's stores never became visible", d.idx, time.Duration(timeout), st)
			}
		}
		times, err := a.readU64(small[a]+smallTimes, pingIters/pingChunk+1)
		if err != nil {
			return err
		}
		for j := 0; j+1 < len(times); j++ {
			per := float64(times[j+1]-times[j]) / pingChunk
			rt.Samples = append(rt.Samples, per)
			ow.Samples = append(ow.Samples, per/2)
		}
		return nil
	}()
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			e.add(failFigure(rt, err))
			e.add(failFigure(ow, err))
		}
		return
	}
	e.add(rt)
	e.add(ow)
}

// CopyLatencySizes are the sizes of the small-copy latency test.
func CopyLatencySizes() []uint64 {
	var out []uint64
	for n := uint64(4); n <= 64<<10; n *= 4 {
		out = append(out, n)
	}
	return out
}

func (e *Engine) copyLatency(ctx context.Context, s, d *device) {
	if err := e.enablePair(s, d); err != nil {
		for _, z := range CopyLatencySizes() {
			for _, t := range []string{"lat_copy_device", "lat_copy_host"} {
				e.add(failFigure(copyLatFigure(t, s, d, z), err))
			}
		}
		return
	}
	defer func() { e.releasePair(s, d); e.disableIdle() }()
	src, err := s.scratchBuf(64 << 10)
	if err == nil {
		_, err = d.scratchBuf(64 << 10)
	}
	for _, z := range CopyLatencySizes() {
		if ctx.Err() != nil {
			return
		}
		dev, host := copyLatFigure("lat_copy_device", s, d, z), copyLatFigure("lat_copy_host", s, d, z)
		if err != nil {
			e.add(failFigure(dev, err))
			e.add(failFigure(host, err))
			continue
		}
		dst := d.scratch
		op := func(st cuda.Stream) error {
			if err := d.ctx.MemcpyPeerAsync(dst, d.ctx, src, s.ctx, z, st); err != nil {
				return fmt.Errorf("cuMemcpyPeerAsync on device %d: %w", d.idx, err)
			}
			return nil
		}
		ms, terr := e.timeTransfers(ctx, []transfer{{dv: d, op: op}}, timing{reps: 1, warmup: 2}, copyLatSamples)
		if terr != nil {
			e.add(failFigure(dev, terr))
		} else {
			for _, m := range ms[0] {
				dev.Samples = append(dev.Samples, m*1e6)
			}
			e.add(dev)
		}
		herr := d.ctx.Do(func(c gpu.Context) error {
			st := d.streams[0]
			for i := 0; i < copyLatSamples+5; i++ {
				t0 := time.Now()
				if err := c.MemcpyPeerAsync(dst, d.ctx, src, s.ctx, z, st); err != nil {
					return fmt.Errorf("cuMemcpyPeerAsync on device %d: %w", d.idx, err)
				}
				if err := c.StreamSynchronize(st); err != nil {
					return fmt.Errorf("device %d: %w", d.idx, err)
				}
				if i >= 5 {
					host.Samples = append(host.Samples, float64(time.Since(t0).Nanoseconds()))
				}
			}
			return nil
		})
		if herr != nil {
			e.add(failFigure(host, herr))
		} else {
			e.add(host)
		}
	}
}

func copyLatFigure(test string, s, d *device, size uint64) results.Figure {
	conv := convCopyD
	if test == "lat_copy_host" {
		conv = convCopyH
	}
	return results.Figure{Test: test, Engine: "copy_engine", Direction: "read", Src: s.idx, Dst: d.idx, Size: size, Unit: "ns", Convention: conv}
}
