package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// Options are what a run is asked to do, read and checked by its caller.
type Options struct {
	Target Target
	// Path is the results file ("" for none); Inputs are the files the run
	// reads (a spec, a baseline, a tuning file), which Path may be none of.
	Path   string
	Inputs []string
	// Version and Args are the program's and its command line, recorded
	// in the results.
	Version string
	Args    []string
	// Bench, when set, holds the tests in this process (bw, lat, atomic,
	// all); Prepare gives it the machine's devices and monitor.
	Bench *bench.Options
	// AcrossProcesses adds the tests across processes of Bench.Tests after
	// those in this process, with their settings (all).
	AcrossProcesses bool
	// IPC, when set instead of Bench, holds the tests across processes
	// alone (ipc).
	IPC *ipc.Options
	// Fabric, when set instead, is one rank of a run across the nodes of
	// a multi-node NVLink domain (mnnvl; see Fabric).
	Fabric *ipc.FabricOptions
	// Judge gives the run its verdict against Expect (nil: the
	// expectation table for the run's machine) before it is saved.
	Judge  bool
	Expect verdict.Expectations
	// KeepAside keeps an earlier run's results file at Path beside the new
	// one (all), where it would be replaced.
	KeepAside bool
	// AllowBusy measures even while other programs are on the GPUs.
	AllowBusy bool
	// Child is the command line of a child of the tests across processes
	// on machine m (ipc.Options.Child).
	Child func(m *Machine) ([]string, error)
	// SaveFailed, when set, is told of the first save of the run in
	// progress that fails: the run goes on, trying again, and a kill would
	// lose what was measured until a save succeeds.
	SaveFailed func(err error)
	// Note, when set, is told what Prepare leaves out of what was asked
	// (the tests of two devices when one is selected).
	Note func(note string)
	// KeptAside, when set, is told that the results file held an earlier
	// run's results, written at written, now kept as aside (KeepAside).
	KeptAside func(path, aside string, written time.Time)
	// Progress, when set, is told of every step, and that the run has
	// ended before Finish reads the state after.
	Progress Progress
	// Trace, when set, is told how long each step took (P2PBENCH_TRACE).
	Trace func(step string, took time.Duration)
}

// Progress shows the progress of a run (a bar on a terminal).
type Progress interface {
	Update(done, total int, step string)
	Finish()
}

// Session is one measuring run: its machine, its record, its results file.
type Session struct {
	ctx     context.Context
	opt     Options
	Machine *Machine
	Run     *results.Run
	file    *resultsFile // nil until claimed, and without one
	// stopNote is said when the run is interrupted (what was cleaned up).
	stopNote string
	// reaping is the children of the tests across processes ending in the
	// background (ipc.Options.Reaping); Close waits for them.
	reaping sync.WaitGroup
	// fabricMonitor is an mnnvl rank 0's NVML, closed by Close: it reads
	// none of the other nodes' GPUs, so the run's end reads it not.
	fabricMonitor interface{ Close() error }
	// saveWarned is set once a failing save in progress has been said.
	saveWarned bool
}

// Start opens the machine of o, starts the record with the machine's
// environment, topology and health, and holds what the run is to be judged
// against to the machine: a spec that names a link class the machine
// lacks, a baseline of another machine, of a simulation (or a real one for
// a simulated run) or cut short is refused now (kind Usage), not after the
// run. Nothing is created yet: Prepare takes the results file once every
// check has passed, so that a run refused (no driver, a bad input) leaves
// no directory or file behind. ctx's cancellation stops the run.
func Start(ctx context.Context, o Options) (*Session, error) {
	s := &Session{ctx: ctx, opt: o}
	if err := outfile.Writable(o.Path, o.Inputs...); err != nil {
		return nil, err
	}
	var err error
	t0 := time.Now()
	if s.Machine, err = Open(o.Target); err != nil {
		return nil, err
	}
	if o.Bench != nil && s.Machine.Sim == "" {
		// The host tests' regions are faulted in beside the discovery and
		// setup (cuda.PrefaultHost); the simulator pins nothing of the
		// process's.
		go warmJIT(s.Machine)
		cuda.PrefaultHost(int(o.Bench.Size), bench.HostRegionsFor(*o.Bench, s.Machine.Devices))
	}
	s.Run = s.Machine.Record(o.Version, o.Args)
	t1 := time.Now()
	if err := s.Machine.Discover(s.Run); err != nil {
		s.Close()
		return nil, err
	}
	s.trace("start: the driver and NVML", t1.Sub(t0))
	s.trace("start: discovery and health", time.Since(t1))
	if fits, ok := o.Expect.(interface{ Fits(*results.Run) error }); ok && o.Judge {
		if err := fits.Fits(s.Run); err != nil {
			s.Close()
			return nil, usage(err)
		}
	}
	return s, nil
}

