// Package results is p2pbench's results contract: the typed vocabulary of
// what is measured (tests, engines, directions, parts, units) with one
// catalogue that describes every test (unit, title, convention, whether it
// needs a pair, is a matrix, copies both ways), the Go types of a results
// file and its schema version (SCHEMA.md), validation, reading (encoding/json's
// semantics; gzip-compressed or not; version 1 converted) and atomic
// writing, and the queries and rules that readers share (figure keys,
// failure labels, the matrix size, the plan's defaults). The statistics of
// a figure's samples (the Stats a figure records, rounds, intervals) are
// package figstats'.
// The engine writes these types; everything downstream of a run (plots,
// report, compare, the CLI's tables) reads them only.
//
// It imports nothing of the project but figstats, which imports nothing
// of it, so that every package may import it.
package results

import (
	"slices"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/figstats"
)

// SchemaVersion is the version this build writes. It reads this version and
// version 1, which it converts on reading (see Decode).
const SchemaVersion = 2

// Run is one results file: one invocation of p2pbench.
type Run struct {
	Schema int  `json:"schema"`
	Tool   Tool `json:"tool"`
	// Simulated is true when the figures come from the simulated driver, not a GPU.
	Simulated bool `json:"simulated"`
	// SimMachine names the simulated machine ("h200x2", "dgx-h100", ...).
	SimMachine string `json:"sim_machine,omitempty"`
	// Imported marks a run converted from another tool's output by
	// `p2pbench import`; nil for a run p2pbench measured. Tool then names
	// the other tool.
	Imported *Imported `json:"imported,omitempty"`
	Host     string    `json:"host"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	// Complete is false for a run cut short (Ctrl-C, a fatal error); Stopped says why.
	Complete bool   `json:"complete"`
	Stopped  string `json:"stopped,omitempty"`
	// Verify is false when the run was made with --no-verify.
	Verify      bool        `json:"verify"`
	Environment Environment `json:"environment"`
	Topology    *Topology   `json:"topology,omitempty"`
	// Catalogue describes each test the figures name, once: unit, titles and
	// the convention its figures are computed by, as this run's build
	// worded them (a file stores only those words). Encode writes it and
	// Decode reads it completed (see CompleteCatalogue).
	Catalogue map[Test]TestInfo `json:"catalogue,omitempty"`
	// Plan says how the run chose its pairs (see Plan); nil for a run that
	// measured every test on every pair.
	Plan *Plan `json:"plan,omitempty"`
	// Replicates says what a figure's rounds (its replicates) carry:
	// ReplicatesProcess when each round renews what differs between
	// processes, so that the spread of the round medians is the spread of
	// separate runs; empty for a run without rounds, or whose rounds were
	// taken within one process renewing only what --renew names (every
	// file written before the marker). See RunHasProcessReplicates.
	Replicates string   `json:"replicates,omitempty"`
	Figures    []Figure `json:"figures"`
	Tuning     []Tuning `json:"tuning,omitempty"`
	Notes      []string `json:"notes,omitempty"`
	// Verdict judges the run against expectations (verdict.go); nil until
	// a run is judged (p2pbench check, or all with --expect or --baseline).
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Tool identifies the program and how it was invoked.
type Tool struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Command []string `json:"command"`
	GoOS    string   `json:"goos"`
	GoArch  string   `json:"goarch"`
}

// Imported says where an imported run's figures come from and what its
// input does not say.
type Imported struct {
	// Format is the input's format ("nvbandwidth-json", "nccl-tests-text", ...).
	Format string `json:"format"`
	// File is the input's file name (without its directory); SHA256 the
	// hash of its content, in hex.
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Importer is the program that converted it ("p2pbench v1.4"), when known.
	Importer string `json:"importer,omitempty"`
	// Unknown says, in words, what the input does not record that a
	// p2pbench run does: raw samples (without them no significance test is
	// possible), the date, the topology, ...
	Unknown []string `json:"unknown,omitempty"`
}

// UnknownVerification begins the Unknown entry of an import whose tool
// checks its data unless told not to, and does not say whether it did:
// "whether the copied data was verified: nvbandwidth checks it unless run
// with -s". The verdict quotes what follows it.
const UnknownVerification = "whether the copied data was verified: "

// VerificationUnknown is what an import's input leaves unknown of its
// data's verification (the words after UnknownVerification), "" when it
// leaves nothing unknown of it.
func (im *Imported) VerificationUnknown() string {
	if im == nil {
		return ""
	}
	for _, u := range im.Unknown {
		if rest, ok := strings.CutPrefix(u, UnknownVerification); ok {
			return rest
		}
	}
	return ""
}

// Environment is the software and hardware state around a run.
type Environment struct {
	DriverVersion int      `json:"driver_version"`           // cuDriverGetVersion, e.g. 13000
	CUDAVersion   string   `json:"cuda_version"`             // "13.0"
	DriverRelease string   `json:"driver_release,omitempty"` // NVML: "580.159.04"
	Library       string   `json:"library,omitempty"`        // the libcuda loaded, or the simulated machine
	NVML          bool     `json:"nvml"`
	Devices       []Device `json:"devices"`
	// System is the machine the GPUs sit in; nil in runs written before
	// it was recorded, and in imports.
	System *System `json:"system,omitempty"`
	// StateStart and StateEnd are NVML readings (clocks, temperature, power) at
	// the start and end of the run; empty without NVML.
	StateStart []DeviceState `json:"state_start,omitempty"`
	StateEnd   []DeviceState `json:"state_end,omitempty"`
	// HealthBefore and HealthAfter are NVML's health readings (NVLinks,
	// ECC, row remapping, throttle reasons) before the first test and
	// after the last; empty without NVML. See health.go.
	HealthBefore []Health `json:"health_before,omitempty"`
	HealthAfter  []Health `json:"health_after,omitempty"`
	// DuringRun is what the readings between tests saw, per GPU.
	DuringRun []DeviceWatch `json:"during_run,omitempty"`
	// OtherProcesses are the compute processes of other programs seen on
	// the selected GPUs before or during the run.
	OtherProcesses []Process `json:"other_processes,omitempty"`
	Notes          []string  `json:"notes,omitempty"`
}

// System names the machine for an asset or procurement file: its vendor,
// product and serial number (DMI), its CPU, kernel and operating system.
// What could not be read is empty and named in Unreadable with the reason
// (a DMI serial is readable by root only), never silently left out.
type System struct {
	Vendor  string `json:"vendor,omitempty"`  // DMI sys_vendor, e.g. "Supermicro"
	Product string `json:"product,omitempty"` // DMI product_name
	Serial  string `json:"serial,omitempty"`  // DMI product_serial
	CPU     string `json:"cpu,omitempty"`     // the processor's model name
	CPUs    int    `json:"cpus,omitempty"`    // logical processors
	Kernel  string `json:"kernel,omitempty"`  // the kernel release, e.g. "6.8.0-49-generic"
	OS      string `json:"os,omitempty"`      // os-release PRETTY_NAME
	// Unreadable says, one entry per field, what could not be read and why:
	// "serial: open /sys/class/dmi/id/product_serial: permission denied".
	Unreadable []string `json:"unreadable,omitempty"`
}

// Device is one GPU as the driver describes it.
type Device struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	UUID              string `json:"uuid"`
	PCIBusID          string `json:"pci_bus_id"`
	ComputeCapability string `json:"compute_capability"` // "9.0"
	SMCount           int    `json:"sm_count"`
	MemoryBytes       uint64 `json:"memory_bytes"`
	UnifiedAddressing bool   `json:"unified_addressing"`
	AsyncEngines      int    `json:"async_engine_count"`
	L2CacheBytes      int    `json:"l2_cache_bytes,omitempty"`
	// PCIe is the GPU's PCIe link from NVML; nil without it.
	PCIe *PCIeLink `json:"pcie,omitempty"`
	// The board's identity from NVML: serial number, board part number,
	// VBIOS and InfoROM image versions; empty where NVML did not give
	// them (the environment's notes say why).
	Serial          string `json:"serial,omitempty"`
	BoardPartNumber string `json:"board_part_number,omitempty"`
	VBIOS           string `json:"vbios_version,omitempty"`
	InfoROM         string `json:"inforom_version,omitempty"`
}

// DeviceState is an NVML snapshot of one GPU.
type DeviceState struct {
	Index       int     `json:"index"`
	SMClockMHz  int     `json:"sm_clock_mhz"`
	MemClockMHz int     `json:"mem_clock_mhz"`
	TempC       int     `json:"temperature_c"`
	PowerW      float64 `json:"power_w"`
}

// Topology is what `p2pbench topo` discovers.
type Topology struct {
	Devices []int  `json:"devices"` // the device indices selected
	Pairs   []Pair `json:"pairs"`   // every ordered pair src != dst of Devices
	// Links are NVLink details per device from NVML; empty without NVML.
	Links []DeviceLinks `json:"links,omitempty"`
	// Conformance holds `topo --check` cases when they were run.
	Conformance []ConformanceCase `json:"conformance,omitempty"`
	Notes       []string          `json:"notes,omitempty"`
}

// Pair is one ordered device pair: src accessing dst's memory.
type Pair struct {
	Src           int  `json:"src"`
	Dst           int  `json:"dst"`
	CanAccessPeer bool `json:"can_access_peer"`
	// Attributes maps an attribute name (performance_rank, access_supported,
	// native_atomic_supported, cuda_array_access_supported,
	// only_partial_native_atomic_supported) to its value.
	Attributes      map[string]int    `json:"attributes"`
	AttributeErrors map[string]string `json:"attribute_errors,omitempty"`
	// AtomicCaps maps an atomic operation name (integer_add, cas, ...) to its
	// CUatomicOperationCapability bitmask; AtomicCapsError says why it is empty.
	AtomicCaps      map[string]uint32 `json:"atomic_caps,omitempty"`
	AtomicCapsError string            `json:"atomic_caps_error,omitempty"`
	// NVLinks is the number of active NVLinks from src to dst (NVML), 0 when unknown.
	NVLinks int `json:"nvlinks,omitempty"`
	// LinkGBps is the theoretical payload bandwidth src->dst, one direction,
	// decimal GB/s (NVLinks × per-link speed), 0 when unknown.
	LinkGBps float64 `json:"link_gbps,omitempty"`
	// PCIePath is where src's and dst's PCIe paths meet, as nvidia-smi
	// topo -m names it (PIX, PXB, PHB, NODE, SYS, internal), for pairs
	// without NVLinks; empty when unknown.
	PCIePath string `json:"pcie_path,omitempty"`
}

// DeviceLinks is one GPU's NVLinks.
type DeviceLinks struct {
	Device int    `json:"device"`
	Links  []Link `json:"links"`
}

// Link is one NVLink of a GPU.
type Link struct {
	Link      int    `json:"link"`
	Active    bool   `json:"active"`
	RemoteBus string `json:"remote_pci_bus_id,omitempty"`
	RemoteDev int    `json:"remote_device"` // -1 when the far end is no GPU of this run (a switch, a CPU)
	// SpeedGBps is the per-direction speed NVML reports (for NVLink 4, the
	// 26.562 GB/s signalling data rate); SpeedSource says which NVML call gave it.
	SpeedGBps   float64 `json:"speed_gbps,omitempty"`
	SpeedSource string  `json:"speed_source,omitempty"`
	// Version is the NVLink major version; PayloadGBps the payload bandwidth
	// of one link in one direction for that version (25 for NVLink 4), the
	// figure theoretical limits use.
	Version     int     `json:"version,omitempty"`
	PayloadGBps float64 `json:"payload_gbps,omitempty"`
}

// ConformanceCase is one documented driver behaviour checked on real devices.
type ConformanceCase struct {
	Name       string `json:"name"`
	Call       string `json:"call"`
	Src        int    `json:"src"`
	Dst        int    `json:"dst"`
	Documented string `json:"documented"` // CUDA_ERROR_... or CUDA_SUCCESS
	Observed   string `json:"observed"`
	Matches    bool   `json:"matches"`
	Note       string `json:"note,omitempty"`
}

// Figure is one measured quantity: one test, engine, pair and size. How it is
// computed is said once per test, in the run's catalogue (Run.Convention).
type Figure struct {
	// Test names what was measured (see the catalogue).
	Test Test `json:"test"`
	// Engine is what moved the bytes: copy engine, staged, or an SM kernel.
	Engine Engine `json:"engine"`
	// Direction is DirRead (pull, issued in the destination's context),
	// DirWrite (push, issued in the source's context), or "" where it does
	// not apply.
	Direction Direction `json:"direction,omitempty"`
	// Part splits figures of concurrent transfers; "" otherwise.
	Part Part `json:"part,omitempty"`
	// Src and Dst are device indices: data moves src -> dst. HostDevice (-1)
	// is the host, or "all devices" for aggregate totals.
	Src  int    `json:"src"`
	Dst  int    `json:"dst"`
	Size uint64 `json:"size_bytes"` // bytes moved per transfer, one direction
	Unit Unit   `json:"unit"`
	// Params holds test settings: variant, grid, block, working_set, op, contended...
	Params map[string]string `json:"params,omitempty"`
	// Samples are the raw values (in Unit); Stats summarises them.
	Samples []float64 `json:"samples,omitempty"`
	// Rounds counts the samples of each round, in the order the rounds
	// were taken; Samples holds them round after round. Absent: one round.
	Rounds []int           `json:"rounds,omitempty"`
	Stats  *figstats.Stats `json:"stats,omitempty"`
	// Verify is "passed", "failed", "skipped" (--no-verify) or "n/a".
	Verify       string `json:"verify"`
	VerifyDetail string `json:"verify_detail,omitempty"`
	// Error is set when the figure could not be measured; ErrorName is the
	// CUDA error name when a driver call failed.
	Error     string `json:"error,omitempty"`
	ErrorName string `json:"error_name,omitempty"`
	// Traffic is what the NVLink counters of src and dst counted while the
	// figure was measured (bandwidth figures between two devices at the run's
	// transfer size when it is 64 MiB or more,
	// where NVML has the counters).
	Traffic *LinkTraffic `json:"link_traffic,omitempty"`
	// OtherProcesses are the pids of other programs' compute processes
	// (Environment.OtherProcesses) seen on the figure's GPUs just before or
	// just after it was measured: the figure may be lower than the link
	// allows. A field, not a param, so that it stays out of the figure's key.
	OtherProcesses []int `json:"other_processes,omitempty"`
	// Check holds the figure's timing method against a plain long window
	// of the same transfer (see MethodCheck); nil where none was taken.
	Check *MethodCheck `json:"method_check,omitempty"`
}

// MethodCheck is a figure held against a plain long window: the same
// transfers back to back between two events, tens of milliseconds of them
// (at most a few hundred repetitions for small transfers), taken in the
// run's last round right after the figure's own samples. The plain window
// carries no assumption about start and end costs beyond dividing them
// over many repetitions, so where the figure's method disagrees with it
// beyond Tolerance, the plain window stands: the figure's samples become
// the plain window's (Replaced) and the run says so in its notes.
type MethodCheck struct {
	// RepsPerSample is the repetitions of one plain window; Samples its
	// figures, one per window, in the figure's unit.
	RepsPerSample int       `json:"reps_per_sample"`
	Samples       []float64 `json:"samples"`
	// Median is the plain windows' median; MethodMedian the median the
	// figure's own method gave in the round the windows were taken in (the
	// last); Delta = MethodMedian / Median − 1.
	Median       float64 `json:"median"`
	MethodMedian float64 `json:"method_median"`
	Delta        float64 `json:"delta"`
	// Tolerance is the largest |Delta| that agrees: the largest of 0.5%,
	// three times the plain windows' own range (over their median), three
	// times the figure's robust CV (1.4826 × the median absolute deviation
	// of its samples over their median), for a figure of one window a
	// round three times its samples' CV, and what a plain window's start
	// and end cost (10 µs) is of its length.
	Tolerance float64 `json:"tolerance"`
	Agrees    bool    `json:"agrees"`
	// Replaced says the figure's samples and stats are the plain windows'.
	Replaced bool `json:"replaced,omitempty"`
}

// Tuning records a `bw --tune` search for one pair and direction.
type Tuning struct {
	Src       int             `json:"src"`
	Dst       int             `json:"dst"`
	Direction string          `json:"direction"` // read, write, bidir_read or bidir_write: what `bw --tune` searched
	Size      uint64          `json:"size_bytes"`
	Winner    TuneCandidate   `json:"winner"`
	Tried     []TuneCandidate `json:"tried"`
}

// TuneCandidate is one kernel configuration and its median GB/s.
type TuneCandidate struct {
	Variant     string  `json:"variant"`
	BlocksPerSM int     `json:"blocks_per_sm"`
	BlockSize   int     `json:"block_size"`
	MedianGBps  float64 `json:"median_gbps"`
	CV          float64 `json:"cv"`
	Verified    bool    `json:"verified"`
	Error       string  `json:"error,omitempty"`
}

// Verification states.
const (
	VerifyPassed  = "passed"
	VerifyFailed  = "failed"
	VerifySkipped = "skipped"
	VerifyNA      = "n/a"
)

// ReplicatesProcess is Run.Replicates of a run whose rounds each carry what
// differs between processes.
const ReplicatesProcess = "process"

// RunHasProcessReplicates reports whether run's rounds carry what differs
// between processes (Run.Replicates is ReplicatesProcess): the spread of a
// figure's round medians then stands for the spread of separate runs, and a
// reader may take its noise from them alone. Any other value, a nil run,
// and a build whose claim was retracted (retractedReplicates) report false:
// such rounds tell nothing of what a new process changes.
func RunHasProcessReplicates(run *Run) bool {
	return run != nil && run.Replicates == ReplicatesProcess && !slices.Contains(retractedReplicates, buildCommit(run.Tool.Version))
}

// retractedReplicates are the builds that marked their runs
// replicates=process, from the commit that made the claim (e49000c: rounds
// renewing what DefaultRenewal names, each in a green context) to the one
// before f6b005d, which withdrew it: on two 2× H200s the five runs'
// intervals held each other's medians 94.3 and 93.2% of the
// time, small copy-engine copies keeping a time per process (3–27%) that
// nothing a round renews changes. Their runs' rounds were taken within one
// process, as far as a reader can tell.
var retractedReplicates = []string{"e49000c", "f1268dc", "3ba240e", "9db0d83", "a64c6f0", "daa9abd", "6b49a20", "d4a7d15", "e316737"}

// buildCommit is the commit a build names (Tool.Version), short, without
// "-dirty"; "" for a version that names none.
func buildCommit(version string) string {
	v := strings.TrimSuffix(version, "-dirty")
	if len(v) < 7 {
		return ""
	}
	return v[:7]
}
