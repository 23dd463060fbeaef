package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

// measuring is the run of a measuring command (bw, lat, atomic, ipc, all):
// its session, its record, its results file and its progress bar.
type measuring struct {
	c    *cli.Context
	s    *session
	run  *results.Run
	path string       // the results file to claim; "" for none
	file *resultsFile // nil until claimed, and without one
	bar  *progress
	// stopNote is said when the run is interrupted (what was cleaned up).
	stopNote string
	// judge, when set, gives the run its verdict before it is saved.
	judge func(*results.Run) error
	// reaping is the children of the tests across processes ending in the
	// background (ipc.Options.Reaping); close waits for them.
	reaping sync.WaitGroup
	// savedTo is where the finished run's results are: the results file, or
	// the file they were rescued to when it could not be written; "" when
	// they are nowhere. finish sets it before it prints.
	savedTo string
	// saveWarned is set once a failing save in progress has been said.
	saveWarned bool
}

// startMeasuring checks that the results file at path (none when "") can
// be written and is none of inputs, opens the session of t and starts the
// record with the machine's environment and topology. Nothing is created
// yet: claim takes the results file once every check has passed, so that a
// run refused (no driver, a bad input) leaves no directory or file behind.
func startMeasuring(c *cli.Context, t target, path string, inputs ...string) (*measuring, error) {
	return startMeasuringWith(c, t, path, nil, inputs...)
}

// startMeasuringWith is startMeasuring with opened, when not nil, called
// once the session's devices are chosen, before the machine's discovery.
func startMeasuringWith(c *cli.Context, t target, path string, opened func(*session), inputs ...string) (*measuring, error) {
	m := &measuring{c: c, bar: newProgress(c.App.ErrWriter, os.Getenv("TERM")), path: path}
	if err := outfile.Writable(path, inputs...); err != nil {
		return nil, err
	}
	var err error
	t0 := time.Now()
	if m.s, err = t.open(); err != nil {
		m.close()
		return nil, err
	}
	if opened != nil {
		opened(m.s)
	}
	m.run = newRun(c, m.s)
	t1 := time.Now()
	if err := m.s.discover(m.run); err != nil {
		m.close()
		return nil, err
	}
	if tracing() {
		m.trace("start: the driver and NVML", t1.Sub(t0))
		m.trace("start: discovery and health", time.Since(t1))
	}
	return m, nil
}

// claim takes the results file (its lock, and its directory when missing)
// just before measuring.
func (m *measuring) claim() error {
	if m.path == "" {
		return nil
	}
	f, err := claimResults(m.path)
	if err != nil {
		return err
	}
	m.file, f.run = f, m.run
	return nil
}

func (m *measuring) close() {
	m.reaping.Wait()
	if m.s != nil {
		m.s.Close()
	}
	if m.file != nil {
		m.file.unlock()
	}
}

// settle gives settings what the session decides: the devices, the
// monitor, the watch for other programs on the GPUs (--allow-busy), and the
// progress of the run.
func (m *measuring) settle(s *measure.Settings) {
	s.Devices, s.Monitor, s.Progress = m.s.devices, m.s.mon, m.progress
	s.Watch = measure.NewWatch(m.s.mon, m.c.Bool("allow-busy"))
	m.run.Verify = s.Verify
}

// progress is told of every step: it moves the bar and saves the results
// now and then. The first save that fails is said at once, not only at the
// end: until one succeeds, a kill would lose what was measured.
func (m *measuring) progress(done, total int, step string) {
	m.bar.update(done, total, step)
	if m.file == nil {
		return
	}
	if err := m.file.save(false); err != nil && !m.saveWarned {
		m.saveWarned = true
		fmt.Fprintln(m.c.App.ErrWriter, report.Wrap(fmt.Sprintf("p2pbench: warning: saving the run in progress failed (%v); it goes on, trying again, and at its end saves the results elsewhere if this file still cannot be written", err), report.ScreenWidth))
	}
}

