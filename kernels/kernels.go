// Package kernels holds p2pbench's hand-written PTX (embedded) and the Go
// description of every entry point: its module, its parameters in order and
// how it is launched, with the exact results the checks expect (Pattern,
// ChasePerm, AtomicOp.Expected). The measuring packages launch kernels only
// through these descriptions, and the simulator (gpu/sim) decodes launches
// with the same ones, so the two cannot drift apart.
//
// kernels imports nothing of p2pbench; it knows the GPU side only, not what
// the measurements make of it.
package kernels

import (
	"embed"
	"fmt"
	"math"
	"reflect"
	"strings"
)

//go:embed *.ptx
var ptxFiles embed.FS

// PTX returns the text of a module (the file name without .ptx), NUL-terminated
// as cuModuleLoadData wants it.
func PTX(module string) (string, error) {
	b, err := ptxFiles.ReadFile(module + ".ptx")
	if err != nil {
		return "", fmt.Errorf("kernels: no module %q", module)
	}
	return string(b) + "\x00", nil
}

// ModuleNames lists every module, sorted (the file names without .ptx).
func ModuleNames() []string {
	entries, _ := ptxFiles.ReadDir(".") // the embedded files: cannot fail
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".ptx"); ok {
			out = append(out, n)
		}
	}
	return out
}

// Kernel names one entry point.
type Kernel struct {
	Module string // PTX file without .ptx
	Entry  string // .entry name
	// MinCC is the lowest compute capability (major*10+minor) the module runs on:
	// its .target (a module for sm_80 does not load on a 7.x device).
	MinCC int
}

// ---------------------------------------------------------------------------
// Latch: holds a stream until the host releases it.
//
// p2p_latch(.u64 flag, .u64 status, .u64 timeout_ns), launched <<<1,1>>>.
// flag is a device-mapped pinned host u32; the kernel spins while it reads 0
// (volatile system-scope loads) and gives up once %globaltimer has advanced by
// timeout_ns (timeout_ns 0: the flag is looked at once). It then writes 1
// (released) or 2 (timed out) to the u32 at status (device-mapped host memory).
var Latch = Kernel{Module: "latch", Entry: "p2p_latch", MinCC: 80}

// Latch status values.
const (
	LatchReleased uint32 = 1
	LatchTimedOut uint32 = 2
)

// LatchArgs are the parameters of p2p_latch.
type LatchArgs struct {
	Flag, Status uint64
	TimeoutNs    uint64
}

// Params returns the launch parameters in the entry's order; each Args type
// has it, and a Decode function that is its inverse.
func (a LatchArgs) Params() []any { return []any{a.Flag, a.Status, a.TimeoutNs} }

// DecodeLatchArgs is the inverse of Params (for the simulator).
func DecodeLatchArgs(p []any) (a LatchArgs, err error) {
	err = decode(p, &a.Flag, &a.Status, &a.TimeoutNs)
	return
}

// ---------------------------------------------------------------------------
// Verification: a pattern written on the GPU, checked on the GPU.
//
// p2p_fill(.u64 buf, .u64 words, .u32 seed): buf[i] = Pattern(seed, i) for the
// u32 words 0..words-1. Grid-stride: any grid works.
//
// p2p_check(.u64 buf, .u64 words, .u32 seed, .u64 result): result points to
// two u64 in device memory, {first_bad, bad_count}, set by the host to
// {^0, 0} beforehand; each mismatching word i does atom.min(first_bad, i) and
// atom.add(bad_count, 1). Grid-stride.
var (
	Fill  = Kernel{Module: "verify", Entry: "p2p_fill", MinCC: 80}
	Check = Kernel{Module: "verify", Entry: "p2p_check", MinCC: 80}
)

// Pattern is the verification word at u32 index i for seed: a 32-bit mix of
// the index (both halves) and the seed, so shifted, repeated or stale data
// never matches. The PTX computes exactly this.
func Pattern(seed uint32, i uint64) uint32 {
	x := uint32(i) ^ (uint32(i>>32) * 0x85ebca6b) ^ seed
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}

// FillArgs are the parameters of p2p_fill.
type FillArgs struct {
	Buf, Words uint64
	Seed       uint32
}

