package sim

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/p2pbench/p2pbench/results"
)

// gpuSpec is one GPU model as the driver describes it, plus the figures the
// timing model needs from it.
type gpuSpec struct {
	name             string
	ccMajor, ccMinor int
	sms              int
	memMiB           uint64
	asyncEngines     int
	l2Bytes          int
	clockMHz         int
	memClockMHz      int
	busWidthBits     int
	maxThreadsPerSM  int
	maxSharedOptin   int // the most dynamic shared memory a block may opt in to
	// Local memory (HBM or GDDR): capacity in GB/s counting bytes read plus
	// bytes written, so a copy within the device moves half of it.
	memGBps float64
	// Power and temperature at idle and under full load (the Monitor's State).
	idleW, tdpW   float64
	idleC, loadC  int
	reservedBytes uint64 // device memory a primary context takes (MemGetInfo)
}

// topology is how the GPUs of a machine reach each other.
type topology int

const (
	// topoDirect: one bundle of NVLinks per pair, a capacity per direction.
	topoDirect topology = iota
	// topoSwitch: every GPU has one NVSwitch port (all its NVLinks) with a
	// capacity per direction; a pair's traffic takes the source's egress and
	// the destination's ingress. One pair alone already fills a port (18
	// links), so all-to-one and one-to-all total about one pair's figure
	// (~394 GB/s for the copy engine on dgx-h100), shared by the peers.
	topoSwitch
	// topoPCIe: GPUs behind PCIe switches; pairs on one switch go through it,
	// others through the root complex.
	topoPCIe
)

// machine is one simulated computer.
type machine struct {
	name    string
	summary string
	gpu     gpuSpec
	n       int
	busIDs  []string
	topo    topology
	// NVLinks per pair (direct) or per GPU port (switch), their NVLink
	// version, and payload GB/s per link per direction. Zero on PCIe machines.
	links         int
	nvlinkVersion int
	linkGBps      float64
	// pcie is every GPU's PCIe link as NVML reads it (running at its
	// maximum); the model's pcieGBps is what it carries.
	pcie results.PCIeLink
	// planeGBps, when not 0, is what one NVSwitch plane carries for every
	// port together, per direction: less than the ports' sum makes a
	// blocking switch, where pairs that share no GPU slow each other.
	planeGBps float64
	// PCIe machines: the switch of each GPU, and the pairs without P2P.
	switchOf []int
	noPeer   map[[2]int]bool
	m        model
}

// profile is how one engine uses an interconnect: eff is payload over link
// capacity in the direction data flows; rev is the capacity the engine's
// requests or acknowledgements take in the other direction, per payload byte.
type profile struct{ eff, rev float64 }

// calibrate derives a profile from two measurements on a link of raw GB/s per
// direction: one direction alone reaches single, both directions at once reach
// bothTotal together. Alone, the flow is limited by raw*eff; together each
// direction's link carries one flow's data plus the other flow's requests.
func calibrate(raw, single, bothTotal float64) profile {
	eff := single / raw
	rev := raw/(bothTotal/2) - 1/eff
	return profile{eff: eff, rev: rev}
}

