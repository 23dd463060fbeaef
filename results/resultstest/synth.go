// Package resultstest builds plausible synthetic results runs (results.Run with
// Simulated set) of machines of any size, so that the tools that read results
// — plots, report, compare — can be developed, tested and demonstrated
// without GPUs. A run has the figures a real `p2pbench all` writes (every
// in-process test, and the copy-engine tests across processes), in the same
// shape, with units and conventions from the results catalogue; the numbers
// follow simple physical models (link speed, a fixed latency per transfer,
// noise), not a simulation of the hardware. It imports results only.
package resultstest

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// Layout names a machine's interconnect.
type Layout string

// The layouts New can build.
const (
	// NVLinkPair is two GPUs joined by 18 NVLink-4 links (the 2× H200 machine).
	NVLinkPair Layout = "nvlink-pair"
	// PCIeBridged is GPUs on two PCIe switches, neighbours joined in pairs by
	// NVLink bridges: bridged pairs have performance rank 0, pairs under one
	// switch rank 1, pairs across switches (through the CPU) rank 2.
	PCIeBridged Layout = "pcie-bridged"
	// NVSwitch is every GPU on NVSwitches, 18 NVLink-5 links each (an NVL72 rack).
	NVSwitch Layout = "nvswitch"
)

// Options say what to build. The zero value but for GPUs is a sensible run.
type Options struct {
	// GPUs is the number of devices (at least 2).
	GPUs int
	// Layout defaults to NVLinkPair for 2 GPUs, PCIeBridged up to 16, NVSwitch beyond.
	Layout Layout
	// Samples per figure (default results.DefaultSamples).
	Samples int
	// Seed makes runs differ; the same options always build the same run.
	Seed uint64
	// NoSweep leaves out the size sweeps (4 B … 1 GiB on every pair).
	NoSweep bool
	// SweepTests are the tests swept over sizes, of CERead, CEWrite, SMRead
	// and SMWrite (default all four, as the engine sweeps).
	SweepTests []results.Test
	// Faults adds the problems the report should find: a slow pair, a figure
	// that failed, a failed verification, a slow IPC figure, a clock drop, a
	// noisy large figure. Without it the run is healthy (but for the driver's
	// documented-behaviour mismatch that real H200 machines show).
	Faults bool
	// Tests, when set, are the only tests the run has figures of (and it has
	// no tuning), as a run of a few selected tests would.
	Tests []results.Test
	// Host names the machine (default "sim-<machine>").
	Host string
	// SlowPairs are weak links: pairs whose bandwidth, both ways, is lower.
	SlowPairs []SlowPair
	// Slowdown makes the whole machine slower by this many percent: every
	// rate lower by it, every time longer by the same factor.
	Slowdown float64
	// Rounds, from 2, takes every figure's samples in that many rounds
	// (results.Figure.Rounds), each round's off its figure's median by a
	// draw of RoundSpread (relative standard deviation; default 1% below
	// 1 MiB and for times and operations, 0.1% from 1 MiB), as a real run's
	// rounds vary with where its buffers landed.
	Rounds      int
	RoundSpread float64
	// Representatives and PeersPerDevice, either from 1, shape the run as
	// the default plan of a large domain (bench's sampled plan; Default sets
	// them as the engine does): the copy engine's one-way matrices (ce_read,
	// ce_write) on every pair, the totals of the tests of many pairs at once
	// (all_pairs, all_to_one, ...), each device's own host tests and none of
	// every device at once; the size sweeps and IPC on Representatives
	// pairs of each link class (NVLink count and performance rank), spread
	// over the class; the other matrices, the copies without peer access,
	// latency and atomics on the detail pairs: those and each device's next
	// PeersPerDevice devices. Both 0 keep the small machine's plan:
	// everything on every pair, but latency and atomics beyond 8 GPUs.
	Representatives int
	PeersPerDevice  int
	// Health adds the health readings of a healthy machine, as p2pbench
	// all takes them: before the first test and after the last (every
	// NVLink of the topology active, its error counters unchanged; ECC
	// counts and row remapping clean) and between tests (clocks steady,
	// only idling). Without it the run has none, as an import or an old
	// file does.
	Health bool
}

// SlowPair is a weak link: the bandwidth between devices A and B, in both
// directions and on every bandwidth test, Percent lower than the model's.
type SlowPair struct {
	A, B    int
	Percent float64
}

// MatrixSize is the transfer size of the pairwise bandwidth matrices.
const MatrixSize = results.DefaultSize

// SweepSizes returns the size sweep of p2pbench all (results.DefaultSweep).
func SweepSizes() []uint64 {
	s, err := units.ParseSizes(results.DefaultSweep)
	if err != nil {
		panic("synth: results.DefaultSweep does not parse: " + err.Error())
	}
	return s
}

// LatencySizes returns the sizes of the copy latency tests
// (bench.CopyLatencySizes).
func LatencySizes() []uint64 { return results.CopyLatencySizes() }

// Default returns the options of a run shaped as p2pbench all measures a
// machine of n GPUs with its defaults: bench's sampled plan beyond
// results.SampleAbove devices (the representatives of each link class, each
// device's results.DefaultPeers peers), results.DefaultRounds rounds, and the
// health readings all takes.
func Default(n int) Options {
	o := Options{GPUs: n, Rounds: results.DefaultRounds, Health: true}
	if n > results.SampleAbove {
		o.Representatives, o.PeersPerDevice = 2, results.DefaultPeers
	}
	return o
}

// atomicOp is an atomic operation of the synthetic runs.
type atomicOp struct {
	name  string
	ptx   string
	width int
	speed float64 // relative to add_u32
	chain bool    // has a latency chain
}

var atomicOps = []atomicOp{
	{"add_u32", "atom.sys.global.add.u32", 4, 1, true},
	{"red_add_u32", "red.sys.global.add.u32", 4, 1.6, false},
	{"add_u64", "atom.sys.global.add.u64", 8, 0.9, false},
	{"add_f32", "atom.sys.global.add.f32", 4, 0.95, false},
	{"cas_u64", "atom.sys.global.cas.b64", 8, 0.45, true},
	{"exch_u32", "atom.sys.global.exch.b32", 4, 0.9, true},
	{"min_u32", "atom.sys.global.min.u32", 4, 0.95, false},
}

// machine is what the models need to know about a layout.
type machine struct {
	name     string
	gpu      results.Device
	perLink  float64 // GB/s per NVLink per direction
	nvlink   int     // the NVLink version
	links    func(s, d int) int
	rank     func(s, d int) int
	pcieGBps float64 // host link and PCIe peer paths
	// localGBps is a copy within one GPU: 87.6% of half its memory
	// bandwidth, as the H200 and the H100 reach (testdata/reference).
	localGBps float64
}

