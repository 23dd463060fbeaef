package bench_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// options are engine settings for the tests: the given tests, verified.
func options(tests ...results.Test) bench.Options {
	var o bench.Options
	o.Tests, o.Verify = tests, true
	return o
}

// simRun runs tests on a simulated machine and returns the results.
func simRun(t *testing.T, machine string, opt bench.Options, simOpts ...sim.Option) (*results.Run, error) {
	t.Helper()
	drv, err := sim.New(machine, simOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drv.Close() })
	return simRunOn(t, drv, opt)
}

// simRunOn runs tests on an open simulated driver, which later runs may
// share (a device's state carried from one run to the next).
func simRunOn(t *testing.T, drv *sim.Driver, opt bench.Options) (*results.Run, error) {
	t.Helper()
	var err error
	if opt.Devices == nil {
		if opt.Devices, err = bench.SelectDevices(drv, nil); err != nil {
			t.Fatal(err)
		}
	}
	if opt.Size == 0 {
		opt.Size = 1 << 20
	}
	if opt.Samples == 0 {
		opt.Samples = 3
	}
	run := &results.Run{Schema: results.SchemaVersion, Simulated: true, Start: time.Now(), Verify: opt.Verify}
	env, topo, err := bench.Discover(drv, drv.Monitor(), opt.Devices)
	if err != nil {
		t.Fatal(err)
	}
	run.Environment, run.Topology = env, topo
	e := bench.NewEngine(drv, opt)
	err = e.Run(context.Background(), run)
	run.Notes = append(run.Notes, e.Notes()...)
	run.End, run.Complete = time.Now(), err == nil
	return run, err
}

func find(run *results.Run, keep func(f results.Figure) bool) []results.Figure {
	var out []results.Figure
	for _, f := range run.Figures {
		if keep(f) {
			out = append(out, f)
		}
	}
	return out
}

// TestGroupTestsOfOnePair: a group test whose group is one pair is left
// out where the pair tests measure that pair; on four devices, or without
// the pair tests that would stand for it, it is measured.
func TestGroupTestsOfOnePair(t *testing.T) {
	for _, c := range []struct {
		machine string
		tests   []results.Test
		want    bool
	}{
		{"h200x2", []results.Test{results.AllToOne, results.CERead}, true}, // ce_write would stand for the pushes
		{"h200x2", []results.Test{results.AllToOne, results.CERead, results.CEWrite}, false},
		{"h200x2", []results.Test{results.AllPairs, results.CEBidir}, false},
		{"pcie-4gpu", []results.Test{results.AllToOne, results.CERead, results.CEWrite}, true},
	} {
		opt := options(c.tests...)
		opt.Size = 1 << 20
		run, err := simRun(t, c.machine, opt)
		if err != nil {
			t.Fatal(err)
		}
		group := c.tests[0]
		if n := len(find(run, func(f results.Figure) bool { return f.Test == group && f.Error == "" })); (n > 0) != c.want {
			t.Errorf("%s with %v: %d %s figures, want measured %v", c.machine, c.tests, n, group, c.want)
		}
	}
}

