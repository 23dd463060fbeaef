package fleet

import (
	"cmp"
	"fmt"
	"github.com/p2pbench/p2pbench/internal/units"
	"math"
	"slices"
	"strings"

	"github.com/montanaflynn/stats"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// Fleet analyses the nodes added so far.
func (b *Builder) Fleet() *Fleet {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := &Fleet{Options: b.opt, Files: b.files, Unreadable: slices.Clone(b.unreadable)}
	slices.SortFunc(f.Unreadable, func(x, y FileError) int { return strings.Compare(x.Path, y.Path) })
	for _, t := range b.types {
		f.Types = append(f.Types, t)
		f.Nodes = append(f.Nodes, t.nodes...)
	}
	slices.SortFunc(f.Types, func(x, y *Type) int {
		return cmp.Or(len(y.nodes)-len(x.nodes), strings.Compare(x.GPUs, y.GPUs), strings.Compare(x.topology, y.topology))
	})
	nameNodes(f.Nodes)
	slices.SortFunc(f.Nodes, func(x, y *Node) int { return strings.Compare(x.Name, y.Name) })
	for i, t := range f.Types {
		t.ID = fmt.Sprintf("T%d", i+1)
		t.Nodes = len(t.nodes)
		slices.SortFunc(t.nodes, func(x, y *Node) int { return strings.Compare(x.Name, y.Name) })
		for _, n := range t.nodes {
			n.Type = t.ID
		}
		t.describe()
		for _, n := range t.nodes {
			f.judgeNode(t, n)
		}
	}
	topologyNotes(f.Types)
	for _, n := range f.Nodes {
		n.decide()
		if n.Simulated {
			f.Simulated++
		}
	}
	slices.SortStableFunc(f.Outliers, func(x, y FigureOutlier) int { return strings.Compare(x.Node, y.Node) })
	slices.SortStableFunc(f.OutlierNodes, func(x, y NodeOutlier) int { return strings.Compare(x.Node, y.Node) })
	slices.SortStableFunc(f.OutlierLinks, func(x, y LinkOutlier) int {
		return cmp.Or(strings.Compare(x.Node, y.Node), x.A-y.A, x.B-y.B)
	})
	return f
}

// nameNodes names each node by its host, adding the file where hosts
// repeat, or the file alone where the run names no host.
func nameNodes(nodes []*Node) {
	hosts := map[string]int{}
	for _, n := range nodes {
		hosts[n.Host]++
	}
	for _, n := range nodes {
		switch {
		case n.Host == "":
			n.Name = n.Path
		case hosts[n.Host] > 1:
			n.Name = n.Host + " (" + n.Path + ")"
		default:
			n.Name = n.Host
		}
	}
}

// describe orders and labels the type's classes and computes each one's
// distribution across the type's nodes.
func (t *Type) describe() {
	t.order()
	t.label()
	values := make([][]float64, len(t.Classes))
	lastNode := make([]int, len(t.Classes))
	for _, c := range t.Classes {
		c.Nodes = 0
	}
	for i, n := range t.nodes {
		for _, p := range n.points {
			values[p.class] = append(values[p.class], p.value)
			if lastNode[p.class] != i+1 {
				lastNode[p.class] = i + 1
				t.Classes[p.class].Nodes++
			}
		}
	}
	for i, c := range t.Classes {
		v := values[i]
		c.Figures, c.Outliers = len(v), 0
		// The statistics fail only on empty input, which a class never is.
		c.Median, _ = stats.Median(v)
		c.MAD, _ = stats.MedianAbsoluteDeviation(v)
		c.Min, _ = stats.Min(v)
		c.Max, _ = stats.Max(v)
		switch {
		case verdict.Unjudged(c.Test) != "":
			c.NotJudged = "nothing judges " + string(c.Test) + ": " + verdict.Unjudged(c.Test)
		case len(v) < minJudged:
			c.NotJudged = fmt.Sprintf("%d figure%s, fewer than the %d a class needs", len(v), units.Plural(len(v), "", "s"), minJudged)
		case !(c.Median > 0):
			c.NotJudged = "its median is not above 0"
		}
		c.Judged = c.NotJudged == ""
	}
}

// order sorts the classes — tests in catalogue order (unknown ones after,
// by name), then link class, size, direction, part, engine and params — so
// that the analysis does not depend on which file was read first, and
// renumbers the nodes' points to match.
func (t *Type) order() {
	rank := map[results.Test]int{}
	for i, info := range results.Catalogue() {
		rank[info.Name] = i + 1
	}
	testRank := func(c *Class) int { return cmp.Or(rank[c.Test], len(rank)+1) }
	perm := make([]int32, len(t.Classes)) // new position → old
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int {
		x, y := t.Classes[a], t.Classes[b]
		return cmp.Or(cmp.Compare(testRank(x), testRank(y)), strings.Compare(string(x.Test), string(y.Test)),
			strings.Compare(x.Link, y.Link), cmp.Compare(x.Size, y.Size), strings.Compare(string(x.Direction), string(y.Direction)),
			strings.Compare(string(x.Part), string(y.Part)), strings.Compare(string(x.Engine), string(y.Engine)),
			strings.Compare(x.Params, y.Params))
	})
	renumber := make([]int32, len(perm)) // old → new
	classes := make([]*Class, len(perm))
	for now, old := range perm {
		renumber[old] = int32(now)
		classes[now] = t.Classes[old]
		t.classOf[classes[now].kind] = int32(now)
	}
	t.Classes = classes
	for _, n := range t.nodes {
		for i := range n.points {
			n.points[i].class = renumber[n.points[i].class]
		}
	}
}

