package results_test

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

func TestFigureKey(t *testing.T) {
	tests := []struct {
		f    results.Figure
		want string
	}{
		{results.Figure{Test: results.CERead, Engine: results.EngineCopy, Direction: results.DirRead, Src: 0, Dst: 1, Size: 512 << 20},
			"ce_read|copy_engine|read||0|1|536870912|"},
		{results.Figure{Test: results.CEBidir, Engine: results.EngineCopy, Direction: results.DirWrite, Part: results.PartTotal, Src: -1, Dst: 3, Size: 4},
			"ce_bidir|copy_engine|write|total|-1|3|4|"},
		{results.Figure{Test: results.AtomicTput, Engine: results.EngineSM, Src: 1, Dst: 1, Size: 4, Params: map[string]string{"op": "add_u32", "contended": "1"}},
			"atomic_tput|sm|||1|1|4|contended=1,op=add_u32"},
		// How a figure was sampled does not make it another figure.
		{results.Figure{Test: results.H2D, Engine: results.EngineCopy, Src: -1, Dst: 0, Size: 8, Params: map[string]string{"reps_per_sample": "7"}},
			"h2d|copy_engine|||-1|0|8|"},
		{results.Figure{Test: results.SMRead, Params: map[string]string{"variant": "v4_u4", "reps_per_sample": "3", "block_size": "512"}},
			"sm_read||||0|0|0|block_size=512,variant=v4_u4"},
	}
	for _, tt := range tests {
		if got := tt.f.Key(); got != tt.want {
			t.Errorf("Key() = %q, want %q", got, tt.want)
		}
	}
}

func TestKeysAreUnique(t *testing.T) {
	for _, n := range []int{2, 4, 9} {
		run := resultstest.New(resultstest.Options{GPUs: n, Faults: true})
		seen := map[string]bool{}
		for _, f := range run.Figures {
			k := f.Key()
			if seen[k] {
				t.Fatalf("%d GPUs: two figures have the key %q", n, k)
			}
			seen[k] = true
		}
	}
}

func TestQueries(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8, NoSweep: true})
	if got := run.DeviceIndices(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("DeviceIndices = %v", got)
	}
	if got := len(run.FiguresOf(results.CERead)); got != 56 {
		t.Errorf("FiguresOf(ce_read) has %d figures, want 56", got)
	}
	if got := run.GPUSummary(); got != "8× NVIDIA H100 NVL" {
		t.Errorf("GPUSummary = %q", got)
	}
	p, ok := run.Topology.Pair(0, 1)
	if r, rok := p.PerformanceRank(); !ok || !rok || r != 0 {
		t.Errorf("pair 0->1 rank %d %v %v, want 0", r, ok, rok)
	}
	if _, ok := (*results.Topology)(nil).Pair(0, 1); ok {
		t.Error("a nil topology has a pair")
	}
	tests := run.Tests()
	if tests[0] != results.CERead || !slices.Contains(tests, results.AtomicLatency) {
		t.Errorf("Tests = %v", tests)
	}
	// Without environment or topology, the figures name the devices.
	bare := &results.Run{Figures: []results.Figure{{Src: -1, Dst: 3}, {Src: 1, Dst: 3}}}
	if got := bare.DeviceIndices(); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("DeviceIndices of bare run = %v", got)
	}
}

func TestFigureValue(t *testing.T) {
	ok := results.Figure{Samples: []float64{1, 2, 3}, Stats: figstats.ComputeStats([]float64{1, 2, 3}), Verify: results.VerifyPassed}
	if v, good := ok.Value(); !good || v != 2 {
		t.Errorf("Value = %v %v", v, good)
	}
	bad := ok
	bad.Verify = results.VerifyFailed
	if _, good := bad.Value(); good || !bad.Failed() {
		t.Error("a failed verification has a value")
	}
	errored := results.Figure{Error: "x"}
	if _, good := errored.Value(); good {
		t.Error("an errored figure has a value")
	}
	if !(results.Figure{Unit: results.UnitNs}).LowerIsBetter() || (results.Figure{Unit: results.UnitGBps}).LowerIsBetter() {
		t.Error("LowerIsBetter is wrong")
	}
}

func TestFailureLabel(t *testing.T) {
	for _, tt := range []struct {
		f    results.Figure
		want string
	}{
		{results.Figure{Verify: results.VerifyPassed}, ""},
		{results.Figure{Error: "launch timed out", ErrorName: "CUDA_ERROR_LAUNCH_TIMEOUT"}, "ERR LAUNCH_TIMEOUT"},
		{results.Figure{Error: "child process died"}, "ERR"},
		{results.Figure{Verify: results.VerifyFailed}, "BAD DATA"},
		{results.Figure{Error: "x", ErrorName: "CUDA_ERROR_UNKNOWN", Verify: results.VerifyFailed}, "ERR UNKNOWN"},
	} {
		if got := tt.f.FailureLabel(); got != tt.want {
			t.Errorf("%+v: FailureLabel = %q, want %q", tt.f, got, tt.want)
		}
		if tt.f.Failed() != (tt.want != "") {
			t.Errorf("%+v: Failed = %v, but FailureLabel = %q", tt.f, tt.f.Failed(), tt.want)
		}
	}
}

func TestLinkLimit(t *testing.T) {
	p := results.Pair{Src: 0, Dst: 1, LinkGBps: 450}
	for _, tt := range []struct {
		f    results.Figure
		want float64
	}{
		{results.Figure{Test: results.CERead}, 450},
		{results.Figure{Test: results.SMBidir, Part: results.PartForward}, 450},
		{results.Figure{Test: results.SMBidir, Part: results.PartTotal}, 900},
		{results.Figure{Test: results.IPCCEBidir, Part: results.PartTotal}, 900},
		{results.Figure{Test: results.AllPairs, Part: results.PartTotal}, 450},
	} {
		if got := p.LinkLimit(&tt.f); got != tt.want {
			t.Errorf("%s %s: LinkLimit = %v, want %v", tt.f.Test, tt.f.Part, got, tt.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0 B", 4: "4 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 10: "64 KiB",
		512 << 20: "512 MiB", 1 << 30: "1 GiB", 3 << 30: "3 GiB", 1 << 40: "1 TiB",
	} {
		if got := results.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMatrixSize(t *testing.T) {
	if got := resultstest.New(resultstest.Options{GPUs: 2}).MatrixSize(); got != resultstest.MatrixSize {
		t.Errorf("MatrixSize with a sweep = %d, want %d", got, resultstest.MatrixSize)
	}
	sweepOnly := &results.Run{}
	for _, z := range []uint64{4, 1 << 20, 1 << 30} {
		sweepOnly.Figures = append(sweepOnly.Figures, results.Figure{Test: results.CEWrite, Src: 0, Dst: 1, Size: z})
	}
	if got := sweepOnly.MatrixSize(); got != 1<<30 {
		t.Errorf("MatrixSize of a lone sweep = %d, want the largest size", got)
	}
	if got := (&results.Run{}).MatrixSize(); got != 0 {
		t.Errorf("MatrixSize of no figures = %d", got)
	}
}
