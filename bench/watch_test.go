package bench_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// watchedRun runs ce_read, h2d and local_copy on the simulated 2× H200
// under a Watch, with its health read before and after, as the command
// line does.
func watchedRun(t *testing.T, allowBusy bool, simOpts ...sim.Option) (*results.Run, error) {
	t.Helper()
	drv, err := sim.New("h200x2", simOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drv.Close() })
	mon := drv.Monitor()
	opt := options(results.CERead, results.H2D, results.LocalCopy)
	opt.Devices, opt.Size, opt.Samples = []int{0, 1}, 1<<20, 3
	opt.Watch = measure.NewWatch(mon, allowBusy)
	run := &results.Run{Schema: results.SchemaVersion, Simulated: true, Start: time.Now().UTC(), Verify: true}
	if run.Environment, run.Topology, err = bench.Discover(drv, mon, opt.Devices); err != nil {
		t.Fatal(err)
	}
	err = bench.NewEngine(drv, opt).Run(context.Background(), run)
	run.Environment.HealthAfter = bench.ReadHealth(mon, run.Environment.Devices)
	run.End, run.Complete = time.Now().UTC(), err == nil
	if verr := run.Validate(); verr != nil {
		t.Errorf("the run does not validate: %v", verr)
	}
	return run, err
}

func TestWatchHealthyRun(t *testing.T) {
	run, err := watchedRun(t, false)
	if err != nil {
		t.Fatal(err)
	}
	e := run.Environment
	if len(e.HealthBefore) != 2 || len(e.HealthAfter) != 2 || len(e.HealthBefore[1].Links) != 18 {
		t.Errorf("health before %d, after %d devices", len(e.HealthBefore), len(e.HealthAfter))
	}
	if e.OtherProcesses != nil || faults(run) != nil {
		t.Errorf("a healthy machine: other processes %+v, findings %+v", e.OtherProcesses, faults(run))
	}
	// One reading before measuring and one after each of the 6 steps (h2d
	// and local copy on each device, ce_read on each pair) of each of the
	// 3 rounds (one per sample), all idle.
	for _, w := range e.DuringRun {
		if w.Readings != 19 || w.Throttle[results.ThrottleIdle] != 19 || w.SMClockMinMHz != 1980 || w.SMClockMaxMHz != 1980 {
			t.Errorf("during the run: %+v", w)
		}
	}
	if len(e.DuringRun) != 2 {
		t.Errorf("readings of %d devices, want 2", len(e.DuringRun))
	}
}

func TestWatchRefusesABusyGPU(t *testing.T) {
	run, err := watchedRun(t, false, sim.WithProcess(sim.Process{Device: 1, PID: 4242, Name: "python", UsedBytes: 2 << 30}))
	var busy *measure.BusyError
	if !errors.As(err, &busy) || len(busy.Processes) != 1 || busy.Processes[0].PID != 4242 {
		t.Fatalf("Run = %v, want a BusyError naming pid 4242", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "pid 4242 (python, 2 GiB) on GPU 1") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming the process", msg)
	}
	if len(run.Figures) != 0 || len(run.Environment.OtherProcesses) != 1 {
		t.Errorf("%d figures, other processes %+v; want none measured and the process recorded", len(run.Figures), run.Environment.OtherProcesses)
	}
}