// label names each class, leaving out the params that have one value in
// every class of the test (an SM copy's kernel settings, say).
func (t *Type) label() {
	values := map[results.Test]map[string]map[string]bool{} // test → param → values
	for _, c := range t.Classes {
		if values[c.Test] == nil {
			values[c.Test] = map[string]map[string]bool{}
		}
		for _, kv := range params(c.Params) {
			k, v, _ := strings.Cut(kv, "=")
			if values[c.Test][k] == nil {
				values[c.Test][k] = map[string]bool{}
			}
			values[c.Test][k][v] = true
		}
	}
	for _, c := range t.Classes {
		c.Label = c.kind.label(func(kv string) bool {
			k, _, _ := strings.Cut(kv, "=")
			return len(values[c.Test][k]) > 1
		})
	}
}

// judgement is where a figure lies in its class.
type judgement struct {
	dev     float64 // (x − median) / median
	z       float64 // the robust z-score
	perf    float64 // percent better than the median; negative = worse
	outlier bool
}

// scale is the robust z-score's unit: the MAD scaled to a standard
// deviation, at least madFloor of the median.
func (c *Class) scale() float64 { return math.Max(madScale*c.MAD, madFloor*c.Median) }

// judge places x in the class: the one rule of what an outlier is.
func (c *Class) judge(x float64, o Options) judgement {
	j := judgement{dev: (x - c.Median) / c.Median, z: (x - c.Median) / c.scale()}
	j.perf = 100 * j.dev
	if c.Unit.LowerIsBetter() {
		j.perf = -j.perf
	}
	// One-sided: only a figure worse than its class is an outlier, as
	// check holds a figure only to what it should at least reach.
	j.outlier = j.perf < 0 && math.Abs(j.z) >= o.Z && math.Abs(j.dev) >= o.Threshold
	return j
}

// bandPct is how far from the median, in percent, a figure may lie and not
// be an outlier.
func (c *Class) bandPct(o Options) float64 {
	return 100 * math.Max(o.Threshold, o.Z*c.scale()/c.Median)
}

// judgeNode finds the outliers among n's figures and says whether the
// whole node, some of its links, or some figures of no pair are off.
func (f *Fleet) judgeNode(t *Type, n *Node) {
	n.Judged, n.Reasons = 0, nil
	var perf []float64
	var out []FigureOutlier
	var outPerf []float64
	for _, p := range n.points {
		c := t.Classes[p.class]
		if !c.Judged {
			continue
		}
		n.Judged++
		j := c.judge(p.value, f.Options)
		perf = append(perf, j.perf)
		if !j.outlier {
			continue
		}
		c.Outliers++
		out = append(out, FigureOutlier{Node: n.Name, Type: t.ID, Figure: c.Label, Src: int(p.src), Dst: int(p.dst),
			Link: c.Link, Unit: c.Unit, Value: p.value, Median: c.Median, DeviationPct: 100 * j.dev, Z: j.z, Worse: j.perf < 0})
		outPerf = append(outPerf, j.perf)
	}
	n.Outliers = len(out)
	f.Outliers = append(f.Outliers, out...)
	if n.Outliers == 0 {
		return
	}
	if float64(n.Outliers) >= nodeShare*float64(n.Judged) {
		median, _ := stats.Median(perf)
		f.OutlierNodes = append(f.OutlierNodes, NodeOutlier{Node: n.Name, Type: t.ID, Outliers: n.Outliers, Judged: n.Judged, PerfPct: median})
		n.Reasons = append(n.Reasons, fmt.Sprintf("the whole node is off: %d of its %d figures are outliers, its median figure %s",
			n.Outliers, n.Judged, perfText(median)))
		return
	}
	links := map[[2]int]*LinkOutlier{}
	var order [][2]int
	var others []string
	for i, o := range out {
		if o.Src < 0 || o.Dst < 0 || o.Src == o.Dst {
			others = append(others, fmt.Sprintf("%s %s %s", o.Figure, devices(o.Src, o.Dst, o.Link), perfText(outPerf[i])))
			continue
		}
		key := [2]int{min(o.Src, o.Dst), max(o.Src, o.Dst)}
		l := links[key]
		if l == nil {
			l = &LinkOutlier{Node: n.Name, Type: t.ID, A: key[0], B: key[1], Link: o.Link}
			links[key] = l
			order = append(order, key)
		}
		l.Figures++
		if math.Abs(outPerf[i]) > math.Abs(l.PerfPct) {
			l.PerfPct = outPerf[i]
		}
	}
	for _, key := range order {
		l := links[key]
		f.OutlierLinks = append(f.OutlierLinks, *l)
		n.Reasons = append(n.Reasons, fmt.Sprintf("link %d↔%d (%s) is off: %d figure%s, the furthest %s",
			l.A, l.B, l.Link, l.Figures, units.Plural(l.Figures, "", "s"), perfText(l.PerfPct)))
	}
	n.Reasons = append(n.Reasons, listed(others, "figure")...)
}

