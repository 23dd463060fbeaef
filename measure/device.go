package measure

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// Device is one GPU's resources for a run: its primary context, the
// bandwidth buffers, the modules loaded so far, streams, timing events, the
// latch, and scratch memory for the latency and atomic tests. Its methods
// are called from one goroutine at a time.
type Device struct {
	Index int
	// Primary is the device's primary context: its memory (device and
	// pinned host), its peer access, its IPC handles. Ctx is the context the
	// device works in: streams, events, modules, launches and copies. They
	// are one context unless the rounds renew contexts (RenewContext): Ctx
	// is then a green context of Primary, a new one every round.
	Primary gpu.Context
	Ctx     gpu.Context
	Info    cuda.DeviceInfo
	// Send and Recv are the bandwidth buffers, BufBytes each (0: none),
	// at the round's offset in their allocations (sendBase, recvBase:
	// AllocBytes(BufBytes) each).
	Send, Recv         cuda.DevicePtr
	BufBytes           uint64
	sendBase, recvBase cuda.DevicePtr
	// offset is where this round's buffers start in their allocations (Renew).
	offset uint64

	mods map[string]cuda.Module
	fns  map[string]cuda.Function
	// latch is mapped pinned host memory: the flag at 0, the status words
	// from latchStatusOffset.
	latch cuda.HostBuffer
	// result holds {first_bad, bad_count} for the check kernel.
	result  cuda.DevicePtr
	streams []cuda.Stream
	events  []cuda.Event
	// scratch serves the latency and atomic tests; small holds flags,
	// statuses and timestamps (see the small* offsets).
	scratch      cuda.DevicePtr
	scratchBytes uint64
	small        cuda.DevicePtr
	// noGreen: the driver has no green contexts (RenewContext is skipped).
	noGreen bool
	// twin: the device works on another's small and scratch buffers
	// (Twin), which it neither reallocates nor frees.
	twin bool
}

// bufferMargin is the device memory left free beside the two bandwidth
// buffers, for the other allocations and the driver.
const bufferMargin = 64 << 20

// Open opens device dev's primary context and allocates what every test
// needs: send and receive buffers of bufBytes each (none when 0), the latch,
// the check kernel's result, and two streams. On failure it frees what it
// had allocated.
func Open(drv gpu.Driver, dev int, bufBytes uint64) (*Device, error) {
	info, err := drv.DeviceInfo(dev)
	if err != nil {
		return nil, fmt.Errorf("device %d: %w", dev, err)
	}
	c, err := drv.Context(dev)
	if err != nil {
		return nil, fmt.Errorf("device %d: opening its primary context: %w", dev, err)
	}
	dv := &Device{Index: dev, Primary: c, Ctx: c, Info: info, mods: map[string]cuda.Module{}, fns: map[string]cuda.Function{}}
	if err := dv.allocate(bufBytes); err != nil {
		_ = dv.Close()
		return nil, err
	}
	return dv, nil
}

func (dv *Device) allocate(bufBytes uint64) error {
	c, d := dv.Primary, dv.Index
	if bufBytes > 0 {
		free, _, err := c.MemGetInfo()
		if err != nil {
			return fmt.Errorf("device %d: reading free memory: %w", d, err)
		}
		// Overflow-safe: neither side can wrap.
		alloc := AllocBytes(bufBytes)
		if bufBytes > MaxTransferSize || free < bufferMargin || alloc > (free-bufferMargin)/2 {
			return fmt.Errorf("device %d: transfers of %s need 2 × %s of device memory, but only %s is free; choose a smaller --size/--sizes",
				d, results.FormatBytes(bufBytes), results.FormatBytes(alloc), results.FormatBytes(free))
		}
		if dv.sendBase, err = c.MemAlloc(alloc); err != nil {
			return fmt.Errorf("device %d: allocating %s: %w", d, results.FormatBytes(alloc), err)
		}
		if dv.recvBase, err = c.MemAlloc(alloc); err != nil {
			return fmt.Errorf("device %d: allocating %s: %w", d, results.FormatBytes(alloc), err)
		}
		dv.BufBytes = bufBytes
		dv.place()
	}
	var err error
	if dv.latch, err = c.HostAlloc(latchBytes, true); err != nil {
		return fmt.Errorf("device %d: allocating the latch flag in mapped host memory: %w", d, err)
	}
	if dv.result, err = c.MemAlloc(256); err != nil {
		return fmt.Errorf("device %d: %w", d, err)
	}
	if _, err := dv.Stream(1); err != nil {
		return err
	}
	return nil
}

