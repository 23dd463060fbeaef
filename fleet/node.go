package fleet

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// kind is what a class's figures share, the link class included.
type kind struct {
	test      results.Test
	engine    results.Engine
	direction results.Direction
	part      results.Part
	size      uint64
	params    string
	link      string
	unit      results.Unit
	// method names how the figure was measured (results.MethodLabel),
	// "" where its file does not say: nodes of builds that measure a test
	// otherwise are not held to each other on it.
	method string
}

// point is one figure of a node, reduced to its class, median and
// relative standard error.
type point struct {
	class    int32
	src, dst int16
	se       float32
	below    bool // below its peers
	value    float64
}

// reading is what the fleet keeps of one run, before it joins its type.
type reading struct {
	node     *Node
	gpus     string
	topology string // every pair's link class
	links    string // the pairs counted by link class
	figures  []figure
}

// figure is one figure of a reading.
type figure struct {
	kind     kind
	src, dst int
	se       float64
	value    float64
}

// read reduces a run to what the fleet needs: its machine type, its own
// verdict (was: the file's, where this build judged the run again), and
// the median and relative error of every figure with its kind, or its
// failure.
func read(source string, run *results.Run, was *results.Verdict) reading {
	n := &Node{Path: source, Host: run.Host, Simulated: run.Simulated, Complete: run.Complete, Stopped: run.Stopped,
		Figures: len(run.Figures)}
	if v := run.Verdict; v != nil {
		n.Own = &Own{Status: v.Status}
		if was != nil {
			n.Own.Was = &OwnWas{Status: was.Status, Build: was.Build}
		}
		for _, c := range v.Checks {
			if c.Status == results.StatusFail || c.Status == results.StatusWarn {
				n.Own.Checks = append(n.Own.Checks, OwnCheck{Name: c.Name, Title: c.Title, Status: c.Status, Summary: c.Summary})
				n.healthFailed = n.healthFailed || c.Status == results.StatusFail && verdict.HealthCheck(c.Name)
			}
		}
	}
	pairs := pairClasses(run)
	r := reading{node: n, gpus: run.GPUSummary(), figures: make([]figure, 0, len(run.Figures))}
	r.topology, r.links = topology(pairs)
	// A summary's figures whose params are alike share one map: its
	// identifying params are written once.
	identity := map[uintptr]string{}
	for i := range run.Figures {
		f := &run.Figures[i]
		ps, ok := identity[reflect.ValueOf(f.Params).Pointer()]
		if !ok {
			ps = f.IdentityParams()
			identity[reflect.ValueOf(f.Params).Pointer()] = ps
		}
		k := kind{test: f.Test, engine: f.Engine, direction: f.Direction, part: f.Part, size: f.Size,
			params: ps, link: linkOf(f, pairs), unit: f.Unit}
		if changes, ok := run.MethodOf(f); ok {
			k.method = results.MethodLabel(changes)
		}
		if f.Failed() {
			if run.ExplainedFailure(f) != "" {
				continue // a note of the machine, which its own verdict keeps
			}
			n.Failed++
			detail := f.Error
			if detail == "" {
				detail = f.VerifyDetail
			}
			n.Failures = append(n.Failures, Failure{Figure: k.label(allParams), Src: f.Src, Dst: f.Dst, Link: k.link, Label: f.FailureLabel(), Error: detail})
			continue
		}
		if v, ok := f.Value(); ok {
			r.figures = append(r.figures, figure{kind: k, src: f.Src, dst: f.Dst, se: verdict.RelativeError(f), value: v})
		}
	}
	return r
}

// pairClasses gives every ordered pair of the run's topology its link
// class; nil without a topology.
func pairClasses(run *results.Run) map[[2]int]string {
	t := run.Topology
	if t == nil {
		return nil
	}
	// NVLink versions: of the links to the peer, else of any link of the
	// device (links to NVSwitches name no peer).
	version := map[[2]int]int{}
	for _, dl := range t.Links {
		for _, l := range dl.Links {
			if l.Version > 0 {
				version[[2]int{dl.Device, l.RemoteDev}] = l.Version
				version[[2]int{dl.Device, -1}] = l.Version
			}
		}
	}
	out := make(map[[2]int]string, len(t.Pairs))
	for _, p := range t.Pairs {
		v := version[[2]int{p.Src, p.Dst}]
		if v == 0 {
			v = version[[2]int{p.Src, -1}]
		}
		out[[2]int{p.Src, p.Dst}] = pairClass(p, v, run.Environment.NVML)
	}
	return out
}

