package measure

import (
	"context"
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu/sim"
)

// TestUnheldSamplesFitEachTheirOwnShortWindow: a pull queued as issued
// (Transfer.Unlatched) meets the link as the moment leaves it, and one slow
// moment in a fit's short window, taken once for all the samples of a call,
// moved every one of them (one round of 1 MiB pulls 116-153 GB/s, the others
// 74-77, on a 2× H200: docs/methods.md). Here the fifth copy of
// the call is slowed (a copy four times as large): it falls in the first
// sample's long window, which alone it moves, so the call's median stays
// that of an undisturbed call. With one short window first (the fifth copy
// is its first, behind four warm-up copies), every sample moved.
func TestUnheldSamplesFitEachTheirOwnShortWindow(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() })
	const size = 1 << 20
	dv, peer := openSteady(t, drv, 0), openSteady(t, drv, 1)
	if err := NewPeers().EnableBoth(dv.Ctx, peer.Ctx); err != nil {
		t.Fatal(err)
	}
	calls, slow := 0, 0
	pull := dv.PeerCopy(dv.Recv, dv.Ctx, peer.Send, peer.Ctx, size)
	slowPull := dv.PeerCopy(dv.Recv, dv.Ctx, peer.Send, peer.Ctx, 4*size)
	tr := Transfer{Dev: dv, Unlatched: true, Op: func(s cuda.Stream) error {
		calls++
		if calls == slow {
			return slowPull(s)
		}
		return pull(s)
	}}
	tm := Timing{Reps: 8, Short: 2, Warmup: 4}
	median := func(ms []float64) float64 { s := slices.Clone(ms); slices.Sort(s); return s[len(s)/2] }
	measure := func() float64 {
		t.Helper()
		calls = 0
		ms, err := Timer{}.Measure(context.Background(), []Transfer{tr}, tm, 3)
		if err != nil {
			t.Fatal(err)
		}
		return median(ms[0])
	}
	measure() // the link awake
	plain := measure()
	slow = 5
	disturbed := measure()
	t.Logf("%.2f µs a pull, %.2f with the fifth copy slowed", plain*1e3, disturbed*1e3)
	if disturbed < plain*0.98 || disturbed > plain*1.02 {
		t.Errorf("one slow copy moved the call's median from %.2f to %.2f µs a pull", plain*1e3, disturbed*1e3)
	}
}

// TestLongestOfASmallPullOnAnIdleLink: the first 4-byte pull over a link
// that carried none for a while pays the link's waking (the simulated H200
// has the real one's: docs/methods.md) and takes 0.2 ms, twice
// noWarmup; Longest, which sizes the figure's windows, times such a copy
// again behind an untimed one and reads the copy's own µs.
func TestLongestOfASmallPullOnAnIdleLink(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() })
	dv, peer := openSteady(t, drv, 0), openSteady(t, drv, 1)
	if err := NewPeers().EnableBoth(dv.Ctx, peer.Ctx); err != nil {
		t.Fatal(err)
	}
	tr := Transfer{Dev: dv, Op: dv.PeerCopy(dv.Recv, dv.Ctx, peer.Send, peer.Ctx, 4)}
	ms, err := Timer{}.Longest(context.Background(), []Transfer{tr})
	if err != nil {
		t.Fatal(err)
	}
	if ms > 0.05 {
		t.Errorf("Longest of a 4-byte pull first thing on its link: %.1f µs, the link's waking in it", ms*1e3)
	}
}
