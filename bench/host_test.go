package bench_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// hostTests are the host tests of the catalogue.
var hostTests = []results.Test{
	results.H2D, results.D2H, results.SMH2D, results.SMD2H, results.HostBidir, results.SMHostBidir,
	results.HostToAll, results.AllToHost, results.HostAllBidir, results.SMHostToAll, results.SMAllToHost, results.SMHostAllBidir,
	results.LatHostChase,
}

// shapes lists each test's figures as "part src→dst" in run order.
func shapes(run *results.Run) map[results.Test][]string {
	out := map[results.Test][]string{}
	for _, f := range run.Figures {
		out[f.Test] = append(out[f.Test], fmt.Sprintf("%s %d→%d", f.Part, f.Src, f.Dst))
	}
	return out
}

// TestHostTests checks the figures of every host test on both devices of
// the H200 pair: their parts and ends, the SM copy kernel they use, totals,
// verification, and the host chase's latency.
func TestHostTests(t *testing.T) {
	run, err := simRun(t, "h200x2", options(hostTests...))
	if err != nil {
		t.Fatal(err)
	}
	one := func(part string) []string { return []string{part + " -1→0", part + " -1→1"} }
	both := []string{"forward -1→0", "reverse -1→0", "total -1→0", "forward -1→1", "reverse -1→1", "total -1→1"}
	want := map[results.Test][]string{
		results.H2D: one(""), results.SMH2D: one(""), results.D2H: {" 0→-1", " 1→-1"}, results.SMD2H: {" 0→-1", " 1→-1"},
		results.HostBidir: both, results.SMHostBidir: both,
		results.HostToAll:    {"pair -1→0", "pair -1→1", "total -1→-1"},
		results.AllToHost:    {"pair 0→-1", "pair 1→-1", "total -1→-1"},
		results.HostAllBidir: {"forward -1→0", "reverse -1→0", "forward -1→1", "reverse -1→1", "total -1→-1"},
		results.LatHostChase: one(""),
	}
	want[results.SMHostToAll], want[results.SMAllToHost], want[results.SMHostAllBidir] = want[results.HostToAll], want[results.AllToHost], want[results.HostAllBidir]
	got := shapes(run)
	for _, test := range hostTests {
		if !slices.Equal(got[test], want[test]) {
			t.Errorf("%s figures %q, want %q", test, got[test], want[test])
		}
	}
	for _, f := range run.Figures {
		if f.Error != "" || f.Stats == nil {
			t.Errorf("%s %s %d→%d: error %q", f.Test, f.Part, f.Src, f.Dst, f.Error)
			continue
		}
		if sm := strings.HasPrefix(string(f.Test), "sm_"); sm && f.Engine != results.SMCopyEngine(kernels.DefaultCopyVariant) {
			t.Errorf("%s: engine %s, want the register-path %s on host memory", f.Test, f.Engine, kernels.DefaultCopyVariant)
		}
		if f.Part == results.PartTotal && f.Src == -1 && f.Dst == -1 && f.Params["devices"] != "2" {
			t.Errorf("%s total: params %v, want devices=2", f.Test, f.Params)
		}
		if f.Unit == results.UnitGBps && f.Verify != results.VerifyPassed {
			t.Errorf("%s %s %d→%d: verify %s %s", f.Test, f.Part, f.Src, f.Dst, f.Verify, f.VerifyDetail)
		}
		if f.Test == results.LatHostChase && (f.Stats.Median < 1100 || f.Stats.Median > 1300) {
			t.Errorf("host chase from %d: %.0f ns per load, want about 1190 (hardware.md)", f.Dst, f.Stats.Median)
		}
	}
	// A total both ways is both directions' bytes over the longer time: at
	// most the sum of the parts, well over either.
	med := map[string]float64{}
	for _, f := range run.Figures {
		if f.Test == results.HostBidir && f.Dst == 0 {
			med[string(f.Part)] = f.Stats.Median
		}
	}
	if tot, sum := med["total"], med["forward"]+med["reverse"]; tot > sum*1.001 || tot < 1.5*max(med["forward"], med["reverse"]) {
		t.Errorf("host_bidir 0: total %.1f GB/s against forward %.1f and reverse %.1f", tot, med["forward"], med["reverse"])
	}
	// Every device both ways at once holds its windows (each direction
	// timed while every other copy runs: host_all_both_ways_held), and
	// only it: its total is, sample by sample, the sum of the four copies'
	// rates.
	parts := map[int][]float64{}
	for _, f := range run.Figures {
		held := f.Params[measure.ParamHeldReps] != ""
		if all := f.Test == results.HostAllBidir || f.Test == results.SMHostAllBidir; held != all {
			t.Errorf("%s %s %d→%d: held_reps_per_sample %q", f.Test, f.Part, f.Src, f.Dst, f.Params[measure.ParamHeldReps])
		}
		if f.Test != results.HostAllBidir {
			continue
		}
		for k, v := range f.Samples {
			if f.Part == results.PartTotal {
				if sum := parts[k]; len(sum) != 4 || math.Abs(v-(sum[0]+sum[1]+sum[2]+sum[3])) > 1e-4*v { // samples keep a few digits
					t.Errorf("host_all_bidir total sample %d: %.3f, the parts' %v", k, v, sum)
				}
			} else {
				parts[k] = append(parts[k], v)
			}
		}
	}
}

