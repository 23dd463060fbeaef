package fleet_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// planted is a synthetic fleet of two machine types with the problems
// planted in it: nine nodes in ten are 8× H100 NVL (PCIe switches, NVLink
// bridges), the rest 4× GB200 on NVSwitches, which must never be compared
// with them; three weak links of different link classes and one slow node
// among the first, one weak link among the second.
type planted struct {
	fleets []resultstest.Fleet
	// nodes and links are what an analysis must name, and nothing else.
	nodes []string
	links []string
}

func plantedFleet(nodes int, tests ...results.Test) planted {
	small := max(nodes/10, 5)
	big := nodes - small
	h100 := resultstest.Fleet{Nodes: big, Prefix: "h100n", Seed: 1,
		Node: resultstest.Options{GPUs: 8, Layout: resultstest.PCIeBridged, NoSweep: true, Samples: 10, Tests: tests},
		WeakLinks: []resultstest.WeakLink{
			{Node: 3, SlowPair: resultstest.SlowPair{A: 2, B: 5, Percent: 15}},       // across the CPU (rank 2)
			{Node: big / 5, SlowPair: resultstest.SlowPair{A: 0, B: 1, Percent: 20}}, // an NVLink bridge
			{Node: big / 2, SlowPair: resultstest.SlowPair{A: 6, B: 4, Percent: 10}}, // under one switch (rank 1)
		},
		SlowNodes: []resultstest.SlowNode{{Node: big - 7, Percent: 10}},
	}
	gb200 := resultstest.Fleet{Nodes: small, Prefix: "gb200n", Seed: 1 << 20,
		Node:      resultstest.Options{GPUs: 4, Layout: resultstest.NVSwitch, NoSweep: true, Samples: 10, Tests: tests},
		WeakLinks: []resultstest.WeakLink{{Node: 2, SlowPair: resultstest.SlowPair{A: 1, B: 3, Percent: 12}}},
	}
	p := planted{fleets: []resultstest.Fleet{h100, gb200}}
	for _, f := range p.fleets {
		for _, w := range f.WeakLinks {
			p.links = append(p.links, fmt.Sprintf("%s %d↔%d", f.Host(w.Node), min(w.A, w.B), max(w.A, w.B)))
		}
		for _, s := range f.SlowNodes {
			p.nodes = append(p.nodes, f.Host(s.Node))
		}
	}
	slices.Sort(p.links)
	return p
}

// check holds an analysis to what was planted: exactly the planted nodes
// and links named, no other figure below its peers, every other node
// PASS, two types.
func (p planted) check(t testing.TB, f *fleet.Fleet) {
	t.Helper()
	var nodes, links []string
	for _, n := range f.BelowNodes {
		nodes = append(nodes, n.Node)
	}
	for _, l := range f.BelowLinks {
		links = append(links, fmt.Sprintf("%s %d↔%d", l.Node, l.A, l.B))
	}
	if !slices.Equal(nodes, p.nodes) {
		t.Errorf("nodes below their peers %v, want %v", nodes, p.nodes)
	}
	if !slices.Equal(links, p.links) {
		t.Errorf("links below their peers %v, want %v", links, p.links)
	}
	named := map[string]bool{}
	for _, l := range f.BelowLinks {
		named[l.Node] = true
	}
	for _, n := range f.BelowNodes {
		named[n.Node] = true
	}
	for _, o := range f.Below {
		if !named[o.Node] {
			t.Errorf("figure %+v below its peers, of a node neither below its peers as a whole nor with a link below them", o)
		}
	}
	total := 0
	for _, fl := range p.fleets {
		total += fl.Nodes
	}
	if len(f.Nodes) != total || len(f.Unreadable) != 0 {
		t.Errorf("%d nodes and %d unreadable files, want %d and none", len(f.Nodes), len(f.Unreadable), total)
	}
	for _, n := range f.Nodes {
		switch {
		case named[n.Name] && (n.Verdict == results.StatusPass || n.Peers == results.StatusPass || !n.Attention()):
			t.Errorf("node %s, planted: verdict %s, peers %s (%v), want WARN or FAIL", n.Name, n.Verdict, n.Peers, n.Reasons)
		case !named[n.Name] && (n.Verdict != results.StatusPass || n.Peers != results.StatusPass || n.Attention()):
			t.Errorf("node %s: verdict %s, peers %s (%v), want PASS", n.Name, n.Verdict, n.Peers, n.Reasons)
		}
	}
	if len(f.Types) != 2 || f.Types[0].Nodes != p.fleets[0].Nodes || f.Types[1].Nodes != p.fleets[1].Nodes {
		t.Errorf("machine types %+v, want the two planted", f.Types)
	}
}