func newMachine(o Options) machine {
	switch o.Layout {
	case NVLinkPair:
		return machine{
			name: "h200x2",
			gpu: results.Device{Name: "NVIDIA H200", ComputeCapability: "9.0", SMCount: 132,
				MemoryBytes: 143771 << 20, UnifiedAddressing: true, AsyncEngines: 3, L2CacheBytes: 50 << 20},
			perLink:   25,
			nvlink:    4,
			links:     func(s, d int) int { return 18 },
			rank:      func(s, d int) int { return 0 },
			pcieGBps:  55,
			localGBps: 0.876 * 4800 / 2,
		}
	case PCIeBridged:
		half := (o.GPUs + 1) / 2
		return machine{
			name: fmt.Sprintf("h100nvl-pcie-x%d", o.GPUs),
			gpu: results.Device{Name: "NVIDIA H100 NVL", ComputeCapability: "9.0", SMCount: 132,
				MemoryBytes: 95830 << 20, UnifiedAddressing: true, AsyncEngines: 3, L2CacheBytes: 50 << 20},
			perLink: 25,
			nvlink:  4,
			links: func(s, d int) int {
				if s/2 == d/2 {
					return 12 // an NVLink bridge
				}
				return 0
			},
			rank: func(s, d int) int {
				switch {
				case s/2 == d/2:
					return 0
				case s/half == d/half:
					return 1
				}
				return 2
			},
			pcieGBps:  52,
			localGBps: 0.876 * 3900 / 2,
		}
	default:
		return machine{
			name: fmt.Sprintf("gb200-nvl%d", o.GPUs),
			gpu: results.Device{Name: "NVIDIA GB200", ComputeCapability: "10.0", SMCount: 148,
				MemoryBytes: 189471 << 20, UnifiedAddressing: true, AsyncEngines: 4, L2CacheBytes: 126 << 20},
			perLink:   50,
			nvlink:    5,
			links:     func(s, d int) int { return 18 },
			rank:      func(s, d int) int { return 0 },
			pcieGBps:  60,
			localGBps: 0.876 * 8000 / 2,
		}
	}
}

// peerGBps is the copy engine's one-direction bandwidth of the pair at
// large sizes: 87.6% of the NVLink payload rate (as on H200), or the PCIe
// path's rate.
func (m machine) peerGBps(s, d int) float64 {
	if n := m.links(s, d); n > 0 {
		return 0.876 * float64(n) * m.perLink
	}
	if m.rank(s, d) == 1 {
		return 0.9 * m.pcieGBps
	}
	return 0.7 * m.pcieGBps // through the CPU's root complex
}

// gen builds one run.
type gen struct {
	o   Options
	m   machine
	rng *rand.Rand
	run *results.Run
	// smParams are the params of each SM copy variant's figures, shared:
	// figures only read them.
	smParams map[string]map[string]string
	// cc is the devices' compute capability, major*10+minor.
	cc     int
	faults faults
	// slow maps each ordered pair of a weak link (Options.SlowPairs and the
	// slow pair Faults plants) to its bandwidth factor.
	slow map[[2]int]float64
	// detail holds the detail pairs of the sampled plan; nil without it.
	detail map[[2]int]bool
}

// faults are the problems Options.Faults plants (besides a pair 15% slower
// on every bandwidth test).
type faults struct {
	failed     [2]int  // sm_read of this pair errors
	verifyFail [2]int  // ce_write of this pair fails verification
	noisy      [2]int  // ce_read of this pair has a CV of 3%
	ipcSlow    float64 // IPC figures' speed relative to in-process
}

// New builds a synthetic run. It panics on fewer than 2 GPUs: that is a bug
// in the caller, not a condition to handle. Figures of the SM kernel share
// one Params map (a 72-GPU run has hundreds of thousands): treat Params as
// read-only, or copy them first.
func New(o Options) *results.Run {
	if o.GPUs < 2 {
		panic("synth: a run needs at least 2 GPUs")
	}
	if o.Layout == "" {
		switch {
		case o.GPUs == 2:
			o.Layout = NVLinkPair
		case o.GPUs <= 16:
			o.Layout = PCIeBridged
		default:
			o.Layout = NVSwitch
		}
	}
	if o.Samples <= 0 {
		o.Samples = results.DefaultSamples
	}
	if len(o.SweepTests) == 0 {
		o.SweepTests = []results.Test{results.CERead, results.CEWrite, results.SMRead, results.SMWrite}
	}
	g := &gen{
		o:        o,
		m:        newMachine(o),
		rng:      rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		smParams: map[string]map[string]string{},
		faults:   faults{ipcSlow: 0.995},
		slow:     map[[2]int]float64{},
	}
	if major, minor, ok := strings.Cut(g.m.gpu.ComputeCapability, "."); ok {
		a, _ := strconv.Atoi(major)
		b, _ := strconv.Atoi(minor)
		g.cc = 10*a + b
	}
	slow := o.SlowPairs
	if o.Faults {
		last := o.GPUs - 1
		slow = append(slices.Clone(slow), SlowPair{A: last, B: 0, Percent: 15})
		g.faults = faults{failed: [2]int{0, last}, verifyFail: [2]int{1, 0}, noisy: [2]int{0, 1}, ipcSlow: 0.95}
	} else {
		g.faults.failed, g.faults.verifyFail, g.faults.noisy = [2]int{-9, -9}, [2]int{-9, -9}, [2]int{-9, -9}
	}
	for _, p := range slow {
		g.slow[[2]int{p.A, p.B}] = 1 - p.Percent/100
		g.slow[[2]int{p.B, p.A}] = 1 - p.Percent/100
	}
	if g.planned() {
		g.detail = map[[2]int]bool{}
		for _, p := range g.detailPairs() {
			g.detail[p] = true
		}
	}
	g.header()
	g.topology()
	if o.Health {
		g.health()
	}
	// Each part of the run is made when it has a test the options want.
	for _, p := range g.parts() {
		if slices.ContainsFunc(p.tests, g.wants) {
			p.make()
		}
	}
	if len(o.Tests) == 0 {
		g.tuning()
	}
	g.run.CompleteCatalogue()
	return g.run
}

// part is a part of a synthetic run: what makes it, and the tests it has
// figures of.
type part struct {
	make  func()
	tests []results.Test
}