func TestWatchMarksFiguresWhenAllowed(t *testing.T) {
	run, err := watchedRun(t, true, sim.WithProcess(sim.Process{Device: 1, PID: 4242, Name: "python"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Figures) == 0 {
		t.Fatal("no figures")
	}
	for _, f := range run.Figures {
		onOne := f.Src == 1 || f.Dst == 1
		if marked := slices.Equal(f.OtherProcesses, []int{4242}); marked != onOne {
			t.Errorf("%s %d→%d: other processes %v", f.Test, f.Src, f.Dst, f.OtherProcesses)
		}
	}
	var found bool
	for _, h := range run.HealthFindings() {
		if h.Check == results.HealthOtherProcess && h.Device == 1 && h.What == "4242" {
			found = true
		}
	}
	if !found {
		t.Errorf("findings %+v: want the other process", run.HealthFindings())
	}
}

// lateMonitor lists a process on device 1 from the given check on (counted
// by the listings of device 1, one per check; a check reads its devices at
// once).
type lateMonitor struct {
	gpu.Monitor
	checks, from int
	proc         results.Process
}

func (m *lateMonitor) Processes(dev int, busID string) ([]results.Process, error) {
	ps, err := m.Monitor.Processes(dev, busID)
	if dev == 1 {
		if m.checks++; m.checks >= m.from {
			ps = append(ps, m.proc)
		}
	}
	return ps, err
}

// lateRun runs ce_read, h2d and local_copy on the simulated 2× H200 with a
// process on device 1 from check from on.
func lateRun(t *testing.T, from int, proc results.Process) (*results.Run, error) {
	t.Helper()
	drv, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	opt := options(results.CERead, results.H2D, results.LocalCopy)
	opt.Devices, opt.Size, opt.Samples = []int{0, 1}, 1<<20, 3
	opt.Watch = measure.NewWatch(&lateMonitor{Monitor: drv.Monitor(), from: from, proc: proc}, false)
	run := &results.Run{Schema: results.SchemaVersion, Simulated: true}
	return run, bench.NewEngine(drv, opt).Run(context.Background(), run)
}

func TestWatchStopsWhenAProgramStarts(t *testing.T) {
	// The program starts at the fourth check, after h2d and local copy on
	// device 0 and h2d on device 1: the figures of device 0 stay unmarked,
	// h2d's on device 1 is marked, and the run stops there.
	run, err := lateRun(t, 4, results.Process{Device: 1, PID: 777, Name: "late"})
	var busy *measure.BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Run = %v, want a BusyError", err)
	}
	var got []string
	for _, f := range run.Figures {
		got = append(got, fmt.Sprintf("%s %d→%d %v", f.Test, f.Src, f.Dst, f.OtherProcesses))
	}
	want := []string{"h2d -1→0 []", "local_copy 0→0 []", "h2d -1→1 [777]"}
	if !slices.Equal(got, want) {
		t.Errorf("figures %q, want %q", got, want)
	}
}

func TestWatchOwnProcessInAContainer(t *testing.T) {
	// A pid this process cannot see that turns up after the first check is
	// taken to be the run's own (its host pid): noted, not counted.
	invisible := results.Process{Device: 1, PID: 1<<22 + 9}
	run, err := lateRun(t, 2, invisible)
	if err != nil {
		t.Fatal(err)
	}
	if run.Environment.OtherProcesses != nil || !slices.ContainsFunc(run.Environment.Notes, func(n string) bool {
		return strings.Contains(n, "another pid namespace")
	}) {
		t.Errorf("other processes %+v, notes %q", run.Environment.OtherProcesses, run.Environment.Notes)
	}
	// One there before the run is another program's, seen or not.
	if _, err := lateRun(t, 1, invisible); !errors.As(err, new(*measure.BusyError)) {
		t.Errorf("an unseen pid there from the start: %v, want a BusyError", err)
	}
}

func TestWatchNamesSickLinks(t *testing.T) {
	run, err := watchedRun(t, false,
		sim.WithLinkErrors(sim.LinkErrors{Device: 0, Link: 3, Counter: results.LinkReplay, PerSecond: 1e6}),
		sim.WithLinkDown(1, 11, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range faults(run) {
		got = append(got, string(h.Check)+" "+h.String())
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "link_errors GPU 0 NVLink 3: replay errors rose during the run, 0 → ") ||
		got[1] != "link_down GPU 1 NVLink 11: went down during the run (active before it, inactive after)" {
		t.Errorf("findings %q", got)
	}
}

// faults are the run's health findings but the corrected errors a healthy
// NVLink 4 link counts as it works (ECC-data: the simulator's machines
// count them as the 2x H100 did), which are facts, not faults.
func faults(run *results.Run) []results.HealthFinding {
	var out []results.HealthFinding
	for _, f := range run.HealthFindings() {
		if f.Check == results.HealthLinkErrors && f.What == string(results.LinkECCData) {
			continue
		}
		out = append(out, f)
	}
	return out
}