// model holds the constants of the bandwidth and latency model of a machine.
// Bandwidths are decimal GB/s, which is also bytes per nanosecond; times are ns.
type model struct {
	portGBps      float64 // GPU-GPU capacity per direction: the NVLink bundle or port; the GPU's PCIe link on PCIe machines
	pcieGBps      float64 // each GPU's PCIe link to the host, per direction
	uplinkGBps    float64 // PCIe machines: a switch's link to the root complex, per direction
	rootP2PGBps   float64 // PCIe machines: peer traffic forwarded by the root complex, per direction
	hostMemGBps   float64 // host memory, all traffic together
	ceGBps        float64 // a device's copy engines together
	stagedGBps    float64 // cuMemcpyPeer without peer access: through a host bounce buffer
	pageableGBps  float64 // MemcpyHtoD/DtoH from pageable Go memory
	ceRead        profile // copy engine pulling from a peer
	ceWrite       profile // copy engine pushing to a peer
	smRead        profile // SM loads from a peer
	smWrite       profile // SM stores to a peer
	hostCE        profile // copy engine to or from host memory (PCIe)
	hostSM        profile // SM loads from mapped host memory (and fill kernels' stores)
	hostSMWrite   profile // SM copy kernels' stores to mapped host memory
	ceLocalEff    float64 // fraction of memory bandwidth a local CE copy reaches
	smLocalEff    float64 // ... a local SM copy
	fillEff       float64 // ... fill, check and memset kernels
	smVariantRead float64 // SM copy variants read up to this fraction slower than the best
	smVariantWrt  float64 // ... and write up to this fraction slower
	smLatency     float64 // load latency used for the in-flight bandwidth bound of SM kernels
	smLatencyPeer float64

	ceSetup       float64 // fixed time of a copy on the copy engine before data moves
	ceSetupPeer   float64
	ceSetupHost   float64
	ceSetupStaged float64
	kernelSetup   float64 // launch to first instruction and drain of a kernel
	// ceDrain and smDrain are a large copy's drain by the copy engine and
	// by an SM copy kernel (the tail of its last wave of blocks): the time
	// from its last byte moving to an event recorded after it completing.
	// The next copy on the stream overlaps it, so back-to-back copies pay
	// it once (drain).
	ceDrain, smDrain float64
	// smLaunch is what a launch of an SM copy kernel costs that the launch
	// before it on the stream cannot hide, by the size of its copy
	// (launch.go): a floor under its setup's own, paid once per launch, so
	// a launch that repeats its copy (kernels.CopyArgs.Reps) pays it once.
	smLaunch  launchCost
	peerSetup float64 // extra for a kernel whose first access crosses the link
	// smContextMode is what a launch of an SM copy crossing the link costs
	// more in a context of the slow mode (contextMode), as a share of what
	// the launch before cannot hide: 0.2 µs on the 2× H100 at 4 KiB, 7%
	// (3.1-3.3 against 2.9-3.0 µs a copy), 0.15 µs at 1 MiB.
	smContextMode float64
	latchPoll     float64 // a latch sees its host flag this long after it is written
	// Pulls (a copy-engine copy issued by the destination) as a 2× H100
	// NV18 makes them (docs/methods.md): the first pull
	// a device issues after its peer access was enabled again following a
	// copy to or from host memory costs firstPull more (0.17 ms at 512 MiB,
	// 0.1 ms at 4 B); a small pull (≤ smallPull bytes) costs pullSetup when
	// queued on a stream as it runs, heldPullSetup when it was queued
	// behind work that had not started (a latch, a wait), 0 where not
	// modelled.
	firstPull, pullSetup, heldPullSetup float64
	// linkWake is what a device's first copy-engine pull from a peer after
	// none for linkIdle costs more: on a 2× H200 eight 1 MiB pulls queued
	// after 100 ms without copies take 300 µs, eight more right after 93
	// (docs/methods.md, "Small pulls between GPUs"). The idle time from
	// which it is paid is not known beyond this: after 100 ms it is,
	// between windows a few tens of µs apart not; 1 ms here. 0 where not
	// modelled.
	linkWake, linkIdle float64
	// pullTurn is how far a device's small pulls' fixed time swings, in
	// turn, below and above it: on the 2× H100 a pull timed alone takes
	// 11.0-12.3 µs and the next one 20.2-20.6, turn about, in every run
	// (lat_copy_device: docs/methods.md); 0 where not modelled.
	pullTurn float64
	// eccPerSecond is how fast a link's corrected-ECC counter (NVLink error
	// counter 4) rises while its device works, per link, the least and the
	// most: on the 2× H100, 79–448 per link in 8 s of copying, none while
	// idle; 0 where not modelled.
	eccPerSecond [2]float64

	chaseLocalL2   float64 // ns per dependent load, local memory, working set within L2
	chaseLocalMem  float64 // ... beyond L2
	chaseRemoteL2  float64 // peer memory, within the peer's L2
	chaseRemoteMem float64 // peer memory beyond its L2
	chaseHost      float64 // mapped host memory
	farExtra       float64 // PCIe machines: added per remote access across switches
	storeLocal     float64 // a system-scope store becomes visible to another SM of the device
	storeRemote    float64 // ... to a peer GPU polling its own memory
	relaxedStore   float64 // a relaxed store's visibility relative to a release store's
	atomLatLocal   float64 // one atomic's round trip, local memory
	atomLatRemote  float64 // ... peer memory
	// atomPlaceSpread is how much a dependent atomic's round trip depends
	// on where its counter lies: up to 1 + atomPlaceSpread times the
	// least, by the counter's address (atomics.go). On the 2× H100 a chain
	// takes 143.8-253.9 ns an operation on local memory by the place of its
	// counter, the same at each place in every run (docs/methods.md); 0
	// where not modelled.
	atomPlaceSpread float64

	// Atomic throughput, Gop/s: red (no return), atom (returns), cas, and all
	// threads on one address (contended).
	redLocal, atomLocal, casLocal, contLocal     float64
	redRemote, atomRemote, casRemote, contRemote float64
	// contRemote64 is contRemote for 8-byte operations where they differ
	// (the 2× H200s: 0.48 Gop/s against 0.36 for 4 bytes); 0 where not.
	contRemote64   float64
	farAtomicScale float64 // PCIe machines: remote rates across switches scale by this

	jitter float64 // relative standard deviation of every duration
}