// pairClass names what links a pair: its NVLinks (version and count), or
// PCIe with the driver's performance rank (a mere "peer" when NVML was not
// there to count NVLinks), or no P2P.
func pairClass(p results.Pair, version int, nvml bool) string {
	switch {
	case p.NVLinks > 0 && version > 0:
		return fmt.Sprintf("NVLink%d ×%d", version, p.NVLinks)
	case p.NVLinks > 0:
		return fmt.Sprintf("NVLink ×%d", p.NVLinks)
	case !p.CanAccessPeer:
		return "no P2P"
	}
	path := "PCIe"
	if !nvml {
		path = "peer"
	}
	if rank, ok := p.PerformanceRank(); ok {
		return fmt.Sprintf("%s rank %d", path, rank)
	}
	return path
}

// topology is the identity of a run's link topology (every pair's class)
// and its summary for people (the pairs counted by class).
func topology(pairs map[[2]int]string) (identity, summary string) {
	if pairs == nil {
		return "", "topology unknown"
	}
	keys := make([][2]int, 0, len(pairs))
	counts := map[string]int{}
	for k, c := range pairs {
		keys = append(keys, k)
		counts[c]++
	}
	slices.SortFunc(keys, func(a, b [2]int) int { return cmpPair(a[0], a[1], b[0], b[1]) })
	var id strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&id, "%d>%d=%s;", k[0], k[1], pairs[k])
	}
	classes := make([]string, 0, len(counts))
	for c := range counts {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = fmt.Sprintf("%d pairs %s", counts[c], c)
	}
	return id.String(), strings.Join(parts, ", ")
}

// cmpPair orders pairs by source, then destination.
func cmpPair(s1, d1, s2, d2 int) int {
	if s1 != s2 {
		return s1 - s2
	}
	return d1 - d2
}

// linkOf is the link class of a figure's pair: the topology's class of a
// peer pair, or local, host, all devices.
func linkOf(f *results.Figure, pairs map[[2]int]string) string {
	switch {
	case f.Src < 0 && f.Dst < 0:
		return "all devices"
	case f.Src < 0 || f.Dst < 0:
		if f.Test.Info().NeedsPair {
			return "all devices"
		}
		return "host"
	case f.Src == f.Dst:
		return "local"
	}
	if c, ok := pairs[[2]int{f.Src, f.Dst}]; ok {
		return c
	}
	return "unknown link"
}

// label names a kind for people: "CE read · 512 MiB · NVLink4 ×18", with
// the identifying params that keep says to show (of its items, which add
// the engine and the direction the test's name does not say).
func (k kind) label(keep func(param string) bool) string {
	l := results.KindLabel(k.test, k.direction, k.part, "")
	if k.part != results.PartNone && !k.test.Info().BothWays {
		l += " (" + string(k.part) + ")"
	}
	var shown []string
	for _, kv := range k.items() {
		if keep(kv) {
			shown = append(shown, kv)
		}
	}
	if len(shown) > 0 {
		l += " [" + strings.Join(shown, ",") + "]"
	}
	return l + " · " + results.FormatBytes(k.size) + " · " + k.link
}

// items are what tells kinds of one test apart beyond size and link:
// engine, direction (of a test that does not go both ways), the
// identifying params and the method, as k=v.
func (k kind) items() []string {
	out := []string{"engine=" + string(k.engine)}
	if k.direction != "" && !k.test.Info().BothWays {
		out = append(out, "direction="+string(k.direction))
	}
	out = append(out, params(k.params)...)
	if k.method != "" {
		out = append(out, "method="+k.method)
	}
	return out
}

// params splits identifying params ("k=v,k=v") into their k=v items.
func params(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// allParams keeps every param, but the engine and direction, which a
// failure's devices and test name say well enough, and the method.
func allParams(kv string) bool {
	return !strings.HasPrefix(kv, "engine=") && !strings.HasPrefix(kv, "direction=") && !strings.HasPrefix(kv, "method=")
}