// Twin returns a device that works on dv's memory (its small and scratch
// buffers, which the twin never reallocates or frees) in a context of its
// own: a green context of dv's primary context, made afresh by every Renew
// with RenewContext, with its own streams, events and modules, and no
// latch. A child of the tests across processes runs its latency kernels
// (ping-pong, chase) in one while its copies stay in the context whose
// interprocess event the other processes opened: the ping-pong and chase
// take a time per context that one context's rounds never show, so each
// round draws a new one (docs/findings.md, "Behind the code").
func (dv *Device) Twin() (*Device, error) {
	t := &Device{Index: dv.Index, Primary: dv.Primary, Ctx: dv.Primary, Info: dv.Info, mods: map[string]cuda.Module{}, fns: map[string]cuda.Function{},
		scratch: dv.scratch, scratchBytes: dv.scratchBytes, small: dv.small, noGreen: dv.noGreen, twin: true, offset: dv.offset}
	err := t.renewContext()
	if _, serr := t.Stream(1); serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil && !errors.Is(err, cuda.ErrNoGreenContexts) {
		_ = t.Close()
		return nil, err
	}
	return t, nil
}

// Close lets a held latch go, waits for the device, and frees everything
// Open and later calls allocated, whatever happened before.
func (dv *Device) Close() error {
	var errs []error
	c, mem, d := dv.Ctx, dv.Primary, dv.Index
	// Let a held latch go, so synchronising cannot wait on it.
	dv.Release()
	if err := c.Synchronize(); err != nil {
		errs = append(errs, fmt.Errorf("device %d: %w", d, err))
	}
	for _, ev := range dv.events {
		_ = c.EventDestroy(ev)
	}
	for _, s := range dv.streams {
		_ = c.StreamDestroy(s)
	}
	for _, m := range dv.mods {
		_ = c.UnloadModule(m)
	}
	if c != mem && c != nil {
		if err := c.Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("device %d: destroying its green context: %w", d, err))
		}
		dv.Ctx = mem
	}
	own := []cuda.DevicePtr{dv.sendBase, dv.recvBase, dv.result}
	if !dv.twin {
		own = append(own, dv.scratch, dv.small)
	}
	for _, p := range own {
		if p != 0 {
			if err := mem.MemFree(p); err != nil {
				errs = append(errs, fmt.Errorf("device %d: freeing memory: %w", d, err))
			}
		}
	}
	if dv.latch.Host != nil {
		_ = mem.HostFree(dv.latch)
	}
	return errors.Join(errs...)
}

// cc is the device's compute capability as one number (90 for 9.0).
func (dv *Device) cc() int { return dv.Info.ComputeMajor*10 + dv.Info.ComputeMinor }

// Function loads (once per device) the module of k and returns its entry point.
func (dv *Device) Function(k kernels.Kernel) (cuda.Function, error) {
	if f, ok := dv.fns[k.Entry]; ok {
		return f, nil
	}
	if k.MinCC > dv.cc() {
		return 0, fmt.Errorf("kernel %s needs compute capability %d.%d; device %d has %d.%d",
			k.Entry, k.MinCC/10, k.MinCC%10, dv.Index, dv.Info.ComputeMajor, dv.Info.ComputeMinor)
	}
	m, err := dv.module(k.Module)
	if err != nil {
		return 0, err
	}
	f, err := dv.Ctx.Function(m, k.Entry)
	if err != nil {
		return 0, fmt.Errorf("device %d: kernel %s: %w", dv.Index, k.Entry, err)
	}
	dv.fns[k.Entry] = f
	return f, nil
}

