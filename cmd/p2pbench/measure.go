package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/internal/launch"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// measureCommand is bw, lat, atomic or all: the tests of one process (all:
// and then those across processes).
func measureCommand(name, usage string) *cli.Command {
	output := cli.Flag(outputFlag)
	if name == "all" {
		output = &cli.StringFlag{Name: "dir", Usage: "results directory `DIR`, a pattern: %h host, %r rank (Slurm, Open MPI, PMIx, Kubernetes indexed Job), %j job id, %t time, %% (default: p2pbench-%h-%t, under a launcher p2pbench-%h-%r-%t)"}
	}
	flags := measuringFlags(testCommand(name), output)
	if name == "bw" || name == "all" {
		sizes := ""
		if name == "all" {
			sizes = results.DefaultSweep
		}
		flags = append(flags, copyFlags("transfer size of the pairwise matrices")...)
		flags = append(flags,
			&cli.StringFlag{Name: "sizes", Value: sizes, Usage: "size sweep for CE and SM read/write, e.g. 4B:1GiB (powers of two), 4B:1GiB:4 (of four) or 4KiB,1MiB; \"none\" for no sweep"},
			&cli.BoolFlag{Name: "tune", Usage: "first search SM copy variant and grid per pair and direction; the winners are recorded and used"},
		)
	}
	if name == "all" {
		flags = append(flags, verdictFlags()...)
		flags = append(flags, &cli.BoolFlag{Name: "tables", Usage: "print every result table and the summary too, not only the one screen of the verdict (p2pbench show RESULTS.json prints them later)"})
	}
	flags = append(flags, planFlags...)
	return &cli.Command{Name: name, Usage: usage, Flags: flags, Action: measureAction}
}

// testCommand is the catalogue's command of a measuring command: every
// test for all.
func testCommand(name string) results.Command {
	if name == "all" {
		return ""
	}
	return results.Command(name)
}

// measureAction runs bw, lat, atomic or all.
func measureAction(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	t, err := targetOf(c)
	if err != nil {
		return err
	}
	opt, err := benchOptions(c)
	if err != nil {
		return err
	}
	if c.Bool("dry-run") {
		for _, f := range []string{"output", "json"} {
			if c.IsSet(f) {
				return usageError{fmt.Errorf("--dry-run measures nothing, so --%s has nothing to write: leave one of them out", f)}
			}
		}
		if c.Command.Name == "all" {
			// The --dir pattern filled from the launcher, to check it
			// before a run under srun or mpirun.
			path, err := resultsPath(c)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "p2pbench: dry run: the results would go to %s\n", path)
		}
		return dryRun(c, t, opt)
	}
	path, err := resultsPath(c)
	if err != nil {
		return err
	}
	// Every input is read and every check made before the results
	// directory is made: a refused run leaves nothing behind. The output
	// is checked first (an output that is an input is refused unread); all's
	// --dir is an output directory itself (another user's link refused).
	if c.Command.Name == "all" {
		// A --dir that is a file is said as Writable says it, naming
		// results.json.
		if err := outfile.DirWritable(filepath.Dir(path)); err != nil && !errors.Is(err, syscall.ENOTDIR) {
			return err
		}
	}
	if err := outfile.Writable(path, c.String("tuning"), c.String("expect"), c.String("baseline")); err != nil {
		return err
	}
	var exp verdict.Expectations
	if c.Command.Name == "all" {
		if exp, err = expectationsOf(c); err != nil {
			return err
		}
	}
	if opt.Tuned, err = readTuning(c); err != nil {
		return err
	}
	t0 := time.Now()
	// The host tests' regions are faulted in beside the discovery and setup
	// (cuda.PrefaultHost); the simulator pins nothing of the process's.
	prefault := func(s *session) {
		if s.sim == "" {
			go warmJIT(s)
			cuda.PrefaultHost(int(opt.Size), bench.HostRegionsFor(opt, s.devices))
		}
	}
	m, err := startMeasuringWith(c, t, path, prefault, c.String("tuning"), c.String("expect"), c.String("baseline"))
	if err != nil {
		return err
	}
	defer func() {
		t := time.Now()
		m.close()
		if tracing() {
			m.trace("exit: closing the driver", time.Since(t))
			m.trace("the whole command, from the process's start", time.Since(processStart))
		}
	}()
	if tracing() {
		m.trace("start: the driver, NVML, the machine's discovery and health", time.Since(t0))
	}
	if c.Command.Name == "all" {
		if m.judge, err = judgeAfterwards(m.run, exp); err != nil {
			return err
		}
	}
	if err := checkPairs(c.App.ErrWriter, opt.Tests, m.s.devices); err != nil {
		return err
	}
	if err := m.claim(); err != nil {
		return err
	}
	if c.Command.Name == "all" {
		if err := keepAside(c.App.ErrWriter, path); err != nil {
			return err
		}
	}
	m.settle(&opt.Settings)
	if c.Command.Name == "all" {
		fmt.Fprintln(c.App.ErrWriter, report.Wrap("p2pbench: "+bench.NewPreview(opt, m.run.Environment, m.run.Topology).Summary(), report.ScreenWidth))
	}
	runErr := m.measureInProcess(opt)
	if c.Command.Name == "all" && runErr == nil {
		runErr = m.measureAcrossProcesses(opt)
	}
	t1 := time.Now()
	if tracing() {
		defer func() { m.trace("end: health, the verdict, writing and printing", time.Since(t1)) }()
	}
	return m.finish(runErr, func(run *results.Run) []*report.Document {
		switch {
		case c.Command.Name != "all":
			return []*report.Document{report.Tables(run, nil)}
		case c.Bool("tables"):
			return []*report.Document{report.Tables(run, nil), report.Summary(run), report.Verdict(run)}
		}
		// One screen of report.ScreenWidth columns: the verdict first,
		// then where the rest is: the results file, or where they were
		// rescued to when it could not be written; with neither, the
		// tables hold all there is.
		if m.savedTo == "" {
			return []*report.Document{report.Tables(run, nil), report.Summary(run), report.Verdict(run)}
		}
		return []*report.Document{report.Screen(run, m.savedTo)}
	})
}