// topologyNotes marks the types that have the GPUs of a type with more
// nodes but another link topology, and their nodes.
func topologyNotes(types []*Type) {
	majority := map[string]*Type{}
	for _, t := range types { // most nodes first
		if t.topology == "" {
			// An imported run (or one without a topology) says nothing of
			// its links: not a different topology, an unknown one.
			t.Note = "topology unknown (the runs do not record it): compared only with each other"
			continue
		}
		m, ok := majority[t.GPUs]
		if !ok {
			majority[t.GPUs] = t
			continue
		}
		t.Note = fmt.Sprintf("the GPUs of %s (%d nodes) with another link topology", m.ID, m.Nodes)
		for _, n := range t.nodes {
			n.Reasons = append([]string{fmt.Sprintf("its link topology (%s) differs from that of the %d nodes of %s, which have the same GPUs (%s)",
				t.Links, m.Nodes, m.ID, m.Links)}, n.Reasons...)
		}
	}
}

// decide gives the node its verdict, failures first among the reasons.
func (n *Node) decide() {
	var first []string
	if !n.Complete {
		why := "the run is incomplete"
		if n.Stopped != "" {
			why += ": " + n.Stopped
		}
		first = append(first, why)
	}
	if n.Failed > 0 {
		var each []string
		for _, fl := range n.Failures {
			each = append(each, fmt.Sprintf("%s %s %s", fl.Label, fl.Figure, devices(fl.Src, fl.Dst, fl.Link)))
		}
		first = append(first, fmt.Sprintf("%d figure%s failed: %s", n.Failed, units.Plural(n.Failed, "", "s"), strings.Join(firstOf(each), "; ")))
	}
	n.Reasons = append(first, n.Reasons...)
	switch {
	case len(first) > 0:
		n.Verdict = Failed
	case len(n.Reasons) > 0:
		n.Verdict = Outlier
	case n.Judged == 0:
		n.Verdict = NotJudged
		n.Reasons = []string{"none of its figures could be judged: each class needs figures of " + fmt.Sprint(minJudged) + " or more pairs or nodes of its machine type (see each type's classes not judged)"}
	default:
		n.Verdict = OK
	}
}

// shownReasons is the most items a reason lists.
const shownReasons = 3

// firstOf keeps the first items of a list, and says how many more there are.
func firstOf(items []string) []string {
	if len(items) <= shownReasons {
		return items
	}
	return append(slices.Clone(items[:shownReasons]), fmt.Sprintf("and %d more", len(items)-shownReasons))
}

// listed is one reason per outlier figure of no pair, the first few.
func listed(items []string, what string) []string {
	if len(items) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d %s%s off: %s", len(items), what, units.Plural(len(items), "", "s"), strings.Join(firstOf(items), "; "))}
}

// devices names a figure's devices: "0→1", "device 3", "host→2", "all→1"
// (-1 is the host for a figure of link class host, else all devices).
func devices(src, dst int, link string) string {
	name := func(d int) string {
		switch {
		case d >= 0:
			return fmt.Sprint(d)
		case link == "host":
			return "host"
		}
		return "all"
	}
	if src == dst && src >= 0 {
		return "device " + name(src)
	}
	return name(src) + "→" + name(dst)
}

// perfText says how much better or worse a figure is than its median.
func perfText(pct float64) string {
	if pct < 0 {
		return fmt.Sprintf("%.1f%% worse", -pct)
	}
	return fmt.Sprintf("%.1f%% better", pct)
}
