//go:build gpu

package bench_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/results"
)

// TestGPUEngineEveryTestVerifies runs every in-process test on the real GPUs
// at a small size and requires every figure to be measured and its data
// verified (correctness on hardware; speed belongs to results/, not here).
func TestGPUEngineEveryTestVerifies(t *testing.T) {
	drv := openGPUs(t)
	run := &results.Run{Schema: results.SchemaVersion, Verify: true}
	opt := bench.Options{Devices: []int{0, 1}, Tests: append(bench.TestNames("bw"), append(bench.TestNames("lat"), bench.TestNames("atomic")...)...),
		Size: 64 << 20, Sweep: []uint64{4, 4096, 1 << 20}, Samples: 5, Verify: true, WarmUp: 50 * time.Millisecond}
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

// TestGPUCorruptedCopyIsCaught overwrites part of a destination after a real
// copy and checks that the GPU check kernel reports the first bad word.
func TestGPUCorruptedCopyIsCaught(t *testing.T) {
	drv := openGPUs(t)
	c0, err := drv.Context(0)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := drv.Context(1)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1 << 20
	src, err := c0.MemAlloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer c0.MemFree(src)
	dst, err := c1.MemAlloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.MemFree(dst)
	err = bench.FillCopyCheck(drv, c0, c1, src, dst, n, 4096)
	var mm *bench.Mismatch
	if !errors.As(err, &mm) || mm.FirstBadByte != 4096 || mm.BadWords != 1 {
		t.Fatalf("check after a planted corruption at 4096: %v", err)
	}
	if err := bench.FillCopyCheck(drv, c0, c1, src, dst, n, -1); err != nil {
		t.Fatalf("check of an intact copy: %v", err)
	}
}