// TestPlanted analyses 100 synthetic nodes in memory.
func TestPlanted(t *testing.T) {
	p := plantedFleet(100, results.CERead, results.CEWrite, results.SMWrite, results.H2D, results.LatPingPong)
	b := fleet.NewBuilder(fleet.Options{})
	for _, f := range p.fleets {
		for i := range f.Nodes {
			b.Add(f.Host(i), f.Run(i))
		}
	}
	f := b.Fleet()
	p.check(t, f)
	if f.Simulated != len(f.Nodes) {
		t.Errorf("%d of %d nodes simulated", f.Simulated, len(f.Nodes))
	}
}

// build analyses the runs in memory.
func build(o fleet.Options, runs ...*results.Run) *fleet.Fleet {
	b := fleet.NewBuilder(o)
	for _, r := range runs {
		b.Add(r.Host, r)
	}
	return b.Fleet()
}

// TestRule: a deficit far beyond the MAD but under the least deficit is
// not below its peers; a node faster than its peers is not (one-sided, as
// check: issue 28, item 5), a slower one is; the options move both bars; a
// class of fewer than five figures is not judged, and says so.
func TestRule(t *testing.T) {
	f := resultstest.Fleet{Nodes: 20, Node: resultstest.Options{GPUs: 2, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite}},
		WeakLinks: []resultstest.WeakLink{
			{Node: 3, SlowPair: resultstest.SlowPair{A: 0, B: 1, Percent: 3}},   // 3% slower: noise to the default rule
			{Node: 7, SlowPair: resultstest.SlowPair{A: 0, B: 1, Percent: -20}}, // 20% faster
		}}
	var runs []*results.Run
	for i := range f.Nodes {
		runs = append(runs, f.Run(i))
	}
	belowNodes := func(fl *fleet.Fleet) []string {
		var out []string
		for _, l := range fl.BelowNodes {
			out = append(out, l.Node)
		}
		return out
	}
	// On two GPUs a weak link is the whole node's pair figures.
	got := build(fleet.Options{Threshold: 0.05}, runs...)
	if nodes := belowNodes(got); len(nodes) != 0 || len(got.Below) != 0 {
		t.Errorf("nodes below their peers %v (%+v), want none: node0007 is 20%% better, node0003 3%% worse", nodes, got.Below)
	}
	if nodes := belowNodes(build(fleet.Options{}, runs...)); !slices.Equal(nodes, []string{"node0003"}) {
		t.Errorf("with the default least deficit (3%%): nodes below their peers %v, want node0003 (3%% worse) alone", nodes)
	}
	if nodes := belowNodes(build(fleet.Options{Alpha: 1e-300}, runs...)); len(nodes) > 0 {
		t.Errorf("with an unreachable significance: nodes below their peers %v", nodes)
	}
	small := build(fleet.Options{}, runs[6], runs[7])
	if c := small.Types[0].Classes[0]; c.Judged || len(small.Below) > 0 || !strings.Contains(c.NotJudged, "fewer than the 5") {
		t.Errorf("a class of %d figures judged (%d below their peers), %q", c.Figures, len(small.Below), c.NotJudged)
	}
	for _, n := range small.Nodes {
		if n.Verdict != results.StatusNotJudged || n.Peers != results.StatusNotJudged {
			t.Errorf("node %s of a fleet too small to judge: %s (peers %s), want NOT JUDGED", n.Name, n.Verdict, n.Peers)
		}
	}
	var text strings.Builder
	small.WriteText(&text)
	if strings.Contains(text.String(), "No node needs attention") || !strings.Contains(text.String(), "Not judged: 1 of the 1 classes") {
		t.Errorf("a fleet too small to judge:\n%s", text.String())
	}
}

// TestTopology: a node with a link down forms a type of its own, named as
// the GPUs of the majority with another topology, and WARNs for it.
func TestTopology(t *testing.T) {
	f := resultstest.Fleet{Nodes: 6, Node: resultstest.Options{GPUs: 4, Layout: resultstest.PCIeBridged, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite}}}
	var runs []*results.Run
	for i := range f.Nodes {
		runs = append(runs, f.Run(i))
	}
	for i, p := range runs[2].Topology.Pairs {
		if p.NVLinks > 0 {
			runs[2].Topology.Pairs[i].NVLinks--
			break
		}
	}
	got := build(fleet.Options{}, runs...)
	if len(got.Types) != 2 || got.Types[1].Nodes != 1 || !strings.Contains(got.Types[1].Note, "T1") {
		t.Fatalf("types %+v, want T1 of 5 nodes and T2 of 1 with a note", got.Types)
	}
	for _, n := range got.Nodes {
		want := results.StatusPass
		if n.Name == "node0002" {
			want = results.StatusWarn
		}
		if n.Verdict != want || want == results.StatusWarn && (!strings.Contains(n.Reasons[0], "topology") || !n.Attention()) {
			t.Errorf("%s: %s %v, want %s", n.Name, n.Verdict, n.Reasons, want)
		}
	}
}

