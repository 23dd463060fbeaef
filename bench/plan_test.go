package bench_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// topology discovers a simulated machine's topology.
func topology(t *testing.T, machine string) (results.Environment, *results.Topology) {
	t.Helper()
	drv, err := sim.New(machine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drv.Close() })
	devs, err := bench.SelectDevices(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	env, topo, err := bench.Discover(drv, drv.Monitor(), devs)
	if err != nil {
		t.Fatal(err)
	}
	return env, topo
}

func TestLinkClasses(t *testing.T) {
	for machine, want := range map[string][]string{
		"h200x2":    {"NVLink 4 ×18 direct"},
		"dgx-h100":  {"NVLink 4 ×18 through NVSwitch"},
		"pcie-4gpu": {"PCIe PIX, performance rank 0, native atomics", "PCIe PHB, performance rank 1, no native atomics", "no peer access"},
	} {
		_, topo := topology(t, machine)
		classes := bench.Classify(topo)
		var names []string
		n := 0
		for _, c := range classes {
			names = append(names, c.Name)
			n += len(c.Pairs)
			if r := c.Representatives; len(r) != 2 || r[0] != c.Pairs[0] || r[1] != (results.PairID{r[0][1], r[0][0]}) {
				t.Errorf("%s, %s: representatives %v, want the first pair and its reverse", machine, c.Name, r)
			}
			if c.Concurrent != strings.HasPrefix(c.Name, "NVLink") {
				t.Errorf("%s, %s: concurrent %v", machine, c.Name, c.Concurrent)
			}
		}
		if !slices.Equal(names, want) || n != len(topo.Pairs) {
			t.Errorf("%s: classes %v over %d pairs, want %v over %d", machine, names, n, want, len(topo.Pairs))
		}
	}
}

func TestPlanOfALargeDomainIsSampled(t *testing.T) {
	env, topo := topology(t, "nvl72")
	var opt bench.Options
	var err error
	if opt.Tests, err = results.ParseTests("all", ""); err != nil {
		t.Fatal(err)
	}
	opt.Size, opt.Sweep = 512<<20, []uint64{4, 1 << 20, 1 << 30}
	opt.SetDefaults()
	p := bench.NewPreview(opt, env, topo)
	plan := p.Plan
	if plan.Mode != results.PlanSampled || plan.PeersPerDevice != results.DefaultPeers || plan.Seed != bench.DefaultSeed {
		t.Fatalf("plan %s, %d peers, seed %d; want sampled, %d, %d", plan.Mode, plan.PeersPerDevice, plan.Seed, results.DefaultPeers, bench.DefaultSeed)
	}
	// Each device draws its peers (some drawn twice, by both ends), and
	// the representatives come on top: linear in the devices.
	if n := len(plan.Detail); n < 72*results.DefaultPeers || n > 72*results.DefaultPeers+2 {
		t.Errorf("%d detail pairs, want %d to %d", n, 72*results.DefaultPeers, 72*results.DefaultPeers+2)
	}
	if pairs, devs := bench.AcrossProcesses(plan, topo.Devices); !slices.Equal(pairs, plan.Classes[0].Representatives) || !slices.Equal(devs, []int{0, 1}) {
		t.Errorf("across processes: %v on devices %v, want the representatives on 0 and 1", pairs, devs)
	}
	again := bench.NewPreview(opt, env, topo).Plan
	if !slices.Equal(plan.Detail, again.Detail) {
		t.Error("the same seed drew other peers")
	}
	opt.Plan.Seed = 7
	if other := bench.NewPreview(opt, env, topo).Plan; slices.Equal(plan.Detail, other.Detail) {
		t.Error("another seed drew the same peers")
	}
	// 36 pairs at once in each group of the NVLink class, 2 × 71 groups.
	if g := p.Groups[plan.Classes[0].Name]; len(g) != 142 || slices.Max(g) != 36 {
		t.Errorf("groups %v, want 142 of 36 pairs", g)
	}
	if p.Estimate <= 0 || p.PerRound == 0 || !strings.Contains(p.Summary(), "on 74 pairs") {
		t.Errorf("summary %q, estimate %v", p.Summary(), p.Estimate)
	}
}

