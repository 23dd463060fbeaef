package measure

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"strconv"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// Copy returns the operation of a copy-engine copy by address
// (cuMemcpyAsync: device to device, or to and from mapped host memory)
// issued in dv's context.
func (dv *Device) Copy(dst, src cuda.DevicePtr, size uint64) func(cuda.Stream) error {
	return func(s cuda.Stream) error {
		if err := dv.Ctx.MemcpyAsync(dst, src, size, s); err != nil {
			return fmt.Errorf("cuMemcpyAsync on device %d: %w", dv.Index, err)
		}
		return nil
	}
}

// PeerCopy returns the operation of a copy-engine peer copy
// (cuMemcpyPeerAsync) from src in srcCtx to dst in dstCtx, issued in dv's
// context.
func (dv *Device) PeerCopy(dst cuda.DevicePtr, dstCtx gpu.Context, src cuda.DevicePtr, srcCtx gpu.Context, size uint64) func(cuda.Stream) error {
	return func(s cuda.Stream) error {
		if err := dv.Ctx.MemcpyPeerAsync(dst, dstCtx, src, srcCtx, size, s); err != nil {
			return fmt.Errorf("cuMemcpyPeerAsync on device %d: %w", dv.Index, err)
		}
		return nil
	}
}

// SMCopy returns the transfer of the SM copy kernel of cfg launched on dv,
// copying size bytes from src to dst (addresses as dv sees them). Its Op is
// one launch of one copy. From InKernelRepsFrom bytes it also has OpN: n
// copies in one launch (the kernel's repetition count), so that a timed
// window of them ramps up and drains once, as a stream of copies would;
// below, each copy is its own launch, as an application issuing small copies
// makes them.
func (dv *Device) SMCopy(cfg SMConfig, dst, src cuda.DevicePtr, size uint64) (Transfer, error) {
	k, ok := kernels.CopyKernelByVariant(cfg.Variant)
	if !ok {
		return Transfer{}, fmt.Errorf("unknown SM copy variant %q", cfg.Variant)
	}
	f, err := dv.Function(k.Kernel)
	if err != nil {
		return Transfer{}, err
	}
	block := cfg.BlockSize
	shared := 0
	if k.SharedBytes != nil {
		shared = k.SharedBytes(block)
		if shared > 48<<10 {
			if err := dv.Ctx.SetMaxDynamicShared(f, shared); err != nil {
				return Transfer{}, err
			}
		}
	}
	grid := uint32(cfg.Grid(dv.Info.SMCount))
	launch := func(s cuda.Stream, args []any) error {
		if err := dv.Ctx.Launch(f, [3]uint32{grid, 1, 1}, [3]uint32{uint32(block), 1, 1}, uint32(shared), s, args...); err != nil {
			return fmt.Errorf("launching %s on device %d: %w", k.Entry, dv.Index, err)
		}
		return nil
	}
	copies := func(n int) []any {
		return kernels.CopyArgs{Dst: uint64(dst), Src: uint64(src), Bytes: size, Reps: uint32(n)}.Params()
	}
	one := copies(1) // built once: small copies are launched by the hundred
	t := Transfer{Dev: dv, Op: func(s cuda.Stream) error { return launch(s, one) }}
	if InKernelReps(size) {
		t.OpN = func(s cuda.Stream, n int) error {
			if n < 1 || uint64(n) > math.MaxUint32 {
				return fmt.Errorf("launching %s on device %d: %d repetitions", k.Entry, dv.Index, n)
			}
			return launch(s, copies(n))
		}
	}
	return t, nil
}

// InKernelRepsFrom is the SM copy size from which a timed window of copies
// is one launch that repeats the copy (Transfer.OpN), as the conventions
// say (results.InKernelRepsFrom): kernels.LargeCopyBytes, where a sample
// is a window of sustained bandwidth (a test holds the two equal). A launch
// per copy pays its grid's drain and the next one's ramp (about 10 µs of a
// 1.4 ms copy of 512 MiB, 0.7% below nvbandwidth's kernel, which repeats its
// copy inside one launch: docs/methods.md). Below it each copy stays a
// launch: small copies' figures are what an application issuing them sees,
// launch and all.
const InKernelRepsFrom = results.InKernelRepsFrom

// InKernelReps says whether SM copies of size bytes time their windows as
// one launch of many repetitions (SMCopy's OpN, the figure's
// results.ParamInKernelReps).
func InKernelReps(size uint64) bool { return size >= InKernelRepsFrom }

