package measure

import (
	"testing"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/kernels"
)

// TestTwinWorksOnTheDevicesMemoryInItsOwnContext: a twin shares the small
// and scratch buffers of its device, works in a green context of its own
// that every renewal of the context replaces, and its close leaves the
// device's memory to the device, which goes on using it.
func TestTwinWorksOnTheDevicesMemoryInItsOwnContext(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() })
	dv, err := Open(drv, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dv.Close() })
	small, err := dv.Small()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dv.Scratch(1 << 20); err != nil {
		t.Fatal(err)
	}
	tw, err := dv.Twin()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tw.Small(); got != small {
		t.Errorf("the twin's small buffer is %#x, the device's %#x", got, small)
	}
	if _, err := tw.Scratch(2 << 20); err == nil {
		t.Error("a twin grew the device's scratch buffer")
	}
	first := tw.Ctx
	if first == dv.Primary || first == dv.Ctx {
		t.Fatal("the twin works in the device's context, not one of its own")
	}
	if err := tw.PreparePingPong(kernels.PingPong, 0); err != nil {
		t.Fatalf("a kernel of the twin's on the device's small buffer: %v", err)
	}
	if err := tw.Renew(RenewContext|RenewStreams|RenewModules, 1); err != nil {
		t.Fatal(err)
	}
	if tw.Ctx == first || tw.Ctx == dv.Primary {
		t.Error("renewing the twin's context kept its context")
	}
	if err := tw.PreparePingPong(kernels.PingPong, 0); err != nil {
		t.Fatalf("after the renewal: %v", err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	// The device's small buffer is still allocated: clearing it works.
	if err := dv.PreparePingPong(kernels.PingPong, 0); err != nil {
		t.Errorf("the device's small buffer after its twin closed: %v", err)
	}
	if dv.small != small {
		t.Error("the device lost its small buffer to its twin")
	}
}
