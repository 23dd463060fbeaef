package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/session"
)

// Exit statuses; exitStatuses says what each means.
const (
	exitOK      = 0 // everything measured (and verified), or the reader's work done
	exitError   = 1 // an error: I/O, an unreadable input, an internal failure
	exitUsage   = 2 // bad command line: flags, values, arguments, commands
	exitNoGPU   = 3 // no GPU or no driver: library missing, no device, a selected device absent
	exitFailed  = 4 // figures failed, nothing measured, compared, judged or read, busy GPUs refused
	exitVerdict = 5 // a failing verdict, a regression, fleet nodes needing attention
)

// exitStatuses is the one text of what each exit status means: --help
// (exitStatusHelp) shows it, docs/commands.md's table holds it word for
// word (TestExitStatusesDocumented), `code` spans and all.
var exitStatuses = []struct{ code, meaning string }{
	{"0", "everything measured and verified, verdict PASS or WARN (for show, plot, report, compare, fleet, import: the work done)"},
	{"1", "an error: I/O, an unreadable input, an internal failure, another run holding the results file"},
	{"2", "usage: a bad flag, value, argument or unknown command (one line, no help page); an output path that is not a regular file or is also an input; an input that is not a regular file (a FIFO, a device, a directory: refused before it is opened); a spec or baseline that cannot judge the run"},
	{"3", "no GPU or no driver: libcuda missing, no device, a selected device absent"},
	{"4", "figures failed (error or bad data; not those the machine explains — a pair without peer access, atomics over a link without native atomics — which are a note, unless nothing else was measured), nothing measured, compared, judged (a NOT JUDGED verdict; a fleet of no node read or judged) or read (an import of no figure, a plot of none), or other programs on the GPUs (see `--allow-busy`)"},
	{"5", "a failing verdict (`all`, `check`; a WARN too with `--strict`), a regression (`compare --fail-on-regression`), nodes needing attention (`fleet --fail-on-outlier`)"},
	{"128+n", "stopped by a signal: 130 SIGINT, 143 SIGTERM, 129 SIGHUP; a measuring command first saves what it measured, marked partial"},
}

// exitStatusHelp is exitStatuses for --help: plain text, wrapped.
var exitStatusHelp = func() string {
	var b strings.Builder
	b.WriteString("Exit status:")
	for _, s := range exitStatuses {
		line := fmt.Sprintf("   %-6s", s.code)
		for _, w := range strings.Fields(strings.ReplaceAll(s.meaning, "`", "")) {
			if len(line)+1+len(w) > 75 && strings.TrimSpace(line) != "" {
				b.WriteString("\n" + line)
				line = strings.Repeat(" ", 9)
			}
			line += " " + w
		}
		b.WriteString("\n" + line)
	}
	return b.String()
}()

// statusError gives an error its exit status.
type statusError struct {
	status int
	err    error
}

func (e statusError) Error() string { return e.err.Error() }
func (e statusError) Unwrap() error { return e.err }

func failedFigures(err error) error { return statusError{exitFailed, err} }

// exitStatus is the status of a command that failed with err; ctx is the
// command's context, cancelled by a signal when one came.
func exitStatus(ctx context.Context, err error) int {
	if sig, ok := interrupt.Cause(ctx); ok {
		return 128 + int(sig.Sig)
	}
	var re *session.Error
	isRun := errors.As(err, &re)
	if cmdline.IsUsage(err) || isRun && re.Kind == session.Usage || errors.Is(err, outfile.ErrNotRegular) || errors.Is(err, outfile.ErrSameAsIn) || errors.Is(err, outfile.ErrLockFile) {
		// An output path that p2pbench refuses is a bad flag value.
		return exitUsage
	}
	var se statusError
	switch {
	case errors.As(err, &se):
		return se.status
	case isRun && re.Kind == session.NoGPU:
		return exitNoGPU
	}
	return exitError
}