// Prepare readies the run just before measuring: the command line of the
// children across processes, the results file claimed (its lock, and its
// directory when missing; an earlier run's kept aside with KeepAside), and
// the settings given the machine: its devices, its monitor, the watch for
// other programs on the GPUs, the progress of the run. First it holds the
// tests to the devices selected (checkPairs).
func (s *Session) Prepare() error {
	if err := s.checkPairs(); err != nil {
		return err
	}
	if s.opt.IPC != nil {
		var err error
		if s.opt.IPC.Child, err = s.opt.Child(s.Machine); err != nil {
			return err
		}
	}
	if err := s.claim(); err != nil {
		return err
	}
	if s.opt.KeepAside && s.file != nil {
		aside, written, err := keepAside(s.file.path)
		if err != nil {
			return err
		}
		if aside != "" && s.opt.KeptAside != nil {
			s.opt.KeptAside(s.file.path, aside, written)
		}
	}
	var settings *measure.Settings
	if s.opt.Bench != nil {
		settings = &s.opt.Bench.Settings
	} else {
		settings = &s.opt.IPC.Settings
	}
	settings.Devices, settings.Monitor, settings.Progress = s.Machine.Devices, s.Machine.Monitor, s.progress
	settings.Watch = measure.NewWatch(s.Machine.Monitor, s.opt.AllowBusy)
	s.Run.Verify = settings.Verify
	return nil
}

// checkPairs fails, before anything is made, where one device is selected
// and every test asked for needs two, or the tests across processes have
// no pair left (ipc with SkipSameGPU); where only some need two, Note is
// told which are left out.
func (s *Session) checkPairs() error {
	devices := s.Machine.Devices
	if s.opt.IPC != nil && len(devices) < 2 && s.opt.IPC.SkipSameGPU {
		return usage(errors.New("one device and --no-same-gpu leave no pair to measure"))
	}
	if s.opt.Bench == nil || len(devices) != 1 {
		return nil
	}
	var skipped []string
	selected := map[string]bool{}
	for _, t := range s.opt.Bench.Tests {
		info := t.Info()
		selected[info.Select] = true
		if info.NeedsPair && !slices.Contains(skipped, info.Select) {
			skipped = append(skipped, info.Select)
		}
	}
	need := units.Plural(len(skipped), "needs", "need")
	if len(skipped) == len(selected) {
		return usage(fmt.Errorf("%s %s two devices, and only device %d is selected (see --devices)",
			strings.Join(skipped, ", "), need, devices[0]))
	}
	if len(skipped) > 0 && s.opt.Note != nil {
		s.opt.Note(fmt.Sprintf("only device %d is selected; skipping %s, which %s two devices", devices[0], strings.Join(skipped, ", "), need))
	}
	return nil
}

// claim takes the results file (its lock, and its directory when missing).
func (s *Session) claim() error {
	if s.opt.Path == "" {
		return nil
	}
	f, err := claimResults(s.opt.Path)
	if err != nil {
		return err
	}
	s.file, f.run = f, s.Run
	return nil
}

// Path is the results file, "" for none.
func (s *Session) Path() string {
	if s.file == nil {
		return ""
	}
	return s.file.path
}

// Close waits for the children of the tests across processes, closes the
// machine and lets the results file go.
func (s *Session) Close() {
	s.reaping.Wait()
	if s.Machine != nil {
		s.Machine.Close()
	}
	if s.fabricMonitor != nil {
		_ = s.fabricMonitor.Close()
	}
	if s.file != nil {
		s.file.unlock()
	}
}