// TestOrder: the analysis does not depend on the order the nodes come in
// (nor on the order of a file's figures), and analysing twice gives the
// same answer.
func TestOrder(t *testing.T) {
	p := plantedFleet(30, results.CEWrite, results.LatPingPong)
	var runs []*results.Run
	for _, f := range p.fleets {
		for i := range f.Nodes {
			runs = append(runs, f.Run(i))
		}
	}
	slices.Reverse(runs[0].Figures)
	encode := func(f *fleet.Fleet) string {
		var b strings.Builder
		if err := f.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	b := fleet.NewBuilder(fleet.Options{})
	for _, r := range runs {
		b.Add(r.Host, r)
	}
	first := encode(b.Fleet())
	if again := encode(b.Fleet()); again != first {
		t.Error("a second analysis differs from the first")
	}
	slices.Reverse(runs)
	if reversed := encode(build(fleet.Options{}, runs...)); reversed != first {
		t.Error("the analysis of the nodes in reverse order differs")
	}
}

// TestJudgesWhatCheckJudges: lat_copy_device, which nothing judges, is
// described but never below its peers; a run without a topology (an
// import) is of unknown topology, which is no finding (issue 28, item 5).
func TestJudgesWhatCheckJudges(t *testing.T) {
	f := resultstest.Fleet{Nodes: 8, Node: resultstest.Options{GPUs: 2, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite, results.LatCopyDevice}}}
	var runs []*results.Run
	for i := range f.Nodes {
		runs = append(runs, f.Run(i))
	}
	found := false
	for i := range runs[2].Figures {
		if fig := &runs[2].Figures[i]; fig.Test == results.LatCopyDevice {
			found = true
			for j := range fig.Samples {
				fig.Samples[j] *= 3
			}
			fig.Stats = figstats.ComputeStats(fig.Samples)
		}
	}
	if !found {
		t.Fatal("the synthetic runs have no lat_copy_device figure")
	}
	imported := f.Run(7)
	imported.Host, imported.Topology = "imported", nil
	got := build(fleet.Options{}, append(runs, imported)...)
	for _, o := range got.Below {
		t.Errorf("below its peers: %+v", o)
	}
	for _, n := range got.Nodes {
		if n.Verdict == results.StatusWarn || n.Attention() {
			t.Errorf("node %s: %s %q", n.Name, n.Verdict, n.Reasons)
		}
	}
	for _, ty := range got.Types {
		for _, c := range ty.Classes {
			if c.Test == results.LatCopyDevice && (c.Judged || !strings.Contains(c.NotJudged, "nothing judges lat_copy_device")) {
				t.Errorf("class %s: judged %v, %q", c.Label, c.Judged, c.NotJudged)
			}
		}
		if ty.Nodes == 1 && !strings.Contains(ty.Note, "topology unknown") {
			t.Errorf("the type of the import: note %q", ty.Note)
		}
	}
}

