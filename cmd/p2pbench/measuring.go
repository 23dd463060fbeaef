package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/progress"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/session"
)

// sessionOptions are the options of a measuring command's session on t:
// the program and its command line, --allow-busy, the command line of the
// IPC children, and what the run tells as it goes: its progress (a bar on
// a terminal), a failing save, an earlier run kept aside and, under
// P2PBENCH_TRACE, its steps' times.
func sessionOptions(c *cli.Context, t session.Target) session.Options {
	o := session.Options{Target: t, Version: version, Args: cmdline.Args(c), AllowBusy: c.Bool("allow-busy"),
		Child: ipcChildArgs, Progress: progress.New(c.App.ErrWriter, os.Getenv("TERM"))}
	o.SaveFailed = func(err error) {
		fmt.Fprintln(c.App.ErrWriter, report.Wrap(fmt.Sprintf("p2pbench: warning: saving the run in progress failed (%v); it goes on, trying again, and at its end saves the results elsewhere if this file still cannot be written", err), report.ScreenWidth))
	}
	o.Note = func(note string) { fmt.Fprintln(c.App.ErrWriter, "p2pbench: note: "+note) }
	o.KeptAside = func(path, aside string, written time.Time) {
		fmt.Fprintf(c.App.ErrWriter, "p2pbench: %s held an earlier run's results (written %s UTC): kept as %s\n", path, written.UTC().Format("2006-01-02 15:04:05"), aside)
	}
	if tracing() {
		o.Trace = func(step string, took time.Duration) { trace(c, step, took) }
	}
	return o
}

// closeSession closes the session of a measuring command, tracing how long
// that took and the whole command.
func closeSession(c *cli.Context, s *session.Session) {
	t := time.Now()
	s.Close()
	trace(c, "exit: closing the driver", time.Since(t))
	trace(c, "the whole command, from the process's start", time.Since(processStart))
}

// finish ends the run of session s, which ended with runErr, prints it (as
// JSON, or report.Measured's documents of it: all says whether the command
// is all, ref is ipc's --reference run) and returns the command's error:
// interrupted, the results not saved, runErr, the verdict's error, failed
// figures or nothing measured, or the verdict's status.
func finish(c *cli.Context, s *session.Session, runErr error, all bool, ref *results.Run) error {
	end := s.Finish(runErr)
	run := s.Run
	if err := printRun(c, run, report.Measured(run, ref, all, c.Bool("tables"), end.SavedTo)); err != nil {
		return err
	}
	if end.SaveErr != nil {
		return end.SaveErr
	}
	where := "not saved (no -o given)"
	if s.Path() != "" {
		where = "saved to " + s.Path()
		fmt.Fprintln(c.App.ErrWriter, report.Saved(run, s.Path()))
	}
	switch {
	case end.Stopped != nil:
		return fmt.Errorf("%s; the run is partial (%s), %s", end.Stopped, session.Figures(len(run.Figures)), where)
	case errors.As(runErr, new(*measure.BusyError)):
		return failedFigures(fmt.Errorf("%w (give --allow-busy to measure anyway)", runErr))
	case runErr != nil:
		return runErr
	case end.JudgeErr != nil:
		return end.JudgeErr
	}
	if err := figuresFailed(run); err != nil {
		return err
	}
	if note := report.ExplainedNote(run); note != "" {
		fmt.Fprintln(c.App.ErrWriter, note)
	}
	return verdictStatus(c, run.Verdict)
}

// printRun writes the run on the command's standard output: as JSON with
// --json, else the documents docs.
func printRun(c *cli.Context, run *results.Run, docs []*report.Document) error {
	w := c.App.Writer
	if c.Bool("json") {
		return run.Encode(w)
	}
	for _, d := range docs {
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
// link without native atomics), unless every figure failed.
func figuresFailed(run *results.Run) error {
	if len(run.Figures) == 0 {
		return failedFigures(errors.New("nothing was measured"))
	}
	if c := run.Failures(); c.Unexplained() {
		return failedFigures(fmt.Errorf("%d of %d figures failed (%d with an error, %d with bad data)",
			c.Failed(), c.Figures, c.Errors, c.BadData))
	}
	return nil
}

// processStart is about when the process started (package initialisation).
var processStart = time.Now()

// tracing says whether P2PBENCH_TRACE asks for where the time goes, step
// by step, for tuning p2pbench itself.
func tracing() bool { return os.Getenv("P2PBENCH_TRACE") != "" }

// trace prints how long a step took, under P2PBENCH_TRACE.
func trace(c *cli.Context, step string, took time.Duration) {
	if tracing() {
		fmt.Fprintf(c.App.ErrWriter, "trace: %8.1f ms  %s\n", float64(took.Microseconds())/1e3, step)
	}
}
