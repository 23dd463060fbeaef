package results

import (
	"fmt"
	"slices"
	"strings"
)

// Test names what a figure measured (Figure.Test). Every test p2pbench
// writes is a constant below and has an entry in the catalogue; files from
// other tools may carry others.
type Test string

// The tests, in the order a run makes them.
const (
	H2D         Test = "h2d"
	D2H         Test = "d2h"
	SMH2D       Test = "sm_h2d"
	SMD2H       Test = "sm_d2h"
	HostBidir   Test = "host_bidir"
	SMHostBidir Test = "sm_host_bidir"
	LocalCopy   Test = "local_copy"
	CERead      Test = "ce_read"
	CEWrite     Test = "ce_write"
	CEBidir     Test = "ce_bidir"
	SMRead      Test = "sm_read"
	SMWrite     Test = "sm_write"
	SMBidir     Test = "sm_bidir"
	NoP2PCopy   Test = "nop2p_copy"
	AllToOne    Test = "all_to_one"
	OneToAll    Test = "one_to_all"
	SMAllToOne  Test = "sm_all_to_one"
	SMOneToAll  Test = "sm_one_to_all"
	AllPairs    Test = "all_pairs"

	HostToAll      Test = "host_to_all"
	AllToHost      Test = "all_to_host"
	HostAllBidir   Test = "host_all_bidir"
	SMHostToAll    Test = "sm_host_to_all"
	SMAllToHost    Test = "sm_all_to_host"
	SMHostAllBidir Test = "sm_host_all_bidir"

	LatChase      Test = "lat_chase"
	LatPingPong   Test = "lat_pingpong"
	LatCopyDevice Test = "lat_copy_device"
	LatCopyHost   Test = "lat_copy_host"
	LatCopyB2B    Test = "lat_copy_b2b"
	LatHostChase  Test = "lat_host_chase"

	AtomicTput    Test = "atomic_tput"
	AtomicLatency Test = "atomic_latency"

	IPCCERead      Test = "ipc_ce_read"
	IPCCEWrite     Test = "ipc_ce_write"
	IPCCEBidir     Test = "ipc_ce_bidir"
	IPCSMRead      Test = "ipc_sm_read"
	IPCSMWrite     Test = "ipc_sm_write"
	IPCSMBidir     Test = "ipc_sm_bidir"
	IPCLatChase    Test = "ipc_lat_chase"
	IPCLatPingPong Test = "ipc_lat_pingpong"
)

// Engine says what moved the bytes (Figure.Engine): the copy engine, the
// driver staging through the host, or an SM kernel ("sm" for the latency
// and atomic kernels, "sm:<variant>" for a copy kernel variant).
type Engine string

const (
	EngineCopy   Engine = "copy_engine"
	EngineStaged Engine = "staged"
	EngineSM     Engine = "sm"
)

// SMCopyEngine is the engine of an SM copy kernel variant: "sm:<variant>".
func SMCopyEngine(variant string) Engine { return Engine(string(EngineSM) + ":" + variant) }

// IsSM reports whether the engine is an SM kernel of any kind.
func (e Engine) IsSM() bool {
	return e == EngineSM || strings.HasPrefix(string(e), string(EngineSM)+":")
}

// Variant is the SM copy kernel variant of an "sm:<variant>" engine, "" otherwise.
func (e Engine) Variant() string {
	v, _ := strings.CutPrefix(string(e), string(EngineSM)+":")
	if v == string(e) {
		return ""
	}
	return v
}

// Direction says which side issues a copy (Figure.Direction): DirRead
// (pull) is issued in the destination's context, DirWrite (push) in the
// source's.
type Direction string

const (
	DirRead  Direction = "read"
	DirWrite Direction = "write"
)

// Part splits the figures of concurrent transfers (Figure.Part).
type Part string

const (
	PartNone    Part = ""
	PartForward Part = "forward" // src → dst of a both-ways test
	PartReverse Part = "reverse" // dst → src of a both-ways test, filed under src, dst
	PartPair    Part = "pair"    // one pair of many copying at once
	PartTotal   Part = "total"   // every transfer's bytes over the longest time
)

// Unit is a figure's unit (Figure.Unit).
type Unit string

const (
	UnitGBps Unit = "GB/s"  // decimal, 1e9 bytes per second
	UnitNs   Unit = "ns"    // nanoseconds
	UnitGOps Unit = "Gop/s" // 1e9 operations per second
)

