package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/results"
)

// prepareOutput makes sure a file can be written at path before anything is
// measured or drawn: its directory is created when missing, and a scratch
// file is made and removed there. A results file that cannot be written is
// found out before the run, not after it.
func prepareOutput(flag, path string) error {
	if path == "" {
		return nil
	}
	if strings.HasSuffix(path, string(filepath.Separator)) {
		return usageError{fmt.Errorf("%s %q names a directory; give a file name", flag, path)}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usageError{fmt.Errorf("%s %q is a directory; give a file name", flag, path)}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s %s: cannot create its directory: %w", flag, path, unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".p2pbench-check-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %w", flag, path, dir, unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// unwrapPath drops the operation and scratch-file name from a *PathError,
// which would only confuse: the message names the path the user gave.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// rescueResults writes run somewhere else when its results file could not be
// written at the end of a run, so the figures measured are not lost, and
// returns the error to report: where they went, or that they went nowhere.
func rescueResults(run *results.Run, path string, writeErr error) error {
	name := fmt.Sprintf("p2pbench-unsaved-%s.json", time.Now().UTC().Format("20060102-150405"))
	var tried []string
	for _, dir := range []string{os.TempDir(), "."} {
		p := filepath.Join(dir, name)
		if err := results.Write(p, run); err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", p, err))
			continue
		}
		return fmt.Errorf("writing the results to %s failed (%v); the %d figures measured are saved in %s instead",
			path, writeErr, len(run.Figures), p)
	}
	return fmt.Errorf("writing the results to %s failed (%v), and so did writing them to %s; the %d figures measured are only in the tables above",
		path, writeErr, strings.Join(tried, " and "), len(run.Figures))
}