// parts are the parts of a run, in the order a run makes them.
func (g *gen) parts() []part {
	bandwidth := []results.Test{results.CERead, results.CEWrite, results.CEBidir, results.SMRead, results.SMWrite,
		results.SMBidir, results.NoP2PCopy, results.H2D, results.D2H, results.LocalCopy}
	bandwidth = append(bandwidth, otherPairTests()...)
	var swept []results.Test
	if !g.o.NoSweep {
		swept = g.o.SweepTests
	}
	aggregates := results.Shaped(func(info results.TestInfo) bool {
		return info.Command == results.CommandBW && slices.Contains([]results.Ends{results.EndsAllPairs, results.EndsIntoOne, results.EndsOutOfOne}, info.Shape.Ends)
	})
	return []part{
		{g.bandwidth, bandwidth},
		{g.sweep, swept},
		{g.aggregates, aggregates},
		{g.host, []results.Test{results.SMH2D, results.SMD2H, results.HostBidir, results.SMHostBidir, results.HostToAll, results.AllToHost,
			results.HostAllBidir, results.SMHostToAll, results.SMAllToHost, results.SMHostAllBidir, results.LatHostChase}},
		{g.latency, []results.Test{results.LatChase, results.LatPingPong, results.LatCopyDevice, results.LatCopyHost}},
		{g.atomics, []results.Test{results.AtomicTput, results.AtomicLatency}},
		{g.ipc, []results.Test{results.IPCCERead, results.IPCCEWrite}},
	}
}

// wants reports whether the run is to have figures of test.
func (g *gen) wants(test results.Test) bool {
	return len(g.o.Tests) == 0 || slices.Contains(g.o.Tests, test)
}

func (g *gen) header() {
	n := g.o.GPUs
	start := time.Date(2025, 6, 2, 9, 30, 0, 0, time.UTC)
	g.run = &results.Run{
		Schema: results.SchemaVersion,
		Tool: results.Tool{Name: "p2pbench", Version: "synth",
			Command: []string{"p2pbench", "all", "--simulate", g.m.name, "-o", "results.json"},
			GoOS:    "linux", GoArch: "amd64"},
		Simulated:  true,
		SimMachine: g.m.name,
		Host:       cmp.Or(g.o.Host, "sim-"+g.m.name),
		Start:      start,
		End:        start.Add(time.Duration(20+n*n/4) * time.Second),
		Complete:   true,
		Verify:     true,
		Environment: results.Environment{
			DriverVersion: 13000, CUDAVersion: "13.0", DriverRelease: "580.159.04",
			Library: "simulated " + g.m.name, NVML: true,
		},
	}
	env := &g.run.Environment
	for i := 0; i < n; i++ {
		d := g.m.gpu
		d.Index = i
		d.UUID = fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", 0x5e1f0000+i, i, 0x4000|i, 0x8000|i, 0xa1b2c3d4e5+uint64(i))
		d.PCIBusID = fmt.Sprintf("%08X:%02X:00.0", i/8, 0x18+(i%8)*0x10)
		env.Devices = append(env.Devices, d)
		end := 1980
		temp := 34 + g.rng.IntN(4)
		if g.o.Faults && i == 0 {
			end = 1755 // throttled during the run
		}
		env.StateStart = append(env.StateStart, results.DeviceState{Index: i, SMClockMHz: 1980, MemClockMHz: 3201, TempC: temp, PowerW: 92 + 5*g.rng.Float64()})
		env.StateEnd = append(env.StateEnd, results.DeviceState{Index: i, SMClockMHz: end, MemClockMHz: 3201, TempC: temp + 6 + g.rng.IntN(4), PowerW: 118 + 10*g.rng.Float64()})
	}
	g.run.Notes = []string{"synthetic results from p2pbench's results/resultstest package: not a measurement"}
}