// LowerIsBetter reports whether smaller values are better: true for times.
func (u Unit) LowerIsBetter() bool {
	switch u {
	case UnitNs, "us", "µs", "ms", "s":
		return true
	}
	return false
}

// Command groups tests under the subcommand that measures them.
type Command string

const (
	CommandBW     Command = "bw"
	CommandLat    Command = "lat"
	CommandAtomic Command = "atomic"
	CommandIPC    Command = "ipc"
)

// Ends are what a bandwidth test copies between (Shape.Ends).
type Ends string

const (
	// EndsPair: from one device to another, one ordered pair at a time
	// (the matrices and the size sweeps).
	EndsPair Ends = "pair"
	// EndsLocal: within one device's memory.
	EndsLocal Ends = "local"
	// EndsHostToDevice, EndsDeviceToHost, EndsHostBothWays: between pinned
	// host memory and a device (Shape.AllDevices: every device at once).
	EndsHostToDevice Ends = "host_to_device"
	EndsDeviceToHost Ends = "device_to_host"
	EndsHostBothWays Ends = "host_both_ways"
	// EndsIntoOne, EndsOutOfOne: every other device into one device, one
	// device out to every other, all at once, pushed and pulled.
	EndsIntoOne  Ends = "into_one"
	EndsOutOfOne Ends = "out_of_one"
	// EndsAllPairs: every ordered pair at once, pushed.
	EndsAllPairs Ends = "all_pairs"
)

// Shape is how a copy test moves its bytes: everything the engine that
// measures it (bench, ipc), the plan that schedules it and the estimate of
// its cost need to know about it besides its name. A test that moves no
// bytes by copies (latency kernels, atomics) has the zero Shape.
type Shape struct {
	// Engine moves the bytes: EngineCopy, EngineStaged (the copy engine
	// without peer access) or EngineSM (an SM copy kernel, its variant and
	// grid chosen at run time: Settings.SM, --variant, --tune).
	Engine Engine
	// Direction is the side that issues a one-way copy between two
	// devices: DirRead (pull, the destination) or DirWrite (push, the
	// source); "" for a test both ways at once (it measures both) and for
	// the tests whose issuer the ends decide (DirRead is reported there).
	Direction Direction
	// Ends are what the test copies between.
	Ends Ends
	// AllDevices is true for a host test of every device at once (else
	// one device at a time).
	AllDevices bool
	// NeedsPeer is true for the tests between devices that copy with peer
	// access enabled (the matrices' peer tests and the copy latency).
	NeedsPeer bool
	// Kernel, for an SM test that exists for one kernel, is that SM copy
	// variant (a kernels.CopyKernels name), run at its own grid whatever
	// the run's choice (--variant, --tune); "" for the run's choice.
	Kernel string
}

// IsCopy reports whether the shape is that of a copy test.
func (s Shape) IsCopy() bool { return s.Engine != "" }

// PairTest returns the bandwidth test between two devices with peer access
// that copies by engine, one way in dir or both ways at once (dir ""), with
// the run's SM kernel (no Shape.Kernel of its own): the test of the
// matrices that measures such copies, and stands for a group of one pair
// copying so. TestShapes holds the catalogue to one such test for each.
func PairTest(engine Engine, dir Direction) (Test, bool) {
	for _, info := range catalogue {
		if sh := info.Shape; info.Command == CommandBW && sh.Ends == EndsPair && sh.NeedsPeer && sh.Kernel == "" &&
			sh.Engine == engine && sh.Direction == dir && info.BothWays == (dir == "") {
			return info.Name, true
		}
	}
	return "", false
}

// Shaped returns the tests p2pbench measures whose shape keep accepts, in
// the order a run makes them.
func Shaped(keep func(TestInfo) bool) []Test {
	var out []Test
	for _, info := range catalogue {
		if info.Shape.IsCopy() && keep(info) {
			out = append(out, info.Name)
		}
	}
	return out
}

