package results

// Plan records how a run chose the pairs it measured: the link classes it
// found, the pairs it measured in detail (beyond the matrices at the
// transfer size, which cover every pair), how it sampled them, which
// classes it measured several pairs at a time, and, on a simulated
// machine, the duration the simulator modelled. A run without a Plan
// measured every test on every pair.
type Plan struct {
	// Mode is PlanAllPairs, PlanRepresentatives or PlanSampled.
	Mode PlanMode `json:"mode"`
	// PeersPerDevice and Seed are those of a sampled plan: each device
	// measured PeersPerDevice peers drawn with Seed.
	PeersPerDevice int         `json:"peers_per_device,omitempty"`
	Seed           uint64      `json:"seed,omitempty"`
	Classes        []LinkClass `json:"classes"`
	// EveryPair are the matrix tests measured on every pair; the other
	// matrix tests are measured on the detail pairs (empty: every matrix
	// test on every pair).
	EveryPair []Test `json:"every_pair,omitempty"`
	// GroupTotalsOnly is true where the tests of many pairs at once (all to
	// one, one to all, all pairs) recorded their totals, not each pair's
	// part (a sampled plan).
	GroupTotalsOnly bool `json:"group_totals_only,omitempty"`
	// Detail are the ordered pairs measured in detail: size sweeps,
	// latency, atomics, copies without peer access, across processes (on
	// a sampled plan, the sweeps and the tests across processes take the
	// representatives only).
	Detail []PairID `json:"detail"`
	// ModelledSeconds is, on a simulated machine, the device and host time
	// the simulator modelled for the run (0: not simulated).
	ModelledSeconds float64 `json:"modelled_seconds,omitempty"`
}

// PlanMode is how a plan chose its detail pairs.
type PlanMode string

const (
	// PlanAllPairs: every pair in detail (--all-pairs).
	PlanAllPairs PlanMode = "all-pairs"
	// PlanRepresentatives: the representatives of each link class.
	PlanRepresentatives PlanMode = "representatives"
	// PlanSampled: the representatives and, from each device, a few peers
	// drawn at random (large domains); no host copies of every device at
	// once (such a domain spans several hosts).
	PlanSampled PlanMode = "sampled"
)

// PairID is an ordered pair of devices, [src, dst].
type PairID [2]int

// LinkClass is a set of ordered pairs that look alike to the driver and
// NVML: the same NVLink count and version, through a switch or direct, or
// the same PCIe performance rank and atomics; or no peer access.
type LinkClass struct {
	Name  string   `json:"name"`
	Pairs []PairID `json:"pairs"`
	// Representatives are the class's pairs measured in detail by default.
	Representatives []PairID `json:"representatives"`
	// Concurrent is true where pairs that share no GPU were measured at
	// the same time; Interference says, when not empty, why a class whose
	// fabric should allow that was measured one pair at a time.
	Concurrent   bool   `json:"concurrent"`
	Interference string `json:"interference,omitempty"`
}