func (g *gen) topology() {
	n := g.o.GPUs
	t := &results.Topology{}
	for i := 0; i < n; i++ {
		t.Devices = append(t.Devices, i)
	}
	for s := 0; s < n; s++ {
		for d := 0; d < n; d++ {
			if s == d {
				continue
			}
			links := g.m.links(s, d)
			native := 1
			if g.m.rank(s, d) == 2 {
				native = 0 // PCIe through the CPU: no native peer atomics
			}
			p := results.Pair{Src: s, Dst: d, CanAccessPeer: true,
				Attributes: map[string]int{
					results.AttrPerformanceRank:        g.m.rank(s, d),
					results.AttrAccessSupported:        1,
					results.AttrNativeAtomicSupported:  native,
					results.AttrCUDAArrayAccess:        1,
					results.AttrOnlyPartialNativeAtoms: 0,
				},
				AtomicCaps: map[string]uint32{"integer_add": 0, "integer_min": 0, "cas": 0, "exchange": 0, "float_add": 0, "and": 0},
				NVLinks:    links,
				LinkGBps:   float64(links) * g.m.perLink,
			}
			t.Pairs = append(t.Pairs, p)
		}
	}
	for i := 0; i < n; i++ {
		dl := results.DeviceLinks{Device: i}
		switch g.o.Layout {
		case NVSwitch:
			for l := 0; l < 18; l++ {
				dl.Links = append(dl.Links, results.Link{Link: l, Active: true, RemoteBus: fmt.Sprintf("00000000:%02X:00.0", 0xc0+l%6), RemoteDev: -1, SpeedGBps: g.m.perLink, Version: g.m.nvlink, PayloadGBps: g.m.perLink})
			}
		default:
			for d := 0; d < n; d++ {
				if d == i {
					continue
				}
				for l := 0; l < g.m.links(i, d); l++ {
					dl.Links = append(dl.Links, results.Link{Link: len(dl.Links), Active: true, RemoteBus: g.run.Environment.Devices[d].PCIBusID, RemoteDev: d, SpeedGBps: g.m.perLink, Version: g.m.nvlink, PayloadGBps: g.m.perLink})
				}
			}
		}
		if len(dl.Links) > 0 {
			t.Links = append(t.Links, dl)
		}
	}
	// The driver behaviour measured on the 2× H200 machine, including the one
	// case where it differs from the documentation.
	cc := func(name, call, doc, obs, note string) results.ConformanceCase {
		return results.ConformanceCase{Name: name, Call: call, Src: 0, Dst: 1, Documented: doc, Observed: obs, Matches: doc == obs, Note: note}
	}
	t.Conformance = []results.ConformanceCase{
		cc("enable_twice", "cuCtxEnablePeerAccess", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", ""),
		cc("enable_flags", "cuCtxEnablePeerAccess(flags=1)", "CUDA_ERROR_INVALID_VALUE", "CUDA_ERROR_INVALID_VALUE", ""),
		cc("disable_not_enabled", "cuCtxDisablePeerAccess", "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", ""),
		cc("attribute_same_device", "cuDeviceGetP2PAttribute(dev, dev)", "CUDA_ERROR_INVALID_DEVICE", "CUDA_ERROR_INVALID_DEVICE", ""),
		cc("enable_self", "cuCtxEnablePeerAccess(own context)", "CUDA_ERROR_INVALID_CONTEXT", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "this driver answers PEER_ACCESS_UNSUPPORTED where the documentation says INVALID_CONTEXT"),
	}
	g.run.Topology = t
}

// health adds a healthy machine's readings (Options.Health): the same
// counters before and after the run, every link active.
func (g *gen) health() {
	env := &g.run.Environment
	links := map[int][]results.Link{}
	for _, dl := range g.run.Topology.Links {
		links[dl.Device] = dl.Links
	}
	for i := range env.Devices {
		h := results.Health{Device: i,
			ECC:          map[results.ECCCounter]uint64{results.ECCVolatileCorrected: 0, results.ECCVolatileUncorrected: 0, results.ECCAggregateCorrected: 0, results.ECCAggregateUncorrected: 0},
			RemappedRows: &results.RemappedRows{}}
		for _, l := range links[i] {
			h.Links = append(h.Links, results.LinkHealth{Link: l.Link, Active: true, SpeedGBps: l.SpeedGBps,
				Errors: map[results.LinkCounter]uint64{results.LinkReplay: 0, results.LinkRecovery: 0, results.LinkCRCFlit: 0,
					results.LinkCRCData: uint64(g.rng.IntN(50)), results.LinkECCData: uint64(g.rng.IntN(500))}})
		}
		h.Time = g.run.Start
		if len(h.Links) > 0 {
			// The GPU totals are the links' sums, as the driver gives
			// them; the data-link totals 0.
			h.LinkTotals = map[results.LinkCounter]uint64{}
			for _, l := range h.Links {
				for c, n := range l.Errors {
					h.LinkTotals[c] += n
				}
			}
			h.LinkDL = map[results.LinkCounter]uint64{results.LinkReplay: 0, results.LinkRecovery: 0, results.LinkCRC: 0}
		}
		env.HealthBefore = append(env.HealthBefore, h)
		after := h
		after.Time = g.run.End
		after.Links = nil
		for _, l := range h.Links {
			l.Errors = maps.Clone(l.Errors)
			after.Links = append(after.Links, l)
		}
		after.LinkTotals, after.LinkDL = maps.Clone(h.LinkTotals), maps.Clone(h.LinkDL)
		after.ECC = maps.Clone(h.ECC)
		after.RemappedRows = &results.RemappedRows{}
		env.HealthAfter = append(env.HealthAfter, after)
		w := results.DeviceWatch{Device: i, Readings: 40,
			Throttle: map[results.ThrottleReason]int{results.ThrottleIdle: 40}, SMClockMinMHz: 1980, SMClockMaxMHz: 1980}
		if h.LinkTotals != nil {
			// A reading at the start of each of five rounds, spread over
			// the run, and one after them.
			span := g.run.End.Sub(g.run.Start)
			for r := range 6 {
				w.LinkErrors = append(w.LinkErrors, results.LinkErrorReading{Time: g.run.Start.Add(span * time.Duration(1+3*r) / 20),
					Round: (r + 1) % 6, Totals: maps.Clone(h.LinkTotals)})
			}
		}
		env.DuringRun = append(env.DuringRun, w)
	}
}

// samples draws n values around median with the given coefficient of
// variation; a few land low, as interference makes real samples do.
func (g *gen) samples(median, cv float64) []float64 {
	out := make([]float64, g.o.Samples)
	for i := range out {
		x := median * (1 + cv*g.rng.NormFloat64())
		if g.rng.IntN(20) == 0 {
			x = median * (1 - 3*cv*(1+g.rng.Float64()))
		}
		out[i] = math.Max(x, median*0.01)
	}
	return out
}

// latSamples draws n latencies: a floor with a right tail.
func (g *gen) latSamples(median float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		x := median * (0.99 + 0.015*math.Abs(g.rng.NormFloat64()))
		if g.rng.IntN(15) == 0 {
			x *= 1.05 + 0.2*g.rng.Float64()
		}
		out[i] = x
	}
	return out
}

// add completes a figure as the engine does (its unit from the catalogue,
// samples rounded, stats computed; none for an error), slows it down as
// Options.Slowdown says, and adds it to the run if its test is wanted.
func (g *gen) add(f results.Figure) {
	if !g.wants(f.Test) {
		return
	}
	f.Unit = f.Test.Info().Unit
	if f.Verify == "" {
		f.Verify = results.VerifyNA
	}
	if f.Error == "" {
		if g.o.Slowdown != 0 {
			factor := 1 - g.o.Slowdown/100
			if f.Unit.LowerIsBetter() {
				factor = 1 / factor
			}
			scaled := make([]float64, len(f.Samples))
			for i, x := range f.Samples {
				scaled[i] = x * factor
			}
			f.Samples = scaled
		}
		g.rounds(&f)
		f.Samples = figstats.RoundSamples(f.Samples)
		f.Stats = figstats.ComputeRoundStats(f.Samples, f.Rounds)
	} else {
		f.Samples, f.Stats = nil, nil
	}
	g.run.Figures = append(g.run.Figures, f)
}

// rounds splits a figure's samples into Options.Rounds rounds, each moved
// by its own draw of the run-to-run spread.
func (g *gen) rounds(f *results.Figure) {
	if g.o.Rounds < 2 || len(f.Samples) < 2 {
		return
	}
	spread := g.o.RoundSpread
	if spread == 0 {
		spread = 0.01
		if f.Unit == results.UnitGBps && f.Size >= 1<<20 {
			spread = 0.001
		}
	}
	f.Rounds = slices.DeleteFunc(results.SplitSamples(len(f.Samples), g.o.Rounds), func(n int) bool { return n == 0 })
	scaled := make([]float64, 0, len(f.Samples))
	at := 0
	for _, n := range f.Rounds {
		k := 1 + spread*g.rng.NormFloat64()
		for _, x := range f.Samples[at : at+n] {
			scaled = append(scaled, x*k)
		}
		at += n
	}
	f.Samples = scaled
}

// pairFactor is the planted slowdown of a pair (1 when healthy).
func (g *gen) pairFactor(s, d int) float64 {
	if f, ok := g.slow[[2]int{s, d}]; ok {
		return f
	}
	return 1
}

// bwFigure is a bandwidth figure of a peer transfer at size with the model's
// large-size rate peak and per-transfer latency lat (seconds).
func (g *gen) bwFigure(test results.Test, engine results.Engine, dir results.Direction, part results.Part,
	s, d int, size uint64, peak, lat float64, params map[string]string) results.Figure {
	if !g.wants(test) {
		// No draws for a test the run leaves out (add drops it): a test
		// added to the catalogue moves no other figure's samples.
		return results.Figure{Test: test}
	}
	rate := float64(size) / (lat + float64(size)/(peak*1e9)) / 1e9
	cv := 0.002 + 0.04*math.Exp(-float64(size)/(1<<20))
	if [2]int{s, d} == g.faults.noisy && test == results.CERead && size >= 256<<20 {
		cv = 0.03
	}
	return results.Figure{Test: test, Engine: engine, Direction: dir, Part: part, Src: s, Dst: d, Size: size,
		Params: params, Samples: g.samples(rate, cv), Verify: results.VerifyPassed}
}