// TestInfo is one test's entry in the catalogue: everything about a test
// that is the same for all its figures.
type TestInfo struct {
	Name Test `json:"-"`
	// Unit of every figure of the test.
	Unit Unit `json:"unit"`
	// Title names the test for people, as a chart or section title says it;
	// Short names it in a table cell ("CE read").
	Title string `json:"title"`
	Short string `json:"short,omitempty"`
	// Conventions names the rules by which the test's figures are
	// computed (conventions.go), in the order its convention says them;
	// Convention says them in words where the entry names none: a file of
	// a build before 2026-11-29, or another tool's import. Run.Convention
	// gives the words either way.
	Conventions []string `json:"conventions,omitempty"`
	Convention  string   `json:"convention,omitempty"`
	// Method is the version of how the test is measured: 1 + the changes
	// of the history that name it (methods.go), where a change of
	// measuring is added, which bumps it. A file records its build's
	// (0: a file of a build before methods were recorded).
	Method int `json:"method,omitempty"`

	// Command is the subcommand that measures the test; Select is the name
	// that selects it there (--tests), which several tests may share
	// (lat_copy selects lat_copy_device, lat_copy_host and lat_copy_b2b).
	Command Command `json:"-"`
	Select  string  `json:"-"`
	// Doc describes the selectable test in a line, for --help.
	Doc string `json:"-"`
	// NeedsPair is true for tests that measure only between two devices.
	NeedsPair bool `json:"-"`
	// Matrix is true for the one-figure-per-ordered-pair bandwidth tests of
	// the matrices (see Run.MatrixSize).
	Matrix bool `json:"-"`
	// BothWays is true for the tests that copy both directions at once
	// (figures with parts forward, reverse and total).
	BothWays bool `json:"-"`
	// SameProcess is, for a test across processes, the in-process test it
	// repeats ("" otherwise); it copies in its twin's shape.
	SameProcess Test `json:"-"`
	// Shape is how a copy test copies (the zero Shape for the others).
	Shape Shape `json:"-"`
}

// LowerIsBetter reports whether smaller figures of the test are better.
func (t TestInfo) LowerIsBetter() bool { return t.Unit.LowerIsBetter() }

// docCopyLat describes the selectable lat_copy.
const docCopyLat = "small cuMemcpyPeerAsync, pushed and pulled: one copy's completion as the host sees it, the per-copy time of back-to-back copies, one copy's device time"

// The groups of conventions (conventions.go) the catalogue's entries are
// made of.
var (
	convRead     = []string{cvGBps, cvRead, cvRows}
	convWrite    = []string{cvGBps, cvWrite, cvRows}
	convBidir    = []string{cvGBps, cvBothWays}
	convStaged   = []string{cvGBps, cvStaged, cvRows}
	convHost     = []string{cvGBps, cvHost}
	convLocal    = []string{cvGBps, cvLocal}
	convAggr     = []string{cvGBps, cvAtOnce, cvPushedByCE}
	convGroup    = []string{cvGBps, cvAtOnce, cvGroupDirs}
	convHostSM   = []string{cvGBps, cvHostSM, cvHostKernel}
	convHostBi   = []string{cvGBps, cvHostBoth}
	convHostAll  = []string{cvGBps, cvHostAll}
	convHostAlB  = []string{cvGBps, cvHostAllHeld}
	convByCE     = []string{cvByCE}
	convByCEP2P  = []string{cvByCEP2P}
	convBySM     = []string{cvBySM}
	convHostK    = []string{cvHostKernel}
	convChase    = []string{cvChase, cvChaseStart}
	convHostLat  = []string{cvHostChase}
	convCopyDev  = []string{cvCopyDevice, cvCopyRows}
	convCopyHst  = []string{cvCopyHost, cvCopyRows}
	convCopyB2B  = []string{cvCopyB2B, cvB2BUnheld, cvB2BTogether, cvCopyRows}
	convUnheld   = []string{cvUnheldPulls, cvOwnShort}
	convAtomic   = []string{cvAtomic}
	convAtomLat  = []string{cvAtomicLat}
	convPing     = []string{cvPing, cvPingSample, cvPingSlots}
	convSteady   = []string{cvSteady, cvPlainWindow, cvFewSamples, cvOneIssuer}
	convWindow   = []string{cvWindow}
	convSMReps   = []string{cvInKernelReps}
	convIPC      = []string{cvIPC}
	convIPCCE    = []string{cvIPCCE, cvIPCPeerOpen}
	convIPCBidir = []string{cvIPCBothWays}
	convIPCChase = []string{cvIPCChase}
	convIPCPing  = []string{cvIPCPing}
)

