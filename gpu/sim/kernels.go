package sim

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
)

// Kernels are recognised by their entry names (the contract of package
// kernels) and simulated by what they are documented to do; the PTX text is
// only checked the way the JIT would reject it (not PTX, a target the device
// cannot run, a PTX version the driver does not know).

// maxPTXVersion is the newest PTX ISA the simulated 13.0 driver JITs.
const maxPTXVersion = 90 // 9.0

// errorUnsupportedPTXVersion is CUDA_ERROR_UNSUPPORTED_PTX_VERSION (cuda.h).
const errorUnsupportedPTXVersion cuda.Result = 222

// defaultSharedLimit is the dynamic shared memory a launch gets without
// SetMaxDynamicShared.
const defaultSharedLimit = 48 << 10

type kernelKind int

const (
	kUnknown kernelKind = iota
	kLatch
	kFill
	kCheck
	kCopy
	kAtomic
	kAtomicChain
	kChaseBuild
	kChase
	kPingPong
)

// kindOf maps an entry name to the behaviour the simulator gives it.
func kindOf(entry string) kernelKind {
	switch {
	case entry == "p2p_latch":
		return kLatch
	case entry == "p2p_fill":
		return kFill
	case entry == "p2p_check":
		return kCheck
	case strings.HasPrefix(entry, "p2p_copy_"):
		return kCopy
	case strings.HasPrefix(entry, "p2p_atomic_chain_"):
		return kAtomicChain
	case strings.HasPrefix(entry, "p2p_atomic_"):
		return kAtomic
	case entry == "p2p_chase_build":
		return kChaseBuild
	case entry == "p2p_chase":
		return kChase
	case entry == "p2p_pingpong", entry == "p2p_pingpong_relaxed":
		return kPingPong
	}
	return kUnknown
}

// module is a loaded PTX module.
type module struct {
	handle   cuda.Module
	ctx      *devContext
	entries  map[string][]int // entry → parameter sizes in bytes
	funcs    map[string]*function
	unloaded bool
}

// function is one entry point of a module.
type function struct {
	handle    cuda.Function
	mod       *module
	name      string
	kind      kernelKind
	params    []int
	maxShared int
}

// parsePTX reads the entries of a PTX text (through kernels.ParsePTX, the
// one PTX parser) for a device of compute capability cc (major*10+minor), or
// returns the error and log a JIT gives.
func parsePTX(text string, cc int) (map[string][]int, cuda.Result, string) {
	m, err := kernels.ParsePTX(text)
	switch {
	case errors.Is(err, kernels.ErrNotPTX):
		return nil, cuda.ErrorInvalidPTX, "ptxas fatal   : Ptx assembly aborted due to errors (no .version or .target directive: not PTX)"
	case err != nil:
		return nil, cuda.ErrorInvalidPTX, "ptxas fatal   : Ptx assembly aborted due to errors (" + err.Error() + ")"
	}
	if m.Version > maxPTXVersion {
		return nil, errorUnsupportedPTXVersion, fmt.Sprintf("ptxas fatal   : Unsupported .version %d.%d; current version is '9.0'", m.Version/10, m.Version%10)
	}
	target := m.Target
	switch {
	case m.TargetSuffix == "a" && target != cc:
		return nil, cuda.ErrorInvalidPTX, fmt.Sprintf("ptxas fatal   : .target sm_%da runs only on compute capability %d.%d; this device is %d.%d", target, target/10, target%10, cc/10, cc%10)
	case m.TargetSuffix == "f" && (target/10 != cc/10 || target > cc):
		return nil, cuda.ErrorInvalidPTX, fmt.Sprintf("ptxas fatal   : .target sm_%df does not run on compute capability %d.%d", target, cc/10, cc%10)
	case target > cc:
		return nil, cuda.ErrorInvalidPTX, fmt.Sprintf("ptxas fatal   : SM version specified by .target (sm_%d) is higher than default SM version (sm_%d)", target, cc)
	}
	entries := map[string][]int{}
	for _, e := range m.Entries {
		var sizes []int
		for _, p := range e.Params {
			sizes = append(sizes, p.Size())
		}
		entries[e.Name] = sizes
	}
	if len(entries) == 0 {
		return nil, cuda.ErrorInvalidPTX, "ptxas fatal   : no .entry in the module"
	}
	return entries, cuda.Success, ""
}

