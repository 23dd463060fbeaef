package measure

import (
	"sync"
	"testing"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// wire is a Monitor whose devices' NVLink counters the test moves by hand
// (only Traffic is called), counting the readings.
type wire struct {
	gpu.Monitor
	mu    sync.Mutex
	sent  map[int]uint64
	reads int
}

func (w *wire) Traffic(dev int, _ string) (results.LinkCounts, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads++
	return results.LinkCounts{TxData: w.sent[dev], TxRaw: w.sent[dev]}, nil
}

// move is traffic of n bytes sent by dev.
func (w *wire) move(dev int, n uint64) {
	w.mu.Lock()
	w.sent[dev] += n
	w.mu.Unlock()
}

func newWire() (*wire, *Meter) {
	w := &wire{sent: map[int]uint64{}}
	return w, NewMeter(w, func(int) string { return "" }, func(string, ...any) {})
}

func sentBy(t *testing.T, win *Window) uint64 {
	t.Helper()
	figs := []results.Figure{{Src: 0, Dst: 1, Samples: []float64{1}}}
	win.Attach(figs)
	if figs[0].Traffic == nil {
		t.Fatal("no traffic attached")
	}
	return figs[0].Traffic.Src.TxData
}

// Windows back to back share a reading, and each still holds its own
// traffic only.
func TestMeterChainsWindowsBackToBack(t *testing.T) {
	w, m := newWire()
	a := m.Begin(0, 1, TrafficMinSize)
	w.move(0, 100)
	a.End()
	b := m.Begin(0, 1, TrafficMinSize)
	w.move(0, 7)
	b.End()
	if got := sentBy(t, a); got != 100 {
		t.Errorf("first window: %d bytes, want 100", got)
	}
	if got := sentBy(t, b); got != 7 {
		t.Errorf("second window: %d bytes, want 7", got)
	}
	// Two devices a reading: begin, end, end.
	if w.reads != 6 {
		t.Errorf("%d readings, want 6 (the second window starts from the first's end)", w.reads)
	}
}

// Traffic between two windows that Invalidate announces is nobody's: the
// next window reads its own start.
func TestMeterInvalidateKeepsTrafficOutside(t *testing.T) {
	w, m := newWire()
	a := m.Begin(0, 1, TrafficMinSize)
	w.move(0, 100)
	a.End()
	m.Invalidate()
	w.move(0, 5000) // a small sweep's copies, no window
	b := m.Begin(0, 1, TrafficMinSize)
	w.move(0, 7)
	b.End()
	if got := sentBy(t, b); got != 7 {
		t.Errorf("window after other traffic: %d bytes, want 7", got)
	}
	if w.reads != 8 {
		t.Errorf("%d readings, want 8", w.reads)
	}
}

// A window that never ends (its figure failed) leaves no reading behind.
func TestMeterUnendedWindowLeavesNothing(t *testing.T) {
	w, m := newWire()
	a := m.Begin(0, 1, TrafficMinSize)
	a.End()
	_ = m.Begin(0, 1, TrafficMinSize) // takes a's end, never ends
	w.move(0, 300)
	c := m.Begin(0, 1, TrafficMinSize)
	w.move(0, 9)
	c.End()
	if got := sentBy(t, c); got != 9 {
		t.Errorf("window after an unended one: %d bytes, want 9", got)
	}
}