// smCopy is the SM copy kernel that p2pbench's default settings run on the
// machine for transfers of size bytes (kernels.CopyVariantFor from
// kernels.LargeCopyBytes, kernels.SmallCopyVariantFor below), as the
// figure's engine and params.
func (g *gen) smCopy(size uint64) (results.Engine, map[string]string) {
	v := kernels.CopyVariantFor(g.cc)
	if size < kernels.LargeCopyBytes {
		v = kernels.SmallCopyVariantFor(g.cc)
	}
	return g.smVariant(v)
}

// smHost is the SM copy kernel of the host tests (kernels.DefaultCopyVariant).
func (g *gen) smHost() (results.Engine, map[string]string) {
	return g.smVariant(kernels.DefaultCopyVariant)
}

// smVariant is SM copy variant v, with its own grid, as engine and params.
func (g *gen) smVariant(v string) (results.Engine, map[string]string) {
	p, ok := g.smParams[v]
	if !ok {
		blocks, threads := 2, 512
		if k, ok := kernels.CopyKernelByVariant(v); ok {
			blocks, threads = k.DefaultGrid()
		}
		p = map[string]string{"variant": v, "blocks_per_sm": strconv.Itoa(blocks), "block_size": strconv.Itoa(threads)}
		g.smParams[v] = p
	}
	return results.SMCopyEngine(v), p
}

// Per-transfer latencies of the size models, seconds.
const (
	ceLatency = 2.6e-6
	smLatency = 1.4e-6
)

// otherPairTests are the catalogue's one-way bandwidth tests between two
// devices that bandwidth has no model of its own for: it makes them from
// their shape (results.Shape), so a new copy test needs no change here.
func otherPairTests() []results.Test {
	modelled := []results.Test{results.CERead, results.CEWrite, results.SMRead, results.SMWrite, results.NoP2PCopy}
	var out []results.Test
	for _, info := range results.Catalogue() {
		if info.Command == results.CommandBW && info.Shape.Ends == results.EndsPair && !info.BothWays && !slices.Contains(modelled, info.Name) {
			out = append(out, info.Name)
		}
	}
	return out
}

func (g *gen) bandwidth() {
	n := g.o.GPUs
	size := uint64(MatrixSize)
	for s := 0; s < n; s++ {
		for d := 0; d < n; d++ {
			if s == d {
				continue
			}
			ce := g.m.peerGBps(s, d) * g.pairFactor(s, d)
			link := ce / 0.876
			smRead, smWrite := 0.829*link, 0.823*link
			if g.m.links(s, d) == 0 {
				smRead, smWrite = 0.93*ce, 0.95*ce
			}
			g.add(g.bwFigure(results.CERead, results.EngineCopy, results.DirRead, results.PartNone, s, d, size, ce, ceLatency, nil))
			w := g.bwFigure(results.CEWrite, results.EngineCopy, results.DirWrite, results.PartNone, s, d, size, ce*1.001, ceLatency, nil)
			if [2]int{s, d} == g.faults.verifyFail {
				w.Verify, w.VerifyDetail = results.VerifyFailed, "word 1048577 of 134217728: read 0x00000000, want 0x9e3779b9 (first of 3 bad words)"
			}
			g.add(w)
			if !g.inDetail(s, d) {
				continue // the sampled plan: the other matrices on the detail pairs
			}
			smEngine, smParams := g.smCopy(size)
			r := g.bwFigure(results.SMRead, smEngine, results.DirRead, results.PartNone, s, d, size, smRead, smLatency, smParams)
			if [2]int{s, d} == g.faults.failed {
				r.Error, r.ErrorName = "launching p2p_copy_"+smParams["variant"]+" on device 0: CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out and was terminated", "CUDA_ERROR_LAUNCH_TIMEOUT"
				r.Verify = results.VerifyNA
			}
			g.add(r)
			g.add(g.bwFigure(results.SMWrite, smEngine, results.DirWrite, results.PartNone, s, d, size, smWrite, smLatency, smParams))
			staged := math.Min(0.45*g.m.pcieGBps, ce)
			g.add(g.bwFigure(results.NoP2PCopy, results.EngineStaged, "", results.PartNone, s, d, size, staged, 8e-6, nil))
			// A one-way pair test this model has no rate of its own for
			// copies at its shape's engine and direction's rate.
			for _, t := range otherPairTests() {
				sh := t.Info().Shape
				rate, engine, params := ce, results.EngineCopy, map[string]string(nil)
				switch {
				case sh.Engine == results.EngineSM && sh.Direction == results.DirWrite:
					rate, engine, params = smWrite, smEngine, smParams
				case sh.Engine == results.EngineSM:
					rate, engine, params = smRead, smEngine, smParams
				case sh.Engine == results.EngineStaged:
					rate, engine = staged, results.EngineStaged
				}
				g.add(g.bwFigure(t, engine, sh.Direction, results.PartNone, s, d, size, rate, ceLatency, params))
			}
		}
	}
	g.bothWaysFigures(size)
	for d := 0; d < n; d++ {
		g.add(results.Figure{Test: results.H2D, Engine: results.EngineCopy, Src: -1, Dst: d, Size: size,
			Samples: g.samples(g.m.pcieGBps*1.01, 0.003), Verify: results.VerifyPassed})
		g.add(results.Figure{Test: results.D2H, Engine: results.EngineCopy, Src: d, Dst: -1, Size: size,
			Samples: g.samples(g.m.pcieGBps*0.98, 0.003), Verify: results.VerifyPassed})
		g.add(results.Figure{Test: results.LocalCopy, Engine: results.EngineCopy, Src: d, Dst: d, Size: size,
			Samples: g.samples(g.m.localGBps, 0.002), Verify: results.VerifyPassed})
	}
}

