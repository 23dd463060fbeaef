package measure

import (
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// TrafficMinSize is the smallest transfer whose figure gets the link
// counters: the transfers whose rate is the link's, where the counters'
// KiB resolution and the calls around the copies weigh nothing. A reading
// of both devices' counters takes milliseconds (docs/methods.md, "On the
// wire"): taken around every figure of 1 MiB and more, they cost a sixth of
// a run.
const TrafficMinSize = 64 << 20

// Meter reads the NVLink counters of a figure's two devices before and
// after it is measured (Monitor.Traffic). A device whose counters cannot be
// read is not asked again, and the first such failure is noted once. A nil
// Meter reads nothing.
type Meter struct {
	mon  gpu.Monitor
	bus  func(dev int) string
	note func(format string, args ...any)

	mu     sync.Mutex
	failed map[int]bool
	noted  bool
	// last holds each device's reading at the end of the window that
	// ended last, while nothing else can have moved NVLink traffic since
	// (Invalidate): the next window on that device starts from it instead
	// of reading again.
	last map[int]results.LinkCounts
	// reads and spent count the counter readings and their time.
	reads int
	spent time.Duration
}

// Spent says how many readings the meter took and how long they took.
func (m *Meter) Spent() (int, time.Duration) {
	if m == nil {
		return 0, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads, m.spent
}

// NewMeter returns the meter of mon (nil when mon is nil); bus gives a
// device's PCI bus id, note is told of the first device without counters.
func NewMeter(mon gpu.Monitor, bus func(dev int) string, note func(format string, args ...any)) *Meter {
	if mon == nil {
		return nil
	}
	return &Meter{mon: mon, bus: bus, note: note, failed: map[int]bool{}, last: map[int]results.LinkCounts{}}
}

// Invalidate says NVLink traffic may have moved outside any window since
// the last one ended (another step, transfers timed without counters): the
// next window reads its own start. Windows back to back, with only work
// within each device between them (filling and checking buffers), share
// one reading: the end of one is the start of the next, which halves the
// readings of a step (22 ms each on the 2× H100).
func (m *Meter) Invalidate() {
	if m == nil {
		return
	}
	m.mu.Lock()
	clear(m.last)
	m.mu.Unlock()
}

// Window holds the readings taken around one figure's measurement. A nil
// Window (no meter, or a figure without link traffic) does nothing.
type Window struct {
	m             *Meter
	src, dst      int
	before, after [2]results.LinkCounts
	ended         bool
}

// Begin reads the counters of src and dst for a transfer of size bytes
// between them; nil when the figure gets none.
func (m *Meter) Begin(src, dst int, size uint64) *Window {
	if m == nil || src == dst || src < 0 || dst < 0 || size < TrafficMinSize {
		return nil
	}
	w := &Window{m: m, src: src, dst: dst}
	m.mu.Lock()
	a, okA := m.last[src]
	b, okB := m.last[dst]
	// Taken: a window that never ends must not leave them to the next.
	delete(m.last, src)
	delete(m.last, dst)
	m.mu.Unlock()
	if okA && okB {
		w.before = [2]results.LinkCounts{a, b}
		return w
	}
	var ok bool
	if w.before, ok = m.read(src, dst); !ok {
		return nil
	}
	return w
}

// End reads the counters again, as soon as the transfers are done.
func (w *Window) End() {
	if w != nil {
		w.after, w.ended = w.m.read(w.src, w.dst)
		if w.ended {
			w.m.mu.Lock()
			w.m.last[w.src], w.m.last[w.dst] = w.after[0], w.after[1]
			w.m.mu.Unlock()
		}
	}
}

// Attach gives the window's traffic to every measured figure of figs that
// names the window's two devices as its src and dst (either way round: Src
// of the record is always the figure's src device).
func (w *Window) Attach(figs []results.Figure) {
	if w == nil || !w.ended {
		return
	}
	sub := func(a, b results.LinkCounts) results.LinkCounts {
		return results.LinkCounts{TxData: a.TxData - b.TxData, TxRaw: a.TxRaw - b.TxRaw, RxData: a.RxData - b.RxData, RxRaw: a.RxRaw - b.RxRaw}
	}
	t := results.LinkTraffic{Src: sub(w.after[0], w.before[0]), Dst: sub(w.after[1], w.before[1])}
	for i := range figs {
		f := &figs[i]
		if f.Error != "" || len(f.Samples) == 0 {
			continue
		}
		switch {
		case f.Src == w.src && f.Dst == w.dst:
			c := t
			f.Traffic = &c
		case f.Src == w.dst && f.Dst == w.src:
			f.Traffic = &results.LinkTraffic{Src: t.Dst, Dst: t.Src}
		}
	}
}

func (m *Meter) read(src, dst int) (out [2]results.LinkCounts, ok bool) {
	m.mu.Lock()
	skip := m.failed[src] || m.failed[dst]
	m.mu.Unlock()
	if skip {
		return out, false
	}
	t0 := time.Now()
	defer func() {
		m.mu.Lock()
		m.reads++
		m.spent += time.Since(t0)
		m.mu.Unlock()
	}()
	// Both devices at once: half the time of one after the other, and the
	// two readings closer together.
	var errs [2]error
	var wg sync.WaitGroup
	for i, dev := range [2]int{src, dst} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = m.mon.Traffic(dev, m.bus(dev))
		}()
	}
	wg.Wait()
	for i, dev := range [2]int{src, dst} {
		if err := errs[i]; err != nil {
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
	}
	return out, true
}