// progress is told of every step: it tells Options.Progress and saves the
// results now and then. The first save that fails is told at once
// (Options.SaveFailed), not only at the end: until one succeeds, a kill
// would lose what was measured.
func (s *Session) progress(done, total int, step string) {
	if s.opt.Progress != nil {
		s.opt.Progress.Update(done, total, step)
	}
	if s.file == nil {
		return
	}
	if err := s.file.save(false); err != nil && !s.saveWarned {
		s.saveWarned = true
		if s.opt.SaveFailed != nil {
			s.opt.SaveFailed(err)
		}
	}
}

// trace tells Options.Trace how long a step took.
func (s *Session) trace(step string, took time.Duration) {
	if s.opt.Trace != nil {
		s.opt.Trace(step, took)
	}
}

// End is what became of a finished run.
type End struct {
	// SavedTo is where the run's results are: the results file, or the
	// file they were rescued to when it could not be written; "" when they
	// are nowhere.
	SavedTo string
	// SaveErr is why the results file could not be written at the end;
	// it says where the run went instead.
	SaveErr error
	// Stopped is why a run cut short by its context's cancellation (a
	// signal) stopped, with what was cleaned up; nil for a run that was not.
	Stopped error
	// JudgeErr is the verdict's error (expectations that cannot judge the
	// run are of kind Usage); a run cut short has none.
	JudgeErr error
}

// Finish closes the record of a run that ended with runErr: its end, the
// modelled time of a simulated run, the devices' state and health after
// (the driver closed first), whether it is complete, its verdict when
// asked, and the results file written for the last time (or, when that
// fails, a file elsewhere).
func (s *Session) Finish(runErr error) End {
	if s.opt.Progress != nil {
		s.opt.Progress.Finish()
	}
	run := s.Run
	run.End = time.Now().UTC()
	if d, ok := s.Machine.Driver.(*sim.Driver); ok && run.Plan != nil {
		run.Plan.ModelledSeconds = d.Elapsed().Seconds()
	}
	if s.Machine.Sim == "" {
		// Nothing more is measured: the GPUs' contexts and memory go
		// while NVML reads their state and health (the simulator's
		// monitor reads its driver).
		s.Machine.closeDriver()
	}
	run.Environment.StateEnd = bench.ReadStates(s.Machine.Monitor, run.Environment.Devices)
	run.Environment.HealthAfter = bench.ReadHealth(s.Machine.Monitor, run.Environment.Devices)
	var end End
	stopped := s.ctx.Err() != nil
	run.Complete = runErr == nil && !stopped
	switch {
	case stopped:
		cause := context.Cause(s.ctx).Error()
		run.Stopped = cause
		if s.stopNote != "" {
			cause += "; " + s.stopNote
		}
		end.Stopped = errors.New(cause)
	case runErr != nil:
		run.Stopped = runErr.Error()
	}
	// A run cut short is judged too, as check judges its file (the
	// measurements check fails it: it stopped early), so the screen, check
	// and report give one verdict. Expectations that cannot judge what a
	// partial run holds leave it without one, and its error unsaid: the
	// stop is the error.
	if s.opt.Judge {
		if end.JudgeErr = Judge(run, s.opt.Expect, s.opt.Version); !run.Complete {
			end.JudgeErr = nil
		}
	}
	end.SavedTo, end.SaveErr = s.save()
	return end
}

// save writes the results file for the last time, or when that fails a
// file elsewhere, and says where the results are.
func (s *Session) save() (string, error) {
	if s.file == nil {
		return "", nil
	}
	// The writer refuses what the readers would: a run that would not
	// read back is an error, and is saved elsewhere, not lost.
	err := s.Run.Validate()
	if err != nil {
		err = fmt.Errorf("the results would not read back (%v)", err)
	} else {
		err = s.file.save(true)
	}
	if err != nil {
		return rescue(s.Run, err)
	}
	return s.file.path, nil
}

// Judge gives run its verdict against exp (the expectation table when
// nil), naming build as its judge; expectations that cannot judge it are
// an error of kind Usage.
func Judge(run *results.Run, exp verdict.Expectations, build string) error {
	err := verdict.Record(run, exp, build)
	if se := (*verdict.SpecError)(nil); errors.As(err, &se) {
		return usage(err)
	}
	return err
}
