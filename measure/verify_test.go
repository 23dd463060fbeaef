package measure

import (
	"errors"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu/sim"
)

// TestHostHelpers: the host helpers round a pattern through pinned memory
// and a device; a destination no copy reached fails on every word.
func TestHostHelpers(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	const n = 3<<20 + 12
	dv, err := Open(drv, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	defer dv.Close()
	src, err := dv.Ctx.HostAlloc(n, true)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := dv.Ctx.HostAlloc(n, true)
	if err != nil {
		t.Fatal(err)
	}
	// The fill kernel writes the host memory through its device address.
	if err := dv.Fill(src.Device, n, 9); err != nil {
		t.Fatal(err)
	}
	if err := dv.Poison(dst.Device, n&^3); err != nil {
		t.Fatal(err)
	}
	var mm *Mismatch
	if err := dv.Check(dst.Device, n&^3, 9); !errors.As(err, &mm) || mm.FirstBadByte != 0 || mm.BadWords != n/4 {
		t.Errorf("check of a poisoned buffer: %v", err)
	}
	for _, c := range [][2]cuda.DevicePtr{{dv.Recv, src.Device}, {dst.Device, dv.Recv}} {
		if err := dv.Ctx.MemcpyAsync(c[0], c[1], n, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := dv.Ctx.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := dv.Check(dv.Recv, n, 9); err != nil {
		t.Errorf("device check of the host's pattern: %v", err)
	}
	if err := dv.Check(dst.Device, n&^3, 9); err != nil {
		t.Errorf("check through the device address of the copy back to the host: %v", err)
	}
}