// warmJIT starts every device's primary context and has the driver compile
// every kernel for the first device, on a thread of its own, while the
// machine's discovery runs (measure.WarmJIT): the setup then finds the
// contexts, the warm-up the compiled kernels, and the first run on a fresh
// machine starts as fast as the runs after it (docs/findings.md, "Behind
// the code"). Whatever fails here fails again, and is reported, where it
// matters.
func warmJIT(s *session) {
	if len(s.devices) == 0 {
		return
	}
	info, err := s.drv.DeviceInfo(s.devices[0])
	if err != nil {
		return
	}
	first, err := s.drv.Context(s.devices[0])
	if err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = measure.WarmJIT(first, info.ComputeMajor*10+info.ComputeMinor)
	}()
	for _, d := range s.devices[1:] {
		if _, err := s.drv.Context(d); err != nil {
			break
		}
	}
	<-done
}

// benchOptions reads the flags of bw, lat, atomic and all.
func benchOptions(c *cli.Context) (bench.Options, error) {
	var o bench.Options
	tests, err := results.ParseTests(c.String("tests"), testCommand(c.Command.Name))
	if err != nil {
		return o, usageError{err}
	}
	copies := c.Command.Name == "bw" || c.Command.Name == "all"
	if copies && c.Bool("tune") && c.String("tuning") != "" {
		return o, usageError{fmt.Errorf("--tune and --tuning exclude each other")}
	}
	if copies {
		if o.Sweep, err = readSweep(c); err != nil {
			return o, err
		}
		o.Tune = c.Bool("tune")
	}
	if o.Plan, err = readPlan(c); err != nil {
		return o, err
	}
	o.Settings, err = readSettings(c, tests, copies)
	return o, err
}

// resultsPath is the results file of bw, lat and atomic (-o, maybe none)
// or of all: results.json in --dir, whose pattern is filled from the
// launcher's environment (%h host, %r rank, %j job id, %t time; see
// internal/launch), by default p2pbench-%h-%t, and p2pbench-%h-%r-%t
// under a launcher.
func resultsPath(c *cli.Context) (string, error) {
	if c.Command.Name != "all" {
		return c.String("output"), nil
	}
	env, err := launch.Detect(os.Getenv, os.Hostname)
	if err != nil {
		return "", usageError{err}
	}
	pattern := c.String("dir")
	if pattern == "" {
		pattern = "p2pbench-%h-%t"
		if env.Launcher != "" {
			pattern = "p2pbench-%h-%r-%t"
		}
	}
	dir, warning, err := env.Expand(pattern, time.Now().UTC())
	if err != nil {
		return "", usageError{fmt.Errorf("--dir %q: %w", pattern, err)}
	}
	if warning != "" {
		fmt.Fprintln(c.App.ErrWriter, report.Wrap("p2pbench: warning: "+warning, report.ScreenWidth))
	}
	return filepath.Join(dir, "results.json"), nil
}