func (a FillArgs) Params() []any { return []any{a.Buf, a.Words, a.Seed} }
func DecodeFillArgs(p []any) (a FillArgs, err error) {
	err = decode(p, &a.Buf, &a.Words, &a.Seed)
	return
}

// CheckArgs are the parameters of p2p_check.
type CheckArgs struct {
	Buf, Words uint64
	Seed       uint32
	Result     uint64
}

func (a CheckArgs) Params() []any { return []any{a.Buf, a.Words, a.Seed, a.Result} }
func DecodeCheckArgs(p []any) (a CheckArgs, err error) {
	err = decode(p, &a.Buf, &a.Words, &a.Seed, &a.Result)
	return
}

// ---------------------------------------------------------------------------
// SM copy kernels.
//
// Every copy entry takes (.u64 dst, .u64 src, .u64 bytes, .u32 reps): bytes is
// a multiple of 4, dst and src are 16-byte aligned. The bulk of the range moves
// in 16-byte vectors with a grid-stride loop; the tail (bytes % 16) moves as u32
// words. The kernel copies the range reps times in one launch (0: not at all;
// 1: one copy, as a launch of the kernel has always made): each thread (the
// bulk path: each block) goes on to its share of the next repetition as soon
// as it is done with its share of the last, with no synchronisation across the
// grid, so a launch of reps copies ramps up and drains once where reps
// launches would each pay both (what nvbandwidth's copy kernel does with its
// loop count).
// Launched with any grid and block (bench picks them); a block size is a
// multiple of 32. SharedBytes is the dynamic shared memory a variant needs for
// the given block size (0 for all but the bulk path). Above 48 KiB (bulk: 128
// KiB) the launch fails unless the function's limit was raised first
// (Context.SetMaxDynamicShared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
type CopyKernel struct {
	Kernel
	Variant   string // the variant's name, e.g. "v4_u4"
	Unroll    int    // 16-byte loads in flight per thread before the stores
	CacheHint string // "", "cg", "cs", "nc", "lu", "L2::256B", "bulk"
	Describe  string // what the variant does, in one line
	// SharedBytes returns the dynamic shared memory for a block of blockSize threads.
	SharedBytes func(blockSize int) int
}

// DefaultGrid is the launch shape a variant runs with when none is asked
// for: blocks per SM and threads per block. Register-path variants use 2
// blocks of 512 threads (what fits an SM at ≤ 64 registers per thread, so no
// block waits for a second wave); the bulk path, where one thread per block
// drives the copy unit, 4 blocks of 32 threads (NOTES.md).
func (k CopyKernel) DefaultGrid() (blocksPerSM, blockSize int) {
	if k.CacheHint == "bulk" {
		return 4, 32
	}
	return 2, 512
}

// CopyArgs are the parameters of every SM copy entry. Reps is a u32: a
// launch repeats a copy at most a timed window's repetitions (hundreds), a
// 32-bit count is one register the kernels count down, and its range (4 G
// copies, hours of the smallest copy) is beyond any window; Bytes stays a
// u64, as buffers pass 4 GiB.
type CopyArgs struct {
	Dst, Src, Bytes uint64
	Reps            uint32
}

func (a CopyArgs) Params() []any { return []any{a.Dst, a.Src, a.Bytes, a.Reps} }
func DecodeCopyArgs(p []any) (a CopyArgs, err error) {
	err = decode(p, &a.Dst, &a.Src, &a.Bytes, &a.Reps)
	return
}