// TestInterferenceCheck measures the matrices of an NVSwitch machine with
// disjoint pairs at once: on dgx-h100 they stay concurrent; behind a
// blocking switch plane the check sees the slowdown, names the class and
// measures it one pair at a time.
func TestInterferenceCheck(t *testing.T) {
	for machine, blocking := range map[string]bool{"dgx-h100": false, "dgx-h100-blocking": true} {
		opt := options(results.CEWrite)
		opt.Size = 64 << 20
		run, err := simRun(t, machine, opt)
		if err != nil {
			t.Fatal(err)
		}
		c := run.Plan.Classes[0]
		if c.Concurrent == blocking || (c.Interference != "") != blocking {
			t.Errorf("%s: class %q concurrent %v, interference %q", machine, c.Name, c.Concurrent, c.Interference)
		}
		if blocking && (!strings.Contains(c.Interference, "ce_write") || !strings.Contains(c.Interference, "slower")) {
			t.Errorf("%s: interference %q does not say what was slower", machine, c.Interference)
		}
		if n := len(find(run, func(f results.Figure) bool { return f.Test == results.CEWrite && f.Error == "" })); n != 56 {
			t.Errorf("%s: %d ce_write figures, want 56", machine, n)
		}
		// Alone or together, a blocking plane's pairs measure full speed
		// once the class is measured one at a time.
		for _, f := range find(run, func(f results.Figure) bool { return f.Test == results.CEWrite }) {
			if f.Stats == nil || f.Stats.Median < 350 {
				t.Errorf("%s: %d→%d measured %v", machine, f.Src, f.Dst, f.Stats)
				break
			}
		}
	}
}

// Pairs measured at once share no device, so each device's NVLink
// counters hold its own pair's traffic, and each figure gets them.
func TestPairsAtOnceCarryTheirLinkTraffic(t *testing.T) {
	mon := &countingMonitor{reads: map[int]uint64{}, fail: -1}
	opt := options(results.CEWrite, results.SMBidir)
	opt.Devices, opt.Size, opt.Samples, opt.Monitor = []int{0, 1, 2, 3}, measure.TrafficMinSize, 3, mon
	run, err := simRun(t, "dgx-h100", opt)
	if err != nil {
		t.Fatal(err)
	}
	want := results.LinkTraffic{Src: trafficStep, Dst: trafficStep}
	if !run.Plan.Classes[0].Concurrent {
		t.Fatal("dgx-h100's pairs were not measured at once")
	}
	for _, f := range run.Figures {
		if f.Traffic == nil || *f.Traffic != want {
			t.Errorf("%s: traffic %+v, want one step on each device %+v", f.Key(), f.Traffic, want)
		}
	}
	if n := len(run.Figures); n != 12+12*6 {
		t.Errorf("%d figures, want 12 ce_write and 72 sm_bidir", n)
	}
}

// A sampled plan measures the copy engine's one-way matrices on every pair,
// the other pair tests on its detail pairs, the sweeps on the
// representatives, and the totals of the tests of many pairs at once.
func TestSampledRun(t *testing.T) {
	opt := options(results.CERead, results.SMRead, results.AllToOne, results.LatPingPong)
	opt.Plan.Peers, opt.Size = 1, 1<<20
	opt.Sweep = []uint64{4 << 10}
	run, err := simRun(t, "dgx-h100", opt)
	if err != nil {
		t.Fatal(err)
	}
	p := run.Plan
	if p.Mode != results.PlanSampled || !p.GroupTotalsOnly || !slices.Equal(p.EveryPair, []results.Test{results.CERead, results.CEWrite}) {
		t.Fatalf("plan %+v", p)
	}
	count := func(test results.Test, size uint64) int {
		return len(find(run, func(f results.Figure) bool { return f.Test == test && f.Size == size && f.Error == "" }))
	}
	detail := len(p.Detail)
	for _, c := range []struct {
		test results.Test
		size uint64
		want int
	}{
		{results.CERead, opt.Size, 56}, {results.SMRead, opt.Size, detail},
		{results.CERead, 4 << 10, 2}, {results.SMRead, 4 << 10, 2},
		{results.LatPingPong, 0, detail},
	} {
		got := count(c.test, c.size)
		if c.test == results.LatPingPong {
			pairs := map[[2]int]bool{}
			for _, f := range find(run, func(f results.Figure) bool { return f.Test == c.test }) {
				pairs[[2]int{f.Src, f.Dst}] = true
			}
			got = len(pairs)
		}
		if got != c.want {
			t.Errorf("%s at %d bytes: %d figures, want %d", c.test, c.size, got, c.want)
		}
	}
	for _, f := range find(run, func(f results.Figure) bool { return f.Test == results.AllToOne }) {
		if f.Part != results.PartTotal {
			t.Errorf("%s: a part of a group test in a sampled plan", f.Key())
		}
	}
}

// Plan options as a command line gives them: each fault said by its flag.
func TestPlanOptionsValidate(t *testing.T) {
	for o, want := range map[bench.PlanOptions]string{
		{Seed: 1}:                           "",
		{AllPairs: true, Seed: 1}:           "",
		{Peers: 2, Seed: 7}:                 "",
		{Peers: -1, Seed: 1}:                "--sample-peers must be 0 or more (got -1)",
		{AllPairs: true, Peers: 2, Seed: 1}: "--all-pairs and --sample-peers exclude each other",
		{}:                                  "--sample-seed must not be 0",
	} {
		err := o.Validate()
		if got := fmt.Sprint(err); err == nil && want != "" || err != nil && got != want {
			t.Errorf("%+v: %v, want %q", o, err, want)
		}
	}
}
