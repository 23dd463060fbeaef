//go:build gpu

package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/gpu/gputest"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// TestGPUEngineEveryTestVerifies runs every in-process test on the real GPUs
// at a small size, in five rounds renewing everything between them, and
// requires every figure to be measured in every round and its data
// verified (correctness on hardware; speed belongs to results/, not here).
func TestGPUEngineEveryTestVerifies(t *testing.T) {
	drv := openGPUs(t)
	run := &results.Run{Schema: results.SchemaVersion, Verify: true}
	var opt bench.Options
	for _, c := range []results.Command{results.CommandBW, results.CommandLat, results.CommandAtomic} {
		tests, _ := results.ParseTests("all", c)
		opt.Tests = append(opt.Tests, tests...)
	}
	opt.Devices, opt.Size, opt.Samples, opt.Verify = []int{0, 1}, 64<<20, 5, true
	opt.Sweep, opt.WarmUp = []uint64{4, 4096, 1 << 20}, 50*time.Millisecond
	opt.Renew = measure.RenewOffset | measure.RenewAlloc | measure.RenewStreams | measure.RenewEvents
	eng := bench.NewEngine(drv, opt)
	if err := eng.Run(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if len(run.Figures) < 200 {
		t.Fatalf("only %d figures", len(run.Figures))
	}
	for _, f := range run.Figures {
		if f.Error != "" || f.Verify == results.VerifyFailed || f.Stats == nil {
			t.Errorf("%s %s %s %d→%d %d: error %q, verify %s %s", f.Test, f.Engine, f.Part, f.Src, f.Dst, f.Size, f.Error, f.Verify, f.VerifyDetail)
		} else if f.Check != nil && f.Check.Replaced {
			// The run's method check disagreed and its plain windows stand.
			t.Logf("%s %s %s %d→%d %d: the method check's plain windows stand (%+.2f%%)", f.Test, f.Engine, f.Part, f.Src, f.Dst, f.Size, 100*f.Check.Delta)
		} else if len(f.Rounds) != 5 {
			t.Errorf("%s %s %s %d→%d %d: rounds %v, want 5", f.Test, f.Engine, f.Part, f.Src, f.Dst, f.Size, f.Rounds)
		}
	}
	for _, n := range eng.Notes() {
		switch {
		case strings.HasPrefix(n, "method check: "):
			t.Logf("note: %s", n)
		case !strings.HasPrefix(n, "plan: "):
			t.Errorf("note (a renewal or a method check that failed?): %q", n)
		}
	}
}

// TestGPUEngineOneDevice runs every test that needs no pair on GPU 0 alone
// (host copies one way and both ways by the copy engine and SM kernels, the
// host aggregates of one device, the local copy, the local and host-memory
// chases, local atomics): every figure measured and its data verified. It
// logs the host figures (hardware.md: 55.4 GB/s each way by the copy
// engine, 51.2 and 52.6 by SM kernels, about 1.19 µs per host load).
func TestGPUEngineOneDevice(t *testing.T) {
	drv := gputest.OpenAtLeast(t, 1)
	run := &results.Run{Schema: results.SchemaVersion, Verify: true}
	var opt bench.Options
	for _, info := range results.Catalogue() {
		if !info.NeedsPair && info.Command != results.CommandIPC {
			opt.Tests = append(opt.Tests, info.Name)
		}
	}
	opt.Devices, opt.Size, opt.Samples, opt.Verify = []int{0}, 64<<20, 5, true
	opt.WarmUp = 50 * time.Millisecond
	if err := bench.NewEngine(drv, opt).Run(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	seen := map[results.Test]int{}
	for _, f := range run.Figures {
		seen[f.Test]++
		if f.Error != "" || f.Verify == results.VerifyFailed || f.Stats == nil {
			t.Errorf("%s %s %s %d→%d %d: error %q, verify %s %s", f.Test, f.Engine, f.Part, f.Src, f.Dst, f.Size, f.Error, f.Verify, f.VerifyDetail)
			continue
		}
		if f.Src < 0 || f.Dst < 0 {
			t.Logf("%s %s %s %d→%d: %.4g %s (CV %.2f%%)", f.Test, f.Engine, f.Part, f.Src, f.Dst, f.Stats.Median, f.Unit, 100*f.Stats.CV)
		}
	}
	for _, test := range opt.Tests {
		if seen[test] == 0 {
			t.Errorf("no %s figure", test)
		}
	}
	t.Logf("%d figures: %v", len(run.Figures), seen)
}

// openGPUs opens the real driver and skips without two GPUs.
func openGPUs(t *testing.T) gpu.Driver { return gputest.OpenAtLeast(t, 2) }