func TestEverySimulatedTestPasses(t *testing.T) {
	all, _ := results.ParseTests("all", "")
	opt := options(all...)
	opt.Sweep = []uint64{4, 4096, 1 << 20}
	run, err := simRun(t, "h200x2", opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Validate(); err != nil {
		t.Fatalf("the run does not validate: %v", err)
	}
	seen := map[results.Test]bool{}
	for _, f := range run.Figures {
		seen[f.Test] = true
		if f.Error != "" || f.Verify == results.VerifyFailed {
			t.Errorf("%s %s %d→%d %d: error %q, verify %s %s", f.Test, f.Engine, f.Src, f.Dst, f.Size, f.Error, f.Verify, f.VerifyDetail)
		}
		if f.Stats == nil || f.Stats.N != len(f.Samples) || f.Stats.Median <= 0 {
			t.Errorf("%s %d→%d: stats %+v for %d samples", f.Test, f.Src, f.Dst, f.Stats, len(f.Samples))
		}
		if f.Unit == "GB/s" && f.Verify != results.VerifyPassed {
			t.Errorf("%s %d→%d: bandwidth figure not verified (%s)", f.Test, f.Src, f.Dst, f.Verify)
		}
	}
	// With two devices each group test's group is one pair, which the
	// pair tests measure alone: those are left out, and the notes say so.
	grouped := []results.Test{results.AllToOne, results.OneToAll, results.SMAllToOne, results.SMOneToAll, results.AllPairs}
	for _, info := range results.Catalogue() {
		if want := info.Name; !want.IsIPC() && !seen[want] && !slices.Contains(grouped, want) {
			t.Errorf("no %s figure", want)
		}
	}
	for _, g := range grouped {
		if seen[g] {
			t.Errorf("%s measured on two devices, where the pair tests measure its one pair", g)
		}
	}
	if !slices.ContainsFunc(run.Notes, func(n string) bool {
		return strings.Contains(n, "each group is one pair") && strings.Contains(n, "all_to_one (ce_write and ce_read)") && strings.Contains(n, "all_pairs (ce_bidir)")
	}) {
		t.Errorf("no note of the group tests left out in %q", run.Notes)
	}
	// The sweep gives every one-direction test every size.
	if n := len(find(run, func(f results.Figure) bool { return f.Test == results.CERead && f.Src == 0 && f.Dst == 1 })); n != 3 {
		t.Errorf("ce_read 0→1 has %d sizes, want 3 (the matrix size is also a sweep size)", n)
	}
	// Bidirectional tests report each direction and the total.
	parts := map[string]bool{}
	for _, f := range find(run, func(f results.Figure) bool { return f.Test == results.CEBidir && f.Src == 0 && f.Dst == 1 }) {
		parts[string(f.Direction)+"/"+string(f.Part)] = true
	}
	if len(parts) != 6 {
		t.Errorf("ce_bidir 0→1 parts: %v, want read and write × forward, reverse, total", parts)
	}
}

func TestCorruptionFailsOnlyThatFigure(t *testing.T) {
	run, err := simRun(t, "h200x2", options(results.CERead, results.CEWrite),
		sim.WithFault(sim.Fault{Kind: sim.FaultCorrupt, Src: 0, Dst: 1, Offset: 4096}))
	if err != nil {
		t.Fatal(err)
	}
	bad := find(run, func(f results.Figure) bool { return f.Verify == results.VerifyFailed })
	if len(bad) != 2 {
		t.Fatalf("%d failed figures, want 2 (ce_read and ce_write 0→1): %+v", len(bad), bad)
	}
	for _, f := range bad {
		if f.Src != 0 || f.Dst != 1 || !strings.Contains(f.VerifyDetail, "offset 4096") {
			t.Errorf("%s %d→%d: %q, want the pair 0→1 and offset 4096", f.Test, f.Src, f.Dst, f.VerifyDetail)
		}
		if len(f.Samples) == 0 {
			t.Errorf("%s: the timing of a figure with bad data was lost", f.Test)
		}
	}
	if ok := find(run, func(f results.Figure) bool { return f.Src == 1 && f.Verify == results.VerifyPassed }); len(ok) != 2 {
		t.Errorf("the other direction: %d passed figures, want 2", len(ok))
	}
}

func TestUnsupportedPairIsRecordedAndStaged(t *testing.T) {
	// The staged copies take the detail pairs: by default the
	// representatives of each of pcie-4gpu's three link classes (among
	// them both pairs without peer access), with --all-pairs every pair.
	for _, all := range []bool{false, true} {
		opt := options(results.CERead, results.SMWrite, results.NoP2PCopy)
		opt.Plan.AllPairs = all
		run, err := simRun(t, "pcie-4gpu", opt)
		if err != nil {
			t.Fatal(err)
		}
		var unsupported, staged int
		for _, f := range run.Figures {
			if f.ErrorName == "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED" {
				unsupported++
				if !strings.Contains(f.Error, "pair") {
					t.Errorf("error %q does not name the pair", f.Error)
				}
			}
			if f.Test == results.NoP2PCopy && f.Error == "" && f.Verify == results.VerifyPassed {
				staged++
			}
		}
		if unsupported == 0 {
			t.Error("no figure recorded CUDA_ERROR_PEER_ACCESS_UNSUPPORTED")
		}
		if want := map[bool]int{false: 6, true: 12}[all]; staged != want {
			t.Errorf("all pairs %v: %d staged figures passed, want %d", all, staged, want)
		}
	}
}

func TestFailingPairDoesNotStopTheRun(t *testing.T) {
	run, err := simRun(t, "h200x2", options(results.CERead, results.SMRead),
		sim.WithFault(sim.Fault{Kind: sim.FaultAsyncError, Src: sim.AnyDevice, Dst: sim.AnyDevice, Code: cuda.ErrorLaunchFailed}),
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Figures) != 4 {
		t.Fatalf("%d figures, want 4", len(run.Figures))
	}
	for _, f := range run.Figures {
		if f.Error == "" || f.ErrorName != "CUDA_ERROR_LAUNCH_FAILED" {
			t.Errorf("%s %d→%d: error %q (%s), want CUDA_ERROR_LAUNCH_FAILED", f.Test, f.Src, f.Dst, f.Error, f.ErrorName)
		}
	}
}

func TestLatchTimeoutIsAnError(t *testing.T) {
	opt := options(results.CEWrite)
	opt.LatchTimeout = 50 * time.Millisecond
	run, err := simRun(t, "h200x2", opt,
		sim.WithFault(sim.Fault{Kind: sim.FaultLatchStuck, Src: 0, Dst: sim.AnyDevice}))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Figures {
		timedOut := strings.Contains(f.Error, "latch timed out")
		if (f.Src == 0) != timedOut {
			t.Errorf("%s %d→%d: error %q", f.Test, f.Src, f.Dst, f.Error)
		}
	}
}

func TestWrongAtomicCountFailsTheFigure(t *testing.T) {
	run, err := simRun(t, "h200x2", options(results.AtomicTput),
		sim.WithFault(sim.Fault{Kind: sim.FaultAtomicCount, Src: 0, Dst: 1}))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Figures {
		failed := f.Verify == results.VerifyFailed
		if failed != (f.Src == 0 && f.Dst == 1) {
			t.Errorf("%s %s %d→%d: verify %s %s", f.Test, f.Params["op"], f.Src, f.Dst, f.Verify, f.VerifyDetail)
		}
		if failed && !strings.Contains(f.VerifyDetail, "want exactly") {
			t.Errorf("detail %q does not say what was expected", f.VerifyDetail)
		}
	}
}

func TestCancelKeepsWhatWasMeasured(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bw, _ := results.ParseTests("all", results.CommandBW)
	opt := options(bw...)
	opt.Devices, opt.Size, opt.Samples = []int{0, 1}, 1<<20, 3
	opt.Progress = func(done, total int, step string) {
		if done == 5 {
			cancel()
		}
	}
	run := &results.Run{Schema: results.SchemaVersion}
	err = bench.NewEngine(drv, opt).Run(ctx, run)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	if len(run.Figures) == 0 {
		t.Fatal("nothing measured before the cancel was kept")
	}
	// Everything was released: a fresh enable of 0→1 succeeds (not ALREADY_ENABLED).
	c0, _ := drv.Context(0)
	c1, _ := drv.Context(1)
	if err := c0.EnablePeerAccess(c1, 0); err != nil {
		t.Errorf("peer access 0→1 left enabled after the cancel: %v", err)
	}
}

func TestConformanceOnSimulatedH200(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	cases, err := bench.Conformance(drv, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]results.ConformanceCase{}
	for _, c := range cases {
		byName[c.Name] = c
	}
	for name, want := range map[string]string{
		"enable the same peer a second time":  "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
		"disable a peer that is not enabled":  "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
		"enable with flags = 1":               "CUDA_ERROR_INVALID_VALUE",
		"attribute of a device with itself":   "CUDA_ERROR_INVALID_DEVICE",
		"enable a context's access to itself": "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	} {
		c, ok := byName[name]
		if !ok || c.Observed != want {
			t.Errorf("%s: observed %q, want %q", name, c.Observed, want)
		}
	}
	if c := byName["enable a context's access to itself"]; c.Matches {
		t.Error("the self-enable case should differ from the documentation (INVALID_CONTEXT), as the 580 driver does")
	}
	// Access is left as found: 0→1 can be enabled afresh.
	c0, _ := drv.Context(0)
	c1, _ := drv.Context(1)
	if err := c0.EnablePeerAccess(c1, 0); err != nil {
		t.Errorf("after the check, enabling 0→1: %v", err)
	}
}

func TestTuneRecordsAStableWinner(t *testing.T) {
	opt := options(results.SMRead)
	opt.Tune, opt.Samples = true, 3
	run, err := simRun(t, "h200x2", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Tuning) != 8 {
		t.Fatalf("%d tuning records, want 8 (2 pairs × 4 directions)", len(run.Tuning))
	}
	for _, tr := range run.Tuning {
		if tr.Winner.Variant == "" || tr.Winner.MedianGBps <= 0 || !tr.Winner.Verified {
			t.Errorf("%d→%d %s: winner %+v", tr.Src, tr.Dst, tr.Direction, tr.Winner)
		}
		for _, c := range tr.Tried {
			if c.MedianGBps > tr.Winner.MedianGBps*1.02 && c.Error == "" {
				t.Errorf("%d→%d %s: %s at %.1f beat the winner %.1f by more than the final re-measurement explains",
					tr.Src, tr.Dst, tr.Direction, c.Variant, c.MedianGBps, tr.Winner.MedianGBps)
			}
		}
	}
	// The SM figures after tuning use the winners.
	for _, f := range find(run, func(f results.Figure) bool { return f.Test == results.SMRead }) {
		w := measure.TunedFrom(run.Tuning)[measure.TuneKey{Src: f.Src, Dst: f.Dst, Direction: "read"}]
		if f.Params["variant"] != w.Variant {
			t.Errorf("sm_read %d→%d used %s, the tuning chose %s", f.Src, f.Dst, f.Params["variant"], w.Variant)
		}
	}
}

// Flows that share a source buffer must share its pattern: one_to_all and
// all_pairs on more than two GPUs verify every destination, pushed and
// pulled, by the copy engine and by SM kernels.
func TestAggregatesVerifyOnEightGPUs(t *testing.T) {
	opt := options(results.AllToOne, results.OneToAll, results.SMAllToOne, results.SMOneToAll, results.AllPairs)
	opt.Size = 8 << 20
	run, err := simRun(t, "dgx-h100", opt)
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]int{}
	for _, f := range run.Figures {
		if f.Verify != results.VerifyPassed || f.Error != "" {
			t.Errorf("%s %s %d→%d: verify %s %s %s", f.Test, f.Part, f.Src, f.Dst, f.Verify, f.VerifyDetail, f.Error)
		}
		if f.Part == results.PartTotal {
			totals[string(f.Test)+" "+string(f.Direction)]++
		}
	}
	for _, test := range []results.Test{results.AllToOne, results.OneToAll, results.SMAllToOne, results.SMOneToAll} {
		for _, dir := range []results.Direction{results.DirWrite, results.DirRead} {
			if n := totals[string(test)+" "+string(dir)]; n != 8 {
				t.Errorf("%s %s: %d totals, want one per GPU", test, dir, n)
			}
		}
	}
	if n := totals["all_pairs write"]; n != 1 || len(totals) != 9 {
		t.Errorf("totals %v: want all_pairs pushed once and nothing else", totals)
	}
}

// TestSizeNearTwoToTheSixtyFour is issue 19's "--sizes
// 4KiB,18446744073709551612": refused before anything is allocated, instead
// of buffers rounded past zero and every figure ILLEGAL_ADDRESS.
func TestSizeNearTwoToTheSixtyFour(t *testing.T) {
	for _, o := range []bench.Options{
		{Sweep: []uint64{4 << 10, 1<<64 - 4}},
		{Settings: measure.Settings{Size: 1<<64 - 256}},
		{Settings: measure.Settings{Size: measure.MaxTransferSize + 256}},
	} {
		o.Tests, o.Verify = []results.Test{results.CERead}, true
		run, err := simRun(t, "h200x2", o)
		if err == nil || !strings.Contains(err.Error(), "larger than any GPU's memory") {
			t.Errorf("size %d, sweep %v: %v", o.Size, o.Sweep, err)
		}
		if len(run.Figures) != 0 {
			t.Errorf("size %d, sweep %v: %d figures", o.Size, o.Sweep, len(run.Figures))
		}
	}
}