// nvlinkModel is the model of a Hopper/Blackwell NVLink machine with port GB/s
// per direction between a pair. The efficiencies come from the 2× H200
// measurements of hardware.md (on 450 GB/s): copy engine 394 one way, 783
// both ways pushing, 778 pulling; SM 374 pulling, 371 pushing, 672 both
// pulling, 731 both pushing; to and from the host (on 57.3 GB/s of PCIe)
// 55.4 by the copy engine, 51.2 by SM loads and 52.6 by SM stores, and
// the host chase as the latency constants below say. The SM figures were
// copies of 512 MiB launched one per copy: the SM profiles are their
// sustained rates (376.6 pulling, as the H200 pulled at 8–32 GiB, where a
// launch's cost is lost: kernels/NOTES.md), and each launch pays its cost
// on top (smLaunch, launch.go).
func nvlinkModel(port float64, engines int) model {
	const raw = 450.0
	return model{
		portGBps:      port,
		pcieGBps:      57.3, // Gen5 x16: ~55 GB/s of payload at 96 %
		hostMemGBps:   300,
		ceGBps:        float64(engines) * 1000,
		stagedGBps:    38, // hardware.md: 38.4, 69 % of a host copy
		pageableGBps:  20,
		ceRead:        calibrate(raw, 394, 778),
		ceWrite:       calibrate(raw, 394, 783),
		smRead:        calibrate(raw, sustained(374), 2*sustained(672/2)),
		smWrite:       calibrate(raw, sustained(371), 2*sustained(731/2)),
		hostCE:        profile{eff: 0.967, rev: 0.01},
		hostSM:        profile{eff: 0.894, rev: 0.05},
		hostSMWrite:   profile{eff: 0.918, rev: 0.02},
		ceLocalEff:    0.98,
		smLocalEff:    0.95,
		fillEff:       0.90,
		smVariantRead: 0.0055, // 374 → 372 across variants
		smVariantWrt:  0.008,  // 371 → 368
		smLatency:     600,
		smLatencyPeer: 1500,

		ceSetup:       1000,
		ceSetupPeer:   1800,
		ceSetupHost:   2000,
		ceSetupStaged: 8000,
		kernelSetup:   1500,
		peerSetup:     800,
		smContextMode: 0.07,
		latchPoll:     1000,
		// What a sample of one 512 MiB copy lost on the 2× H200 against
		// back-to-back copies (issue 15): 0.2–0.3% by the copy engine
		// (393.1 against 393.8 GB/s pulled, 395.4 against 396.5 pushed),
		// 0.6% by SM loads (374.0 against 376.2).
		ceDrain:  3000,
		smDrain:  8000,
		smLaunch: h100Launch,

		firstPull:     165000,
		pullSetup:     6500,
		heldPullSetup: 13300,
		pullTurn:      4500,
		eccPerSecond:  [2]float64{10, 56},

		// A Hopper GPU's own dependent loads, as the real H100s and H200s
		// read them (verdict/latency_table.go): 140-141 ns within L2,
		// 340-345 beyond it (3% of the chase's loads find L2 there),
		// 1102-1132 through host memory. The peer's, through NVSwitch,
		// were not measured.
		chaseLocalL2:    141,
		chaseLocalMem:   357,
		chaseRemoteL2:   900,
		chaseRemoteMem:  1300,
		chaseHost:       1102,
		storeLocal:      400,
		storeRemote:     800,
		relaxedStore:    0.8,
		atomLatLocal:    153, // 1.375 × on average over eight places: 210 ns, as on the 2× H100s and H200s
		atomLatRemote:   1200,
		atomPlaceSpread: 0.75,

		redLocal: 480, atomLocal: 320, casLocal: 200, contLocal: 1.6,
		redRemote: 60, atomRemote: 45, casRemote: 30, contRemote: 0.9,
		farAtomicScale: 1,

		jitter: 0.003,
	}
}

