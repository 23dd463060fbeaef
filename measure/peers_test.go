package measure

import (
	"errors"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
)

func TestPeersRecoverFromTooManyPeers(t *testing.T) {
	drv, err := sim.New("dgx-h100", sim.WithPeerLimit(1))
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	ctx := func(d int) gpu.Context {
		c, err := drv.Context(d)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	p := NewPeers()
	if err := p.Enable(ctx(0), ctx(1)); err != nil {
		t.Fatal(err)
	}
	// Held: no room for a second peer.
	if err := p.Enable(ctx(0), ctx(2)); !errors.Is(err, cuda.ErrTooManyPeers) {
		t.Fatalf("second peer while the first is held: %v, want TOO_MANY_PEERS", err)
	}
	p.Release(ctx(0), ctx(1))
	if err := p.Enable(ctx(0), ctx(2)); err != nil {
		t.Fatalf("second peer after releasing the first: %v", err)
	}
	if p.Enabled(0, 1) || !p.Enabled(0, 2) {
		t.Errorf("0→1 enabled %v, 0→2 enabled %v; want 0→1 disabled to make room for 0→2", p.Enabled(0, 1), p.Enabled(0, 2))
	}
	// ALREADY_ENABLED counts as success, and such a pair is left as found.
	if err := ctx(3).EnablePeerAccess(ctx(4), 0); err != nil {
		t.Fatal(err)
	}
	if err := p.Enable(ctx(3), ctx(4)); err != nil {
		t.Fatalf("enable of an already enabled pair: %v", err)
	}
	p.Release(ctx(3), ctx(4))
	if errs := p.ReleaseAll(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := ctx(3).DisablePeerAccess(ctx(4)); err != nil {
		t.Errorf("a pair enabled before Peers saw it was disabled by it: %v", err)
	}
}

// TestOpenRefusesBuffersNoDeviceHolds: sizes near 2^64 (from a child's
// request, say) are refused with the device's free memory, never rounded
// or doubled past zero.
func TestOpenRefusesBuffersNoDeviceHolds(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	for _, n := range []uint64{1<<64 - 256, 1 << 63, MaxTransferSize + 256, 200 << 30} {
		dv, err := Open(drv, 0, n)
		if err == nil {
			dv.Close()
			t.Errorf("Open with buffers of %d bytes succeeded", n)
		} else if !strings.Contains(err.Error(), "choose a smaller --size") {
			t.Errorf("Open with buffers of %d bytes: %v", n, err)
		}
	}
}