// LoadModule is cuModuleLoadDataEx with the JIT error log.
func (c *devContext) LoadModule(ptx string) (cuda.Module, error) {
	const call = "cuModuleLoadDataEx"
	return lockedValue(c, call, func(d *Driver) (cuda.Module, error) {
		d.tick(50_000) // JIT compilation
		g := d.m.gpu
		entries, code, log := parsePTX(ptx, g.ccMajor*10+g.ccMinor)
		if code != cuda.Success {
			return 0, fmt.Errorf("%w; JIT error log:\n%s", cuda.NewError(code, call), log)
		}
		m := &module{handle: cuda.Module(d.handle()), ctx: c, entries: entries, funcs: map[string]*function{}}
		d.modules[m.handle] = m
		return m.handle, nil
	})
}

// UnloadModule is cuModuleUnload; its functions die with it.
func (c *devContext) UnloadModule(h cuda.Module) error {
	const call = "cuModuleUnload"
	return c.locked(call, func(d *Driver) error {
		m, err := c.loadedModule(h, call)
		if err != nil {
			return err
		}
		m.unloaded = true
		delete(d.modules, h)
		for _, f := range m.funcs {
			delete(d.funcs, f.handle)
		}
		return nil
	})
}

// Function is cuModuleGetFunction: NOT_FOUND for a name the module lacks.
func (c *devContext) Function(h cuda.Module, name string) (cuda.Function, error) {
	const call = "cuModuleGetFunction"
	return lockedValue(c, call, func(d *Driver) (cuda.Function, error) {
		m, err := c.loadedModule(h, call)
		if err != nil {
			return 0, err
		}
		if f := m.funcs[name]; f != nil {
			return f.handle, nil
		}
		params, ok := m.entries[name]
		if !ok {
			return 0, cuda.NewError(cuda.ErrorNotFound, call)
		}
		f := &function{handle: cuda.Function(d.handle()), mod: m, name: name, kind: kindOf(name), params: params, maxShared: defaultSharedLimit}
		m.funcs[name] = f
		d.funcs[f.handle] = f
		return f.handle, nil
	})
}