// bothWaysFigures draws both directions at once, pulling and pushing,
// filed under each ordered pair as the engine does.
func (g *gen) bothWaysFigures(size uint64) {
	n := g.o.GPUs
	for s := 0; s < n; s++ {
		for d := 0; d < n; d++ {
			if s == d || !g.inDetail(s, d) {
				continue
			}
			ce := g.m.peerGBps(s, d) * g.pairFactor(s, d)
			link := ce / 0.876
			smEngine, smParams := g.smCopy(size)
			for _, b := range []struct {
				test   results.Test
				engine results.Engine
				dir    results.Direction
				each   float64
				params map[string]string
			}{
				{results.CEBidir, results.EngineCopy, results.DirRead, 0.9935 * ce, nil},
				{results.CEBidir, results.EngineCopy, results.DirWrite, 0.9945 * ce, nil},
				{results.SMBidir, smEngine, results.DirRead, 0.748 * link, smParams},
				{results.SMBidir, smEngine, results.DirWrite, 0.815 * link, smParams},
			} {
				if g.m.links(s, d) == 0 {
					b.each = 0.8 * ce
				}
				lat := ceLatency
				if b.engine != results.EngineCopy {
					lat = smLatency
				}
				g.bothWays(g.bwFigure(b.test, b.engine, b.dir, results.PartForward, s, d, size, b.each, lat, b.params),
					g.bwFigure(b.test, b.engine, b.dir, results.PartReverse, s, d, size, b.each*0.999, lat, b.params))
			}
		}
	}
}

// sweep measures the pairs the engine sweeps (sweepPairs) at every size of
// SweepSizes (but the matrix size, which the matrices already hold) for
// each test of Options.SweepTests.
func (g *gen) sweep() {
	for _, p := range g.sweepPairs() {
		s, d := p[0], p[1]
		ce := g.m.peerGBps(s, d) * g.pairFactor(s, d)
		link := ce / 0.876
		for _, test := range g.o.SweepTests {
			for _, size := range SweepSizes() {
				if size == MatrixSize {
					continue
				}
				peak, lat, engine, params, dir := ce, ceLatency, results.EngineCopy, map[string]string(nil), results.DirRead
				switch sh := test.Info().Shape; {
				case sh.Engine == results.EngineCopy && sh.Direction == results.DirWrite:
					peak, dir = ce*1.001, results.DirWrite
				case sh.Engine == results.EngineSM && sh.Direction == results.DirRead:
					peak, lat = 0.829*link, smLatency
					engine, params = g.smCopy(size)
				case sh.Engine == results.EngineSM:
					peak, lat, dir = 0.823*link, smLatency, results.DirWrite
					engine, params = g.smCopy(size)
				}
				if g.m.links(s, d) == 0 && engine != results.EngineCopy {
					peak = 0.95 * ce
				}
				g.add(g.bwFigure(test, engine, dir, results.PartNone, s, d, size, peak, lat, params))
			}
		}
	}
}

// sweepPairs are the pairs the engine sweeps: the detail pairs, on a
// sampled plan the representatives of each link class only.
func (g *gen) sweepPairs() [][2]int { return g.pairs(0) }

// gpuGBps is what one GPU can send (or take in) at once over all its paths.
func (g *gen) gpuGBps(x int) float64 {
	var nvlinks int
	pcie := false
	for y := 0; y < g.o.GPUs; y++ {
		if y == x {
			continue
		}
		if l := g.m.links(x, y); l > 0 {
			nvlinks += l
		} else {
			pcie = true
		}
	}
	if g.o.Layout == NVSwitch {
		nvlinks = 18 // one set of links to the switches serves every peer
	}
	total := 0.876 * float64(nvlinks) * g.m.perLink
	if pcie {
		total += 0.9 * g.m.pcieGBps
	}
	return total
}

// aggregates adds all_pairs, all_to_one and one_to_all: many transfers at
// once, sharing each GPU's links.
func (g *gen) aggregates() {
	n := g.o.GPUs
	size := uint64(MatrixSize) / uint64(n-1) / 256 * 256
	var total float64
	for s := 0; s < n; s++ {
		for d := 0; d < n; d++ {
			if s == d {
				continue
			}
			share := 0.97 * math.Min(g.m.peerGBps(s, d), g.gpuGBps(s)/float64(n-1))
			total += share
			if !g.planned() { // a sampled plan records the totals only
				g.add(g.bwFigure(results.AllPairs, results.EngineCopy, results.DirWrite, results.PartPair, s, d, size, share, ceLatency, nil))
			}
		}
	}
	smEngine, smParams := g.smCopy(size)
	g.add(g.bwFigure(results.AllPairs, results.EngineCopy, results.DirWrite, results.PartTotal, -1, -1, size, total*0.98, ceLatency,
		map[string]string{"pairs": strconv.Itoa(n * (n - 1))}))
	for _, k := range []struct {
		toOne, oneToAll results.Test
		engine          results.Engine
		dir             results.Direction
		speed           float64
		params          map[string]string
	}{
		{results.AllToOne, results.OneToAll, results.EngineCopy, results.DirWrite, 1, nil},
		{results.AllToOne, results.OneToAll, results.EngineCopy, results.DirRead, 0.995, nil},
		{results.SMAllToOne, results.SMOneToAll, smEngine, results.DirWrite, 0.94, smParams},
		{results.SMAllToOne, results.SMOneToAll, smEngine, results.DirRead, 0.95, smParams},
	} {
		g.groups(k.toOne, k.oneToAll, k.engine, k.dir, k.speed, size, k.params)
	}
	g.otherAggregates(size, total)
}

// modelledAggregates are the tests of many pairs at once that aggregates
// draws with rates of their own.
var modelledAggregates = []results.Test{results.AllPairs, results.AllToOne, results.OneToAll, results.SMAllToOne, results.SMOneToAll}

// otherAggregates draws the tests of many pairs at once that aggregates
// has no rates of its own for, by their shape: every pair at once as the
// copy engine's all_pairs (total its total), into or out of one device as
// all_to_one and one_to_all, at the SM kernels' share where the shape's
// engine is SM, in the shape's direction (pushed and pulled where it has
// none).
func (g *gen) otherAggregates(size uint64, total float64) {
	n := g.o.GPUs
	smEngine, smParams := g.smCopy(size)
	for _, info := range results.Catalogue() {
		sh := info.Shape
		if info.Command != results.CommandBW || slices.Contains(modelledAggregates, info.Name) ||
			!slices.Contains([]results.Ends{results.EndsAllPairs, results.EndsIntoOne, results.EndsOutOfOne}, sh.Ends) {
			continue
		}
		engine, params, speed, lat := results.EngineCopy, map[string]string(nil), 1.0, ceLatency
		if sh.Engine == results.EngineSM {
			engine, params, speed, lat = smEngine, smParams, 0.94, smLatency
		}
		dirs := []results.Direction{results.DirWrite, results.DirRead}
		if sh.Direction != "" {
			dirs = []results.Direction{sh.Direction}
		}
		for _, dir := range dirs {
			if sh.Ends != results.EndsAllPairs {
				g.group(info.Name, sh.Ends == results.EndsIntoOne, engine, dir, speed, size, params)
				continue
			}
			for s := 0; s < n && !g.planned(); s++ {
				for d := 0; d < n; d++ {
					if s != d {
						share := 0.97 * math.Min(g.m.peerGBps(s, d), g.gpuGBps(s)/float64(n-1))
						g.add(g.bwFigure(info.Name, engine, dir, results.PartPair, s, d, size, speed*share, lat, params))
					}
				}
			}
			g.add(g.bwFigure(info.Name, engine, dir, results.PartTotal, -1, -1, size, speed*total*0.98, lat,
				map[string]string{"pairs": strconv.Itoa(n * (n - 1))}))
		}
	}
}