// pcieModel is the model of GPUs on PCIe Gen4 switches: 26 GB/s per direction
// per link, peer traffic across switches limited by the root complex.
func pcieModel() model {
	const raw = 26.0
	m := model{
		portGBps:      raw,
		pcieGBps:      raw,
		uplinkGBps:    raw,
		rootP2PGBps:   12.5,
		hostMemGBps:   150,
		ceGBps:        2 * 400,
		stagedGBps:    17, // the H200's share of a host copy (69 %), as nothing was measured
		pageableGBps:  12,
		ceRead:        profile{eff: 25 / raw, rev: 0.02},
		ceWrite:       profile{eff: 25 / raw, rev: 0.01},
		smRead:        profile{eff: 0.80, rev: 0.12}, // non-posted reads: ~21 GB/s
		smWrite:       profile{eff: 0.92, rev: 0.01}, // posted writes: ~24 GB/s
		hostCE:        profile{eff: 0.96, rev: 0.01},
		hostSM:        profile{eff: 0.88, rev: 0.05},
		hostSMWrite:   profile{eff: 0.88, rev: 0.05},
		ceLocalEff:    0.95,
		smLocalEff:    0.92,
		fillEff:       0.90,
		smVariantRead: 0.01,
		smVariantWrt:  0.01,
		smLatency:     650,
		smLatencyPeer: 2000,

		ceSetup:       1200,
		ceSetupPeer:   2500,
		ceSetupHost:   2500,
		ceSetupStaged: 10000,
		kernelSetup:   1800,
		peerSetup:     1200,
		smContextMode: 0.07,
		latchPoll:     1000,
		ceDrain:       3000, // not measured: the H200's
		smDrain:       8000,
		smLaunch:      h100Launch, // not measured: the H100's

		chaseLocalL2:   280,
		chaseLocalMem:  650,
		chaseRemoteL2:  1800,
		chaseRemoteMem: 2100,
		chaseHost:      1800,
		farExtra:       600,
		storeLocal:     400,
		storeRemote:    1500,
		relaxedStore:   0.85,
		atomLatLocal:   650,
		atomLatRemote:  2000,

		redLocal: 300, atomLocal: 200, casLocal: 120, contLocal: 1.4,
		redRemote: 6, atomRemote: 3.5, casRemote: 2.5, contRemote: 0.5,
		farAtomicScale: 0.5,

		jitter: 0.004,
	}
	return m
}

