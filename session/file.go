package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

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
// the new one, within its directory (results.json.<time it was written>:
// no *.json name, so that fleet, which reads every *.json of a directory,
// does not take it for another node), and returns where it went and when
// it was written ("" when there was none): a second all into one --dir
// replaced the first run's results without a word, and that run may have
// been a baseline. Called with the lock held; a link or anything but a
// regular file is left as it is (the output policy writes through an
// owned link).
func keepAside(path string) (aside string, written time.Time, err error) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "", time.Time{}, nil
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
			return "", time.Time{}, fmt.Errorf("keeping the earlier run's %s: %w", path, err)
		}
		return aside, fi.ModTime(), nil
	}
}

// rescue writes run somewhere else when its results file could not be
// written at the end of a run, so the figures measured are not lost, and
// returns where they went ("" for nowhere) and the error to report, which
// says the same.
func rescue(run *results.Run, writeErr error) (string, error) {
	return rescueAt(run, writeErr, time.Now())
}

// rescueAt is rescue at time now, which names the file. A name is claimed
// by creating it exclusively (never through a link) before the run is
// written over it, so a rescue never replaces another's file: two runs
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
						writeErr, Figures(len(run.Figures)), p)
				}
				os.Remove(p)
			}
			tried = append(tried, fmt.Sprintf("%s (%v)", p, err))
			break
		}
	}
	return "", fmt.Errorf("writing the results failed (%v), and so did writing them to %s; the run (%s) is only in the tables above",
		writeErr, strings.Join(tried, " and "), Figures(len(run.Figures)))
}

// Figures counts figures in words.
func Figures(n int) string {
	return fmt.Sprintf("%d figure%s", n, units.Plural(n, "", "s"))
}