// catalogue lists every test p2pbench measures, in run order.
var catalogue = []TestInfo{
	{Name: H2D, Unit: UnitGBps, Title: "Host to device", Short: "host→device", Conventions: refs(convHost, convSteady), Command: CommandBW, Shape: Shape{Engine: EngineCopy, Ends: EndsHostToDevice},
		Doc: "host → device copy, pinned memory"},
	{Name: D2H, Unit: UnitGBps, Title: "Device to host", Short: "device→host", Conventions: refs(convHost, convSteady), Command: CommandBW, Shape: Shape{Engine: EngineCopy, Ends: EndsDeviceToHost},
		Doc: "device → host copy, pinned memory"},
	{Name: SMH2D, Unit: UnitGBps, Title: "Host to device, SM kernel", Short: "SM host→device", Conventions: refs(convHostSM, convSteady, convSMReps), Command: CommandBW, Shape: Shape{Engine: EngineSM, Ends: EndsHostToDevice},
		Doc: "host → device by an SM copy kernel reading pinned, mapped host memory"},
	{Name: SMD2H, Unit: UnitGBps, Title: "Device to host, SM kernel", Short: "SM device→host", Conventions: refs(convHostSM, convSteady, convSMReps), Command: CommandBW, Shape: Shape{Engine: EngineSM, Ends: EndsDeviceToHost},
		Doc: "device → host by an SM copy kernel writing pinned, mapped host memory"},
	{Name: HostBidir, Unit: UnitGBps, Title: "Host and device, both directions at once", Short: "host both ways", Conventions: refs(convHostBi, convByCE, convSteady), Command: CommandBW, BothWays: true, Shape: Shape{Engine: EngineCopy, Ends: EndsHostBothWays},
		Doc: "host → device and device → host at once, copy engine"},
	{Name: SMHostBidir, Unit: UnitGBps, Title: "Host and device, both directions at once, SM kernels", Short: "SM host both ways", Conventions: refs(convHostBi, convBySM, convHostK, convSteady, convSMReps), Command: CommandBW, BothWays: true, Shape: Shape{Engine: EngineSM, Ends: EndsHostBothWays},
		Doc: "host → device and device → host at once, SM copy kernels"},
	{Name: LocalCopy, Unit: UnitGBps, Title: "Copy within one device", Short: "local copy", Conventions: refs(convLocal, convSteady), Command: CommandBW, Shape: Shape{Engine: EngineCopy, Ends: EndsLocal},
		Doc: "copy within one device's memory"},
	{Name: CERead, Unit: UnitGBps, Title: "Copy engine read (pull)", Short: "CE read", Conventions: refs(convRead, convSteady, convUnheld), Command: CommandBW, NeedsPair: true, Matrix: true, Shape: Shape{Engine: EngineCopy, Direction: DirRead, Ends: EndsPair, NeedsPeer: true},
		Doc: "copy engine, cuMemcpyPeerAsync issued by the destination (pull)"},
	{Name: CEWrite, Unit: UnitGBps, Title: "Copy engine write (push)", Short: "CE write", Conventions: refs(convWrite, convSteady), Command: CommandBW, NeedsPair: true, Matrix: true, Shape: Shape{Engine: EngineCopy, Direction: DirWrite, Ends: EndsPair, NeedsPeer: true},
		Doc: "copy engine, cuMemcpyPeerAsync issued by the source (push)"},
	{Name: CEBidir, Unit: UnitGBps, Title: "Copy engine, both directions at once", Short: "CE both ways", Conventions: refs(convBidir, convSteady), Command: CommandBW, BothWays: true, NeedsPair: true, Matrix: true, Shape: Shape{Engine: EngineCopy, Ends: EndsPair, NeedsPeer: true},
		Doc: "copy engine, both directions at once (read and write variants)"},
	{Name: SMRead, Unit: UnitGBps, Title: "SM kernel read (pull)", Short: "SM read", Conventions: refs(convRead, convSteady, convSMReps), Command: CommandBW, NeedsPair: true, Matrix: true, Shape: Shape{Engine: EngineSM, Direction: DirRead, Ends: EndsPair, NeedsPeer: true},
		Doc: "SM copy kernel on the destination reading the peer (pull)"},
	{Name: SMWrite, Unit: UnitGBps, Title: "SM kernel write (push)", Short: "SM write", Conventions: refs(convWrite, convSteady, convSMReps), Command: CommandBW, NeedsPair: true, Matrix: true, Shape: Shape{Engine: EngineSM, Direction: DirWrite, Ends: EndsPair, NeedsPeer: true},
		Doc: "SM copy kernel on the source writing the peer (push)"},
	{Name: SMBidir, Unit: UnitGBps, Title: "SM kernels, both directions at once", Short: "SM both ways", Conventions: refs(convBidir, convSteady, convSMReps), Command: CommandBW, BothWays: true, NeedsPair: true, Matrix: true, Shape: Shape{Engine: EngineSM, Ends: EndsPair, NeedsPeer: true},
		Doc: "SM copy kernels, both directions at once (read and write variants)"},
	{Name: NoP2PCopy, Unit: UnitGBps, Title: "Copy without peer access (staged through the host)", Short: "staged", Conventions: refs(convStaged, convSteady), Command: CommandBW, NeedsPair: true, Matrix: true, Shape: Shape{Engine: EngineStaged, Direction: DirRead, Ends: EndsPair},
		Doc: "cuMemcpyPeerAsync with peer access disabled (staged through the host)"},
	{Name: AllToOne, Unit: UnitGBps, Title: "Every other device copying to one", Short: "all to one", Conventions: refs(convGroup, convByCEP2P, convSteady), Command: CommandBW, NeedsPair: true, Shape: Shape{Engine: EngineCopy, Ends: EndsIntoOne},
		Doc: "every other device copying to one device at once (pushed and pulled), copy engine"},
	{Name: OneToAll, Unit: UnitGBps, Title: "One device copying to every other", Short: "one to all", Conventions: refs(convGroup, convByCEP2P, convSteady), Command: CommandBW, NeedsPair: true, Shape: Shape{Engine: EngineCopy, Ends: EndsOutOfOne},
		Doc: "one device copying to every other at once (pushed and pulled), copy engine"},
	{Name: SMAllToOne, Unit: UnitGBps, Title: "Every other device copying to one, SM kernels", Short: "SM all to one", Conventions: refs(convGroup, convBySM, convSteady, convSMReps), Command: CommandBW, NeedsPair: true, Shape: Shape{Engine: EngineSM, Ends: EndsIntoOne},
		Doc: "every other device copying to one device at once (pushed and pulled), SM copy kernels"},
	{Name: SMOneToAll, Unit: UnitGBps, Title: "One device copying to every other, SM kernels", Short: "SM one to all", Conventions: refs(convGroup, convBySM, convSteady, convSMReps), Command: CommandBW, NeedsPair: true, Shape: Shape{Engine: EngineSM, Ends: EndsOutOfOne},
		Doc: "one device copying to every other at once (pushed and pulled), SM copy kernels"},
	{Name: AllPairs, Unit: UnitGBps, Title: "Every ordered pair copying at once", Short: "all pairs", Conventions: refs(convAggr, convSteady), Command: CommandBW, NeedsPair: true, Shape: Shape{Engine: EngineCopy, Direction: DirWrite, Ends: EndsAllPairs},
		Doc: "every ordered pair copying at once"},
	{Name: HostToAll, Unit: UnitGBps, Title: "Host to every device at once", Short: "host to all", Conventions: refs(convHostAll, convByCE, convSteady), Command: CommandBW, Shape: Shape{Engine: EngineCopy, Ends: EndsHostToDevice, AllDevices: true},
		Doc: "host → every device at once, copy engine"},
	{Name: AllToHost, Unit: UnitGBps, Title: "Every device to host at once", Short: "all to host", Conventions: refs(convHostAll, convByCE, convSteady), Command: CommandBW, Shape: Shape{Engine: EngineCopy, Ends: EndsDeviceToHost, AllDevices: true},
		Doc: "every device → host at once, copy engine"},
	{Name: HostAllBidir, Unit: UnitGBps, Title: "Every device and the host, both directions at once", Short: "all host both ways", Conventions: refs(convHostAlB, convByCE, convSteady), Command: CommandBW, BothWays: true, Shape: Shape{Engine: EngineCopy, Ends: EndsHostBothWays, AllDevices: true},
		Doc: "every device to and from the host at once, copy engine"},
	{Name: SMHostToAll, Unit: UnitGBps, Title: "Host to every device at once, SM kernels", Short: "SM host to all", Conventions: refs(convHostAll, convBySM, convHostK, convSteady, convSMReps), Command: CommandBW, Shape: Shape{Engine: EngineSM, Ends: EndsHostToDevice, AllDevices: true},
		Doc: "host → every device at once, SM copy kernels"},
	{Name: SMAllToHost, Unit: UnitGBps, Title: "Every device to host at once, SM kernels", Short: "SM all to host", Conventions: refs(convHostAll, convBySM, convHostK, convSteady, convSMReps), Command: CommandBW, Shape: Shape{Engine: EngineSM, Ends: EndsDeviceToHost, AllDevices: true},
		Doc: "every device → host at once, SM copy kernels"},
	{Name: SMHostAllBidir, Unit: UnitGBps, Title: "Every device and the host, both directions at once, SM kernels", Short: "SM all host both ways", Conventions: refs(convHostAlB, convBySM, convHostK, convSteady, convSMReps), Command: CommandBW, BothWays: true, Shape: Shape{Engine: EngineSM, Ends: EndsHostBothWays, AllDevices: true},
		Doc: "every device to and from the host at once, SM copy kernels"},

	{Name: LatChase, Unit: UnitNs, Title: "Pointer chase", Short: "chase", Conventions: refs(convChase), Command: CommandLat,
		Doc: "pointer chase through local and peer memory, in and beyond L2"},
	{Name: LatPingPong, Unit: UnitNs, Title: "Flag ping-pong", Short: "ping-pong", Conventions: refs(convPing), Command: CommandLat, NeedsPair: true,
		Doc: "flag ping-pong between two GPUs (system-scope release/acquire)"},
	{Name: LatCopyDevice, Unit: UnitNs, Title: "Small copy, device time", Short: "copy, device time", Conventions: refs(convCopyDev), Command: CommandLat, Select: "lat_copy", NeedsPair: true, Shape: Shape{Engine: EngineCopy, Ends: EndsPair, NeedsPeer: true},
		Doc: docCopyLat},
	{Name: LatCopyHost, Unit: UnitNs, Title: "Small copy, host end to end", Short: "copy, host end to end", Conventions: refs(convCopyHst), Command: CommandLat, Select: "lat_copy", NeedsPair: true, Shape: Shape{Engine: EngineCopy, Ends: EndsPair, NeedsPeer: true},
		Doc: docCopyLat},
	{Name: LatCopyB2B, Unit: UnitNs, Title: "Small copy, back to back", Short: "copy, back to back", Conventions: refs(convCopyB2B), Command: CommandLat, Select: "lat_copy", NeedsPair: true, Shape: Shape{Engine: EngineCopy, Ends: EndsPair, NeedsPeer: true},
		Doc: docCopyLat},
	{Name: LatHostChase, Unit: UnitNs, Title: "Host memory latency (pointer chase from the GPU)", Short: "host chase", Conventions: refs(convHostLat), Command: CommandLat,
		Doc: "pointer chase from each GPU through pinned host memory (host-device latency)"},

	{Name: AtomicTput, Unit: UnitGOps, Title: "Atomic throughput", Short: "atomic tput", Conventions: refs(convAtomic), Command: CommandAtomic,
		Doc: "atomic throughput per operation, distinct addresses and contended"},
	{Name: AtomicLatency, Unit: UnitNs, Title: "Atomic latency", Short: "atomic latency", Conventions: refs(convAtomLat), Command: CommandAtomic,
		Doc: "latency of a dependent chain of atomics"},

	{Name: IPCCERead, Unit: UnitGBps, Title: "Across processes: copy engine read (pull)", Short: "IPC CE read", Conventions: refs(convRead, convIPC, convIPCCE, convWindow), Command: CommandIPC, SameProcess: CERead,
		Doc: "copy engine (cuMemcpyAsync on the IPC-mapped address) issued by the destination's process (pull)"},
	{Name: IPCCEWrite, Unit: UnitGBps, Title: "Across processes: copy engine write (push)", Short: "IPC CE write", Conventions: refs(convWrite, convIPC, convIPCCE, convWindow), Command: CommandIPC, SameProcess: CEWrite,
		Doc: "copy engine (cuMemcpyAsync on the IPC-mapped address) issued by the source's process (push)"},
	{Name: IPCCEBidir, Unit: UnitGBps, Title: "Across processes: copy engine, both directions at once", Short: "IPC CE both ways", Conventions: refs(convBidir, convIPC, convIPCCE, convIPCBidir, convWindow), Command: CommandIPC, BothWays: true, SameProcess: CEBidir,
		Doc: "copy engine, both processes at once, started by one latch through an IPC event"},
	{Name: IPCSMRead, Unit: UnitGBps, Title: "Across processes: SM kernel read (pull)", Short: "IPC SM read", Conventions: refs(convRead, convIPC, convWindow, convSMReps), Command: CommandIPC, SameProcess: SMRead,
		Doc: "SM copy kernel in the destination's process reading the mapped peer buffer (pull)"},
	{Name: IPCSMWrite, Unit: UnitGBps, Title: "Across processes: SM kernel write (push)", Short: "IPC SM write", Conventions: refs(convWrite, convIPC, convWindow, convSMReps), Command: CommandIPC, SameProcess: SMWrite,
		Doc: "SM copy kernel in the source's process writing the mapped peer buffer (push)"},
	{Name: IPCSMBidir, Unit: UnitGBps, Title: "Across processes: SM kernels, both directions at once", Short: "IPC SM both ways", Conventions: refs(convBidir, convIPC, convIPCBidir, convWindow, convSMReps), Command: CommandIPC, BothWays: true, SameProcess: SMBidir,
		Doc: "SM copy kernels, both processes at once, started by one latch through an IPC event"},
	{Name: IPCLatChase, Unit: UnitNs, Title: "Across processes: pointer chase", Short: "IPC chase", Conventions: refs(convChase, convIPC, convIPCChase), Command: CommandIPC, SameProcess: LatChase,
		Doc: "pointer chase through the peer process's memory, chain built through the mapping"},
	{Name: IPCLatPingPong, Unit: UnitNs, Title: "Across processes: flag ping-pong", Short: "IPC ping-pong", Conventions: refs(convPing, convIPC, convIPCPing), Command: CommandIPC, SameProcess: LatPingPong,
		Doc: "flag ping-pong between two processes, each flag in its own process's memory"},
}

