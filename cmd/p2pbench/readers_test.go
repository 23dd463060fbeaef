package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// show prints what all printed, through the same documents.
func TestShow(t *testing.T) {
	t.Parallel()
	path, printed := sampleRun(t)
	out, _, status := p2pbench(t, "show", path)
	if status != exitOK {
		t.Fatalf("exit status %d", status)
	}
	// all printed one screen and pointed at show for the rest: every table.
	if !strings.Contains(printed, "p2pbench show "+path) {
		t.Errorf("all does not point at show:\n%s", printed)
	}
	for _, want := range []string{"SIMULATED", "==== Summary ====", "CE read", "pointer chase", "ping-pong", "cuMemcpyPeerAsync", "Atomics", "IPC CE read"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q", want)
		}
	}
	topo := filepath.Join(t.TempDir(), "topo.json")
	if _, stderr, status := p2pbench(t, "topo", "--simulate", "h200x2", "-o", topo); status != exitOK {
		t.Fatalf("topo: exit status %d: %s", status, stderr)
	}
	if out, _, _ := p2pbench(t, "show", topo); !strings.Contains(out, "Topology and driver attributes") || strings.Contains(out, "Summary") {
		t.Errorf("show of a topo file does not show the topology alone:\n%s", out)
	}
}

// show says when a run is partial, and why (issue 19, #9).
func TestShowSaysPartial(t *testing.T) {
	t.Parallel()
	path, _ := sampleRun(t)
	run := readResults(t, path)
	run.Complete, run.Stopped = false, "interrupted (SIGINT)"
	partial := filepath.Join(t.TempDir(), "partial.json")
	if err := outfile.Write(partial, run.Encode); err != nil {
		t.Fatal(err)
	}
	out, _, status := p2pbench(t, "show", partial)
	if status != exitOK {
		t.Fatalf("exit status %d", status)
	}
	banner := "INCOMPLETE RUN: the run stopped early: interrupted (SIGINT)."
	if i := strings.Index(out, "==== Summary ===="); i < 0 || strings.Count(out[:i], banner) != 1 || strings.Count(out[i:], banner) != 1 {
		t.Errorf("the tables and the summary do not both say the run is partial:\n%s", out)
	}
}

func TestPlotAndReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "run.json")
	if _, stderr, status := p2pbench(t, append([]string{"bw", "--tests", "ce_read", "--sizes", "none", "-o", in}, small...)...); status != exitOK {
		t.Fatalf("bw: exit status %d: %s", status, stderr)
	}
	out, stderr, status := p2pbench(t, "plot", in, "--format", "png,svg")
	if status != exitOK {
		t.Fatalf("plot: exit status %d: %s", status, stderr)
	}
	paths := strings.Fields(out)
	if len(paths) < 2 || !strings.HasPrefix(paths[0], filepath.Join(dir, "run-plots")+"/") {
		t.Errorf("plot wrote %v", paths)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s: missing or empty", p)
		}
	}

	// --full: every figure, the two-cell heatmap among them.
	out, stderr, status = p2pbench(t, "report", in, "--format", "md", "--full")
	if status != exitOK || !strings.Contains(out, filepath.Join(dir, "run-report.md")+" written;") {
		t.Fatalf("report: exit status %d, stdout %q: %s", status, out, stderr)
	}
	md, err := os.ReadFile(filepath.Join(dir, "run-report.md"))
	if err != nil || !bytes.Contains(md, []byte("](run-report_files/heatmap_ce_read.png)")) {
		t.Errorf("the Markdown report does not link its figures: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run-report_files", "heatmap_ce_read.png")); err != nil {
		t.Errorf("the Markdown report's figure is missing: %v", err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "run-plots"), filepath.Join(dir, "run-report_files")} {
		if left := leftovers(t, d); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}
}