// Preload loads every module the device can run (kernels.ModuleNames, those
// whose .target its compute capability reaches) that it has not loaded yet,
// as Function would on first use. The first load of a module in a process on
// a machine whose driver has not compiled it before is a JIT compilation,
// a tenth of a second or more a module where a load from the driver's cache
// takes a millisecond (docs/findings.md, "Behind the code"): loaded here, it
// stays out of the first round's figures. What fails to load here fails
// again, with its error, where the kernel is used.
func (dv *Device) Preload() {
	for _, name := range modulesFor(dv.cc()) {
		_, _ = dv.module(name) // its error comes again where the kernel is used
	}
}

// modulesFor lists the modules (kernels.ModuleNames) whose .target compute
// capability cc reaches.
func modulesFor(cc int) []string {
	var out []string
	for _, name := range kernels.ModuleNames() {
		ptx, err := kernels.PTX(name)
		if err != nil {
			continue
		}
		if m, err := kernels.ParsePTX(ptx); err == nil && m.Target <= cc {
			out = append(out, name)
		}
	}
	return out
}

// WarmJIT loads every module that compute capability cc can run into c
// and unloads it again, stopping at the first failure: the driver compiles
// each one's PTX and keeps the code in its cache, where the devices' own
// loads (Preload) then find it. Called beside the machine's discovery, it
// takes the compilation off the warm-up of the first run on a machine
// (a quarter of a second on a fresh 2× H200: docs/findings.md, "Behind the
// code").
func WarmJIT(c gpu.Context, cc int) error {
	for _, name := range modulesFor(cc) {
		ptx, err := kernels.PTX(name)
		if err != nil {
			return err
		}
		if a, ok := c.(interface{ CompileAside(string) error }); ok {
			// Off the context's thread, which the setup's calls then
			// need not wait behind (it halves a fresh machine's setup).
			if err := a.CompileAside(ptx); err != nil {
				return fmt.Errorf("compiling PTX module %s: %w", name, err)
			}
			continue
		}
		mod, err := c.LoadModule(ptx)
		if err != nil {
			return fmt.Errorf("loading PTX module %s: %w", name, err)
		}
		if err := c.UnloadModule(mod); err != nil {
			return err
		}
	}
	return nil
}

// module returns module name, loading it in the device's context (once a
// round: RenewModules unloads them).
func (dv *Device) module(name string) (cuda.Module, error) {
	if m, ok := dv.mods[name]; ok {
		return m, nil
	}
	ptx, err := kernels.PTX(name)
	if err != nil {
		return 0, err
	}
	m, err := dv.Ctx.LoadModule(ptx)
	if err != nil {
		return 0, fmt.Errorf("device %d: loading PTX module %s: %w", dv.Index, name, err)
	}
	dv.mods[name] = m
	return m, nil
}

// Stream returns the device's i-th stream, creating more as needed. Streams
// 0 and 1 exist from Open on: 0 serves setup work, 1 the ping-pong.
func (dv *Device) Stream(i int) (cuda.Stream, error) {
	for len(dv.streams) <= i {
		s, err := dv.Ctx.StreamCreate()
		if err != nil {
			return 0, fmt.Errorf("device %d: creating a stream: %w", dv.Index, err)
		}
		dv.streams = append(dv.streams, s)
	}
	return dv.streams[i], nil
}

// Event returns the device's i-th timing event, creating more as needed.
func (dv *Device) Event(i int) (cuda.Event, error) {
	for len(dv.events) <= i {
		ev, err := dv.Ctx.EventCreate()
		if err != nil {
			return 0, fmt.Errorf("device %d: creating an event: %w", dv.Index, err)
		}
		dv.events = append(dv.events, ev)
	}
	return dv.events[i], nil
}

// Scratch returns a device buffer of at least n bytes for the latency and
// atomic tests, at the round's offset (Renew) in the largest allocation
// made so far.
func (dv *Device) Scratch(n uint64) (cuda.DevicePtr, error) {
	if dv.scratch != 0 && dv.scratchBytes >= n {
		return dv.scratch + cuda.DevicePtr(dv.offset), nil
	}
	if dv.twin {
		return 0, fmt.Errorf("device %d: a scratch buffer of %s on a twin whose device has %s", dv.Index, results.FormatBytes(n), results.FormatBytes(dv.scratchBytes))
	}
	if dv.scratch != 0 {
		if err := dv.Primary.MemFree(dv.scratch); err != nil {
			return 0, fmt.Errorf("device %d: %w", dv.Index, err)
		}
		dv.scratch, dv.scratchBytes = 0, 0
	}
	p, err := dv.Primary.MemAlloc(AllocBytes(n))
	if err != nil {
		return 0, fmt.Errorf("device %d: allocating %s: %w", dv.Index, results.FormatBytes(AllocBytes(n)), err)
	}
	dv.scratch, dv.scratchBytes = p, n
	return p + cuda.DevicePtr(dv.offset), nil
}

