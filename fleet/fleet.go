// Package fleet analyses the results files of many nodes at once, as an
// operator accepting a delivery of hundreds of servers does: one view of
// all nodes, each figure's distribution across the nodes of the same
// machine type, and the nodes and links that stand out.
//
// Machine types. Nodes are grouped by their GPUs (model and count, as
// results.Run.GPUSummary says) and their link topology (the link class of
// every ordered pair of devices). Figures of different types are never
// compared. Nodes with the same GPUs but another topology than most of
// them (a link down, a different wiring) form a type of their own, and
// their verdict says so.
//
// Classes. Within a type, a class is one kind of figure: what it measured
// (test, engine, direction, part, size and identifying params: a figure's
// results.Figure.Key without its pair) and the link class of its pair —
// NVLink (version and count), PCIe with the driver's performance rank, no
// P2P — or local, host or all devices for figures of no peer pair. The
// figures of a class are the medians of every node's figures of that kind,
// over every pair of that link class.
//
// Outliers. In each class, the median and the MAD (median absolute
// deviation) of its figures; a figure x is an outlier when its robust
// z-score |x − median| / (1.4826 · MAD) is at least Options.Z (default
// 3.5, Iglewicz and Hoaglin's cut-off for the modified z-score) and x lies
// at least Options.Threshold (default 5%) from the median, so
// that a class whose nodes agree to 0.1% does not flag noise. The MAD
// counts as at least 0.1% of the median. Outliers are one-sided: only a
// figure worse than its class is one (check holds figures to what they
// should at least reach, never to a ceiling). A class of fewer than 5
// figures, or of a test nothing judges (verdict.Unjudged: lat_copy_device),
// is described but not judged, and says why.
//
// Nodes and links. A node whose outliers are at least half of the figures
// it has in judged classes is an outlier node: the whole machine is off,
// and its links are not listed one by one. On other nodes, the outlier
// figures of a pair of devices, either way, make the link (node and pair)
// an outlier link; outliers of figures of no pair are listed as figures.
//
// Verdicts. Until p2pbench defines verdicts of its own, a node's verdict
// is FAILED when its run is incomplete or has figures that failed (an
// error, data that did not verify), else OUTLIER when it has outlier
// figures or its topology differs from most nodes with its GPUs, else NOT
// JUDGED when none of its figures was in a judged class, else OK. Runs
// without a topology (imports) form a type of unknown topology, which is
// no outlier for it.
//
// Inputs. Load reads files, directories (every *.json and *.json.gz under
// them) and glob patterns, several files at once, and keeps of each run only its figures'
// medians, so thousands of files fit in memory. A file that cannot be read
// is listed with its error and the rest are analysed; incomplete runs are
// analysed and named.
//
// The package reads results only: it imports results, verdict, report and
// plot, never cuda, gpu, bench or ipc.
package fleet

import "github.com/p2pbench/p2pbench/results"

// Options tune the outlier test.
type Options struct {
	// Z is the robust z-score at or beyond which a figure may be an
	// outlier (default DefaultZ).
	Z float64 `json:"z"`
	// Threshold is the least relative distance from the class median, as
	// a fraction (0.05 for 5%, as compare's threshold), at which a figure
	// may be an outlier (default DefaultThreshold).
	Threshold float64 `json:"threshold"`
}

// The default outlier test, and its fixed parts.
const (
	DefaultZ         = 3.5
	DefaultThreshold = 0.05
	// madScale makes the MAD estimate the standard deviation of normal data.
	madScale = 1.4826
	// madFloor is the least MAD, relative to the median.
	madFloor = 0.001
	// minJudged is the fewest figures a class needs to be judged.
	minJudged = MinJudged
	// nodeShare is the share of a node's judged figures that, as
	// outliers, make the whole node an outlier.
	nodeShare = 0.5
)

// MinJudged is the fewest figures a class needs to be judged.
const MinJudged = 5

// Verdict is a node's verdict.
type Verdict string

