package results

// The defaults of a run's plan: what p2pbench measures unless told
// otherwise, and what results/resultstest's synthetic runs follow.
const (
	// DefaultSize is the transfer size of the pairwise matrices and of the
	// bandwidth tests across processes (--size).
	DefaultSize = 512 << 20
	// DefaultSweep is the size sweep of p2pbench all (its --sizes): every
	// fourth power of two, the curve's shape at half the time of every
	// power (the sweep is a quarter of a run of all on two GPUs), up to
	// 256 MiB: the matrices measure DefaultSize, and 1 GiB would take 40%
	// of the sweep's time for a point on the same plateau.
	DefaultSweep = "4B:256MiB:4"
	// DefaultSamples is each bandwidth figure's samples (--samples): three
	// in each of the DefaultRounds rounds, whose median still stands when
	// one sample strays. A round's first samples tell its median within a
	// fraction of what the rounds' medians spread by, so the rounds, not
	// more samples, carry what varies, and fewer samples shorten a run
	// (docs/findings.md, "Behind the code").
	DefaultSamples = 15
	// DefaultRounds is how many rounds a run takes each figure's samples in
	// (--rounds). Five rounds give the U test of compare on round medians
	// a p-value down to 0.008 (four against four cannot go below 0.029,
	// three against three not below 0.1), and an interval over rounds from
	// four degrees of freedom (figstats.RoundIntervalWithin); more rounds of fewer
	// samples each would make the round medians noisier and every round's
	// fixed costs (warm-ups, renewals) more.
	DefaultRounds = 5
	// A domain of more than SampleAbove devices is sampled by default,
	// each device measuring DefaultPeers peers, so the detail costs grow
	// with the devices, not with their pairs.
	SampleAbove  = 16
	DefaultPeers = 1
)

// CopyLatencySizes are the sizes of the small-copy latency tests
// (lat_copy_host, lat_copy_b2b, lat_copy_device): 4 B to 64 KiB, every
// fourth power of two.
func CopyLatencySizes() []uint64 {
	var out []uint64
	for n := uint64(4); n <= 64<<10; n *= 4 {
		out = append(out, n)
	}
	return out
}

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

// SplitSamples spreads n samples over rounds as a run takes them: as
// evenly as they go, the first rounds taking one more where they do not
// divide. A round may get none when n < rounds.
func SplitSamples(n, rounds int) []int {
	rounds = max(1, rounds)
	out := make([]int, rounds)
	for r := range out {
		out[r] = n / rounds
		if r < n%rounds {
			out[r]++
		}
	}
	return out
}
