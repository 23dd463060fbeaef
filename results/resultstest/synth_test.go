package resultstest_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// TestNewIsValidAndComplete checks that a run has every in-process test of
// the catalogue and the copy-engine tests across processes, and that its
// catalogue describes them as this build does.
func TestNewIsValidAndComplete(t *testing.T) {
	want := []results.Test{results.IPCCERead, results.IPCCEWrite}
	for _, info := range results.Catalogue() {
		if !info.Name.IsIPC() {
			want = append(want, info.Name)
		}
	}
	for _, o := range []resultstest.Options{{GPUs: 2}, {GPUs: 8, Faults: true}, {GPUs: 16, NoSweep: true}} {
		run := resultstest.New(o)
		if err := run.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
		if !run.Simulated {
			t.Errorf("%+v: not marked simulated", o)
		}
		got := run.Tests()
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%+v: no %s figures", o, w)
			}
		}
		for _, test := range got {
			if info, _ := results.Lookup(test); !reflect.DeepEqual(run.Catalogue[test], info) {
				t.Errorf("%+v: the catalogue entry of %s is %+v, want this build's", o, test, run.Catalogue[test])
			}
		}
		n := o.GPUs
		if len(run.Topology.Pairs) != n*(n-1) {
			t.Errorf("%+v: %d topology pairs, want %d", o, len(run.Topology.Pairs), n*(n-1))
		}
	}
}

func TestNewIsDeterministic(t *testing.T) {
	a := resultstest.New(resultstest.Options{GPUs: 3, Seed: 7})
	b := resultstest.New(resultstest.Options{GPUs: 3, Seed: 7})
	if !reflect.DeepEqual(a, b) {
		t.Error("the same options built different runs")
	}
}

func TestSweepAndRanks(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8})
	sizes := map[uint64]bool{}
	for _, f := range run.FiguresOf(results.SMWrite) {
		if f.Src == 0 && f.Dst == 1 {
			sizes[f.Size] = true
		}
	}
	want := len(resultstest.SweepSizes())
	if !slices.Contains(resultstest.SweepSizes(), resultstest.MatrixSize) {
		want++ // the matrix's own
	}
	if len(sizes) != want {
		t.Errorf("pair 0->1 of the sweep has %d sizes, want %d", len(sizes), want)
	}
	ranks := map[int]bool{}
	for _, p := range run.Topology.Pairs {
		r, _ := p.PerformanceRank()
		ranks[r] = true
	}
	if len(ranks) != 3 {
		t.Errorf("the PCIe layout has ranks %v, want three", ranks)
	}
}

// TestSampledPlan: with Options.Representatives and PeersPerDevice, the
// copy engine's one-way matrices are on every pair, the tests of many pairs
// at once record their totals only, the size sweeps and the tests across
// processes are on the representatives (two of each of the PCIe layout's
// three link classes), the rest on the detail pairs: the representatives
// and each device's next peer, 12 pairs (0→1 and 4→5 are both).
func TestSampledPlan(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8, Representatives: 2, PeersPerDevice: 1, Samples: 4})
	if err := run.Validate(); err != nil {
		t.Fatal(err)
	}
	pairs := func(test results.Test, keep func(f *results.Figure) bool) int {
		seen := map[[2]int]bool{}
		for _, f := range run.FiguresOf(test) {
			if f.Src != f.Dst && f.Src >= 0 && f.Dst >= 0 && keep(&f) {
				seen[[2]int{f.Src, f.Dst}] = true
			}
		}
		return len(seen)
	}
	all := func(*results.Figure) bool { return true }
	for _, c := range []struct {
		test results.Test
		keep func(f *results.Figure) bool
		want int
	}{
		{results.CERead, all, 56},
		{results.AllToOne, all, 0},
		{results.SMRead, all, 12},
		{results.SMBidir, all, 12},
		{results.NoP2PCopy, all, 12},
		{results.CEWrite, func(f *results.Figure) bool { return f.Size != resultstest.MatrixSize }, 6},
		{results.LatPingPong, all, 12},
		{results.AtomicTput, all, 12},
		{results.IPCCERead, all, 6},
	} {
		if got := pairs(c.test, c.keep); got != c.want {
			t.Errorf("%s is on %d pairs, want %d", c.test, got, c.want)
		}
	}
}