// Latency test settings.
const (
	ChaseStride = 128 // bytes between chase nodes: one node per cache line
	chaseHops   = 512 // dependent loads per timed chunk
	ChaseChunks = 100 // timed chunks per chase figure, over all its rounds
	// ChaseChains is how many chains, each of its own seed, every round of
	// a chase beyond L2 follows, the same chains in every round and run
	// (ChainSeed), so that a round's figure is never one chain's path
	// alone: several chains spread what a chain's own path meets, and
	// the same ones in every round keep the rounds comparable
	// (docs/methods.md, "Pointer chase"). Within L2 one chain does.
	ChaseChains = 4
	// The untimed pass before every round's chase (each round builds a new
	// chain): the whole of a chain of up to chaseWholeHops nodes (1 MiB),
	// so one that fits in L2 is there; chaseTLBHops of a longer one, 8
	// loads on each 2 MiB page of 256 MiB on average, so that a page the
	// pass misses is one in e^8 (3000): it warms the TLB. More a page
	// costs more than the timed hops over NVLink, four chains a round and
	// figure, and warms nothing more.
	chaseWholeHops = 8192
	chaseTLBHops   = 1024
	// A ping-pong's sample: the mean of PingRoundTrips round trips at one
	// flag slot, after as many untimed ones (the launch's start, the peer
	// finding the first store); every round takes one at each of the
	// FlagSlots slots.
	PingRoundTrips = results.PingRoundTrips
	PingTimeout    = 2 * time.Second
)

// ChaseWorkingSets are the chase's working sets: inside L2 and well beyond it.
var ChaseWorkingSets = []uint64{1 << 20, 256 << 20}

// ChaseParams are the params of a chase figure over a working set of ws
// bytes in memory ("local", "peer", "ipc") of a device with l2 bytes of L2.
func ChaseParams(ws uint64, memory string, l2 int) map[string]string {
	p := map[string]string{"working_set": results.FormatBytes(ws), "stride": strconv.Itoa(ChaseStride),
		"hops_per_sample": strconv.Itoa(chaseHops), "memory": memory}
	if l2 > 0 {
		if ws <= uint64(l2)/2 {
			p["cache"] = "in_l2"
		} else if ws > 2*uint64(l2) {
			p["cache"] = "beyond_l2"
		}
	}
	return p
}

// BuildChain writes a random cyclic chain of bytes/ChaseStride nodes through
// buf, as dv addresses it, waits, and returns the node to start the chase at:
// the one the build writes first (kernels.ChasePerm(0)), not buf's first. The
// build leaves the lines it wrote last in L2 (dirty, not yet written back); a
// chase through them reads some from L2, and reads faster by where the seed
// puts buf's first node in the build; from the first-written node it reads
// what a chase after a flush of L2 reads (docs/methods.md, "Pointer chase").
// A round's chase of a
// chain beyond L2 visits its warm-up's chaseTLBHops and its timed hops (a few
// thousand nodes), which the build's threads write in their first pass over
// the grid (4 blocks of 256 threads an SM: 135168 nodes on 132 SMs); the rest
// of the chain, more than twice L2 for any chain beyond it (ChaseParams), is
// written after them.
func (dv *Device) BuildChain(buf cuda.DevicePtr, bytes uint64, seed uint32) (cuda.DevicePtr, error) {
	nodes := bytes / ChaseStride
	if nodes < 2 || nodes&(nodes-1) != 0 {
		return 0, fmt.Errorf("device %d: a chain of %d nodes (a power of two from 2 is needed)", dv.Index, nodes)
	}
	build, err := dv.Function(kernels.ChaseBuild)
	if err != nil {
		return 0, err
	}
	s := dv.streams[0]
	args := kernels.ChaseBuildArgs{Buf: uint64(buf), Nodes: nodes, Stride: ChaseStride, Seed: seed}
	if err := dv.Ctx.Launch(build, dv.launchGrid(), [3]uint32{256, 1, 1}, 0, s, args.Params()...); err != nil {
		return 0, fmt.Errorf("device %d: launching the chain build: %w", dv.Index, err)
	}
	if err := dv.Ctx.StreamSynchronize(s); err != nil {
		return 0, fmt.Errorf("device %d: chain build: %w", dv.Index, err)
	}
	first := kernels.ChasePerm(0, uint(bits.TrailingZeros64(nodes)), seed)
	return buf + cuda.DevicePtr(first*ChaseStride), nil
}

