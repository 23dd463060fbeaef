package bench

import (
	"sync"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// trafficMinSize is the smallest transfer whose figure gets the link
// counters: below it the counters' KiB resolution and the traffic of the
// calls around the copies (latch, events) weigh too much.
const trafficMinSize = 1 << 20

// trafficMeter reads the NVLink counters of a figure's two devices before
// and after it is measured (Monitor.Traffic). A device whose counters cannot
// be read is not asked again, and the first such failure is noted once.
type trafficMeter struct {
	mon  gpu.Monitor
	bus  func(dev int) string
	note func(format string, args ...any)

	mu     sync.Mutex
	failed map[int]bool
	noted  bool
}

func newTrafficMeter(mon gpu.Monitor, bus func(dev int) string, note func(format string, args ...any)) *trafficMeter {
	if mon == nil {
		return nil
	}
	return &trafficMeter{mon: mon, bus: bus, note: note, failed: map[int]bool{}}
}

// trafficWindow holds the readings taken when a figure's measurement began.
type trafficWindow struct {
	m        *trafficMeter
	src, dst int
	before   [2]results.LinkCounts
}

// begin reads the counters of src and dst for a transfer of size bytes;
// nil when the figure gets none.
func (m *trafficMeter) begin(src, dst int, size uint64) *trafficWindow {
	if m == nil || src == dst || src < 0 || dst < 0 || size < trafficMinSize {
		return nil
	}
	w := &trafficWindow{m: m, src: src, dst: dst}
	var ok bool
	if w.before, ok = m.read(src, dst); !ok {
		return nil
	}
	return w
}

// end reads the counters again and returns the traffic of the window; nil
// when a reading failed.
func (w *trafficWindow) end() *results.LinkTraffic {
	if w == nil {
		return nil
	}
	after, ok := w.m.read(w.src, w.dst)
	if !ok {
		return nil
	}
	sub := func(a, b results.LinkCounts) results.LinkCounts {
		return results.LinkCounts{TxData: a.TxData - b.TxData, TxRaw: a.TxRaw - b.TxRaw, RxData: a.RxData - b.RxData, RxRaw: a.RxRaw - b.RxRaw}
	}
	return &results.LinkTraffic{Src: sub(after[0], w.before[0]), Dst: sub(after[1], w.before[1])}
}

func (m *trafficMeter) read(src, dst int) (out [2]results.LinkCounts, ok bool) {
	m.mu.Lock()
	skip := m.failed[src] || m.failed[dst]
	m.mu.Unlock()
	if skip {
		return out, false
	}
	for i, dev := range [2]int{src, dst} {
		c, err := m.mon.Traffic(dev, m.bus(dev))
		if err != nil {
			m.mu.Lock()
			m.failed[dev] = true
			first := !m.noted
			m.noted = true
			m.mu.Unlock()
			if first && m.note != nil {
				m.note("NVLink counters of device %d could not be read (%v): its figures carry no link traffic", dev, err)
			}
			return out, false
		}
		out[i] = c
	}
	return out, true
}

// attachTraffic gives the window's traffic to every measured figure of the
// group that names the window's two devices as its src and dst (either way
// round: Src of the record is always the figure's src device).
func attachTraffic(figs []results.Figure, w *trafficWindow, t *results.LinkTraffic) {
	if t == nil {
		return
	}
	for i := range figs {
		f := &figs[i]
		if f.Error != "" || len(f.Samples) == 0 {
			continue
		}
		switch {
		case f.Src == w.src && f.Dst == w.dst:
			c := *t
			f.Traffic = &c
		case f.Src == w.dst && f.Dst == w.src:
			f.Traffic = &results.LinkTraffic{Src: t.Dst, Dst: t.Src}
		}
	}
}