// measureInProcess runs the engine's tests.
func (m *measuring) measureInProcess(opt bench.Options) error {
	if tracing() {
		opt.Trace = m.trace
	}
	// The SM clocks climb from idle to their maximum in tens of ms
	// (docs/findings.md, "Behind the code"), and the run records them as
	// the warm-up leaves them (Environment.StateStart).
	opt.WarmUp = 100 * time.Millisecond
	opt.AfterWarmUp = func() { m.clocksAfterWarmUp(opt.WarmUp) }
	eng := bench.NewEngine(m.s.drv, opt)
	err := eng.Run(m.c.Context, m.run)
	m.run.Notes = append(m.run.Notes, eng.Notes()...)
	return err
}

// clocksAfterWarmUp records the clocks as the measurements find them; the
// idle reading before the warm-up stays in the notes.
func (m *measuring) clocksAfterWarmUp(warmUp time.Duration) {
	env := &m.run.Environment
	st := bench.ReadStates(m.s.mon, env.Devices)
	if len(st) == 0 {
		return
	}
	for _, x := range env.StateStart {
		env.Notes = append(env.Notes, fmt.Sprintf("device %d before the %v warm-up: SM clock %d MHz, memory clock %d MHz, %d °C, %.0f W",
			x.Index, warmUp, x.SMClockMHz, x.MemClockMHz, x.TempC, x.PowerW))
	}
	env.StateStart = st
}

// measureAcrossProcesses adds the IPC tests to an all run, with the
// engine's settings.
func (m *measuring) measureAcrossProcesses(opt bench.Options) error {
	io := ipc.Options{Settings: opt.Settings}
	io.Tests = slices.DeleteFunc(slices.Clone(opt.Tests), func(t results.Test) bool { return !t.IsIPC() })
	if m.run.Plan != nil {
		io.Pairs, io.Devices = bench.AcrossProcesses(m.run.Plan, io.Devices)
	}
	if len(io.Tests) == 0 {
		return nil
	}
	var err error
	if io.Child, err = ipcChildArgs(m.s); err != nil {
		return err
	}
	trace := tracing()
	last, lastStep := time.Now(), "ipc: start (children, mapping)"
	io.Progress = func(done, total int, step string) {
		if trace {
			m.trace(lastStep, time.Since(last))
			last, lastStep = time.Now(), "ipc: "+step
		}
		m.progress(done, total, "ipc: "+step)
	}
	type opKey struct {
		op    string
		first bool
	}
	var ops []opKey
	opTotal, opCount := map[opKey]time.Duration{}, map[opKey]int{}
	if trace {
		io.OpTime = func(op string, round int, took time.Duration) {
			k := opKey{op, round == 0}
			if opCount[k] == 0 {
				ops = append(ops, k)
			}
			opTotal[k] += took
			opCount[k]++
		}
	}
	m.stopNote = "every child process was stopped"
	if trace {
		io.Trace = m.trace
	}
	io.Reaping = &m.reaping
	t0 := time.Now()
	err = ipc.Run(m.c.Context, m.s.drv, io, m.run)
	if trace {
		for _, k := range ops {
			when := "the later rounds"
			if k.first {
				when = "the first round"
			}
			m.trace(fmt.Sprintf("ipc: %d requests %q in %s", opCount[k], k.op, when), opTotal[k])
		}
		m.trace("ipc: the whole run across processes", time.Since(t0))
	}
	return err
}

// processStart is about when the process started (package initialisation).
var processStart = time.Now()

// tracing says whether P2PBENCH_TRACE asks for where the time goes, step
// by step, for tuning p2pbench itself.
func tracing() bool { return os.Getenv("P2PBENCH_TRACE") != "" }

// trace prints how long a step took.
func (m *measuring) trace(step string, took time.Duration) {
	fmt.Fprintf(m.c.App.ErrWriter, "trace: %8.1f ms  %s\n", float64(took.Microseconds())/1e3, step)
}