const (
	OK      Verdict = "OK"
	Outlier Verdict = "OUTLIER"
	Failed  Verdict = "FAILED"
	// NotJudged is a node none of whose figures could be judged (no class
	// of its type had enough figures, or only figures nothing judges).
	NotJudged Verdict = "NOT JUDGED"
)

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
	// Types are the machine types, most nodes first.
	Types []*Type `json:"machine_types"`
	// Nodes are every node, by name.
	Nodes []*Node `json:"nodes"`
	// OutlierNodes and OutlierLinks are the nodes and links that stand out;
	// Outliers every outlier figure.
	OutlierNodes []NodeOutlier   `json:"outlier_nodes"`
	OutlierLinks []LinkOutlier   `json:"outlier_links"`
	Outliers     []FigureOutlier `json:"outliers"`
}

// FileError is an input that could not be read.
type FileError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Type is a machine type: the nodes with the same GPUs and link topology.
type Type struct {
	// ID names the type in this analysis: T1 has the most nodes.
	ID string `json:"id"`
	// GPUs are the type's GPUs ("8× NVIDIA H100 NVL"); Links its ordered
	// pairs by link class ("8 pairs NVLink ×12, 16 pairs PCIe rank 1").
	GPUs  string `json:"gpus"`
	Links string `json:"links"`
	Nodes int    `json:"nodes"`
	// Note says when the type has the GPUs of another type, with another
	// topology.
	Note    string   `json:"note,omitempty"`
	Classes []*Class `json:"classes"`
	// Simulated is true when any of its nodes' runs is simulated.
	Simulated bool `json:"simulated"`

	topology string // the link class of every pair, the type's identity
	nodes    []*Node
	classOf  map[kind]int32
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
	// Figures counts the figures of the class, Nodes the nodes they come from.
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
	Outliers  int    `json:"outliers"`

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
	// Figures counts the run's figures; Judged those in judged classes;
	// Failed those that failed; Outliers the outliers.
	Figures  int `json:"figures"`
	Judged   int `json:"judged"`
	Failed   int `json:"failed"`
	Outliers int `json:"outliers"`
	// Verdict and the reasons for it (none for OK).
	Verdict  Verdict   `json:"verdict"`
	Reasons  []string  `json:"reasons,omitempty"`
	Failures []Failure `json:"failures,omitempty"`

	points []point
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

// FigureOutlier is one outlier figure.
type FigureOutlier struct {
	Node   string       `json:"node"`
	Type   string       `json:"machine_type"`
	Figure string       `json:"figure"`
	Src    int          `json:"src"`
	Dst    int          `json:"dst"`
	Link   string       `json:"link"`
	Unit   results.Unit `json:"unit"`
	Value  float64      `json:"value"`
	Median float64      `json:"class_median"`
	// DeviationPct is (value − median) / median in percent; Z the robust
	// z-score; Worse is true for a figure worse than the median.
	DeviationPct float64 `json:"deviation_pct"`
	Z            float64 `json:"robust_z"`
	Worse        bool    `json:"worse"`
}

// NodeOutlier is a node that is off as a whole.
type NodeOutlier struct {
	Node string `json:"node"`
	Type string `json:"machine_type"`
	// Outliers of Judged figures are outliers. PerfPct is how the node
	// compares with its type: the median over its judged figures of how
	// much better each is than its class median, in percent (negative =
	// worse: a lower rate or a longer time).
	Outliers int     `json:"outliers"`
	Judged   int     `json:"judged"`
	PerfPct  float64 `json:"perf_pct"`
}

// LinkOutlier is a pair of devices of one node whose figures are off.
type LinkOutlier struct {
	Node string `json:"node"`
	Type string `json:"machine_type"`
	// A < B are the devices; Link their link class.
	A    int    `json:"a"`
	B    int    `json:"b"`
	Link string `json:"link"`
	// Figures counts its outlier figures (both directions); PerfPct is
	// the furthest from its class median of them, as NodeOutlier.PerfPct
	// measures it (negative = worse).
	Figures int     `json:"figures"`
	PerfPct float64 `json:"perf_pct"`
}
