// Package fleet analyses the results files of many nodes at once, as an
// operator accepting a delivery of hundreds of servers does: one view of
// all nodes, each node's verdict, each figure's distribution across the
// nodes of the same machine type, and the nodes and links below their
// peers.
//
// Verdicts. A node's verdict is in the vocabulary of its own (package
// verdict): PASS, WARN, FAIL or NOT JUDGED, the worst of
//   - its own verdict, the one its run records (FAIL and WARN count
//     whatever its figures say; a run that records none, an import or an
//     older file, has none to count), or, where another build wrote it by
//     its expectation table, the verdict this build gives the run
//     (Options.Build), as check and report give it;
//   - the fleet's own reading of the run: an incomplete run, or figures
//     that failed in a way the machine does not explain
//     (results.Run.ExplainedFailure), FAIL;
//   - its peers: its figures held to the same figures of the other nodes
//     of its machine type, and its topology to theirs. A figure below its
//     peers beyond their spread and its own noise WARNs, 10% or more below
//     (verdict.SlowPairFraction) FAILs; a topology other than that of most
//     nodes with the same GPUs WARNs.
//
// A node none of whose own checks and figures could be judged is NOT
// JUDGED. The peers are judged only among nodes whose health did not fail:
// a node whose own verdict failed on its links or memory
// (verdict.HealthCheck) is failed already, and neither held to the others
// nor a reference for them.
//
// Machine types. Nodes are grouped by their GPUs (model and count, as
// results.Run.GPUSummary says), their link topology (the link class of
// every ordered pair of devices) and whether they are simulated: figures
// of different types are never compared, nor simulated runs with measured
// ones. Nodes with the same GPUs but another topology than most of them (a
// link down, a different wiring) form a type of their own, and their
// verdict says so; runs without a topology (imports) form a type of
// unknown topology, which is no finding.
//
// Classes. Within a type, a class is one kind of figure: what it measured
// (test, engine, direction, part, size and identifying params: a figure's
// results.Figure.Key without its pair) and the link class of its pair —
// NVLink (version and count), PCIe with the driver's performance rank, no
// P2P — or local, host or all devices for figures of no peer pair. The
// figures of a class are the medians of every node's figures of that kind,
// over every pair of that link class. A class of fewer than 5 figures, or
// of a test nothing judges (verdict.Unjudged: lat_copy_device), is
// described but not judged, and says why.
//
// Below its peers. The rule is the verdict's for pairs alike within their
// link class (verdict/pairs.go), with nodes for pairs: a figure's deficit
// d against its class's median (the median of the others in a class of
// fewer than verdict.PairLeaveOneOut figures), worse one way or the other
// as its unit says; its spread σ = √(se² + s² + floor²), se the figure's
// own relative standard error (verdict.RelativeError: its rounds'), s the
// class's robust spread (1.4826 × MAD over the median), floor
// verdict.PairFloor; its one-sided p-value beyond d / σ; Holm's step-down
// over every comparison of the fleet at family-wise rate Options.Alpha.
// A figure at least Options.Threshold worse than its class and significant
// is below its peers. So healthy nodes whose small transfers differ by the
// few percent their own rounds differ by are not named, and the chance
// that any healthy figure of the fleet is named is at most Options.Alpha.
//
// Nodes and links. A node at least half of whose judged figures are below
// their peers is below its peers as a whole, and its links are not listed
// one by one. On other nodes, the figures below their peers of a pair of
// devices, either way, name the link (node and pair); those of no pair
// are listed as figures.
//
// Inputs. Load reads files, directories (every *.json and *.json.gz under
// them) and glob patterns, several files at once, each as a summary
// (results.SummaryReader: no samples), and keeps of each run only its
// figures' medians and spreads, so that a thousand nodes' files fit in
// memory. A file that cannot be read is listed with its error and the rest
// are analysed; incomplete runs are analysed and named.
//
// The package reads results only: it imports results, verdict, report and
// plot, never cuda, gpu, bench or ipc.
package fleet