// TestHostTestsOnOneDevice: every host test runs with one GPU selected, the
// aggregates then of that device alone.
func TestHostTestsOnOneDevice(t *testing.T) {
	opt := options(hostTests...)
	opt.Devices = []int{1}
	run, err := simRun(t, "h200x2", opt)
	if err != nil {
		t.Fatal(err)
	}
	got := shapes(run)
	for _, test := range hostTests {
		if len(got[test]) == 0 {
			t.Errorf("no %s figure", test)
		}
	}
	if want := []string{"pair -1→1", "total -1→-1"}; !slices.Equal(got[results.HostToAll], want) {
		t.Errorf("host_to_all figures %q, want %q", got[results.HostToAll], want)
	}
	for _, f := range run.Figures {
		if f.Error != "" || f.Verify == results.VerifyFailed {
			t.Errorf("%s %s %d→%d: error %q, verify %s", f.Test, f.Part, f.Src, f.Dst, f.Error, f.Verify)
		}
		// One device's two directions end together: not held.
		if f.Params[measure.ParamHeldReps] != "" {
			t.Errorf("%s %s %d→%d: held on one device (%s)", f.Test, f.Part, f.Src, f.Dst, f.Params[measure.ParamHeldReps])
		}
	}
}

// TestHostFiguresOfAStuckDeviceFail: a device whose latches never release
// fails its own host figures and every aggregate it is part of; the other
// device's figures stand.
func TestHostFiguresOfAStuckDeviceFail(t *testing.T) {
	opt := options(results.H2D, results.SMHostBidir, results.HostAllBidir)
	opt.LatchTimeout = 50 * time.Millisecond
	run, err := simRun(t, "h200x2", opt, sim.WithFault(sim.Fault{Kind: sim.FaultLatchStuck, Src: 0, Dst: sim.AnyDevice}))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Figures {
		stuck := f.Src == 0 || f.Dst == 0 || f.Test == results.HostAllBidir
		if failed := strings.Contains(f.Error, "latch timed out"); failed != stuck {
			t.Errorf("%s %s %d→%d: error %q", f.Test, f.Part, f.Src, f.Dst, f.Error)
		}
	}
}

// TestHostCopiesVerified: a copy into host memory that delivers a wrong
// word fails the check the CPU makes, and one out of host memory the
// device's check; the other figures pass.
func TestHostCopiesVerified(t *testing.T) {
	run, err := simRun(t, "h200x2", options(results.H2D, results.D2H, results.SMD2H),
		sim.WithFault(sim.Fault{Kind: sim.FaultCorrupt, Src: 0, Dst: sim.HostMemory, Offset: 4096}),
		sim.WithFault(sim.Fault{Kind: sim.FaultCorrupt, Src: sim.HostMemory, Dst: 1, Offset: 4096}))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Figures {
		corrupt := (f.Src == 0 && f.Dst == results.HostDevice) || (f.Src == results.HostDevice && f.Dst == 1)
		want := results.VerifyPassed
		if corrupt {
			want = results.VerifyFailed
		}
		if f.Verify != want || (corrupt && !strings.Contains(f.VerifyDetail, "first bad byte at offset 4096, 1 bad")) {
			t.Errorf("%s %d→%d: verify %s %q, want %s", f.Test, f.Src, f.Dst, f.Verify, f.VerifyDetail, want)
		}
	}
}