// group adds the figures of one test of copies into one device (into) or
// out of it, in direction dir, at speed relative to the copy engine
// pushing, as groups does for all_to_one and one_to_all.
func (g *gen) group(test results.Test, into bool, engine results.Engine, dir results.Direction, speed float64, size uint64, params map[string]string) {
	n := g.o.GPUs
	lat := ceLatency
	if engine != results.EngineCopy {
		lat = smLatency
	}
	pairs := map[string]string{"pairs": strconv.Itoa(n - 1)}
	maps.Copy(pairs, params)
	for x := 0; x < n; x++ {
		var rate float64
		for y := 0; y < n; y++ {
			if y != x && into {
				rate += g.m.peerGBps(y, x)
			} else if y != x {
				rate += g.m.peerGBps(x, y)
			}
		}
		rate = speed * math.Min(rate, g.gpuGBps(x))
		for y := 0; y < n && !g.planned(); y++ {
			if y == x {
				continue
			}
			s, d := x, y
			if into {
				s, d = y, x
			}
			g.add(g.bwFigure(test, engine, dir, results.PartPair, s, d, size, rate/float64(n-1), lat, params))
		}
		if into {
			g.add(g.bwFigure(test, engine, dir, results.PartTotal, -1, x, size, rate, lat, pairs))
		} else {
			g.add(g.bwFigure(test, engine, dir, results.PartTotal, x, -1, size, rate, lat, pairs))
		}
	}
}

// groups adds the figures of all_to_one and one_to_all (or their SM twins)
// in one direction, at speed relative to the copy engine pushing.
func (g *gen) groups(toOne, oneToAll results.Test, engine results.Engine, dir results.Direction, speed float64, size uint64, params map[string]string) {
	n := g.o.GPUs
	lat := ceLatency
	if engine != results.EngineCopy {
		lat = smLatency
	}
	group := map[string]string{"pairs": strconv.Itoa(n - 1)}
	maps.Copy(group, params)
	for x := 0; x < n; x++ {
		var in, out float64
		for y := 0; y < n; y++ {
			if y != x {
				in += g.m.peerGBps(y, x)
				out += g.m.peerGBps(x, y)
			}
		}
		in, out = speed*math.Min(in, g.gpuGBps(x)), speed*math.Min(out, g.gpuGBps(x))
		for y := 0; y < n && !g.planned(); y++ {
			if y != x {
				g.add(g.bwFigure(toOne, engine, dir, results.PartPair, y, x, size, in/float64(n-1), lat, params))
			}
		}
		g.add(g.bwFigure(toOne, engine, dir, results.PartTotal, -1, x, size, in, lat, group))
		for y := 0; y < n && !g.planned(); y++ {
			if y != x {
				g.add(g.bwFigure(oneToAll, engine, dir, results.PartPair, x, y, size, out/float64(n-1), lat, params))
			}
		}
		g.add(g.bwFigure(oneToAll, engine, dir, results.PartTotal, x, -1, size, out, lat, group))
	}
}