var catalogueIndex = func() map[Test]int {
	m := make(map[Test]int, len(catalogue))
	for i := range catalogue {
		if catalogue[i].Select == "" {
			catalogue[i].Select = string(catalogue[i].Name)
		}
		catalogue[i].Method = methodOf(catalogue[i].Name)
		m[catalogue[i].Name] = i
	}
	return m
}()

// Catalogue returns every test p2pbench measures, in the order a run makes them.
func Catalogue() []TestInfo { return append([]TestInfo(nil), catalogue...) }

// Lookup returns the catalogue's entry of a test.
func Lookup(t Test) (TestInfo, bool) {
	if i, ok := catalogueIndex[t]; ok {
		return catalogue[i], true
	}
	if info, ok := importedIndex[t]; ok {
		return info, true
	}
	return TestInfo{Name: t, Select: string(t)}, false
}

// Info is Lookup without the flag: an unknown test gets an entry that
// names it and nothing else.
func (t Test) Info() TestInfo { i, _ := Lookup(t); return i }

// Title names the test for people; an unknown test is named by itself.
func (t Test) Title() string {
	if i, ok := Lookup(t); ok {
		return i.Title
	}
	return string(t)
}

// IsIPC reports whether the test is measured across processes.
func (t Test) IsIPC() bool { return t.Info().SameProcess != "" }

