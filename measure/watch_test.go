package measure

import (
	"errors"
	"strings"
	"testing"

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

// blindMonitor cannot list processes or read throttle reasons.
type blindMonitor struct{ gpu.Monitor }

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
