package bench_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// countingMonitor's counters advance by a fixed step at every reading, so
// every window of two readings holds exactly one step; device fail has none.
type countingMonitor struct {
	gpu.Monitor // only Traffic is called
	mu          sync.Mutex
	reads       map[int]uint64
	fail        int
}

var trafficStep = results.LinkCounts{TxData: 1000, TxRaw: 1127, RxData: 10, RxRaw: 20}

func (m *countingMonitor) Traffic(dev int, busID string) (results.LinkCounts, error) {
	if dev == m.fail {
		return results.LinkCounts{}, errors.New("no counters on this one")
	}
	if busID == "" {
		return results.LinkCounts{}, errors.New("asked without a bus id")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads[dev]++
	n := m.reads[dev]
	return results.LinkCounts{TxData: n * trafficStep.TxData, TxRaw: n * trafficStep.TxRaw, RxData: n * trafficStep.RxData, RxRaw: n * trafficStep.RxRaw}, nil
}

func trafficRun(t *testing.T, mon gpu.Monitor) (*results.Run, []string) {
	t.Helper()
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	opt := options(results.CERead, results.CEBidir, results.SMWrite, results.AllPairs)
	opt.Devices, opt.Size, opt.Samples, opt.Monitor = []int{0, 1}, measure.TrafficMinSize, 3, mon
	opt.Sweep = []uint64{4 << 10, measure.TrafficMinSize}
	run := &results.Run{Schema: results.SchemaVersion, Simulated: true, Start: time.Now()}
	eng := bench.NewEngine(drv, opt)
	if err := eng.Run(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return run, eng.Notes()
}

func TestBandwidthFiguresCarryLinkTraffic(t *testing.T) {
	run, notes := trafficRun(t, &countingMonitor{reads: map[int]uint64{}, fail: -1})
	want := results.LinkTraffic{Src: trafficStep, Dst: trafficStep}
	with := 0
	for _, f := range run.Figures {
		// The figures of many pairs at once (all_pairs here) get no
		// counters: their pairs' own figures carry the wire.
		pair := f.Src >= 0 && f.Dst >= 0 && f.Src != f.Dst && f.Part != results.PartPair
		if pair && f.Size >= measure.TrafficMinSize {
			if f.Traffic == nil || *f.Traffic != want {
				t.Errorf("%s: traffic %+v, want one step on each device %+v", f.Key(), f.Traffic, want)
			}
			with++
			continue
		}
		if f.Traffic != nil {
			t.Errorf("%s: traffic %+v on a figure that should have none (small, or many pairs)", f.Key(), f.Traffic)
		}
	}
	// ce_read and sm_write: 2 pairs each at 64 MiB (matrix and sweep are one
	// size here, measured twice); ce_bidir: 1 pair × 3 parts per direction.
	if with < 2*2+2*3 {
		t.Errorf("%d figures with traffic, want at least 10", with)
	}
	for _, n := range notes {
		if strings.Contains(n, "NVLink counters") {
			t.Errorf("unexpected note %q", n)
		}
	}
	if r, ok := (&want).WirePerPayload(); !ok || r != 1.127 {
		t.Errorf("wire per payload %v %v, want 1.127", r, ok)
	}
}

func TestMissingCountersAreNotedOnce(t *testing.T) {
	run, notes := trafficRun(t, &countingMonitor{reads: map[int]uint64{}, fail: 1})
	for _, f := range run.Figures {
		if f.Traffic != nil {
			t.Errorf("%s: traffic %+v although device 1 has no counters", f.Key(), f.Traffic)
		}
	}
	n := 0
	for _, s := range notes {
		if strings.Contains(s, "NVLink counters of device 1") && strings.Contains(s, "no counters on this one") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("notes %q: want one note about device 1's counters", notes)
	}
}