func TestFaults(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 4, Faults: true, NoSweep: true})
	var errored, badData int
	for _, f := range run.Figures {
		if f.Error != "" {
			errored++
		}
		if f.Verify == results.VerifyFailed {
			badData++
		}
	}
	if errored == 0 || badData == 0 {
		t.Errorf("faults planted %d errors and %d failed verifications, want some of each", errored, badData)
	}
}

// TestSelectedTestsAndSlowdowns: Options.Tests keeps only those tests;
// a weak link lowers its pair's bandwidth both ways and nothing else; a
// slow node lowers rates and raises times by the same factor.
func TestSelectedTestsAndSlowdowns(t *testing.T) {
	tests := []results.Test{results.CEWrite, results.H2D, results.LatPingPong}
	base := resultstest.Options{GPUs: 4, NoSweep: true, Tests: tests, Host: "n1"}
	run := resultstest.New(base)
	if got := run.Tests(); !slices.Equal(got, tests) || len(run.Tuning) > 0 || run.Host != "n1" {
		t.Fatalf("tests %v, %d tunings, host %q; want %v, none, n1", got, len(run.Tuning), run.Host, tests)
	}
	value := func(run *results.Run, test results.Test, src, dst int) float64 {
		for _, f := range run.Figures {
			if f.Test == test && f.Src == src && f.Dst == dst && (f.Params["measure"] == "" || f.Params["measure"] == "round_trip") {
				return f.Stats.Median
			}
		}
		t.Fatalf("no %s figure %d→%d", test, src, dst)
		return 0
	}
	weak := base
	weak.SlowPairs = []resultstest.SlowPair{{A: 1, B: 2, Percent: 20}}
	slow := base
	slow.Slowdown = 10
	weakRun, slowRun := resultstest.New(weak), resultstest.New(slow)
	for _, c := range []struct {
		run             *results.Run
		test            results.Test
		src, dst        int
		lowest, highest float64
	}{
		{weakRun, results.CEWrite, 1, 2, 0.78, 0.82},
		{weakRun, results.CEWrite, 2, 1, 0.78, 0.82},
		{weakRun, results.CEWrite, 0, 1, 0.99, 1.01},
		{slowRun, results.CEWrite, 0, 1, 0.89, 0.91},
		{slowRun, results.H2D, -1, 0, 0.89, 0.91},
		{slowRun, results.LatPingPong, 0, 1, 1.10, 1.12},
	} {
		r := value(c.run, c.test, c.src, c.dst) / value(run, c.test, c.src, c.dst)
		if r < c.lowest || r > c.highest {
			t.Errorf("%s %d→%d of %s: %.3f of the healthy run's, want %.2f to %.2f", c.test, c.src, c.dst, c.run.Host, r, c.lowest, c.highest)
		}
	}
}

func TestFleet(t *testing.T) {
	f := resultstest.Fleet{Nodes: 3, Node: resultstest.Options{GPUs: 2, NoSweep: true, Tests: []results.Test{results.CERead}},
		Prefix: "gpu", WeakLinks: []resultstest.WeakLink{{Node: 1, SlowPair: resultstest.SlowPair{A: 0, B: 1, Percent: 30}}},
		SlowNodes: []resultstest.SlowNode{{Node: 2, Percent: 50}}}
	var medians []float64
	for i := range f.Nodes {
		run := f.Run(i)
		if want := f.Host(i); run.Host != want {
			t.Errorf("node %d is host %q, want %q", i, run.Host, want)
		}
		medians = append(medians, run.Figures[0].Stats.Median)
	}
	if !(medians[1] < 0.75*medians[0] && medians[2] < 0.55*medians[0]) {
		t.Errorf("ce_read medians %v: want node 1 30%% and node 2 50%% below node 0", medians)
	}
}