// Chase follows the chain through bytes of memory from start (the node
// BuildChain returned, for dv's view of the chain) and returns ns per
// dependent load of each of chunks timed chunks. An untimed pass first warms
// the TLB (and, for a chain that fits, the cache); the timed pass carries on
// from where it stopped, so a chain larger than the cache is not timed over
// lines the warm-up has just brought in.
func (dv *Device) Chase(start cuda.DevicePtr, bytes uint64, chunks int) ([]float64, error) {
	if chunks < 1 || chunks+1 > maxTimestamp {
		return nil, fmt.Errorf("a chase of %d timed chunks", chunks)
	}
	fn, err := dv.Function(kernels.Chase)
	if err != nil {
		return nil, err
	}
	small, err := dv.Small()
	if err != nil {
		return nil, err
	}
	s := dv.streams[0]
	run := func(start uint64, chunks, hops uint32) ([]uint64, error) {
		a := kernels.ChaseArgs{Start: start, Chunks: chunks, Hops: hops, Times: uint64(small + smallTimes), Sink: uint64(small + smallSink)}
		if err := dv.Ctx.Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, a.Params()...); err != nil {
			return nil, fmt.Errorf("device %d: launching the chase: %w", dv.Index, err)
		}
		if err := dv.Ctx.StreamSynchronize(s); err != nil {
			return nil, fmt.Errorf("device %d: chase: %w", dv.Index, err)
		}
		return dv.readU64(small+smallTimes, int(chunks)+1)
	}
	warm := bytes / ChaseStride
	if warm > chaseWholeHops {
		warm = chaseTLBHops
	}
	if _, err := run(uint64(start), 1, uint32(warm)); err != nil {
		return nil, err
	}
	next, err := dv.readU64(small+smallSink, 1)
	if err != nil {
		return nil, err
	}
	if next[0] == 0 {
		return nil, errors.New("the chase's warm-up ended on a null pointer: the chain is broken")
	}
	times, err := run(next[0], uint32(chunks), chaseHops)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, chunks)
	for c := range chunks {
		if times[c+1] < times[c] {
			return nil, errors.New("chase timestamps went backwards (%globaltimer)")
		}
		out = append(out, float64(times[c+1]-times[c])/chaseHops)
	}
	return out, nil
}

// PreparePingPong readies dv for one side of a ping-pong with kernel k and
// its flag at slot (FlagOffset): it loads k and clears the flag, status and
// timestamps of the small buffer, and waits, so the peer's first store
// cannot be lost.
func (dv *Device) PreparePingPong(k kernels.Kernel, slot int) error {
	if _, err := dv.Function(k); err != nil {
		return err
	}
	small, err := dv.Small()
	if err != nil {
		return err
	}
	if err := dv.Memset(small, 0, smallTimes/4); err != nil {
		return err
	}
	return dv.Memset(small+cuda.DevicePtr(FlagOffset(slot)), 0, 64)
}

// LaunchPingPong launches dv's side of a ping-pong with kernel k on stream
// 1, both flags at slot, and does not wait: role 0 initiates, 1 responds;
// peerSmall is the peer's small buffer as dv addresses it. Each kernel gives
// up after timeout.
func (dv *Device) LaunchPingPong(k kernels.Kernel, peerSmall cuda.DevicePtr, slot int, role, iters, chunk uint32, timeout time.Duration) error {
	if chunk == 0 || iters%chunk != 0 || int(iters/chunk)+1 > maxTimestamp {
		return fmt.Errorf("a ping-pong of %d round trips in chunks of %d", iters, chunk)
	}
	f, err := dv.Function(k)
	if err != nil {
		return err
	}
	mine, err := dv.Small()
	if err != nil {
		return err
	}
	args := kernels.PingPongArgs{
		MyFlag: uint64(mine) + FlagOffset(slot), PeerFlag: uint64(peerSmall) + FlagOffset(slot),
		Iters: iters, Chunk: chunk, Role: role,
		Times: uint64(mine + smallTimes), TimeoutNs: uint64(timeout.Nanoseconds()), Status: uint64(mine + smallStatus),
	}
	if err := dv.Ctx.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, dv.streams[1], args.Params()...); err != nil {
		return fmt.Errorf("device %d: launching the ping-pong: %w", dv.Index, err)
	}
	return nil
}

// WaitPingPong waits for dv's side of the ping-pong and returns its status
// (1: done; otherwise the peer's stores never became visible in time).
func (dv *Device) WaitPingPong() (uint32, error) {
	if err := dv.Ctx.StreamSynchronize(dv.streams[1]); err != nil {
		return 0, fmt.Errorf("device %d: ping-pong: %w", dv.Index, err)
	}
	var b [4]byte
	if err := dv.Ctx.MemcpyDtoH(b[:], dv.small+smallStatus); err != nil {
		return 0, fmt.Errorf("device %d: reading results: %w", dv.Index, err)
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// PingPongTimes returns the initiator's timestamps of a finished ping-pong:
// one per chunk of round trips, and one at the start.
func (dv *Device) PingPongTimes(iters, chunk uint32) ([]uint64, error) {
	return dv.readU64(dv.small+smallTimes, int(iters/chunk)+1)
}

// ChainShares splits a round's chunks of a chase of working set ws on a
// GPU with l2 bytes of L2 over its chains: one share per chain, at least
// one chunk each; ChaseChains chains beyond L2, one within it.
func ChainShares(chunks int, ws, l2 uint64) []int {
	n := 1
	if ws > l2 {
		n = ChaseChains
	}
	n = min(n, chunks)
	out := make([]int, n)
	for i := range out {
		out[i] = chunks / n
		if i < chunks%n {
			out[i]++
		}
	}
	return out
}

// ChainSeed is the seed of chain k of the chase figure key: from the key
// alone, so the same chains are followed in every round, every run and
// every plan (a seed drawn from the run's sequence would change with the
// tests before it).
func ChainSeed(key string, k int) uint32 {
	h := fnv.New32a()
	h.Write([]byte(key))
	h.Write([]byte{byte(k)})
	return h.Sum32()
}