// ScratchBase is Scratch without the round's offset: the start of the
// scratch allocation, for a test that places its own data at the same
// places in every round (the atomic latency's counters).
func (dv *Device) ScratchBase(n uint64) (cuda.DevicePtr, error) {
	p, err := dv.Scratch(n)
	if err != nil {
		return 0, err
	}
	return p - cuda.DevicePtr(dv.offset), nil
}

// Layout of the small buffer: the ping-pong's flag in one of FlagSlots
// slots of its upper half (FlagOffset), the rest at fixed places.
const (
	SmallBytes   = 64 << 10
	smallStatus  = 256  // u32 status
	smallSink    = 512  // u64 chase sink
	smallTimes   = 1024 // u64 timestamps
	smallFlags   = SmallBytes / 2
	maxTimestamp = (smallFlags - smallTimes) / 8
	// FlagSlots are the places 1 KiB apart a ping-pong's flags take.
	FlagSlots = results.PingFlagSlots
	flagStep  = (SmallBytes - smallFlags) / FlagSlots
)

// FlagOffset is where the ping-pong's flag sits in the small buffer at
// slot (0 to FlagSlots-1), the same on every device and in every process,
// so that both sides of a ping-pong agree on it. A ping-pong's one-way time
// depends on where the two flags sit (577-836 ns on a 2× H200, the same in
// every process: docs/methods.md, "Flag ping-pong"), so a round that put its
// flags at one slot would read that slot's time. Every round takes a sample
// at every slot (PingSlotOrder), so that each round's median is over the
// same places as any other's.
func FlagOffset(slot int) uint64 {
	return smallFlags + flagStep*uint64(slot%FlagSlots)
}

// PingSlotOrder is the order in which a round visits the flag's slots,
// drawn afresh every round (math/rand/v2, seeded by the process), so that
// no slot, nor any effect of a slot's turn in the round, goes with a round
// number.
func PingSlotOrder() []int { return rand.Perm(FlagSlots) }

// Small returns the device's buffer of SmallBytes for flags, statuses and
// timestamps, allocating it on first use.
func (dv *Device) Small() (cuda.DevicePtr, error) {
	if dv.small != 0 {
		return dv.small, nil
	}
	if dv.twin {
		return 0, fmt.Errorf("device %d: a twin of a device without a small buffer", dv.Index)
	}
	p, err := dv.Primary.MemAlloc(SmallBytes)
	if err != nil {
		return 0, fmt.Errorf("device %d: %w", dv.Index, err)
	}
	dv.small = p
	return p, nil
}

// Memset sets words 4-byte words at p to value and waits.
func (dv *Device) Memset(p cuda.DevicePtr, value uint32, words uint64) error {
	s := dv.streams[0]
	if err := dv.Ctx.MemsetD32Async(p, value, words, s); err != nil {
		return fmt.Errorf("device %d: %w", dv.Index, err)
	}
	if err := dv.Ctx.StreamSynchronize(s); err != nil {
		return fmt.Errorf("device %d: %w", dv.Index, err)
	}
	return nil
}

// launchGrid is the grid of the fill, check and chain-build kernels.
func (dv *Device) launchGrid() [3]uint32 {
	return [3]uint32{uint32(max(1, dv.Info.SMCount) * 4), 1, 1}
}

// readU64 copies n little-endian u64 values from device memory.
func (dv *Device) readU64(p cuda.DevicePtr, n int) ([]uint64, error) {
	b := make([]byte, 8*n)
	if err := dv.Ctx.MemcpyDtoH(b, p); err != nil {
		return nil, fmt.Errorf("device %d: reading results: %w", dv.Index, err)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out, nil
}
