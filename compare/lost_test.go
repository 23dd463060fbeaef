package compare_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/results"
)

// withFigures returns a copy of run whose figures are those keep accepts,
// each as change makes it.
func withFigures(run *results.Run, keep func(f *results.Figure) bool, change func(f *results.Figure)) *results.Run {
	out := *run
	out.Figures = nil
	for _, f := range run.Figures {
		if keep != nil && !keep(&f) {
			continue
		}
		if change != nil {
			change(&f)
		}
		out.Figures = append(out.Figures, f)
	}
	return &out
}

func is(test results.Test, src, dst int, size uint64) func(f *results.Figure) bool {
	return func(f *results.Figure) bool { return f.Test == test && f.Src == src && f.Dst == dst && f.Size == size }
}

// TestLostFigures: a figure the baseline measured that the new run failed
// (an error, data that did not verify) or lacks is a regression, named,
// whatever its noise; one the baseline failed is not.
func TestLostFigures(t *testing.T) {
	base := baseRun(t)
	failed := is(results.CERead, 0, 1, 512<<20)
	bad := is(results.SMRead, 1, 0, 512<<20)
	missing := is(results.SMWrite, 1, 0, 512<<20)
	other := withFigures(base, func(f *results.Figure) bool { return !missing(f) }, func(f *results.Figure) {
		switch {
		case failed(f):
			f.Samples, f.Stats, f.Rounds, f.Error, f.ErrorName = nil, nil, nil, "an illegal memory access was encountered", "CUDA_ERROR_ILLEGAL_ADDRESS"
		case bad(f):
			f.Verify = results.VerifyFailed
		}
	})
	res := run(t, compare.Options{Threshold: 0.05}, base, other)
	want := map[string]string{}
	for _, f := range base.Figures {
		switch {
		case failed(&f):
			want[f.Key()] = "failed (ERR ILLEGAL_ADDRESS)"
		case bad(&f):
			want[f.Key()] = "failed (BAD DATA)"
		case missing(&f):
			want[f.Key()] = "missing"
		}
	}
	if len(want) != 3 {
		t.Fatalf("%d figures to lose, want 3", len(want))
	}
	regs := res.Regressions()
	if len(regs) != 3 {
		t.Errorf("%d regressions, want the 3 lost figures", len(regs))
	}
	for _, row := range regs {
		if c := row.Changes[0]; c.Lost != want[row.Key] {
			t.Errorf("%s: lost %q, want %q", row.Key, c.Lost, want[row.Key])
		}
	}
	if len(res.NotMeasured) != 0 {
		t.Errorf("not measured: %v; want none (the plan is the baseline's)", res.NotMeasured)
	}
	var text bytes.Buffer
	if err := compare.WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Flagged: 3 regressions", "REGRESSION  ce_read copy_engine read 0→1 512 MiB", "failed (ERR ILLEGAL_ADDRESS)",
		"REGRESSION  sm_write sm write 1→0 512 MiB", "  missing  ", "3 of the regressions are figures the baseline measured and a run failed or lacks"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text lacks %q:\n%.2000s", s, text.String())
		}
	}
	// The other way round nothing is lost: the new run measured what the
	// baseline failed or lacked.
	if regs := run(t, compare.Options{Threshold: 0.05}, other, base).Regressions(); len(regs) != 0 {
		t.Errorf("%d regressions where the new run measured what the baseline lost", len(regs))
	}
}

// TestPlanDiffers: the baseline's figures a run's plan left out (a test it
// did not select, a size it did not measure, a GPU it did not have) are
// listed by test and reason, not gated; a run cut short has no plan to say
// so, and loses what it lacks.
func TestPlanDiffers(t *testing.T) {
	base := baseRun(t)
	for _, tc := range []struct {
		name string
		keep func(f *results.Figure) bool
		why  string
		text string
	}{
		{"other tests", func(f *results.Figure) bool { return f.Test != results.AtomicTput }, "no atomic_tput in its plan", "tests not in its plan: atomic_tput ("},
		{"other sizes", func(f *results.Figure) bool { return f.Test != results.CERead || f.Size >= 1<<20 }, "no ce_read at 4 B", "ce_read: 36 (sizes not in its plan: 4 B, 8 B, "},
		{"fewer GPUs", func(f *results.Figure) bool { return f.Src <= 0 && f.Dst <= 0 }, "GPU 1 not in the run", "GPU 1 not in the run"},
	} {
		other := withFigures(base, tc.keep, nil)
		if tc.name == "fewer GPUs" {
			other.Environment.Devices = other.Environment.Devices[:1]
			if other.Topology != nil {
				topo := *other.Topology
				topo.Devices, topo.Pairs = []int{0}, nil
				other.Topology = &topo
			}
		}
		res := run(t, compare.Options{Threshold: 0.05}, base, other)
		if regs := res.Regressions(); len(regs) != 0 {
			t.Errorf("%s: %d regressions, first %s %+v; want none", tc.name, len(regs), regs[0].Key, regs[0].Changes[0])
		}
		if len(res.NotMeasured) == 0 || !slices.ContainsFunc(res.NotMeasured, func(m compare.NotMeasured) bool { return m.Why == tc.why }) {
			t.Errorf("%s: not measured %.300v; want among them %q", tc.name, res.NotMeasured, tc.why)
		}
		var text bytes.Buffer
		if err := compare.WriteText(&text, res); err != nil {
			t.Fatal(err)
		}
		head := "Not measured in runb.json, its plan differs (not gated): "
		if !strings.Contains(text.String(), head) || !strings.Contains(text.String(), tc.text) {
			t.Errorf("%s: the text lacks %q or %q", tc.name, head, tc.text)
		}
		// Cut short, the same run loses what it lacks.
		other.Complete, other.Stopped = false, "interrupted (SIGINT)"
		res = run(t, compare.Options{Threshold: 0.05}, base, other)
		if len(res.NotMeasured) != 0 || len(res.Regressions()) == 0 {
			t.Errorf("%s, cut short: %d not measured, %d regressions; want none and some", tc.name, len(res.NotMeasured), len(res.Regressions()))
		}
		for _, row := range res.Regressions() {
			if c := row.Changes[0]; c.Lost != "missing: the run was cut short (interrupted (SIGINT))" {
				t.Errorf("%s, cut short: %s lost %q", tc.name, row.Key, c.Lost)
				break
			}
		}
		if len(res.Caveats) != 1 || !strings.Contains(res.Caveats[0], "CUT SHORT (interrupted (SIGINT))") {
			t.Errorf("%s, cut short: caveats %q", tc.name, res.Caveats)
		}
	}
}

// TestSimulatedBaselineSaysSo: a real run set against a simulated baseline
// (or the reverse) says so before anything else; two simulated runs do not.
func TestSimulatedBaselineSaysSo(t *testing.T) {
	base := baseRun(t)
	sim := *base
	sim.Simulated, sim.SimMachine = true, "h200x2"
	res := run(t, compare.Options{}, &sim, base)
	if len(res.Caveats) != 1 || !strings.HasPrefix(res.Caveats[0], "The baseline (dir/runa.json) is SIMULATED (h200x2)") {
		t.Errorf("caveats %q", res.Caveats)
	}
	var text bytes.Buffer
	if err := compare.WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(text.String(), "is SIMULATED"); i < 0 || i > strings.Index(text.String(), "Flagged:") {
		t.Errorf("the text does not say the baseline is simulated before what was flagged:\n%.1000s", text.String())
	}
	if res := run(t, compare.Options{}, &sim, &sim); len(res.Caveats) != 0 {
		t.Errorf("two simulated runs: caveats %q", res.Caveats)
	}
}