// ---------------------------------------------------------------------------
// Atomics (module "atomic"): every operation at system scope (.sys).
//
// Throughput entries p2p_atomic_<op>(.u64 buf, .u32 iters, .u32 contended):
// global thread t operates iters times on element t of buf (elements of the
// operation's width), or on element 0 when contended != 0. Results the host
// checks exactly afterwards (buf initialised as AtomicOp.Init says):
//   - add (u32, u64, f32; atom and red): each element gains 1 per operation,
//     so element t == iters (distinct) or element 0 == threads*iters (contended);
//   - cas_u64: each operation is a compare-and-swap of v -> v+1 retried until it
//     succeeds, so the same counts as add;
//   - exch_u32: operation i exchanges in i+1, so the final value is iters
//     (the last operation to run is always some thread's last);
//   - min_u32: operation i stores min(old, iters-i), so the final value is 1
//     (0xFFFFFFFF, the initial value, when iters is 0).
//
// u32 counts wrap modulo 2^32; f32 adds of 1.0 are exact up to 2^24 and stop
// there (2^24 + 1 rounds back to 2^24), and Expected says so.
//
// Latency entries p2p_atomic_chain_<op>(.u64 buf, .u32 iters), <<<1,1>>>:
// one thread, each atomic's operand depends on the previous atomic's return
// value, on element 0; the final value follows the rules above with one thread.
// Operations without a return value (red) have no chain entry (Chain.Entry "").
type AtomicOp struct {
	Name     string // "add_u32", "red_add_u32", ...
	PTXOp    string // the PTX instruction, for reports: "atom.sys.global.add.u32"
	Width    int    // bytes per element
	Float    bool
	Init     uint64 // initial element value (bit pattern) set by the host
	Tput     Kernel
	Chain    Kernel // zero Entry: no latency chain for this op
	DriverOp int32  // the CUatomicOperation it corresponds to
}

// Expected returns the exact final element value (as a bit pattern for float).
func (o AtomicOp) Expected(threads, iters uint64, contended bool) uint64 {
	n := iters
	if contended {
		n = threads * iters
	}
	switch o.Name {
	case "exch_u32":
		return iters & 0xFFFFFFFF
	case "min_u32":
		if iters == 0 {
			return o.Init
		}
		return 1
	}
	if o.Float {
		// Every operation adds 1.0f: exact while the sum is below 2^24, where
		// x + 1 rounds back to x (ties to even), whatever the order.
		if n > 1<<24 {
			n = 1 << 24
		}
		return uint64(math.Float32bits(float32(n)))
	}
	if o.Width == 4 {
		return n & 0xFFFFFFFF
	}
	return n
}

// AtomicArgs are the parameters of the atomic throughput entries.
type AtomicArgs struct {
	Buf       uint64
	Iters     uint32
	Contended uint32
}

func (a AtomicArgs) Params() []any { return []any{a.Buf, a.Iters, a.Contended} }
func DecodeAtomicArgs(p []any) (a AtomicArgs, err error) {
	err = decode(p, &a.Buf, &a.Iters, &a.Contended)
	return
}

// ChainArgs are the parameters of the atomic latency (chain) entries.
type ChainArgs struct {
	Buf   uint64
	Iters uint32
}

func (a ChainArgs) Params() []any { return []any{a.Buf, a.Iters} }
func DecodeChainArgs(p []any) (a ChainArgs, err error) {
	err = decode(p, &a.Buf, &a.Iters)
	return
}

// ---------------------------------------------------------------------------
// Latency (module "latency").
//
// p2p_chase_build(.u64 buf, .u64 nodes, .u64 stride, .u32 seed): nodes is a
// power of two; thread k (grid-stride) writes at buf + ChasePerm(k)*stride the
// u64 address buf + ChasePerm((k+1) mod nodes)*stride, making one random cycle
// through every node.
//
// p2p_chase(.u64 start, .u32 chunks, .u32 hops, .u64 times, .u64 sink),
// <<<1,1>>>: follows the chain from start with L1-bypassing loads (ld.global.cg),
// hops loads per chunk; times[0] is %globaltimer before the first chunk and
// times[c+1] after chunk c (chunks+1 u64 in all); the final pointer goes to sink.
//
// p2p_pingpong(.u64 my_flag, .u64 peer_flag, .u32 iters, .u32 chunk, .u32 role,
// .u64 times, .u64 timeout_ns, .u64 status), <<<1,1>>> on each GPU at once:
// flags are u32 in device memory, each side's own flag in its own memory, set to
// 0 by the host. Role 0 (initiator), for i = 1..iters: st.release.sys peer_flag=i,
// then spin (ld.acquire.sys) until my_flag == i. Role 1 (responder): spin until
// my_flag == i, then store peer_flag = i. The initiator writes %globaltimer to
// times[0] at the start and times[j+1] after round trip (j+1)*chunk
// (iters/chunk + 1 values). Either side gives up once timeout_ns has passed and
// writes 2 to the u32 at status (1 when it finished).
var (
	ChaseBuild = Kernel{Module: "latency", Entry: "p2p_chase_build", MinCC: 80}
	Chase      = Kernel{Module: "latency", Entry: "p2p_chase", MinCC: 80}
	PingPong   = Kernel{Module: "latency", Entry: "p2p_pingpong", MinCC: 80}
	// PingPongRelaxed is PingPong with relaxed system-scope flag stores and
	// polls (st.relaxed.sys / ld.relaxed.sys): the same parameters
	// (PingPongArgs), protocol, times and status, without the system memory
	// barrier a release store costs on every flag write. PingPong measures a
	// correct data hand-off, PingPongRelaxed the link's own round trip.
	PingPongRelaxed = Kernel{Module: "latency", Entry: "p2p_pingpong_relaxed", MinCC: 80}
)

