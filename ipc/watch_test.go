package ipc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// childrenMonitor lists, as NVML does on a real machine, the children of
// the run on their devices, and a stranger when there is one.
type childrenMonitor struct {
	gpu.Monitor
	h        *ipcHarness
	stranger *results.Process
}

func (m *childrenMonitor) Processes(dev int, busID string) ([]results.Process, error) {
	ps, err := m.Monitor.Processes(dev, busID)
	m.h.mu.Lock()
	defer m.h.mu.Unlock()
	for _, k := range m.h.kids {
		if k.Device == dev {
			ps = append(ps, results.Process{Device: dev, PID: k.Pid, Name: "ipc-child"})
		}
	}
	if s := m.stranger; s != nil && s.Device == dev {
		ps = append(ps, *s)
	}
	return ps, err
}

func TestIPCWatchLeavesOutTheChildren(t *testing.T) {
	h := newIPCHarness(t, results.IPCCERead)
	mon := &childrenMonitor{Monitor: h.drv.(*sim.Driver).Monitor(), h: h}
	h.opt.Watch = measure.NewWatch(mon, false)
	run, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if run.Environment.OtherProcesses != nil || len(run.Figures) == 0 {
		t.Errorf("other processes %+v, %d figures: want the children left out", run.Environment.OtherProcesses, len(run.Figures))
	}
	// A reading before the children start and one after each of the
	// three pairs (0→1, 1→0, the same-GPU baseline).
	for _, w := range run.Environment.DuringRun {
		if w.Readings != 4 {
			t.Errorf("during the run: %+v, want 4 readings", w)
		}
	}
	h.checkNoChildren()
}

func TestIPCWatchRefusesABusyGPU(t *testing.T) {
	h := newIPCHarness(t, results.IPCCERead)
	mon := &childrenMonitor{Monitor: h.drv.(*sim.Driver).Monitor(), h: h,
		stranger: &results.Process{Device: 1, PID: 4242, Name: "python"}}
	h.opt.Watch = measure.NewWatch(mon, false)
	run, err := h.run(context.Background())
	var busy *measure.BusyError
	if !errors.As(err, &busy) || len(run.Figures) != 0 {
		t.Fatalf("Run = %v with %d figures, want a BusyError before any child starts", err, len(run.Figures))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.kids) != 0 {
		t.Errorf("%d children started", len(h.kids))
	}

	// Allowed: measured, and every figure touching device 1 marked (the
	// same-GPU baseline runs on device 0 only).
	h2 := newIPCHarness(t, results.IPCCERead)
	mon.h = h2
	h2.opt.Watch = measure.NewWatch(mon, true)
	run, err = h2.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Figures {
		if marked := len(f.OtherProcesses) == 1 && f.OtherProcesses[0] == 4242; marked != (f.Src == 1 || f.Dst == 1) {
			t.Errorf("%s: other processes %v", figureKey(&f), f.OtherProcesses)
		}
	}
	h2.checkNoChildren()
}
