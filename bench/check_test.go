package bench_test

import (
	"math"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/results"
)

// pullAfterHost measures host copies, pulls and staged copies between the
// two devices of h200x2 in five rounds, as `all` orders them: every round's
// staged copies disable peer access, the next round's pulls enable it again
// after its host copies, and its first pull is cold (the simulator models
// the 2× H100's first pull: docs/methods.md, "The method checks itself").
func pullAfterHost(t *testing.T, simOpts ...sim.Option) (*results.Run, results.Figure) {
	t.Helper()
	opt := options(results.H2D, results.D2H, results.CERead, results.NoP2PCopy)
	opt.Size, opt.Samples, opt.Rounds = 512<<20, 20, 5
	run, err := simRun(t, "h200x2", opt, simOpts...)
	if err != nil {
		t.Fatal(err)
	}
	fs := find(run, func(f results.Figure) bool {
		return f.Test == results.CERead && f.Src == 0 && f.Dst == 1 && f.Size == 512<<20
	})
	if len(fs) != 1 {
		t.Fatalf("%d ce_read 0→1 512 MiB figures", len(fs))
	}
	for _, f := range run.Figures {
		if f.Error != "" {
			t.Errorf("%s %d→%d %d: %s", f.Test, f.Src, f.Dst, f.Size, f.Error)
		}
	}
	return run, fs[0]
}

// The first pull after host copies costs 0.17 ms more than the next: timed
// alone as a steady-state fit's short window, it read 4.6% high on the
// 2× H100. The fit now runs its short window behind an untimed copy, so
// the figure agrees with the plain long windows of its method check.
func TestPullAfterHostCopiesAgreesWithPlainWindows(t *testing.T) {
	run, f := pullAfterHost(t)
	c := f.Check
	if c == nil {
		t.Fatalf("ce_read 0→1 512 MiB has no method check")
	}
	if !c.Agrees || c.Replaced || math.Abs(c.Delta) > 0.005 {
		t.Errorf("method %.2f GB/s against plain windows %.2f (%+.2f%%): agrees %v, replaced %v", c.MethodMedian, c.Median, 100*c.Delta, c.Agrees, c.Replaced)
	}
	if r := f.Stats.Rounds; r == nil || r.N != 5 {
		t.Errorf("rounds %+v, want 5", r)
	}
	for _, n := range run.Notes {
		if strings.HasPrefix(n, "method check") {
			t.Errorf("note on a sound method: %s", n)
		}
	}
}

// On a machine where one untimed copy does not absorb the cold cost (it
// lasts two pulls), the fit's short window carries it in every round
// after the first, as it did on the 2× H100 before the untimed copy; the run's method check
// catches it, the plain windows stand, and the notes name the figure.
func TestMethodCheckCatchesAColdShortWindow(t *testing.T) {
	run, f := pullAfterHost(t, sim.WithColdPulls(2))
	c := f.Check
	if c == nil {
		t.Fatal("ce_read 0→1 512 MiB has no method check")
	}
	if c.Agrees || !c.Replaced || c.Delta < 0.01 {
		t.Fatalf("method %.2f GB/s against plain windows %.2f (%+.2f%%, tolerance %.2f%%): agrees %v, replaced %v",
			c.MethodMedian, c.Median, 100*c.Delta, 100*c.Tolerance, c.Agrees, c.Replaced)
	}
	if f.Stats.Median != c.Median {
		t.Errorf("the figure reads %.2f, its plain windows %.2f: the plain windows must stand", f.Stats.Median, c.Median)
	}
	noted := false
	for _, n := range run.Notes {
		noted = noted || (strings.HasPrefix(n, "method check: ce_read read 0→1 512 MiB") && strings.Contains(n, "plain windows stand"))
	}
	if !noted {
		t.Errorf("no note names the replaced figure: %q", run.Notes)
	}
}