import (
	"strings"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// Options tune the test of figures against their peers, and what Load reads.
type Options struct {
	// Threshold is the least deficit, as a fraction (0.03 for 3%), at
	// which a figure may be below its peers (default DefaultThreshold).
	Threshold float64 `json:"threshold"`
	// Alpha is the family-wise false-alarm rate over every comparison of
	// the fleet (default DefaultAlpha).
	Alpha float64 `json:"alpha"`
	// Exclude are paths Load never reads, though a directory it reads
	// holds them: the command's own outputs.
	Exclude []string `json:"-"`
	// Progress, when set, is called as Load reads: done of total files.
	Progress func(done, total int) `json:"-"`
	// Build is the build analysing the fleet (p2pbench's version). Where
	// set, Load judges again by this build's expectation table a node
	// whose run records a verdict another build gave by its table, as
	// check and report judge such a file: the rules change from build to
	// build (a rate of NVLink CRC errors over the run's own seconds
	// failed healthy machines until the rate over DCGM's minute replaced
	// it). A verdict by a spec or baseline is kept as the run records it.
	Build string `json:"-"`
}

// The defaults of Options, the verdict's for pairs alike.
const (
	DefaultThreshold = verdict.PairMinEffect
	DefaultAlpha     = verdict.PairAlpha
	// MinJudged is the fewest figures a class needs to be judged.
	MinJudged = 5
	// nodeShare is the share of a node's judged figures that, below their
	// peers, put the whole node below its peers.
	nodeShare = 0.5
)

// Label is a status as the fleet's tables show it: PASS, WARN, FAIL, NOT
// JUDGED ("" for none).
func Label(s results.Status) string { return strings.ToUpper(s.Label()) }

// Fleet is the analysis of many nodes' results.
type Fleet struct {
	Options Options `json:"options"`
	// Files counts the inputs: the results files read or tried, and the
	// paths and patterns that named none.
	Files int `json:"files"`
	// Unreadable are the inputs that could not be read, with why.
	Unreadable []FileError `json:"unreadable"`
	// Simulated counts the nodes whose runs are simulated.
	Simulated int `json:"simulated_nodes"`
	// Comparisons counts the figures held to their peers.
	Comparisons int `json:"comparisons"`
	// Types are the machine types, most nodes first.
	Types []*Type `json:"machine_types"`
	// Nodes are every node, by name.
	Nodes []*Node `json:"nodes"`
	// BelowNodes and BelowLinks are the nodes and links below their peers;
	// Below every figure below its peers.
	BelowNodes []NodeBelow   `json:"nodes_below_peers"`
	BelowLinks []LinkBelow   `json:"links_below_peers"`
	Below      []FigureBelow `json:"figures_below_peers"`
}

// FileError is an input that could not be read.
type FileError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Type is a machine type: the nodes with the same GPUs and link topology,
// simulated or not.
type Type struct {
	// ID names the type in this analysis: T1 has the most nodes.
	ID string `json:"id"`
	// GPUs are the type's GPUs ("8× NVIDIA H100 NVL"); Links its ordered
	// pairs by link class ("8 pairs NVLink ×12, 16 pairs PCIe rank 1").
	GPUs  string `json:"gpus"`
	Links string `json:"links"`
	Nodes int    `json:"nodes"`
	// Simulated is true for a type of simulated runs.
	Simulated bool `json:"simulated"`
	// Note says when the type has the GPUs of another type, with another
	// topology, or an unknown topology.
	Note    string   `json:"note,omitempty"`
	Classes []*Class `json:"classes"`

	topology string // the link class of every pair, the type's identity
	nodes    []*Node
	classOf  map[kind]int32
	values   [][]float64 // each class's figures, while the fleet is judged
}

// Class is one kind of figure on one link class, across the nodes of a
// machine type.
type Class struct {
	// Label names the class for people: its test, the params that set it
	// apart from the type's other classes of the test, size and link class.
	Label     string            `json:"label"`
	Test      results.Test      `json:"test"`
	Engine    results.Engine    `json:"engine"`
	Direction results.Direction `json:"direction,omitempty"`
	Part      results.Part      `json:"part,omitempty"`
	Size      uint64            `json:"size_bytes"`
	Params    string            `json:"params,omitempty"`
	Link      string            `json:"link"`
	Unit      results.Unit      `json:"unit"`
	// Figures counts the figures of the class, Nodes the nodes they come
	// from: those held to their peers (the nodes whose health failed are
	// not).
	Figures int `json:"figures"`
	Nodes   int `json:"nodes"`
	// Median, MAD (unscaled), Min and Max of the figures, in Unit.
	Median float64 `json:"median"`
	MAD    float64 `json:"mad"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// Judged is false for a class too small (or of a zero median) to
	// judge, or of a test nothing judges; NotJudged then says why.
	Judged    bool   `json:"judged"`
	NotJudged string `json:"not_judged,omitempty"`
	// Below counts its figures below their peers.
	Below int `json:"below_peers"`

	kind kind
}

// Node is one results file's machine.
type Node struct {
	// Name is the host, or the host and the file where hosts repeat (or
	// the file where the run names no host).
	Name string `json:"name"`
	Path string `json:"path"`
	Host string `json:"host"`
	Type string `json:"machine_type"`
	// Simulated: the run is simulated. Complete false: it was cut short,
	// Stopped says why.
	Simulated bool   `json:"simulated"`
	Complete  bool   `json:"complete"`
	Stopped   string `json:"stopped,omitempty"`
	// Figures counts the run's figures; Judged those held to their peers;
	// Failed those that failed in a way the machine does not explain;
	// Below those below their peers.
	Figures int `json:"figures"`
	Judged  int `json:"judged"`
	Failed  int `json:"failed"`
	Below   int `json:"below_peers"`
	// Own is the verdict the node's run records, nil when it records none.
	Own *Own `json:"own_verdict,omitempty"`
	// Peers is the outcome of holding the node to its peers: pass, warn
	// (figures below their peers, or another topology), fail (figures
	// 10% or more below), or not_judged (no figure in a judged class, or
	// its health failed).
	Peers results.Status `json:"peers"`
	// Verdict is the node's verdict, Reasons why (none for PASS).
	Verdict  results.Status `json:"verdict"`
	Reasons  []string       `json:"reasons,omitempty"`
	Failures []Failure      `json:"failures,omitempty"`

	healthFailed bool // its own verdict failed on its health
	otherLinks   bool // its topology differs from most nodes with its GPUs
	points       []point
}

// Own is a node's own verdict, as its run records it or as this build
// judged the run again (Options.Build).
type Own struct {
	Status results.Status `json:"status"`
	// Checks are the checks that failed or warned.
	Checks []OwnCheck `json:"checks,omitempty"`
	// Was is the verdict the run's file records where this build judged
	// the run again, nil where Status is the file's own.
	Was *OwnWas `json:"judged_again_from,omitempty"`
}

// OwnWas is the verdict a node's file records, which this build judged
// again: its status and the build that wrote it ("" for a build before
// verdicts named theirs).
type OwnWas struct {
	Status results.Status `json:"status"`
	Build  string         `json:"build,omitempty"`
}

// OwnCheck is one check of a node's own verdict that failed or warned,
// in the verdict's words: its name, its title ("NVLink and PCIe links";
// empty where an older file records none), status and summary.
type OwnCheck struct {
	Name    string         `json:"name"`
	Title   string         `json:"title,omitempty"`
	Status  results.Status `json:"status"`
	Summary string         `json:"summary"`
}

// Label names the check as the verdict does: its title, else its name.
func (c OwnCheck) Label() string {
	if c.Title != "" {
		return c.Title
	}
	return c.Name
}

// Failure is a figure that failed.
type Failure struct {
	Figure string `json:"figure"`
	Src    int    `json:"src"`
	Dst    int    `json:"dst"`
	Link   string `json:"link"`
	// Label is results.Figure.FailureLabel; Error the error or the
	// verification's detail.
	Label string `json:"label"`
	Error string `json:"error"`
}

// FigureBelow is one figure below its peers.
type FigureBelow struct {
	Node   string       `json:"node"`
	Type   string       `json:"machine_type"`
	Figure string       `json:"figure"`
	Src    int          `json:"src"`
	Dst    int          `json:"dst"`
	Link   string       `json:"link"`
	Unit   results.Unit `json:"unit"`
	Value  float64      `json:"value"`
	// Median is what it was held to: its class's median (of the others,
	// in a small class).
	Median float64 `json:"class_median"`
	// DeficitPct is how much worse than Median it is, in percent; Sigma
	// how many of its σ that is; Status warn, or fail from
	// verdict.SlowPairFraction.
	DeficitPct float64        `json:"deficit_pct"`
	Sigma      float64        `json:"sigma"`
	Status     results.Status `json:"status"`
}

// NodeBelow is a node below its peers as a whole.
type NodeBelow struct {
	Node string `json:"node"`
	Type string `json:"machine_type"`
	// Below of Judged figures are below their peers. PerfPct is how the
	// node compares with its type: the median over its judged figures of
	// how much better each is than its class median, in percent
	// (negative = worse: a lower rate or a longer time).
	Below   int     `json:"below_peers"`
	Judged  int     `json:"judged"`
	PerfPct float64 `json:"perf_pct"`
}

// LinkBelow is a pair of devices of one node whose figures are below
// their peers.
type LinkBelow struct {
	Node string `json:"node"`
	Type string `json:"machine_type"`
	// A < B are the devices; Link their link class.
	A    int    `json:"a"`
	B    int    `json:"b"`
	Link string `json:"link"`
	// Figures counts its figures below their peers (both directions);
	// DeficitPct is the largest of their deficits, in percent.
	Figures    int     `json:"figures"`
	DeficitPct float64 `json:"deficit_pct"`
}

// Attention reports whether the node needs attention: it failed, or the
// fleet finds it below its peers or of another topology. A node that only
// warned on its own does not.
func (n *Node) Attention() bool {
	return n.Verdict == results.StatusFail || n.Peers == results.StatusWarn || n.Peers == results.StatusFail
}
