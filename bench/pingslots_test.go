package bench

import (
	"slices"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
)

// pingSlots runs the release/acquire ping-pong on one GPU of drv (two
// measure.Devices of device dev: two streams, two flag buffers) at every
// flag slot, passes times over, each pass in an order drawn afresh as a
// round's, and returns each pass's one-way time by slot.
func pingSlots(t *testing.T, drv gpu.Driver, dev, passes int) [][]float64 {
	t.Helper()
	var ds []*measure.Device
	for range 2 {
		d, err := measure.Open(drv, dev, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		ds = append(ds, d)
	}
	out := make([][]float64, passes)
	for p := range out {
		out[p] = make([]float64, measure.FlagSlots)
		for _, slot := range measure.PingSlotOrder() {
			rt, err := bounce(ds[0], ds[1], kernels.PingPong, slot)
			if err != nil {
				t.Fatal(err)
			}
			out[p][slot] = rt / 2
		}
	}
	return out
}

// checkPingSlots holds passes of pingSlots to what a round rests on: every
// pass's median over the slots within tol of the others', and logs each
// slot's times.
func checkPingSlots(t *testing.T, passes [][]float64, tol float64) (medians []float64, slotSpread float64) {
	t.Helper()
	for slot := range measure.FlagSlots {
		var times []float64
		for _, p := range passes {
			times = append(times, p[slot])
		}
		t.Logf("slot %2d (offset %5d): %.1f ns one way", slot, measure.FlagOffset(slot), times)
	}
	for _, p := range passes {
		medians = append(medians, figstats.Median(p))
		slotSpread = max(slotSpread, slices.Max(p)/slices.Min(p)-1)
	}
	t.Logf("medians over the slots, pass by pass: %.1f ns; slots within a pass up to %.1f%% apart", medians, 100*slotSpread)
	if spread := slices.Max(medians)/slices.Min(medians) - 1; spread > tol {
		t.Errorf("the passes' medians over every slot %.1f spread by %.2f%%; want within %.1f%%", medians, 100*spread, 100*tol)
	}
	return medians, slotSpread
}

// TestPingSlotsOnOneGPU: on one simulated GPU, whose flags take a time by
// their slot (gpu/sim's flagPlacement, as the H200's), the ping-pong at
// every slot: the slots' times differ, the medians over every slot agree
// pass by pass. TestGPUPingSlotsOnOneGPU runs the same on GPU 0.
//
// The passes' medians are held within 3%: the slots' times spread by about
// 45%, a median over 32 of them moves with the simulator's noise by up to
// about 1.5% (60 passes: at most 1.4%), and rounds that kept a slot each
// differed by 7% and more.
func TestPingSlotsOnOneGPU(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	_, spread := checkPingSlots(t, pingSlots(t, drv, 0, 3), 0.03)
	if spread < 0.1 {
		t.Errorf("the slots' times within a pass spread by %.1f%%; the simulator's flags take a time by their slot", 100*spread)
	}
}
