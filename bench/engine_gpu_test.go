//go:build gpu

package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// TestGPUEngineEveryTestVerifies runs every in-process test on the real GPUs
// at a small size and requires every figure to be measured and its data
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
	if err := bench.NewEngine(drv, opt).Run(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if len(run.Figures) < 200 {
		t.Fatalf("only %d figures", len(run.Figures))
	}
	for _, f := range run.Figures {
		if f.Error != "" || f.Verify == results.VerifyFailed || f.Stats == nil {
			t.Errorf("%s %s %s %d→%d %d: error %q, verify %s %s", f.Test, f.Engine, f.Part, f.Src, f.Dst, f.Size, f.Error, f.Verify, f.VerifyDetail)
		}
	}
}

// openGPUs opens the real driver and skips without two GPUs.
func openGPUs(t *testing.T) gpu.Driver {
	t.Helper()
	d, err := cuda.Open()
	if err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	drv := gpu.NewCUDADriver(d)
	t.Cleanup(func() { drv.Close() })
	if n, err := drv.DeviceCount(); err != nil || n < 2 {
		t.Skipf("two GPUs needed (%d, %v)", n, err)
	}
	return drv
}