// ChasePerm is the bijection on [0, 2^bits) that orders the chase nodes; the
// PTX computes exactly this. bits is 1..40.
func ChasePerm(k uint64, bits uint, seed uint32) uint64 {
	mask := uint64(1)<<bits - 1
	x := k & mask
	s := uint64(seed)
	for r := 0; r < 3; r++ {
		x = (x*0x9E3779B97F4A7C15 + s) & mask // odd multiplier: bijective mod 2^bits
		x ^= x >> ((bits + 1) / 2)            // xor-shift right: bijective
		s = s*0x5851F42D4C957F2D + 0x14057B7EF767814F
	}
	return x & mask
}

// ChaseBuildArgs are the parameters of p2p_chase_build.
type ChaseBuildArgs struct {
	Buf, Nodes, Stride uint64
	Seed               uint32
}

func (a ChaseBuildArgs) Params() []any { return []any{a.Buf, a.Nodes, a.Stride, a.Seed} }
func DecodeChaseBuildArgs(p []any) (a ChaseBuildArgs, err error) {
	err = decode(p, &a.Buf, &a.Nodes, &a.Stride, &a.Seed)
	return
}

// ChaseArgs are the parameters of p2p_chase.
type ChaseArgs struct {
	Start        uint64
	Chunks, Hops uint32
	Times, Sink  uint64
}

func (a ChaseArgs) Params() []any { return []any{a.Start, a.Chunks, a.Hops, a.Times, a.Sink} }
func DecodeChaseArgs(p []any) (a ChaseArgs, err error) {
	err = decode(p, &a.Start, &a.Chunks, &a.Hops, &a.Times, &a.Sink)
	return
}

// PingPongArgs are the parameters of p2p_pingpong and p2p_pingpong_relaxed.
type PingPongArgs struct {
	MyFlag, PeerFlag   uint64
	Iters, Chunk, Role uint32
	Times, TimeoutNs   uint64
	Status             uint64
}

func (a PingPongArgs) Params() []any {
	return []any{a.MyFlag, a.PeerFlag, a.Iters, a.Chunk, a.Role, a.Times, a.TimeoutNs, a.Status}
}
func DecodePingPongArgs(p []any) (a PingPongArgs, err error) {
	err = decode(p, &a.MyFlag, &a.PeerFlag, &a.Iters, &a.Chunk, &a.Role, &a.Times, &a.TimeoutNs, &a.Status)
	return
}

// decode stores the launch parameters p into dst, checking their number and
// types: a *uint64 takes any 64-bit unsigned value (cuda.DevicePtr too,
// which kernels does not import), a *uint32 a uint32.
func decode(p []any, dst ...any) error {
	if len(p) != len(dst) {
		return fmt.Errorf("kernels: %d parameters, want %d", len(p), len(dst))
	}
	for i, d := range dst {
		switch d := d.(type) {
		case *uint64:
			v := reflect.ValueOf(p[i])
			if v.Kind() != reflect.Uint64 {
				return fmt.Errorf("kernels: parameter %d is %T, want a 64-bit value", i, p[i])
			}
			*d = v.Uint()
		case *uint32:
			v, ok := p[i].(uint32)
			if !ok {
				return fmt.Errorf("kernels: parameter %d is %T, want uint32", i, p[i])
			}
			*d = v
		}
	}
	return nil
}
