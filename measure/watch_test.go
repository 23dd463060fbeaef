package measure

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/results"
)

func TestBusyErrorNamesAFew(t *testing.T) {
	var e BusyError
	for pid := range 6 {
		e.Processes = append(e.Processes, results.Process{Device: pid % 2, PID: 100 + pid, Name: "job"})
	}
	msg := e.Error()
	if !strings.Contains(msg, "pid 103 (job) on GPU 1, and 2 more;") || strings.Contains(msg, "pid 104") {
		t.Errorf("%q: want four named and the rest counted", msg)
	}
}

// blindMonitor cannot list processes, read throttle reasons or NVLink
// error totals.
type blindMonitor struct{ gpu.Monitor }

func (blindMonitor) LinkErrorTotals(int, string) (results.LinkTotals, error) {
	return results.LinkTotals{}, errors.New("not supported")
}

func (blindMonitor) Processes(int, string) ([]results.Process, error) {
	return nil, errors.New("no permission")
}

func (blindMonitor) Throttle(int, string) ([]results.ThrottleReason, error) {
	return nil, errors.New("not supported")
}

func TestWatchWithoutReadings(t *testing.T) {
	var none *Watch
	if err := none.Check(&results.Run{}, map[int]string{0: ""}, nil, nil); err != nil || NewWatch(nil, false) != nil {
		t.Errorf("a nil watch: %v", err)
	}
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	w := NewWatch(blindMonitor{drv.Monitor()}, false)
	run := &results.Run{}
	for range 3 {
		if err := w.Check(run, map[int]string{0: "a", 1: "b"}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Each kind of reading that fails is noted once; nothing is recorded.
	if n := run.Environment.Notes; len(n) != 2 || !strings.Contains(n[0], "GPU 0 could not be listed (no permission)") ||
		!strings.Contains(n[1], "throttle reasons of GPU 0 could not be read") {
		t.Errorf("notes %q", n)
	}
	if run.Environment.DuringRun != nil || run.Environment.OtherProcesses != nil {
		t.Errorf("recorded %+v", run.Environment)
	}
}

// TestWatchMarksLaterRounds: a figure that takes another round while
// another program is on its GPU names it, as a figure added then would.
func TestWatchMarksLaterRounds(t *testing.T) {
	drv, err := sim.New("h200x2", sim.WithProcess(sim.Process{Device: 1, PID: 4242, Name: "job"}))
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	w := NewWatch(drv.Monitor(), true)
	run := &results.Run{Figures: []results.Figure{{Test: results.CERead, Src: 0, Dst: 1}, {Test: results.CERead, Src: 0, Dst: 0}}}
	w.marked = len(run.Figures) // both measured before the check
	if err := w.Check(run, map[int]string{0: "a", 1: "b"}, nil, []int{0}); err != nil {
		t.Fatal(err)
	}
	if got := run.Figures[0].OtherProcesses; len(got) != 1 || got[0] != 4242 {
		t.Errorf("the figure that grew names %v, want 4242", got)
	}
	if got := run.Figures[1].OtherProcesses; got != nil {
		t.Errorf("a figure that did not grow names %v", got)
	}
}

// TestWatchLinkTotals: the watch reads the NVLink error totals at the
// start of each round and a second apart or more between (not at every
// check), each reading timed and tagged with its round; a device whose
// totals the driver does not give has no readings.
func TestWatchLinkTotals(t *testing.T) {
	drv, err := sim.New("h200x2", sim.WithLinkErrors(sim.LinkErrors{Device: 0, Link: 2, Counter: results.LinkCRCData, Burst: 7}))
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	w := NewWatch(drv.Monitor(), false)
	// No reading is due between the rounds' own: the checks read none.
	w.totalsEvery = time.Hour
	run := &results.Run{}
	devs := map[int]string{0: "a", 1: "b"}
	for round := 1; round <= 2; round++ {
		w.Round(run, devs, round)
		for range 3 {
			if err := w.Check(run, devs, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.Round(run, devs, 0)
	if len(run.Environment.DuringRun) != 2 {
		t.Fatalf("during the run: %+v", run.Environment.DuringRun)
	}
	for _, x := range run.Environment.DuringRun {
		// One reading per round and one after them.
		var rounds []int
		for _, r := range x.LinkErrors {
			rounds = append(rounds, r.Round)
			if r.Time.IsZero() || r.Totals[results.LinkReplay] != 0 {
				t.Errorf("GPU %d reading %+v", x.Device, r)
			}
		}
		if len(rounds) != 3 || rounds[0] != 1 || rounds[1] != 2 || rounds[2] != 0 {
			t.Errorf("GPU %d read in rounds %v, want [1 2 0]", x.Device, rounds)
		}
		if x.Device == 0 && x.LinkErrors[0].Totals[results.LinkCRCData] < 7 {
			t.Errorf("GPU 0's CRC-data total %d, want the burst of 7 in it", x.LinkErrors[0].Totals[results.LinkCRCData])
		}
	}
	// The readings are bounded: past the most a file keeps, every other
	// goes, but the first of each round.
	x := &run.Environment.DuringRun[0]
	for len(x.LinkErrors) < results.MaxLinkErrorReadings-1 {
		x.LinkErrors = append(x.LinkErrors, x.LinkErrors[len(x.LinkErrors)-1])
	}
	// A check due reads the totals too.
	w.totalsEvery = 0
	if err := w.Check(run, devs, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(x.LinkErrors); n < results.MaxLinkErrorReadings/2 || n > results.MaxLinkErrorReadings/2+3 {
		t.Errorf("%d readings after thinning", n)
	}
	w.Round(run, devs, 3)
	if n := len(x.LinkErrors); n > results.MaxLinkErrorReadings/2+3 || x.LinkErrors[n-1].Round != 3 || x.LinkErrors[1].Round != 2 {
		t.Errorf("thinned to %d readings, the last of round %d", n, x.LinkErrors[n-1].Round)
	}
}
