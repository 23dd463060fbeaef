package session

import (
	"fmt"
	"slices"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// Measure runs the tests: those in this process and then, with
// AcrossProcesses, those across processes; or the tests across processes
// alone (IPC), or across nodes (Fabric).
func (s *Session) Measure() error {
	if s.opt.Fabric != nil {
		return s.measureFabric()
	}
	if s.opt.Bench == nil {
		s.stopNote = "every child process was stopped"
		return ipc.Run(s.ctx, s.Machine.Driver, *s.opt.IPC, s.Run)
	}
	err := s.measureInProcess(*s.opt.Bench)
	if s.opt.AcrossProcesses && err == nil {
		err = s.measureAcrossProcesses(*s.opt.Bench)
	}
	return err
}

// measureInProcess runs the engine's tests.
func (s *Session) measureInProcess(opt bench.Options) error {
	opt.Trace = s.opt.Trace
	// The SM clocks climb from idle to their maximum in tens of ms
	// (docs/findings.md, "Behind the code"), and the run records them as
	// the warm-up leaves them (Environment.StateStart).
	opt.WarmUp = 100 * time.Millisecond
	opt.AfterWarmUp = func() { s.clocksAfterWarmUp(opt.WarmUp) }
	eng := bench.NewEngine(s.Machine.Driver, opt)
	err := eng.Run(s.ctx, s.Run)
	s.Run.Notes = append(s.Run.Notes, eng.Notes()...)
	return err
}

// clocksAfterWarmUp records the clocks as the measurements find them; the
// idle reading before the warm-up stays in the notes.
func (s *Session) clocksAfterWarmUp(warmUp time.Duration) {
	env := &s.Run.Environment
	st := bench.ReadStates(s.Machine.Monitor, env.Devices)
	if len(st) == 0 {
		return
	}
	for _, x := range env.StateStart {
		env.Notes = append(env.Notes, fmt.Sprintf("device %d before the %v warm-up: SM clock %d MHz, memory clock %d MHz, %d °C, %.0f W",
			x.Index, warmUp, x.SMClockMHz, x.MemClockMHz, x.TempC, x.PowerW))
	}
	env.StateStart = st
}

// measureAcrossProcesses adds the IPC tests to the run, with the engine's
// settings, on the pairs of its plan.
func (s *Session) measureAcrossProcesses(opt bench.Options) error {
	io := ipc.Options{Settings: opt.Settings}
	io.Tests = slices.DeleteFunc(slices.Clone(opt.Tests), func(t results.Test) bool { return !t.IsIPC() })
	if s.Run.Plan != nil {
		io.Pairs, io.Devices = bench.AcrossProcesses(s.Run.Plan, io.Devices)
	}
	if len(io.Tests) == 0 {
		return nil
	}
	var err error
	if io.Child, err = s.opt.Child(s.Machine); err != nil {
		return err
	}
	t := s.ipcTrace(&io)
	s.stopNote = "every child process was stopped"
	io.Reaping = &s.reaping
	err = ipc.Run(s.ctx, s.Machine.Driver, io, s.Run)
	t.done()
	return err
}

// ipcTracer sums, for P2PBENCH_TRACE, where the time across processes goes:
// each step, and the requests to the children by kind, in the first round
// and in the later ones.
type ipcTracer struct {
	s           *Session
	start, last time.Time
	lastStep    string
	ops         []opKey
	total       map[opKey]time.Duration
	count       map[opKey]int
	tracing     bool
}

type opKey struct {
	op    string
	first bool
}

// ipcTrace has io report its progress to the run, and when the run is
// traced its steps and requests to the tracer it returns.
func (s *Session) ipcTrace(io *ipc.Options) *ipcTracer {
	t := &ipcTracer{s: s, start: time.Now(), last: time.Now(), lastStep: "ipc: start (children, mapping)",
		total: map[opKey]time.Duration{}, count: map[opKey]int{}, tracing: s.opt.Trace != nil}
	io.Progress = func(done, total int, step string) {
		if t.tracing {
			s.trace(t.lastStep, time.Since(t.last))
			t.last, t.lastStep = time.Now(), "ipc: "+step
		}
		s.progress(done, total, "ipc: "+step)
	}
	if t.tracing {
		io.OpTime = func(op string, round int, took time.Duration) {
			k := opKey{op, round == 0}
			if t.count[k] == 0 {
				t.ops = append(t.ops, k)
			}
			t.total[k] += took
			t.count[k]++
		}
		io.Trace = s.opt.Trace
	}
	return t
}

// done traces the requests by kind and the whole run across processes.
func (t *ipcTracer) done() {
	if !t.tracing {
		return
	}
	for _, k := range t.ops {
		when := "the later rounds"
		if k.first {
			when = "the first round"
		}
		t.s.trace(fmt.Sprintf("ipc: %d requests %q in %s", t.count[k], k.op, when), t.total[k])
	}
	t.s.trace("ipc: the whole run across processes", time.Since(t.start))
}

// warmJIT starts every device's primary context and has the driver compile
// every kernel for the first device, on a thread of its own, while the
// machine's discovery runs (measure.WarmJIT): the setup then finds the
// contexts, the warm-up the compiled kernels, and the first run on a fresh
// machine starts as fast as the runs after it (docs/findings.md, "Behind
// the code"). Whatever fails here fails again, and is reported, where it
// matters.
func warmJIT(m *Machine) {
	if len(m.Devices) == 0 {
		return
	}
	info, err := m.Driver.DeviceInfo(m.Devices[0])
	if err != nil {
		return
	}
	first, err := m.Driver.Context(m.Devices[0])
	if err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = measure.WarmJIT(first, info.ComputeMajor*10+info.ComputeMinor)
	}()
	for _, d := range m.Devices[1:] {
		if _, err := m.Driver.Context(d); err != nil {
			break
		}
	}
	<-done
}