// realRuns are the paths of runs of one real 2× H200 under
// testdata/reference, written by a build whose link check failed healthy
// machines on their NVLink CRC-data count over the run's own seconds.
func realRuns(t *testing.T, dir string, n int) []string {
	t.Helper()
	var paths []string
	for i := 1; i <= n; i++ {
		p := filepath.Join("..", "testdata", "reference", "h200x2", dir, fmt.Sprintf("all%d.json.gz", i))
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestJudgedAgain: three real runs whose files record an earlier build's
// FAIL on NVLink CRC-data are judged again by the running build, as check
// judges them (WARN: under DCGM's 100 a second over its minute), the
// file's verdict kept beside it; without a build, each file's verdict
// stands (FAIL).
func TestJudgedAgain(t *testing.T) {
	paths := realRuns(t, "2026-11-26-ag", 3)
	kept, err := fleet.Load(paths, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := fleet.Load(paths, fleet.Options{Build: "test-build"})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range again.Nodes {
		k := kept.Nodes[i]
		if k.Own == nil || k.Own.Status != results.StatusFail || k.Own.Was != nil {
			t.Fatalf("%s without a build: own verdict %+v, want the file's FAIL", k.Path, k.Own)
		}
		whole, err := results.Read(n.Path)
		if err != nil {
			t.Fatal(err)
		}
		if err := verdict.Record(whole, nil, "test-build"); err != nil {
			t.Fatal(err)
		}
		if n.Own == nil || n.Own.Status != whole.Verdict.Status || n.Own.Status != results.StatusWarn ||
			n.Own.Was == nil || n.Own.Was.Status != results.StatusFail {
			t.Errorf("%s judged again: own verdict %+v (was %+v), check gives %s", n.Path, n.Own, n.Own.Was, whole.Verdict.Status)
		}
		if n.Verdict == results.StatusFail {
			t.Errorf("%s: FAIL (%q)", n.Path, n.Reasons)
		}
		if n.Verdict != results.StatusPass && !strings.Contains(strings.Join(n.Reasons, "; "), "judged again by this build, WARN") {
			t.Errorf("%s: the why does not say it was judged again: %q", n.Path, n.Reasons)
		}
	}
	var text bytes.Buffer
	if err := again.Write(&text, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Judged again: 3 nodes' runs record a verdict another build gave") {
		t.Errorf("the fleet's text does not say that it judged the nodes again:\n%s", text.String()[:min(text.Len(), 2000)])
	}
}

// TestSmallCopiesAmongNodes: on five real runs of one 2× H200 and three
// of another, a small copy's host end-to-end time (lat_copy_host, which
// check does not judge) is never below its peers, and small copies back
// to back (lat_copy_b2b, which check warns on at most) warn where they
// read 10% or more below their peers, never fail.
func TestSmallCopiesAmongNodes(t *testing.T) {
	b2bWarned := false
	for _, set := range []struct {
		dir string
		n   int
	}{{"2026-11-29", 5}, {"2026-11-26-ag", 3}} {
		f, err := fleet.Load(realRuns(t, set.dir, set.n), fleet.Options{Build: "test-build"})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range f.Below {
			switch {
			case strings.HasPrefix(b.Figure, "copy, host end to end"):
				t.Errorf("%s: lat_copy_host below its peers: %+v", set.dir, b)
			case strings.HasPrefix(b.Figure, "copy, back to back") && b.Status == results.StatusFail:
				t.Errorf("%s: lat_copy_b2b failed: %+v", set.dir, b)
			case strings.HasPrefix(b.Figure, "copy, back to back") && b.DeficitPct >= 100*verdict.SlowPairFraction:
				b2bWarned = true
			}
		}
		for _, ty := range f.Types {
			for _, c := range ty.Classes {
				if c.Test == results.LatCopyHost && (c.Judged || !strings.Contains(c.NotJudged, "nothing judges lat_copy_host")) {
					t.Errorf("class %s: judged %v, %q", c.Label, c.Judged, c.NotJudged)
				}
			}
		}
	}
	if !b2bWarned {
		t.Error("no lat_copy_b2b figure 10% or more below its peers: the runs no longer hold the case the cap is for")
	}
}

// TestBuildsThatMeasureOtherwise: two real runs of a build that timed every
// device's host copies both ways each copy alone and one of a build that
// holds them (host_all_both_ways_held: forward 27.5 GB/s where the others
// read 35.4) are not held to each other on those figures: their classes
// are apart, each labelled with its method, and the held node is not below
// its peers on any of them (it was, 22–33% and FAIL, when the method did
// not part them).
func TestBuildsThatMeasureOtherwise(t *testing.T) {
	dir := filepath.Join("..", "testdata", "reference", "h200x2", "2026-11-29-held")
	paths := []string{
		filepath.Join(dir, "call1", "all1", "results.json.gz"),
		filepath.Join(dir, "call1", "all2", "results.json.gz"),
		filepath.Join(dir, "call4", "all1", "results.json.gz"),
	}
	f, err := fleet.Load(paths, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Types) != 1 || len(f.Nodes) != 3 {
		t.Fatalf("%d types, %d nodes", len(f.Types), len(f.Nodes))
	}
	held := 0
	for _, c := range f.Types[0].Classes {
		if c.Test != results.HostAllBidir && c.Test != results.SMHostAllBidir {
			continue
		}
		if !strings.Contains(c.Label, "method=") {
			t.Errorf("class %q: its method is not named", c.Label)
		}
		if c.Nodes == 1 {
			held++
		}
	}
	if held != 6 {
		t.Errorf("%d classes of one node's held figures, want 6: forward, reverse and total of host_all_bidir and sm_host_all_bidir", held)
	}
	n := f.Nodes[2]
	for _, r := range n.Reasons {
		if strings.Contains(r, "all host both ways") {
			t.Errorf("%s: %q", n.Path, r)
		}
	}
	if n.Verdict == results.StatusFail {
		t.Errorf("%s: FAIL (%q)", n.Path, n.Reasons)
	}
}