var (
	h200 = gpuSpec{
		name: "NVIDIA H200", ccMajor: 9, ccMinor: 0, sms: 132, memMiB: 143771, asyncEngines: 3,
		l2Bytes: 60 << 20, clockMHz: 1980, memClockMHz: 3201, busWidthBits: 6144,
		maxThreadsPerSM: 2048, maxSharedOptin: 232448, memGBps: 4080,
		idleW: 115, tdpW: 700, idleC: 31, loadC: 62, reservedBytes: 530 << 20,
	}
	h100 = gpuSpec{
		name: "NVIDIA H100 80GB HBM3", ccMajor: 9, ccMinor: 0, sms: 132, memMiB: 81559, asyncEngines: 3,
		l2Bytes: 50 << 20, clockMHz: 1980, memClockMHz: 2619, busWidthBits: 5120,
		maxThreadsPerSM: 2048, maxSharedOptin: 232448, memGBps: 3060,
		idleW: 72, tdpW: 700, idleC: 30, loadC: 60, reservedBytes: 530 << 20,
	}
	l40s = gpuSpec{
		name: "NVIDIA L40S", ccMajor: 8, ccMinor: 9, sms: 142, memMiB: 46068, asyncEngines: 2,
		l2Bytes: 96 << 20, clockMHz: 2520, memClockMHz: 9001, busWidthBits: 384,
		maxThreadsPerSM: 1536, maxSharedOptin: 101376, memGBps: 820,
		idleW: 35, tdpW: 350, idleC: 28, loadC: 70, reservedBytes: 420 << 20,
	}
	gb200 = gpuSpec{
		name: "NVIDIA GB200", ccMajor: 10, ccMinor: 0, sms: 148, memMiB: 189471, asyncEngines: 4,
		l2Bytes: 126 << 20, clockMHz: 1965, memClockMHz: 3996, busWidthBits: 8192,
		maxThreadsPerSM: 2048, maxSharedOptin: 232448, memGBps: 6400,
		idleW: 150, tdpW: 1200, idleC: 33, loadC: 65, reservedBytes: 600 << 20,
	}
)

// machines builds every simulated machine by name.
var machines = map[string]func() *machine{
	"h200x2": func() *machine {
		return &machine{
			name:    "h200x2",
			summary: "2× NVIDIA H200 SXM, NVLink 4 NV18 between them (the validation machine of hardware.md)",
			gpu:     h200, n: 2,
			busIDs: []string{"0000:18:00.0", "0000:2A:00.0"},
			topo:   topoDirect, links: 18, nvlinkVersion: 4, linkGBps: 25,
			pcie: results.PCIeLink{Gen: 5, Width: 16, MaxGen: 5, MaxWidth: 16},
			m:    h200x2Model(),
		}
	},
	"dgx-h100": dgxH100,
	"dgx-h100-blocking": func() *machine {
		m := dgxH100()
		m.name = "dgx-h100-blocking"
		m.summary = "dgx-h100 with a blocking switch plane: it carries two pairs' worth (900 GB/s per direction) for all eight ports together"
		m.planeGBps = 2 * m.m.portGBps
		return m
	},
	"pcie-4gpu": func() *machine {
		return &machine{
			name:    "pcie-4gpu",
			summary: "4× NVIDIA L40S on two PCIe Gen4 switches (0,1 | 2,3); no P2P between 1 and 2",
			gpu:     l40s, n: 4,
			busIDs:   []string{"0000:17:00.0", "0000:31:00.0", "0000:B1:00.0", "0000:CA:00.0"},
			topo:     topoPCIe,
			switchOf: []int{0, 0, 1, 1},
			noPeer:   map[[2]int]bool{{1, 2}: true, {2, 1}: true},
			pcie:     results.PCIeLink{Gen: 4, Width: 16, MaxGen: 4, MaxWidth: 16},
			m:        pcieModel(),
		}
	},
	"nvl72": func() *machine {
		ids := make([]string, 72)
		for i := range ids {
			// 18 compute trays of 4 GPUs; each tray its own PCI domain.
			ids[i] = fmt.Sprintf("%04X:%02X:00.0", i/4, 0x01+(i%4)*0x10)
		}
		return &machine{
			name:    "nvl72",
			summary: "72× NVIDIA GB200 (NVLink 5) through the NVL72 switch trays, NV18 between every pair",
			gpu:     gb200, n: 72,
			busIDs: ids,
			topo:   topoSwitch, links: 18, nvlinkVersion: 5, linkGBps: 50,
			pcie: results.PCIeLink{Gen: 5, Width: 16, MaxGen: 5, MaxWidth: 16},
			m:    nvlinkModel(900, gb200.asyncEngines),
		}
	},
}

