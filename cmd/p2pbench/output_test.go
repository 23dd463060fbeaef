package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/results"
)

// An output that cannot be written is refused before anything is measured;
// a missing directory is made.
func TestOutputCheckedBeforeMeasuring(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := filepath.Join(dir, "all.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bw", "--simulate", "h200x2", "--tests", "ce_read", "--sizes", "none", "-o", dir}, "is a directory"},
		{[]string{"bw", "--simulate", "h200x2", "--tests", "ce_read", "--sizes", "none", "-o", filepath.Join(file, "x.json")}, "cannot create its directory"},
		{[]string{"ipc", "--simulate", "h200x2", "-o", filepath.Join(file, "x.json")}, "cannot create its directory"},
		{[]string{"topo", "--simulate", "h200x2", "-o", filepath.Join(file, "x.json")}, "cannot create its directory"},
		{[]string{"report", all, "-o", filepath.Join(file, "r.pdf")}, "cannot create its directory"},
		{[]string{"compare", all, all, "--plot", filepath.Join(file, "c.png")}, "cannot create its directory"},
	} {
		if tc.args[0] == "report" || tc.args[0] == "compare" {
			if _, err := os.Stat(all); err != nil {
				if _, stderr, code := p2pbench(t, "bw", "--simulate", "h200x2", "--tests", "ce_read", "--sizes", "none", "--samples", "3", "-o", all); code != 0 {
					t.Fatalf("making %s: exit %d: %s", all, code, stderr)
				}
			}
		}
		stdout, stderr, code := p2pbench(t, tc.args...)
		if code == 0 {
			t.Errorf("%v: exit 0, want non-zero", tc.args)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stderr %q does not mention %q", tc.args, stderr, tc.want)
		}
		if strings.Contains(stdout, "GB/s") {
			t.Errorf("%v: measured before refusing the output:\n%s", tc.args, stdout)
		}
	}
	nested := filepath.Join(dir, "a", "b", "x.json")
	if _, stderr, code := p2pbench(t, "bw", "--simulate", "h200x2", "--tests", "ce_read", "--sizes", "none", "--samples", "3", "-o", nested); code != 0 {
		t.Fatalf("-o in a missing directory: exit %d: %s", code, stderr)
	}
	if run, err := results.Read(nested); err != nil || len(run.Figures) == 0 {
		t.Fatalf("reading %s: %v", nested, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "a", "b", ".p2pbench-check-*")); len(left) > 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
}

// A run whose results file cannot be written at the end is saved elsewhere,
// and the error says where; when nowhere works, it says that.
func TestRescueResults(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	run := &results.Run{Schema: results.SchemaVersion, Figures: make([]results.Figure, 0)}
	err := rescueResults(run, "/gone/x.json", os.ErrNotExist)
	if err == nil {
		t.Fatal("no error")
	}
	saved, _ := filepath.Glob(filepath.Join(tmp, "p2pbench-unsaved-*.json"))
	if len(saved) != 1 || !strings.Contains(err.Error(), saved[0]) || !strings.Contains(err.Error(), "/gone/x.json") {
		t.Fatalf("saved %v; error %q", saved, err)
	}
	if _, err := results.Read(saved[0]); err != nil {
		t.Errorf("the rescued file does not read back: %v", err)
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
	err = rescueResults(run, "/gone/x.json", os.ErrNotExist)
	if err == nil || !strings.Contains(err.Error(), "only in the tables above") {
		t.Fatalf("error %v, want one saying nothing was saved", err)
	}
}

// The results directory vanishing during a run loses nothing: the run ends,
// its tables are printed, and the figures go to a file that the error names.
func TestResultsRescuedWhenTheDirectoryGoes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	file := filepath.Join(out, "r.json")
	rescue := t.TempDir()
	cmd := exec.Command(binary, "bw", "--simulate", "nvl72", "--devices", "0-3", "--tests", "ce_read", "--size", "64MiB", "--sizes", "4B:64MiB", "--samples", "20", "-o", file)
	cmd.Env = append(os.Environ(), "TMPDIR="+rescue)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(file); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no partial results file appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; stderr: %s", err, e.String())
	}
	saved, _ := filepath.Glob(filepath.Join(rescue, "p2pbench-unsaved-*.json"))
	if len(saved) != 1 || !strings.Contains(e.String(), saved[0]) {
		t.Fatalf("rescued files %v; stderr: %s", saved, e.String())
	}
	run, err := results.Read(saved[0])
	if err != nil || !run.Complete || len(run.Figures) == 0 {
		t.Fatalf("rescued run: %v", err)
	}
	if !strings.Contains(o.String(), "GB/s") {
		t.Errorf("the tables were not printed:\n%s", o.String())
	}
}

// On one device the pair tests are named as skipped and the rest run.
func TestOneDeviceSkipsPairTestsAloud(t *testing.T) {
	out, stderr, code := p2pbench(t, "bw", "--simulate", "h200x2", "--devices", "1", "--tests", "local_copy,ce_read", "--sizes", "none", "--samples", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "skipping ce_read, which needs two devices") {
		t.Errorf("stderr does not name the skipped test: %q", stderr)
	}
	if !strings.Contains(out, "local_copy") {
		t.Errorf("local_copy did not run:\n%s", out)
	}
}
