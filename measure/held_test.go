package measure

import (
	"context"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu/sim"
)

// TestHeldWindowsRunInsideTheOthersCopies: with a held timing every
// transfer makes as many untimed copies as its timed ones before its start
// event and HeldTail times as many after its end event, and each sample
// waits for them before the next starts (the host's
// virtual clock moves by the held copies too); the figure's params say so.
func TestHeldWindowsRunInsideTheOthersCopies(t *testing.T) {
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close() })
	dv := openSteady(t, drv, 0)
	copies := steadyCopies(t, dv)
	count := map[string]int{}
	var ts []Transfer
	for _, name := range []string{"h2d", "d2h"} {
		tr := copies[name]
		op := tr.Op
		tr.Op = func(s cuda.Stream) error { count[name]++; return op(s) }
		ts = append(ts, tr)
	}
	const samples = 3
	for _, held := range []bool{false, true} {
		clear(count)
		tm := Timing{Reps: 1, Held: held}
		t0 := drv.HostClock()
		ms, err := Timer{}.Measure(context.Background(), ts, tm, samples)
		if err != nil {
			t.Fatal(err)
		}
		took := drv.HostClock() - t0
		want := samples
		if held {
			want = samples * (2 + HeldTail)
		}
		for _, name := range []string{"h2d", "d2h"} {
			if count[name] != want {
				t.Errorf("held %v: %s copied %d times, want %d", held, name, count[name], want)
			}
		}
		// Each sample waits for its held copies: the three samples take
		// three times the held copies' time at least.
		if window := ms[0][0] * float64(samples*(2+HeldTail)); held && took.Seconds()*1e3 < 0.95*window {
			t.Errorf("held samples took %v of the host's clock, less than their copies' %.1f ms: a sample did not wait for its held copies", took, window)
		}
		if p := tm.Record(nil); (p[ParamHeldReps] != "") != held || held && p[ParamHeldReps] != "2" {
			t.Errorf("held %v: params %v", held, p)
		}
	}
}