// finish closes the record of a run that ended with runErr, writes the
// results file for the last time (or, when that fails, a file elsewhere,
// which the error names), prints the results (as JSON, or the documents
// that docs makes of them) and returns the command's error: interrupted,
// runErr, failed figures or nothing measured.
func (m *measuring) finish(runErr error, docs func(*results.Run) []*report.Document) error {
	m.bar.finish()
	run := m.run
	run.End = time.Now().UTC()
	if d, ok := m.s.drv.(*sim.Driver); ok && run.Plan != nil {
		run.Plan.ModelledSeconds = d.Elapsed().Seconds()
	}
	if m.s.sim == "" {
		// Nothing more is measured: the GPUs' contexts and memory go
		// while NVML reads their state and health (the simulator's
		// monitor reads its driver).
		m.s.closeDriver()
	}
	run.Environment.StateEnd = bench.ReadStates(m.s.mon, run.Environment.Devices)
	run.Environment.HealthAfter = bench.ReadHealth(m.s.mon, run.Environment.Devices)
	sig, stopped := interrupted(m.c.Context)
	run.Complete = runErr == nil && !stopped
	switch {
	case stopped:
		run.Stopped = sig.Error()
	case runErr != nil:
		run.Stopped = runErr.Error()
	}
	// A run cut short is judged too, as check judges its file (the
	// measurements check fails it: it stopped early), so the screen, check
	// and report give one verdict. Expectations that cannot judge what a
	// partial run holds leave it without one, and its error unsaid: the
	// stop is the error.
	var judgeErr error
	if m.judge != nil {
		if judgeErr = m.judge(run); !run.Complete {
			judgeErr = nil
		}
	}
	var saveErr error
	if m.file != nil {
		// The writer refuses what the readers would: a run that would not
		// read back is an error, and is saved elsewhere, not lost.
		err := run.Validate()
		if err != nil {
			err = fmt.Errorf("the results would not read back (%v)", err)
		} else {
			err = m.file.save(true)
		}
		if err != nil {
			m.savedTo, saveErr = rescueResults(run, err)
		} else {
			m.savedTo = m.file.path
		}
	}
	if err := m.print(docs); err != nil {
		return err
	}
	if saveErr != nil {
		return saveErr
	}
	where := "not saved (no -o given)"
	if m.file != nil {
		where = "saved to " + m.file.path
		fmt.Fprintln(m.c.App.ErrWriter, report.Wrap("results: "+m.file.path+modelledText(run), report.ScreenWidth))
	}
	switch {
	case stopped:
		msg := sig.Error()
		if m.stopNote != "" {
			msg += "; " + m.stopNote
		}
		return fmt.Errorf("%s; the run is partial (%s), %s", msg, figures(len(run.Figures)), where)
	case errors.As(runErr, new(*measure.BusyError)):
		return failedFigures(fmt.Errorf("%w (give --allow-busy to measure anyway)", runErr))
	case runErr != nil:
		return runErr
	case judgeErr != nil:
		return judgeErr
	}
	explained, err := figuresFailed(run)
	if err != nil {
		return err
	}
	if explained > 0 {
		fmt.Fprintln(m.c.App.ErrWriter, report.Wrap(fmt.Sprintf("p2pbench: note: %s failed as this machine is known to make them fail (pairs without peer access or native atomics; the notes say which), which is no fault of it", figures(explained)), report.ScreenWidth))
	}
	return verdictStatus(m.c, run.Verdict)
}

// modelledText says, for a simulated run, how long the simulator modelled
// its tests in this process to take on the machine.
func modelledText(run *results.Run) string {
	if !run.Simulated || run.Plan == nil || run.Plan.ModelledSeconds == 0 {
		return ""
	}
	return fmt.Sprintf(" (SIMULATED: the tests in this process modelled %s of device and host time)",
		time.Duration(run.Plan.ModelledSeconds*float64(time.Second)).Round(100*time.Millisecond))
}

// print writes the run on the command's standard output.
func (m *measuring) print(docs func(*results.Run) []*report.Document) error {
	w := m.c.App.Writer
	if m.c.Bool("json") {
		return m.run.Encode(w)
	}
	for _, d := range docs(m.run) {
		if err := d.WriteText(w); err != nil {
			return err
		}
	}
	return nil
}

// figuresFailed is the error of a run with failed figures or none at all
// (exit status 4), nil for a run whose every figure was measured (and, where
// verification was on, verified) or failed only as the machine is known to
// make it fail (results.Run.ExplainedFailure: a pair without peer access, a
// link without native atomics), unless every figure failed; with nil it
// says how many failed that way.
func figuresFailed(run *results.Run) (explained int, err error) {
	if len(run.Figures) == 0 {
		return 0, failedFigures(errors.New("nothing was measured"))
	}
	c := run.Failures()
	if !c.Unexplained() {
		return c.Explained, nil
	}
	return 0, failedFigures(fmt.Errorf("%d of %d figures failed (%d with an error, %d with bad data)",
		c.Failed(), c.Figures, c.Errors, c.BadData))
}

// resultsFile is the results file of a run: locked against a second run
// for the run's whole length, written now and then while it runs (so that a
// crash or a kill loses little) and at its end.
type resultsFile struct {
	path   string
	unlock func()
	run    *results.Run
	mu     sync.Mutex
	last   time.Time
	// saved is the number of figures written last time.
	saved int
}

