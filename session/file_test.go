package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// A run whose results file cannot be written at the end is saved elsewhere,
// and the error says where; when nowhere works, it says that.
func TestRescue(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	run := &results.Run{Schema: results.SchemaVersion, Figures: make([]results.Figure, 0)}
	where, err := rescue(run, os.ErrNotExist)
	if err == nil {
		t.Fatal("no error")
	}
	saved, _ := filepath.Glob(filepath.Join(tmp, "p2pbench-unsaved-*.json"))
	if len(saved) != 1 || !strings.Contains(err.Error(), saved[0]) || where != saved[0] {
		t.Fatalf("saved %v; error %q", saved, err)
	}
	read(t, saved[0])

	// Runs rescued in one second keep a file each, and a link planted at
	// the name is left alone: the next name is taken.
	at := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	victim := filepath.Join(tmp, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(tmp, "p2pbench-unsaved-20261129-080000-3.json")); err != nil {
		t.Fatal(err)
	}
	var all []string
	for range 3 {
		where, err := rescueAt(run, os.ErrNotExist, at)
		if err == nil || where == "" {
			t.Fatalf("rescue at one time: %q, %v", where, err)
		}
		read(t, where)
		all = append(all, filepath.Base(where))
	}
	if want := []string{"p2pbench-unsaved-20261129-080000.json", "p2pbench-unsaved-20261129-080000-2.json", "p2pbench-unsaved-20261129-080000-4.json"}; !slices.Equal(all, want) {
		t.Errorf("rescued to %v, want %v", all, want)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the file a planted link points to holds %q", b)
	}

	t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
	gone := filepath.Join(tmp, "cwd")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	where, err = rescue(run, os.ErrNotExist)
	if err == nil || !strings.Contains(err.Error(), "only in the tables above") || where != "" {
		t.Fatalf("error %v, want one saying nothing was saved", err)
	}
}

// A save of the run in progress that fails is told once, at once, not
// only at the end of the run (audit N8).
func TestFailingSaveInProgressIsToldOnce(t *testing.T) {
	told := 0
	s := &Session{opt: Options{SaveFailed: func(error) { told++ }},
		file: &resultsFile{path: filepath.Join(t.TempDir(), "gone", "r.json"), run: resultstest.New(resultstest.Default(2))}}
	for range 3 {
		s.file.last = time.Time{} // each call saves
		s.progress(1, 2, "step")
	}
	if told != 1 {
		t.Errorf("told %d times, want once", told)
	}
}

// An earlier run's results file is kept beside the new one, named for when
// it was written (another name when that one is taken), and the run says
// so; a link or a missing file is left as it is.
func TestKeepAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	written := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	for i, want := range []string{"results.json.20261129-080000", "results.json.20261129-080000-2"} {
		if err := os.WriteFile(path, []byte{byte('a' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, written, written)
		aside, when, err := keepAside(path)
		if err != nil || aside != filepath.Join(dir, want) || !when.Equal(written) {
			t.Fatalf("kept as %q (written %v): %v; want %s", aside, when, err, want)
		}
		if b, _ := os.ReadFile(aside); len(b) != 1 || b[0] != byte('a'+i) {
			t.Errorf("%s holds %q", aside, b)
		}
	}
	if aside, _, err := keepAside(path); aside != "" || err != nil {
		t.Errorf("no file: kept as %q, %v", aside, err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), path); err != nil {
		t.Fatal(err)
	}
	if aside, _, err := keepAside(path); aside != "" || err != nil {
		t.Errorf("a link: kept as %q, %v", aside, err)
	}
}

// read reads a results file.
func read(t *testing.T, path string) *results.Run {
	t.Helper()
	run, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return run
}
