//go:build gpu

package measure

import (
	"errors"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// TestGPUCorruptedCopyIsCaught overwrites part of a destination after a real
// copy and checks that the GPU check kernel reports the first bad word.
func TestGPUCorruptedCopyIsCaught(t *testing.T) {
	d, err := cuda.Open()
	if err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	drv := gpu.NewCUDADriver(d)
	defer drv.Close()
	if n, err := drv.DeviceCount(); err != nil || n < 2 {
		t.Skipf("two GPUs needed (%d, %v)", n, err)
	}
	const n = 1 << 20
	a, err := Open(drv, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(drv, 1, n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// fillCopyCheck fills a's send buffer with a pattern, copies it to b's
	// receive buffer, overwrites the word at byte corrupt when corrupt ≥ 0,
	// and checks b's receive buffer on the GPU.
	fillCopyCheck := func(corrupt int64) error {
		const seed = 0x1234567
		if err := a.Fill(a.Send, n, seed); err != nil {
			return err
		}
		if err := b.Poison(b.Recv, n); err != nil {
			return err
		}
		s, err := b.Stream(0)
		if err != nil {
			return err
		}
		if err := b.Ctx.MemcpyPeerAsync(b.Recv, b.Ctx, a.Send, a.Ctx, n, s); err != nil {
			return err
		}
		if corrupt >= 0 {
			if err := b.Ctx.MemsetD32Async(b.Recv+cuda.DevicePtr(corrupt), 0, 1, s); err != nil {
				return err
			}
		}
		if err := b.Ctx.StreamSynchronize(s); err != nil {
			return err
		}
		return b.Check(b.Recv, n, seed)
	}
	err = fillCopyCheck(4096)
	var mm *Mismatch
	if !errors.As(err, &mm) || mm.FirstBadByte != 4096 || mm.BadWords != 1 {
		t.Fatalf("check after a planted corruption at 4096: %v", err)
	}
	if err := fillCopyCheck(-1); err != nil {
		t.Fatalf("check of an intact copy: %v", err)
	}
}
