package report

import (
	"cmp"
	"fmt"
	"github.com/p2pbench/p2pbench/internal/units"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// Topology returns what `topo` shows of run: the driver and the GPUs, what
// the driver and NVML say of every ordered pair, and the driver
// conformance cases when they were run.
func Topology(run *results.Run) *Document {
	d := newDocument(run, "")
	systemSection(d, run)
	switch t := run.Topology; {
	case t == nil:
		d.para("The run recorded no topology.")
	case len(t.Devices) < 2:
		d.para("One device selected: no pairs.")
	}
	topologySection(d, run)
	return d
}

func topologySection(d *Document, run *results.Run) {
	t := run.Topology
	if t == nil {
		return
	}
	if len(t.Pairs) > 0 {
		d.Section("Topology and driver attributes")
		d.para("What the driver reports for each ordered pair (source accessing the destination's memory): cuDeviceCanAccessPeer, the cuDeviceGetP2PAttribute values, the NVLinks NVML counts between the two GPUs and the theoretical one-direction bandwidth they give (NVLinks × link speed), where their PCIe paths meet when no NVLink joins them (NVML, named as nvidia-smi topo -m names it), and the cuDeviceGetP2PAtomicCapabilities bitmasks.")
		d.table(pairTable(t.Pairs))
	}
	conformanceTable(d, t.Conformance)
	for _, n := range BoundedNotes(t.Notes) {
		d.para("%s", n)
	}
}

// pairTable lists the pairs' attributes, one row per pair for a few pairs;
// for many, one row per set of pairs that share every value.
func pairTable(pairs []results.Pair) *table {
	type group struct {
		pairs []string
		row   []string
	}
	groups := map[string]*group{}
	var order []string
	for _, p := range pairs {
		attr := func(name string) string {
			if v, ok := p.Attributes[name]; ok {
				return strconv.Itoa(v)
			}
			if e, ok := p.AttributeErrors[name]; ok {
				return "error: " + e
			}
			return "—"
		}
		link := "unknown"
		if p.LinkGBps > 0 {
			link = fmtGBps(p.LinkGBps)
		}
		row := []string{yesNo(p.CanAccessPeer), attr(results.AttrPerformanceRank), attr(results.AttrAccessSupported),
			attr(results.AttrNativeAtomicSupported), attr(results.AttrOnlyPartialNativeAtoms), attr(results.AttrCUDAArrayAccess),
			strconv.Itoa(p.NVLinks), link, cmp.Or(p.PCIePath, "—"), atomicCaps(p)}
		k := strings.Join(row, "\x00")
		if len(pairs) <= maxPairRows {
			k = pairName(p.Src, p.Dst) // one row per pair
		}
		g := groups[k]
		if g == nil {
			g = &group{row: row}
			groups[k] = g
			order = append(order, k)
		}
		g.pairs = append(g.pairs, pairName(p.Src, p.Dst))
	}
	tab := &table{header: []string{"pairs", "peer access", "perf rank", "access", "native atomics", "partial atomics", "CUDA arrays",
		"NVLinks", "link GB/s", "PCIe path", "atomic caps"}, align: "llrrrrrrrll"}
	for _, k := range order {
		g := groups[k]
		tab.rows = append(tab.rows, append([]string{listPairs(g.pairs)}, g.row...))
	}
	ranks := map[int]bool{}
	for _, p := range pairs {
		if r, ok := p.PerformanceRank(); ok {
			ranks[r] = true
		}
	}
	if len(ranks) == 1 {
		for r := range ranks {
			tab.notes = append(tab.notes, fmt.Sprintf("Every pair has the driver's performance rank %d: throughput against rank would be one column, so no chart draws it.", r))
		}
	}
	if slices.ContainsFunc(pairs, nativeWithoutCaps) {
		tab.notes = append(tab.notes, "Native atomics 1 beside atomic caps 0x0: the driver says the link carries atomics natively "+
			"(cuDeviceGetP2PAttribute) yet sets no capability flag for any operation (cuDeviceGetP2PAtomicCapabilities); both are shown as "+
			"the driver gives them, and the atomic tests' figures show what the link does.")
	}
	return tab
}

// nativeWithoutCaps reports whether the driver gives p native atomics and
// yet no capability flag for any atomic operation it was asked about.
func nativeWithoutCaps(p results.Pair) bool {
	if p.Attributes[results.AttrNativeAtomicSupported] != 1 || p.AtomicCapsError != "" || len(p.AtomicCaps) == 0 {
		return false
	}
	for _, m := range p.AtomicCaps {
		if m != 0 {
			return false
		}
	}
	return true
}

func conformanceTable(d *Document, cases []results.ConformanceCase) {
	if len(cases) == 0 {
		return
	}
	d.Heading(2, "Driver behaviour against its documentation")
	t := &table{header: []string{"case", "call", "pair", "documented", "observed", "matches"}, align: "llllll"}
	differ := 0
	for _, c := range cases {
		m := "yes"
		if !c.Matches {
			differ++
			m = "NO"
			if c.Note != "" {
				m += ": " + c.Note
			}
		}
		t.rows = append(t.rows, []string{c.Name, c.Call, pairName(c.Src, c.Dst), c.Documented, c.Observed, m})
	}
	t.notes = []string{fmt.Sprintf("%d case%s, %d differ%s from the documentation.", len(cases), units.Plural(len(cases), "", "s"), differ, map[bool]string{true: "s"}[differ == 1])}
	d.table(t)
}

// listPairs shows a few pairs and how many there are.
func listPairs(pairs []string) string {
	if len(pairs) <= 4 {
		return strings.Join(pairs, ", ")
	}
	return fmt.Sprintf("%s, … (%d pairs)", strings.Join(pairs[:3], ", "), len(pairs))
}

// atomicCaps shows a pair's capability bitmasks with their flags: once
// for all operations when they agree, else per operation.
func atomicCaps(p results.Pair) string {
	if p.AtomicCapsError != "" {
		return "error: " + p.AtomicCapsError
	}
	if len(p.AtomicCaps) == 0 {
		return "—"
	}
	mask := func(m uint32) string {
		s := fmt.Sprintf("%#x", m)
		if names := results.AtomicCapabilityNames(m); len(names) > 0 {
			s += " (" + strings.Join(names, ", ") + ")"
		}
		return s
	}
	ops := make([]string, 0, len(p.AtomicCaps))
	same := true
	for op, m := range p.AtomicCaps {
		ops = append(ops, op)
		same = same && m == p.AtomicCaps[ops[0]]
	}
	if same {
		return fmt.Sprintf("%s for all %d operations", mask(p.AtomicCaps[ops[0]]), len(ops))
	}
	sort.Strings(ops)
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = op + "=" + mask(p.AtomicCaps[op])
	}
	return strings.Join(parts, " ")
}