// PDFs are written when TMPDIR is missing or not writable: no panic, no
// empty file, no temporary file (issue 19, #2).
func TestPDFWithoutTMPDIR(t *testing.T) {
	dir := t.TempDir()
	// A small run (one matrix): what matters is where the
	// PDFs' fonts and images go, not how many there are.
	in := writeRun(t, dir, "run.json", resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Tests: []results.Test{results.CERead}}))
	t.Setenv("TMPDIR", filepath.Join(dir, "nonexistent"))
	for _, args := range [][]string{
		{"report", in, "-o", filepath.Join(dir, "r.pdf")},
		{"plot", in, "--format", "pdf", "-o", filepath.Join(dir, "plots")},
		{"compare", in, in, "--plot", filepath.Join(dir, "c.pdf")},
	} {
		if _, stderr, status := p2pbench(t, args...); status != exitOK {
			t.Errorf("%s: exit status %d: %s", args[0], status, stderr)
		}
	}
	for _, f := range []string{"r.pdf", "plots/heatmap_ce_read.pdf", "c.pdf"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Errorf("%s: not a PDF (%v)", f, err)
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "plots")} {
		if left := leftovers(t, d); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}

}

// writeRun writes run as a results file in dir.
func writeRun(t *testing.T, dir, name string, run *results.Run) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := outfile.Write(p, run.Encode); err != nil {
		t.Fatal(err)
	}
	return p
}

// compare fails when it compared nothing (4) and, with
// --fail-on-regression, when a figure regressed (5) (issue 19, #13).
func TestCompareVerdicts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := writeRun(t, dir, "base.json", resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true}))
	worse := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true})
	for i := range worse.Figures {
		f := &worse.Figures[i]
		if f.Test == results.CERead {
			for j := range f.Samples {
				f.Samples[j] *= 0.5
			}
			f.Stats = figstats.ComputeStats(f.Samples)
		}
	}
	slower := writeRun(t, dir, "worse.json", worse)
	topo := writeRun(t, dir, "topo.json", &results.Run{Schema: results.SchemaVersion, Complete: true,
		Topology: &results.Topology{Devices: []int{0}}})
	for _, tc := range []struct {
		args   []string
		status int
		says   string
	}{
		{[]string{base, base, "--fail-on-regression"}, exitOK, ""},
		{[]string{base, slower}, exitOK, ""},
		{[]string{base, slower, "--fail-on-regression"}, exitVerdict, "regressed beyond their noise floor (first: ce_read"},
		{[]string{base, topo, "--fail-on-regression"}, exitFailed, "nothing was compared: " + topo + " shares no figure with the baseline"},
		{[]string{base, base, topo}, exitFailed, "nothing was compared"},
	} {
		_, stderr, status := p2pbench(t, append([]string{"compare"}, tc.args...)...)
		if status != tc.status || !strings.Contains(stderr, tc.says) {
			t.Errorf("compare %s: exit status %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), status, stderr, tc.status, tc.says)
		}
	}
	out := filepath.Join(dir, "cmp.csv")
	if _, stderr, status := p2pbench(t, "compare", base, slower, "--format", "csv", "-o", out, "--plot", filepath.Join(dir, "cmp.png")); status != exitOK {
		t.Fatalf("compare -o: exit status %d: %s", status, stderr)
	}
	for _, f := range []string{out, filepath.Join(dir, "cmp.png")} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s: missing or empty", f)
		}
	}
}

// fifo makes a named pipe that no process writes, and lets whatever
// still waits on it go at the end of the test.
func fifo(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return p
}

// Every reader refuses a FIFO at once (it would wait for a writer that may
// never come), with one line and exit status 2, and leaves no file behind
// (issue 19, #4; issue 28, items 4 and 9: refused before it is opened).
func TestReadersRefuseFIFOs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := fifo(t, dir)
	for _, args := range [][]string{
		{"show", in},
		{"plot", in, "-o", filepath.Join(dir, "plots")},
		{"report", in, "-o", filepath.Join(dir, "r.pdf")},
		{"compare", in, in, "-o", filepath.Join(dir, "c.txt")},
		{"bw", "--simulate", "h200x2", "--tuning", in, "-o", filepath.Join(dir, "bw.json")},
	} {
		_, stderr, status := p2pbench(t, args...)
		if status != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "named pipe (FIFO)") {
			t.Errorf("%s: exit status %d, stderr %q; want %d and one line", args[0], status, stderr, exitUsage)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left in %s: %v", dir, entries)
	}
}
