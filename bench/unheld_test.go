package bench_test

import (
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// TestSmallPullsQueuedAsIssued: small copy-engine pulls queued behind a
// held stream take 13.3 µs each on the simulated H200, as on the 2× H100
// and H200 (docs/methods.md), against 6.5 µs queued as an application queues
// them. The sweep's ce_read figures below results.UnheldPullBelow are timed
// queued as issued (queue=unheld_unless_host_bound) and read the
// application's pace; pushes and the run's transfer size stay behind the
// latch.
func TestSmallPullsQueuedAsIssued(t *testing.T) {
	opt := options(results.CERead, results.CEWrite)
	opt.Size, opt.Sweep, opt.Samples, opt.Rounds = 512<<20, []uint64{4, 4096}, 6, 2
	run, err := simRun(t, "h200x2", opt)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range run.Figures {
		if f.Src != 0 || f.Dst != 1 || f.Stats == nil {
			continue
		}
		unheld := f.Params[results.ParamQueue] == results.QueueUnheld
		switch {
		case f.Test == results.CERead && f.Size < 1<<20:
			seen++
			us := float64(f.Size) / f.Stats.Median / 1e3
			if !unheld || us > 8 {
				t.Errorf("ce_read %d B: %.1f µs a copy, queue %q; want about 6.5 µs, queued as issued", f.Size, us, f.Params[results.ParamQueue])
			}
		case unheld:
			t.Errorf("%s %d B queued as issued; want it behind the latch", f.Test, f.Size)
		}
	}
	if seen != 2 {
		t.Fatalf("%d small ce_read figures 0→1, want 2", seen)
	}
}