// SetMaxDynamicShared is cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES).
func (c *devContext) SetMaxDynamicShared(h cuda.Function, bytes int) error {
	const call = "cuFuncSetAttribute"
	return c.locked(call, func(d *Driver) error {
		f, err := c.loadedFunction(h, call)
		if err != nil {
			return err
		}
		if bytes < 0 || bytes > d.m.gpu.maxSharedOptin {
			return cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		f.maxShared = max(bytes, defaultSharedLimit)
		return nil
	})
}

// launch is one kernel launch being built.
type launch struct {
	c         *devContext
	fn        *function
	grid      [3]uint32
	block     [3]uint32
	blocks    uint64
	blockSize uint64
	threads   uint64
	params    []any
}

// Launch is cuLaunchKernel: it checks the configuration and the parameters
// against the entry's declaration (INVALID_VALUE, as a real launch with a
// bad argument buffer would misbehave) and queues the simulated kernel.
func (c *devContext) Launch(h cuda.Function, grid, block [3]uint32, sharedBytes uint32, s cuda.Stream, params ...any) error {
	const call = "cuLaunchKernel"
	return c.locked(call, func(d *Driver) error {
		f, err := c.loadedFunction(h, call)
		if err != nil {
			return err
		}
		st, err := c.streamFor(s, call)
		if err != nil {
			return err
		}
		d.tick(costEnqueue)
		l := &launch{c: c, fn: f, grid: grid, block: block, params: params}
		if err := l.validate(int(sharedBytes)); err != nil {
			return err
		}
		o, err := l.build()
		if err != nil {
			return err
		}
		d.enqueue(st, o)
		return nil
	})
}

func (l *launch) invalid(format string, args ...any) error {
	return fmt.Errorf("%w (simulated: %s: %s)", cuda.NewError(cuda.ErrorInvalidValue, "cuLaunchKernel"), l.fn.name, fmt.Sprintf(format, args...))
}

func (l *launch) validate(shared int) error {
	g, b := l.grid, l.block
	if g[0] == 0 || g[1] == 0 || g[2] == 0 || b[0] == 0 || b[1] == 0 || b[2] == 0 {
		return l.invalid("empty grid or block %v %v", g, b)
	}
	if g[0] > 1<<31-1 || g[1] > 65535 || g[2] > 65535 || b[0] > 1024 || b[1] > 1024 || b[2] > 64 {
		return l.invalid("grid %v or block %v beyond the device's limits", g, b)
	}
	l.blockSize = uint64(b[0]) * uint64(b[1]) * uint64(b[2])
	if l.blockSize > 1024 {
		return l.invalid("%d threads per block", l.blockSize)
	}
	l.blocks = uint64(g[0]) * uint64(g[1]) * uint64(g[2])
	l.threads = l.blocks * l.blockSize
	if shared > l.fn.maxShared {
		return l.invalid("%d bytes of dynamic shared memory; the function allows %d", shared, l.fn.maxShared)
	}
	if len(l.params) != len(l.fn.params) {
		return l.invalid("%d parameters; the entry declares %d", len(l.params), len(l.fn.params))
	}
	for i, p := range l.params {
		var size int
		switch reflect.ValueOf(p).Kind() {
		case reflect.Uint64, reflect.Int64, reflect.Float64:
			size = 8
		case reflect.Uint32, reflect.Int32, reflect.Float32:
			size = 4
		default:
			return l.invalid("parameter %d is %T", i, p)
		}
		if size != l.fn.params[i] {
			return l.invalid("parameter %d is %d bytes (%T); the entry declares %d", i, size, p, l.fn.params[i])
		}
	}
	return nil
}

// build decodes the parameters with the kernels package and makes the op.
func (l *launch) build() (*op, error) {
	switch l.fn.kind {
	case kLatch:
		return l.latch()
	case kFill:
		return l.fill()
	case kCheck:
		return l.check()
	case kCopy:
		return l.smCopy()
	case kAtomic:
		return l.atomic(false)
	case kAtomicChain:
		return l.atomic(true)
	case kChaseBuild:
		return l.chaseBuild()
	case kChase:
		return l.chase()
	case kPingPong:
		return l.pingPong()
	}
	return nil, fmt.Errorf("%w (simulated: the simulator has no model of kernel %s)",
		cuda.NewError(cuda.ErrorNotSupported, "cuLaunchKernel"), l.fn.name)
}

// decodeErr turns a kernels.Decode* error into the launch's INVALID_VALUE.
func (l *launch) decodeErr(err error) error { return l.invalid("%v", err) }

// inflightCap bounds an SM kernel's bandwidth by Little's law: the bytes
// its resident threads keep in flight over the memory latency.
func (l *launch) inflightCap(bytesPerThread float64, remote bool) float64 {
	g := l.c.d.m.gpu
	resident := min(l.threads, uint64(g.sms*g.maxThreadsPerSM))
	lat := l.c.d.m.m.smLatency
	if remote {
		lat = l.c.d.m.m.smLatencyPeer
	}
	return float64(resident) * bytesPerThread / lat
}

// kernelSetup is the fixed part of a kernel's time (it sets o.floor, the
// part that cannot overlap the previous op): launch and drain, plus the
// link's latency when the kernel touches a peer's memory.
func (l *launch) kernelSetup(o *op, remote bool) float64 {
	mm := l.c.d.m.m
	t := mm.kernelSetup * l.c.d.opJitter(10, o.keys(noiseSetup))
	o.floor = t / 3
	if remote {
		t += mm.peerSetup
		o.floor += mm.peerSetup
	}
	return t
}

// syncFault returns the FaultError of the pair a kernel on c touching the
// memory at p would hit, checked at launch.
func (l *launch) syncFault(p uint64) error {
	if sp, ok := l.c.d.resolve(p, 0); ok {
		return l.c.d.pairError(l.c.dev, sp.dev(), "cuLaunchKernel")
	}
	return nil
}
