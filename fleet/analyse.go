package fleet

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/montanaflynn/stats"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/report"
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
		return cmp.Or(len(y.nodes)-len(x.nodes), strings.Compare(x.GPUs, y.GPUs), strings.Compare(x.topology, y.topology),
			cmp.Compare(fmt.Sprint(x.Simulated), fmt.Sprint(y.Simulated)))
	})
	nameNodes(f.Nodes)
	slices.SortFunc(f.Nodes, func(x, y *Node) int { return strings.Compare(x.Name, y.Name) })
	for i, t := range f.Types {
		t.ID = fmt.Sprintf("T%d", i+1)
		t.Nodes = len(t.nodes)
		slices.SortFunc(t.nodes, func(x, y *Node) int { return strings.Compare(x.Name, y.Name) })
		for _, n := range t.nodes {
			n.Type, n.Judged, n.Below, n.Reasons, n.otherLinks = t.ID, 0, 0, nil, false
			for i := range n.points {
				n.points[i].below = false
			}
		}
		t.describe()
	}
	topologyNotes(f.Types)
	f.judge()
	belowOf := map[string][]FigureBelow{}
	for _, b := range f.Below {
		belowOf[b.Node] = append(belowOf[b.Node], b)
	}
	for _, t := range f.Types {
		t.values = nil
		for _, n := range t.nodes {
			f.place(t, n, belowOf[n.Name])
		}
	}
	for _, n := range f.Nodes {
		n.decide()
		if n.Simulated {
			f.Simulated++
		}
	}
	slices.SortStableFunc(f.Below, func(x, y FigureBelow) int { return strings.Compare(x.Node, y.Node) })
	slices.SortStableFunc(f.BelowNodes, func(x, y NodeBelow) int { return strings.Compare(x.Node, y.Node) })
	slices.SortStableFunc(f.BelowLinks, func(x, y LinkBelow) int {
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
// distribution across the type's nodes held to their peers, keeping each
// class's figures for judging.
func (t *Type) describe() {
	t.order()
	t.label()
	t.values = make([][]float64, len(t.Classes))
	lastNode := make([]int, len(t.Classes))
	for _, c := range t.Classes {
		c.Nodes = 0
	}
	for i, n := range t.nodes {
		if n.healthFailed {
			continue
		}
		for _, p := range n.points {
			t.values[p.class] = append(t.values[p.class], p.value)
			if lastNode[p.class] != i+1 {
				lastNode[p.class] = i + 1
				t.Classes[p.class].Nodes++
			}
		}
	}
	for i, c := range t.Classes {
		v := t.values[i]
		c.Figures, c.Below = len(v), 0
		c.Median, c.MAD, c.Min, c.Max = 0, 0, 0, 0
		if len(v) > 0 {
			// The statistics fail only on empty input.
			c.Median, _ = stats.Median(v)
			c.MAD, _ = stats.MedianAbsoluteDeviationPopulation(v)
			c.Min, _ = stats.Min(v)
			c.Max, _ = stats.Max(v)
		}
		switch {
		case verdict.Unjudged(c.Test) != "":
			c.NotJudged = "nothing judges " + string(c.Test) + ": " + verdict.Unjudged(c.Test)
		case len(v) < MinJudged:
			c.NotJudged = fmt.Sprintf("%d figure%s, fewer than the %d a class needs", len(v), units.Plural(len(v), "", "s"), MinJudged)
		case !(c.Median > 0):
			c.NotJudged = "its median is not above 0"
		default:
			c.NotJudged = ""
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
		for _, kv := range c.kind.items() {
			k, v, _ := strings.Cut(kv, "=")
			if values[c.Test][k] == nil {
				values[c.Test][k] = map[string]bool{}
			}
			values[c.Test][k][v] = true
		}
	}
	// The method is shown only where one kind of figure was measured two
	// ways (nodes of builds that measure it otherwise), not where a
	// test's kinds differ by the changes that apply to them.
	methods := map[kind]map[string]bool{}
	for _, c := range t.Classes {
		k := c.kind
		k.method = ""
		if methods[k] == nil {
			methods[k] = map[string]bool{}
		}
		methods[k][c.kind.method] = true
	}
	for _, c := range t.Classes {
		c.Label = c.kind.label(func(kv string) bool {
			k, _, _ := strings.Cut(kv, "=")
			if k == "method" {
				bare := c.kind
				bare.method = ""
				return len(methods[bare]) > 1
			}
			return len(values[c.Test][k]) > 1
		})
	}
}

// deficit is how much worse x is than ref, as a fraction: lower for a
// rate, longer for a time.
func deficit(x, ref float64, unit results.Unit) float64 {
	if unit.LowerIsBetter() {
		return x/ref - 1
	}
	return 1 - x/ref
}

// reference is what a figure of class c is held to, and the class's
// robust relative spread: the class's median and spread, or, in a class
// of fewer than verdict.PairLeaveOneOut figures, those of the others, so
// that one node's figures cannot pull the median to themselves.
func (t *Type) reference(class int32, x float64) (ref, spread float64) {
	c := t.Classes[class]
	ref, mad := c.Median, c.MAD
	if c.Figures < verdict.PairLeaveOneOut {
		others := slices.Clone(t.values[class])
		if i := slices.Index(others, x); i >= 0 {
			others = slices.Delete(others, i, i+1)
		}
		ref, _ = stats.Median(others)
		mad, _ = stats.MedianAbsoluteDeviationPopulation(others)
	}
	if ref > 0 {
		spread = 1.4826 * mad / ref
	}
	return ref, spread
}

// candidate is a figure whose deficit is at least the threshold, with its
// p-value.
type candidate struct {
	t        *Type
	n        *Node
	i        int // its point
	ref      float64
	def, sig float64
	p        float64
}

// judge holds every figure of every node held to its peers to its class:
// the one rule of what is below its peers (the package comment), Holm's
// procedure over every comparison of the fleet.
func (f *Fleet) judge() {
	var cands []candidate
	f.Comparisons = 0
	for _, t := range f.Types {
		for _, n := range t.nodes {
			if n.healthFailed {
				continue
			}
			for i, p := range n.points {
				c := t.Classes[p.class]
				if !c.Judged {
					continue
				}
				f.Comparisons++
				n.Judged++
				ref, spread := t.reference(p.class, p.value)
				if !(ref > 0) {
					continue
				}
				d := deficit(p.value, ref, c.Unit)
				if d < f.Options.Threshold {
					continue
				}
				se := float64(p.se)
				sigma := math.Sqrt(se*se + spread*spread + verdict.PairFloor*verdict.PairFloor)
				z := d / sigma
				cands = append(cands, candidate{t: t, n: n, i: i, ref: ref, def: d, sig: z, p: stats.NormSf(z, 0, 1)})
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(a.p, b.p) })
	named := cands[:verdict.Holm(len(cands), func(k int) float64 { return cands[k].p }, f.Comparisons, f.Options.Alpha)]
	for _, c := range named {
		p := &c.n.points[c.i]
		p.below = true
		c.n.Below++
		class := c.t.Classes[p.class]
		class.Below++
		st := results.StatusWarn
		if c.def >= verdict.SlowPairFraction && !verdict.WarnOnly(class.Test) {
			st = results.StatusFail
		}
		f.Below = append(f.Below, FigureBelow{Node: c.n.Name, Type: c.t.ID, Figure: class.Label, Src: int(p.src), Dst: int(p.dst),
			Link: class.Link, Unit: class.Unit, Value: p.value, Median: c.ref, DeficitPct: 100 * c.def, Sigma: c.sig, Status: st})
	}
	slices.SortStableFunc(f.Below, func(x, y FigureBelow) int {
		return cmp.Or(strings.Compare(x.Node, y.Node), strings.Compare(x.Figure, y.Figure), x.Src-y.Src, x.Dst-y.Dst)
	})
}

// place says where a node held to its peers stands, mine its figures
// below them: below them as a whole, on some of its links, or on some
// figures of no pair; and its peers' outcome.
func (f *Fleet) place(t *Type, n *Node, mine []FigureBelow) {
	switch {
	case n.healthFailed:
		n.Peers = results.StatusNotJudged
		n.Reasons = append(n.Reasons, "not held to its peers: its own verdict failed on its health")
		return
	case n.otherLinks:
		n.Peers = results.StatusWarn
	case n.Judged == 0:
		n.Peers = results.StatusNotJudged
	default:
		n.Peers = results.StatusPass
	}
	if n.Below == 0 {
		return
	}
	for _, b := range mine {
		if b.Status.Worse(n.Peers) {
			n.Peers = b.Status
		}
	}
	if n.Peers == results.StatusPass {
		n.Peers = results.StatusWarn
	}
	if float64(n.Below) >= nodeShare*float64(n.Judged) {
		var perf []float64
		for _, p := range n.points {
			if c := t.Classes[p.class]; c.Judged {
				perf = append(perf, -100*deficit(p.value, c.Median, c.Unit))
			}
		}
		median, _ := stats.Median(perf)
		f.BelowNodes = append(f.BelowNodes, NodeBelow{Node: n.Name, Type: t.ID, Below: n.Below, Judged: n.Judged, PerfPct: median})
		n.Reasons = append(n.Reasons, fmt.Sprintf("below its peers as a whole: %d of its %d figures, its median figure %s",
			n.Below, n.Judged, perfText(median)))
		return
	}
	links := map[[2]int]*LinkBelow{}
	var order [][2]int
	var others []string
	for _, b := range mine {
		if b.Src < 0 || b.Dst < 0 || b.Src == b.Dst {
			others = append(others, fmt.Sprintf("%s %s %.1f%% worse", b.Figure, devices(b.Src, b.Dst, b.Link), b.DeficitPct))
			continue
		}
		key := [2]int{min(b.Src, b.Dst), max(b.Src, b.Dst)}
		l := links[key]
		if l == nil {
			l = &LinkBelow{Node: n.Name, Type: t.ID, A: key[0], B: key[1], Link: b.Link}
			links[key] = l
			order = append(order, key)
		}
		l.Figures++
		l.DeficitPct = math.Max(l.DeficitPct, b.DeficitPct)
	}
	slices.SortFunc(order, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
	for _, key := range order {
		l := links[key]
		f.BelowLinks = append(f.BelowLinks, *l)
		n.Reasons = append(n.Reasons, fmt.Sprintf("link %d↔%d (%s) below its peers: %d figure%s, the furthest %.1f%% worse",
			l.A, l.B, l.Link, l.Figures, units.Plural(l.Figures, "", "s"), l.DeficitPct))
	}
	if len(others) > 0 {
		n.Reasons = append(n.Reasons, fmt.Sprintf("%d figure%s below its peers: %s", len(others), units.Plural(len(others), "", "s"),
			strings.Join(firstOf(others), "; ")))
	}
}

// topologyNotes marks the types that have the GPUs of a type with more
// nodes (both simulated, or both not) but another link topology, and their
// nodes.
func topologyNotes(types []*Type) {
	majority := map[string]*Type{}
	for _, t := range types { // most nodes first
		if t.topology == "" {
			// An imported run (or one without a topology) says nothing of
			// its links: not a different topology, an unknown one.
			t.Note = "topology unknown (the runs do not record it): compared only with each other"
			continue
		}
		key := fmt.Sprint(t.Simulated) + "\x00" + t.GPUs
		m, ok := majority[key]
		if !ok {
			majority[key] = t
			continue
		}
		t.Note = fmt.Sprintf("the GPUs of %s (%d nodes) with another link topology", m.ID, m.Nodes)
		for _, n := range t.nodes {
			n.otherLinks = true
			n.Reasons = append(n.Reasons, fmt.Sprintf("its link topology (%s) differs from that of the %d nodes of %s, which have the same GPUs (%s)",
				t.Links, m.Nodes, m.ID, m.Links))
		}
	}
	var real, simulated []string
	for _, t := range types {
		if t.Simulated {
			simulated = append(simulated, t.ID)
		} else {
			real = append(real, t.ID)
		}
	}
	if len(real) > 0 && len(simulated) > 0 {
		for _, t := range types {
			if t.Simulated {
				t.Note = strings.TrimPrefix(t.Note+"; simulated runs, compared only with simulated runs", "; ")
			}
		}
	}
}

// decide gives the node its verdict: the worst of its own, the fleet's
// reading of its run and its peers'; failures first among the reasons.
func (n *Node) decide() {
	var first []string
	status := n.Peers
	if status == results.StatusNotJudged && n.Own != nil && n.Own.Status != results.StatusNotJudged {
		status = results.StatusPass
	}
	worse := func(s results.Status) {
		if s.Worse(status) || status == results.StatusNotJudged {
			status = s
		}
	}
	if !n.Complete {
		why := "the run is incomplete"
		if n.Stopped != "" {
			why += ": " + n.Stopped
		}
		first = append(first, why)
		worse(results.StatusFail)
	}
	if n.Failed > 0 {
		var each []string
		for _, fl := range n.Failures {
			each = append(each, fmt.Sprintf("%s %s %s", fl.Label, fl.Figure, devices(fl.Src, fl.Dst, fl.Link)))
		}
		first = append(first, fmt.Sprintf("%d figure%s failed: %s", n.Failed, units.Plural(n.Failed, "", "s"), strings.Join(firstOf(each), "; ")))
		worse(results.StatusFail)
	}
	if n.Own != nil && (n.Own.Status == results.StatusFail || n.Own.Status == results.StatusWarn) {
		// What failed with its summary; what warned by name (the run's
		// own report says the rest); each in the verdict's own words.
		var checks []string
		for _, c := range n.Own.Checks {
			if c.Status == results.StatusFail {
				checks = append(checks, fmt.Sprintf("%s %s: %s", c.Label(), Label(c.Status), c.Summary))
			} else {
				checks = append(checks, c.Label()+" "+Label(c.Status))
			}
		}
		first = append(first, fmt.Sprintf("its own verdict%s %s (%s)%s", againBy(n.Own), Label(n.Own.Status), strings.Join(firstOf(checks), "; "), wasSaid(n.Own)))
		worse(n.Own.Status)
	}
	n.Reasons = append(first, n.Reasons...)
	n.Verdict = status
	switch status {
	case results.StatusPass:
		n.Reasons = nil
	case results.StatusNotJudged:
		n.Reasons = append(n.Reasons, "none of its figures could be judged against its peers (each class needs figures of "+
			fmt.Sprint(MinJudged)+" or more pairs or nodes of its machine type: see each type's classes not judged), and its run records no verdict that judged it")
	}
}

// againBy says, for a reason, that this build judged the node's run again.
func againBy(o *Own) string {
	if o.Was == nil {
		return ""
	}
	return ", judged again by this build,"
}

// wasSaid says, for a reason, what the node's file's own verdict said
// where this build judged the run again.
func wasSaid(o *Own) string {
	if o.Was == nil {
		return ""
	}
	return fmt.Sprintf("; the file's own, by %s, said %s", report.BuildName(o.Was.Build), Label(o.Was.Status))
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