// SelectNames returns the selectable test names of a command ("" for every
// command), each once, in run order.
func SelectNames(c Command) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range catalogue {
		if (c == "" || t.Command == c) && !seen[t.Select] {
			seen[t.Select] = true
			out = append(out, t.Select)
		}
	}
	return out
}

// Selected returns the tests a selectable name stands for.
func Selected(name string) []Test {
	var out []Test
	for _, t := range catalogue {
		if t.Select == name {
			out = append(out, t.Name)
		}
	}
	return out
}

// ParseTests reads a comma-separated list of selectable test names of a
// command ("" for every command); "" or "all" selects every test of it. It
// returns the tests the names stand for, in the list's order, each once.
func ParseTests(list string, c Command) ([]Test, error) {
	valid := SelectNames(c)
	names := valid
	switch list = strings.TrimSpace(list); list {
	case "":
		return nil, fmt.Errorf("no test named: give test names, comma-separated, or all; the tests are: %s", strings.Join(valid, ", "))
	case "all":
	default:
		names = strings.Split(list, ",")
	}
	var out []Test
	for _, n := range names {
		n = strings.TrimSpace(n)
		if !slices.Contains(valid, n) {
			return nil, fmt.Errorf("unknown test %q; the tests are: %s", n, strings.Join(valid, ", "))
		}
		for _, t := range Selected(n) {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}