// h200x2Model is the NVLink model with what the 2× H200 showed of its links
// and nothing else has yet.
//
// Its latencies and atomics are the real 2× H200s' (the sets under
// testdata/reference/h200x2 that the verdict's latency table holds,
// verdict/latency_table.go): a dependent load 141 ns within L2 and
// 345 beyond it, 849 and 996 from the peer, 1102 through host memory; a
// flag's one-way trip 1242 ns (release/acquire), 668 relaxed; an atomic's
// round trip 210 ns on local memory and 876 on the peer's (the mean over
// the places of eight counters); uncontended atomics 280 Gop/s locally (red
// 342) and 64.5 on the peer (red 66.5, CAS 17.5), contended 1.3 and 0.36
// (0.48 for 8-byte operations on the peer).
// The model's figure for each is what its constants give through its
// formulas (latency.go, atomics.go), so the constants are set to land on
// them: a chase beyond L2 finds 3% of its loads in L2, a dependent atomic
// costs 1.375 times its least round trip on average over the places.
func h200x2Model() model {
	m := nvlinkModel(450, h200.asyncEngines)
	m.linkWake, m.linkIdle = 210000, 1e6
	m.chaseRemoteL2, m.chaseRemoteMem = 850, 1013
	m.storeRemote, m.relaxedStore = 1247, 0.538
	m.atomLatRemote = 637
	m.atomLocal, m.redLocal, m.casLocal, m.contLocal = 293, 383, 117, 1.3
	m.atomRemote, m.redRemote, m.casRemote, m.contRemote, m.contRemote64 = 65.4, 67.6, 17.6, 0.367, 0.486
	return m
}

// dgxH100 is eight H100s on NVSwitch.
func dgxH100() *machine {
	return &machine{
		name:    "dgx-h100",
		summary: "8× NVIDIA H100 SXM through four NVSwitches, NV18 between every pair",
		gpu:     h100, n: 8,
		busIDs: []string{"0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0", "0000:5D:00.0",
			"0000:9A:00.0", "0000:AB:00.0", "0000:BA:00.0", "0000:DB:00.0"},
		topo: topoSwitch, links: 18, nvlinkVersion: 4, linkGBps: 25,
		pcie: results.PCIeLink{Gen: 5, Width: 16, MaxGen: 5, MaxWidth: 16},
		m:    nvlinkModel(450, h100.asyncEngines),
	}
}

// Machines lists the simulated machines New accepts.
func Machines() []string {
	out := make([]string, 0, len(machines))
	for n := range machines {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// canAccess is cuDeviceCanAccessPeer on the machine (dev != peer, both valid).
func (m *machine) canAccess(dev, peer int) bool {
	return dev != peer && !m.noPeer[[2]int{dev, peer}]
}

// sameSwitch reports whether two GPUs of a PCIe machine share a switch.
func (m *machine) sameSwitch(a, b int) bool {
	return m.topo != topoPCIe || m.switchOf[a] == m.switchOf[b]
}

// p2pAttribute is cuDeviceGetP2PAttribute for a valid pair src != dst.
func (m *machine) p2pAttribute(attr int, src, dst int) (int, bool) {
	access := m.canAccess(src, dst)
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	switch attr {
	case 1: // performance rank: 0 best
		if !access || m.topo != topoPCIe || m.sameSwitch(src, dst) {
			return 0, true
		}
		return 1, true
	case 2: // access supported
		return b(access), true
	case 3: // native atomics
		return b(access && m.sameSwitch(src, dst)), true
	case 4: // CUDA array access
		return b(access), true
	case 5: // only partial native atomics
		return 0, true
	}
	return 0, false
}

// uuid is a fixed, plausible GPU UUID for device dev of the machine.
func (m *machine) uuid(dev int) string {
	h := fnv.New128a()
	fmt.Fprintf(h, "p2pbench-sim/%s/%d", m.name, dev)
	b := h.Sum(nil)
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// personality is a small fixed deviation (±0.15 %) of one resource of the
// machine from its nominal capacity: real links are not all equal, and a
// simulated run should not look too perfect. It does not depend on the seed.
func (m *machine) personality(k resKey) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d/%d", m.name, k.kind, k.a, k.b)
	u := float64(h.Sum64()>>11) / (1 << 53)
	return 1 + 0.003*(u-0.5)
}