// latencyPairs are the remote pairs of the latency and atomic tests: the
// detail pairs with the sampled plan or up to 8 GPUs; else each GPU's next
// neighbour and every pair from GPU 0.
func (g *gen) latencyPairs() [][2]int {
	n := g.o.GPUs
	if g.planned() || n <= 8 {
		return g.detailPairs()
	}
	var out [][2]int
	seen := map[[2]int]bool{}
	for s := 0; s < n; s++ {
		for _, p := range [][2]int{{s, (s + 1) % n}, {0, s}} {
			if p[0] != p[1] && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// inDetail reports whether pair s → d is measured in detail.
func (g *gen) inDetail(s, d int) bool { return g.detail == nil || g.detail[[2]int{s, d}] }

// planned reports whether the run follows the sampled plan of a large
// domain (Options.Representatives, Options.PeersPerDevice).
func (g *gen) planned() bool { return g.o.Representatives > 0 || g.o.PeersPerDevice > 0 }

// detailPairs are the pairs measured in detail: with the sampled plan, the
// representatives of each link class and then each device's next
// PeersPerDevice devices, each pair once; else every ordered pair.
func (g *gen) detailPairs() [][2]int { return g.pairs(g.o.PeersPerDevice) }

// pairs are the representatives of each link class (on the sampled plan;
// else every ordered pair) and then each device's next peers devices.
func (g *gen) pairs(peers int) [][2]int {
	n := g.o.GPUs
	classes := map[[2]int][][2]int{}
	var order, out [][2]int
	for s := 0; s < n; s++ {
		for d := 0; d < n; d++ {
			if s == d {
				continue
			}
			if !g.planned() {
				out = append(out, [2]int{s, d})
				continue
			}
			c := [2]int{g.m.links(s, d), g.m.rank(s, d)}
			if _, ok := classes[c]; !ok {
				order = append(order, c)
			}
			classes[c] = append(classes[c], [2]int{s, d})
		}
	}
	seen := map[[2]int]bool{}
	add := func(p [2]int) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, c := range order {
		pairs := classes[c]
		k := min(g.o.Representatives, len(pairs))
		for i := range k {
			add(pairs[i*len(pairs)/k])
		}
	}
	for s := range n {
		for i := 1; i <= min(peers, n-1); i++ {
			add([2]int{s, (s + i) % n})
		}
	}
	return out
}

// remoteNs is the extra latency of reaching the pair's memory.
func (g *gen) remoteNs(s, d int) float64 {
	switch g.m.rank(s, d) {
	case 0:
		return 1150
	case 1:
		return 1900
	}
	return 2600
}

// Samples per latency and atomic figure, as the engine takes them.
const (
	chaseSamples   = 100 // timed chunks of 512 loads
	pingSamples    = 100 // chunks of 100 round trips
	copyLatSamples = 50
	atomicSamples  = 10
)

func (g *gen) latency() {
	n := g.o.GPUs
	pairs := g.latencyPairs()
	l2 := uint64(g.m.gpu.L2CacheBytes)
	for _, ws := range []struct {
		size  uint64
		local float64
	}{{1 << 20, 280}, {256 << 20, 640}} {
		cache := "in_l2"
		if ws.size > 2*l2 {
			cache = "beyond_l2"
		}
		chase := func(owner, runner int, ns float64) {
			memory := "peer"
			if owner == runner {
				memory = "local"
			}
			g.add(results.Figure{Test: results.LatChase, Engine: results.EngineSM, Src: owner, Dst: runner, Size: ws.size,
				Samples: g.latSamples(ns, chaseSamples), Verify: results.VerifyNA,
				Params: map[string]string{"working_set": results.FormatBytes(ws.size), "stride": "128", "hops_per_sample": "512",
					"memory": memory, "cache": cache}})
		}
		for d := 0; d < n; d++ {
			chase(d, d, ws.local)
		}
		for _, p := range pairs {
			chase(p[0], p[1], ws.local+g.remoteNs(p[0], p[1]))
		}
	}
	for _, p := range pairs {
		rt := 2*g.remoteNs(p[0], p[1]) + 300
		for _, m := range []struct {
			name string
			ns   float64
		}{{"round_trip", rt}, {"one_way", rt / 2}} {
			g.add(results.Figure{Test: results.LatPingPong, Engine: results.EngineSM, Src: p[0], Dst: p[1], Size: 4,
				Samples: g.latSamples(m.ns, pingSamples), Verify: results.VerifyNA,
				Params: map[string]string{"measure": m.name, "round_trips_per_sample": "100"}})
		}
	}
	// Pulled (issued by the destination) and pushed, as the engine copies.
	for _, dir := range []results.Direction{results.DirRead, results.DirWrite} {
		for _, size := range LatencySizes() {
			for _, p := range pairs {
				ns := 2100 + float64(size)/g.m.peerGBps(p[0], p[1])
				g.add(results.Figure{Test: results.LatCopyDevice, Engine: results.EngineCopy, Direction: dir, Src: p[0], Dst: p[1],
					Size: size, Samples: g.latSamples(ns, copyLatSamples), Verify: results.VerifyNA})
				g.add(results.Figure{Test: results.LatCopyHost, Engine: results.EngineCopy, Direction: dir, Src: p[0], Dst: p[1],
					Size: size, Samples: g.latSamples(ns+6300, copyLatSamples), Verify: results.VerifyNA})
				g.add(results.Figure{Test: results.LatCopyB2B, Engine: results.EngineCopy, Direction: dir, Src: p[0], Dst: p[1],
					Size: size, Samples: g.latSamples(ns, copyLatSamples), Verify: results.VerifyNA, Params: map[string]string{"copies_per_sample": "50"}})
			}
		}
	}
}

func (g *gen) atomics() {
	n := g.o.GPUs
	var targets [][2]int
	for d := 0; d < n; d++ {
		targets = append(targets, [2]int{d, d})
	}
	targets = append(targets, g.latencyPairs()...)
	labels := func(p [2]int, op atomicOp) map[string]string {
		m := map[string]string{"op": op.name, "ptx": op.ptx, "threads": strconv.Itoa(2 * 256 * g.m.gpu.SMCount), "ops_per_thread": "64"}
		if p[0] == p[1] {
			m["native_atomic_supported"] = "local"
		} else {
			native := 1
			if g.m.rank(p[0], p[1]) == 2 {
				native = 0
			}
			m["native_atomic_supported"] = strconv.Itoa(native)
			m["driver_caps"] = "0x0"
		}
		return m
	}
	for _, op := range atomicOps {
		for _, contended := range []bool{false, true} {
			for _, p := range targets {
				rate := 480 * op.speed // local, distinct addresses
				switch {
				case p[0] != p[1] && g.m.rank(p[0], p[1]) == 0:
					rate = 56 * op.speed
				case p[0] != p[1]:
					rate = 6 * op.speed
				}
				if contended {
					// One address serialises every thread: about one
					// operation per clock locally, a third of it remotely.
					rate = 1.7 * op.speed
					if p[0] != p[1] {
						rate /= 3.5
					}
				}
				params := labels(p, op)
				params["contended"] = strconv.FormatBool(contended)
				f := results.Figure{Test: results.AtomicTput, Engine: results.EngineSM, Src: p[0], Dst: p[1], Size: uint64(op.width),
					Params: params, Verify: results.VerifyPassed}
				f.Samples = g.samples(rate, 0.004)[:min(atomicSamples, g.o.Samples)]
				g.add(f)
			}
		}
		if !op.chain {
			continue
		}
		for _, p := range targets {
			ns := 690.0
			if p[0] != p[1] {
				ns += 1.4 * g.remoteNs(p[0], p[1])
			}
			g.add(results.Figure{Test: results.AtomicLatency, Engine: results.EngineSM, Src: p[0], Dst: p[1], Size: uint64(op.width),
				Params: labels(p, op), Samples: g.latSamples(ns/op.speed*0.8, atomicSamples), Verify: results.VerifyPassed})
		}
	}
}

// ipc repeats the copy-engine tests across two processes: on the
// representatives with the sampled plan, else on pairs 0→1,
// 1→0 and 0→last.
func (g *gen) ipc() {
	n := g.o.GPUs
	size := uint64(MatrixSize)
	seen := map[[2]int]bool{}
	pairs := [][2]int{{0, 1}, {1, 0}, {0, n - 1}}
	if g.planned() {
		pairs = g.sweepPairs() // the representatives, on a sampled plan
	}
	for _, p := range pairs {
		if p[0] == p[1] || seen[p] {
			continue
		}
		seen[p] = true
		ce := g.m.peerGBps(p[0], p[1]) * g.pairFactor(p[0], p[1])
		g.add(g.bwFigure(results.IPCCERead, results.EngineCopy, results.DirRead, results.PartNone, p[0], p[1], size, ce*g.faults.ipcSlow, ceLatency, nil))
		g.add(g.bwFigure(results.IPCCEWrite, results.EngineCopy, results.DirWrite, results.PartNone, p[0], p[1], size, ce*1.001*0.998, ceLatency, nil))
	}
}

func (g *gen) tuning() {
	ce := g.m.peerGBps(0, 1)
	link := ce / 0.876
	t := results.Tuning{Src: 0, Dst: 1, Direction: string(results.DirWrite), Size: MatrixSize}
	for i, v := range []string{"v4_u1", "v4_u2", "v4_u4", "v4_u8", "bulk"} {
		c := results.TuneCandidate{Variant: v, BlocksPerSM: 4, BlockSize: 512,
			MedianGBps: link * (0.815 + 0.002*float64(i%3)), CV: 0.002, Verified: true}
		t.Tried = append(t.Tried, c)
		if c.MedianGBps > t.Winner.MedianGBps {
			t.Winner = c
		}
	}
	g.run.Tuning = []results.Tuning{t}
}