// claimResults checks that path can be written and is none of inputs, and
// takes its lock.
func claimResults(path string, inputs ...string) (*resultsFile, error) {
	if err := outfile.Writable(path, inputs...); err != nil {
		return nil, err
	}
	unlock, err := outfile.Lock(path)
	if err != nil {
		return nil, err
	}
	return &resultsFile{path: path, unlock: unlock}, nil
}

// save writes the results: at the end of the run when final, else as a run
// still in progress, when the first figure is there to save or the last
// write is 2 s old.
func (f *resultsFile) save(final bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !final && (f.saved > 0 || len(f.run.Figures) == 0) && time.Since(f.last) < 2*time.Second {
		return nil
	}
	f.last, f.saved = time.Now(), len(f.run.Figures)
	run := f.run
	if !final {
		snap := *f.run
		snap.End = time.Now().UTC()
		snap.Complete = false
		snap.Stopped = "in progress (the run had not finished when this was written)"
		snap.Figures = append([]results.Figure(nil), f.run.Figures...)
		run = &snap
	}
	return outfile.Write(f.path, run.EncodeFor(f.path))
}

// keepAside moves the results file of an earlier run out of the way of
// all's new one, within its directory (results.json.<time it was
// written>: no *.json name, so that fleet, which reads every *.json of a
// directory, does not take it for another node) and says so: a second all
// into one --dir replaced the first run's results without a word, and that
// run may have been a baseline. Called with the lock held; a link or
// anything but a regular file is left as it is (the output policy writes
// through an owned link).
func keepAside(w io.Writer, path string) error {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	dir := filepath.Dir(path)
	stamp := fi.ModTime().UTC().Format("20060102-150405")
	for i := 1; ; i++ {
		name := filepath.Base(path) + "." + stamp
		if i > 1 {
			name = fmt.Sprintf("%s.%s-%d", filepath.Base(path), stamp, i)
		}
		aside := filepath.Join(dir, name)
		if _, err := os.Lstat(aside); err == nil {
			continue
		}
		if err := os.Rename(path, aside); err != nil {
			return fmt.Errorf("keeping the earlier run's %s: %w", path, err)
		}
		fmt.Fprintf(w, "p2pbench: %s held an earlier run's results (written %s UTC): kept as %s\n", path, fi.ModTime().UTC().Format("2006-01-02 15:04:05"), aside)
		return nil
	}
}

// rescueResults writes run somewhere else when its results file could not be
// written at the end of a run, so the figures measured are not lost, and
// returns where they went ("" for nowhere) and the error to report, which
// says the same.
func rescueResults(run *results.Run, writeErr error) (string, error) {
	return rescueAt(run, writeErr, time.Now())
}

// rescueAt is rescueResults at time now, which names the file. A name is
// claimed by creating it exclusively (never through a link) before the run
// is written over it, so a rescue never replaces another's file: two runs
// rescued in one second (or a file planted in /tmp) get -2, -3, ….
func rescueAt(run *results.Run, writeErr error, now time.Time) (string, error) {
	stamp := now.UTC().Format("20060102-150405")
	var tried []string
	for _, dir := range []string{os.TempDir(), "."} {
		for i := 1; i <= 100; i++ {
			name := fmt.Sprintf("p2pbench-unsaved-%s.json", stamp)
			if i > 1 {
				name = fmt.Sprintf("p2pbench-unsaved-%s-%d.json", stamp, i)
			}
			p := filepath.Join(dir, name)
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, os.ErrExist) && i < 100 {
				continue
			}
			if err == nil {
				f.Close()
				if err = outfile.Write(p, run.Encode); err == nil {
					return p, fmt.Errorf("writing the results failed (%v); the run (%s) is saved in %s instead",
						writeErr, figures(len(run.Figures)), p)
				}
				os.Remove(p)
			}
			tried = append(tried, fmt.Sprintf("%s (%v)", p, err))
			break
		}
	}
	return "", fmt.Errorf("writing the results failed (%v), and so did writing them to %s; the run (%s) is only in the tables above",
		writeErr, strings.Join(tried, " and "), figures(len(run.Figures)))
}

// figures counts figures in words.
func figures(n int) string {
	if n == 1 {
		return "1 figure"
	}
	return fmt.Sprintf("%d figures", n)
}

// progress draws a bar on a terminal that can show one.
type progress struct{ bar *progressbar.ProgressBar }

// newProgress draws on w when it is a terminal and TERM is not "dumb".
func newProgress(w io.Writer, termName string) *progress {
	f, ok := termsafe.File(w) // the bar draws on the terminal itself
	if !ok || termName == "dumb" || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(1,
		progressbar.OptionSetWriter(f),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond))}
}

func (p *progress) update(done, total int, step string) {
	if p.bar == nil {
		return
	}
	p.bar.ChangeMax(total)
	p.bar.Describe(step)
	_ = p.bar.Set(done)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
