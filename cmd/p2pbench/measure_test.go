package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/results"
)

func TestSimulatedTopo(t *testing.T) {
	t.Parallel()
	out, _, status := p2pbench(t, "topo", "--simulate", "h200x2", "--check")
	if status != exitOK {
		t.Fatalf("exit status %d", status)
	}
	for _, want := range []string{"SIMULATED", "NVIDIA H200", "perf rank", "450", "NO: ", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"} {
		if !strings.Contains(out, want) {
			t.Errorf("topo output lacks %q:\n%s", want, out)
		}
	}
	js, _, status := p2pbench(t, "topo", "--simulate", "h200x2", "--json")
	if status != exitOK {
		t.Fatalf("--json: exit status %d", status)
	}
	run, err := results.Decode(strings.NewReader(js))
	if err != nil || !run.Simulated || run.Topology == nil || len(run.Topology.Pairs) != 2 {
		t.Fatalf("topo --json: %v, %+v", err, run)
	}
}

// topo -o says where the results went, as the other commands do (issue 19,
// #24).
func TestTopoNamesItsResultsFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "topo.json")
	_, stderr, status := p2pbench(t, "topo", "--simulate", "h200x2", "-o", file)
	if status != exitOK || stderr != "results: "+file+"\n" {
		t.Fatalf("exit status %d, stderr %q; want 0 and the results line", status, stderr)
	}
	if run := readResults(t, file); run.Topology == nil || !run.Complete {
		t.Errorf("%s: no complete topology", file)
	}
}

func TestAllSimulated(t *testing.T) {
	t.Parallel()
	path, out := sampleRun(t)
	// One screen: the verdict first, the headline figures, where the rest is.
	for _, want := range []string{"SIMULATED", "# VERDICT: ", "Headline bandwidth", "CE read", "p2pbench show " + path} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(out, "\n"); n > 60 || strings.Contains(out, "==== Summary ====") {
		t.Errorf("all printed %d lines, the tables among them, not one screen:\n%s", n, out)
	}
	run := readResults(t, path)
	if !run.Complete || !run.Simulated || run.SimMachine != "h200x2" || len(run.Figures) < 100 {
		t.Errorf("complete %v, simulated %v (%q), %d figures", run.Complete, run.Simulated, run.SimMachine, len(run.Figures))
	}
	// The machine's identity: simulated boards say so; the host's system is read.
	if d := run.Environment.Devices; len(d) == 0 || d[0].Serial != "SIM-h200x2-0" || d[0].VBIOS != "simulated" {
		t.Errorf("the devices' identity: %+v", d)
	}
	if s := run.Environment.System; s == nil || (s.Kernel == "" && len(s.Unreadable) == 0) {
		t.Errorf("the system's identity: %+v", s)
	}
	if len(run.Tool.Command) < 2 || run.Tool.Command[1] != "all" {
		t.Errorf("the results record the command line %q", run.Tool.Command)
	}
	if left := leftovers(t, filepath.Dir(path)); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// Failed figures are exit status 4, not 0 (issue 19, #3).
func TestFailedFiguresExitStatus(t *testing.T) {
	t.Parallel()
	out, stderr, status := p2pbench(t, append([]string{"bw", "--tests", "ce_read", "--latch-timeout", "1ns"}, small...)...)
	if status != exitFailed || !strings.Contains(stderr, "2 of 2 figures failed") {
		t.Errorf("exit status %d, stderr %q; want %d and the count of failed figures", status, stderr, exitFailed)
	}
	if !strings.Contains(out, "latch timed out") {
		t.Errorf("the failures are not listed:\n%s", out)
	}
	// Failures the machine explains (a pair without peer access) leave
	// exit status 0 and a note, unless nothing else was measured.
	_, stderr, status = p2pbench(t, "bw", "--simulate", "pcie-4gpu", "--tests", "ce_read", "--size", "1MiB", "--sizes", "none", "--samples", "2")
	if status != exitOK || !strings.Contains(stderr, "2 figures failed as this machine is known to make them fail") {
		t.Errorf("pcie-4gpu, the pairs without peer access: exit status %d, stderr %q; want 0 and a note", status, stderr)
	}
	_, stderr, status = p2pbench(t, "bw", "--simulate", "pcie-4gpu", "--devices", "1,2", "--tests", "ce_read", "--size", "1MiB", "--sizes", "none", "--samples", "2")
	if status != exitFailed || !strings.Contains(stderr, "2 of 2 figures failed") {
		t.Errorf("pcie-4gpu, only a pair without peer access: exit status %d, stderr %q; want %d", status, stderr, exitFailed)
	}
	err := figuresFailed(&results.Run{})
	var se statusError
	if !errors.As(err, &se) || se.status != exitFailed || !strings.Contains(err.Error(), "nothing was measured") {
		t.Errorf("a run without figures: %v, want exit status %d and \"nothing was measured\"", err, exitFailed)
	}
}

// Another program on a selected GPU: the run refuses (exit status 4) unless
// --allow-busy, and then marks the figures it shared the GPU with.
func TestBusyGPUs(t *testing.T) {
	t.Parallel()
	busy := append([]string{"bw", "--tests", "ce_read", "--sizes", "none", "--simulate-health", "process:1:4242:python"}, small...)
	_, stderr, status := p2pbench(t, busy...)
	if status != exitFailed || !strings.Contains(stderr, "pid 4242 (python") || !strings.Contains(stderr, "--allow-busy") {
		t.Errorf("exit status %d, stderr %q; want %d naming the process and --allow-busy", status, stderr, exitFailed)
	}
	js, stderr, status := p2pbench(t, append(busy, "--allow-busy", "--json")...)
	if status != exitOK {
		t.Fatalf("--allow-busy: exit status %d: %s", status, stderr)
	}
	run, err := results.Decode(strings.NewReader(js))
	if err != nil || len(run.Figures) != 2 {
		t.Fatalf("--allow-busy: %v, %+v", err, run)
	}
	for _, f := range run.Figures {
		if len(f.OtherProcesses) != 1 || f.OtherProcesses[0] != 4242 {
			t.Errorf("%s %d→%d: other processes %v, want [4242]", f.Test, f.Src, f.Dst, f.OtherProcesses)
		}
	}
	if len(run.Environment.HealthBefore) != 2 || len(run.Environment.HealthAfter) != 2 {
		t.Errorf("health before %d, after %d GPUs; want 2 and 2", len(run.Environment.HealthBefore), len(run.Environment.HealthAfter))
	}
}

// On one device the pair tests are named as skipped and the rest run.
func TestOneDeviceSkipsPairTestsAloud(t *testing.T) {
	t.Parallel()
	out, stderr, status := p2pbench(t, append([]string{"bw", "--devices", "1", "--tests", "local_copy,ce_read"}, small...)...)
	if status != exitOK {
		t.Fatalf("exit status %d: %s", status, stderr)
	}
	if !strings.Contains(stderr, "skipping ce_read, which needs two devices") {
		t.Errorf("stderr does not name the skipped test: %q", stderr)
	}
	if !strings.Contains(out, "local copy") {
		t.Errorf("local_copy did not run:\n%s", out)
	}
}

// slow is a simulated measurement of some twenty steps, for the tests that
// stop runs half-way: its results file has figures after the first step,
// and the steps after it take most of half a second (a tenth of a second
// of CPU) for the stop to come in, on a loaded machine too.
var slow = []string{"bw", "--simulate", "h200x2", "--tests", "h2d,d2h,local_copy,ce_read,ce_write,ce_bidir,sm_read", "--size", "4MiB", "--sizes", "none", "--samples", "60"}

// runUntil runs p2pbench in the background until its results file holds a
// figure, then calls then; it returns what p2pbench printed and its status.
// Each write of the file (a rename into its directory, which runUntil makes)
// wakes it to read the file.
func runUntil(t *testing.T, file string, args []string, then func()) (stdout, stderr string, status int) {
	t.Helper()
	type result struct {
		stdout, stderr string
		status         int
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	written, unwatch := renames(t, filepath.Dir(file))
	defer unwatch()
	done := make(chan result, 1)
	go func() {
		o, e, s := p2pbench(t, args...)
		done <- result{o, e, s}
	}()
	timeout := time.After(20 * time.Second)
	for {
		if run, err := results.Read(file); err == nil && len(run.Figures) > 0 {
			break
		}
		select {
		case <-written:
		case r := <-done:
			t.Fatalf("p2pbench ended (status %d) before its results file held a figure: %s", r.status, r.stderr)
		case <-timeout:
			t.Fatal("no results file with a figure appeared")
		}
	}
	unwatch() // then may remove the directory
	then()
	r := <-done
	return r.stdout, r.stderr, r.status
}

// renames reports files renamed into dir (the last step of outfile.Write),
// through inotify, until stop.
func renames(t *testing.T, dir string) (renamed <-chan struct{}, stop func()) {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_MOVED_TO); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "inotify") // non-blocking: Read waits in the poller, and Close ends it
	out := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case out <- struct{}{}:
			default: // one wake-up pending is enough: the reader reads the file
			}
		}
	}()
	return out, sync.OnceFunc(func() { f.Close() })
}

// SIGINT, SIGTERM and SIGHUP each stop a run the same way: what was
// measured is saved, marked partial, and the exit status is 128 + the
// signal (issue 19, #9, #11, #20).
func TestSignalsKeepPartialResults(t *testing.T) {
	for _, tc := range []struct {
		sig    syscall.Signal
		status int
		says   string
	}{
		{syscall.SIGINT, 130, "interrupted (SIGINT)"},
		{syscall.SIGTERM, 143, "stopped (SIGTERM)"},
		{syscall.SIGHUP, 129, "hung up (SIGHUP)"},
	} {
		file := filepath.Join(t.TempDir(), "partial.json")
		start := time.Now()
		var sent time.Time
		out, stderr, status := runUntil(t, file, append(slow, "-o", file), func() {
			sent = time.Now()
			syscall.Kill(os.Getpid(), tc.sig)
		})
		if status != tc.status {
			t.Errorf("%v: exit status %d, want %d; stderr: %s", tc.sig, status, tc.status, stderr)
		}
		t.Logf("%v: signalled after %v, stopped %v later", tc.sig, sent.Sub(start), time.Since(sent))
		if !strings.Contains(stderr, "p2pbench: "+tc.says+"; the run is partial (") || !strings.Contains(stderr, "saved to "+file) ||
			strings.Contains(stderr, "p2pbench: p2pbench") {
			t.Errorf("%v: stderr does not say the run is partial and where it is:\n%s", tc.sig, stderr)
		}
		if !strings.Contains(out, "INCOMPLETE RUN: the run stopped early: "+tc.says) {
			t.Errorf("%v: the tables do not say the run is partial:\n%s", tc.sig, out)
		}
		run := readResults(t, file)
		if run.Complete || run.Stopped != tc.says || len(run.Figures) == 0 {
			t.Errorf("%v: complete %v, stopped %q, %d figures", tc.sig, run.Complete, run.Stopped, len(run.Figures))
		}
		if left := leftovers(t, filepath.Dir(file)); len(left) > 0 {
			t.Errorf("%v: left behind: %v", tc.sig, left)
		}
	}
}

// An all run cut short is judged as check judges its file: the screen, the
// file's verdict and check's agree (FAIL: the run stopped early), where the
// screen used to say NOT JUDGED and check FAIL (audit N19).
func TestInterruptedAllIsJudgedAsCheckJudgesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	file := filepath.Join(dir, "results.json")
	args := []string{"all", "--simulate", "h200x2", "--size", "4MiB", "--sizes", "none", "--samples", "60", "--dir", dir}
	out, stderr, status := runUntil(t, file, args, func() { syscall.Kill(os.Getpid(), syscall.SIGTERM) })
	if status != 143 {
		t.Fatalf("exit status %d, want 143; stderr: %s", status, stderr)
	}
	run := readResults(t, file)
	if run.Complete || run.Verdict == nil || run.Verdict.Status != results.StatusFail {
		t.Fatalf("the partial run's verdict: %+v, want FAIL", run.Verdict)
	}
	if !strings.Contains(out, "# VERDICT: FAIL #") {
		t.Errorf("the screen does not give the file's verdict:\n%s", out)
	}
	checked, _, status := p2pbench(t, "check", file)
	if status != exitVerdict || !strings.Contains(checked, "# VERDICT: FAIL #") || !strings.Contains(checked, "the run stopped early") {
		t.Errorf("check of the partial file: status %d\n%s", status, checked)
	}
}

// When all's results file cannot be written at the end, its last screen
// names the file the results were rescued to, never the stale file of the
// run in progress (audit N8).
func TestAllScreenNamesTheRescueFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	file := filepath.Join(dir, "results.json")
	rescue := t.TempDir()
	t.Setenv("TMPDIR", rescue)
	// The steps of slow, whose results file has figures after the first.
	args := append([]string{"all", "--dir", dir}, slow[1:]...)
	stdout, stderr, status := runUntil(t, file, args, func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	})
	if status != exitError {
		t.Fatalf("exit status %d, want %d; stderr: %s", status, exitError, stderr)
	}
	saved, _ := filepath.Glob(filepath.Join(rescue, "p2pbench-unsaved-*.json"))
	if len(saved) != 1 {
		t.Fatalf("rescued files %v; stderr: %s", saved, stderr)
	}
	screen := strings.Join(strings.Fields(stdout), " ") // a long path wraps
	if !strings.Contains(screen, "Everything measured is in "+saved[0]) || strings.Contains(stdout, file) {
		t.Errorf("the last screen does not name the rescue file %s:\n%s", saved[0], stdout)
	}
}

// A second all into one --dir keeps the first run's results beside the new
// ones, named for when they were written, and says so, where it replaced
// them without a word (audit N15); fleet does not take the kept file for a
// node.
func TestAllKeepsAnEarlierRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "same")
	args := []string{"all", "--simulate", "h200x2", "--size", "4MiB", "--sizes", "none", "--samples", "2", "--tests", "ce_read", "--dir", dir}
	p2pbench(t, args...)
	first, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, _ := p2pbench(t, append(args, "--simulate-seed", "7")...)
	kept, _ := filepath.Glob(filepath.Join(dir, "results.json.*"))
	if len(kept) != 1 || !strings.Contains(stderr, "held an earlier run's results") || !strings.Contains(stderr, kept[0]) {
		t.Fatalf("kept %v; stderr:\n%s", kept, stderr)
	}
	if got, _ := os.ReadFile(kept[0]); !bytes.Equal(got, first) {
		t.Error("the kept file is not the first run's results")
	}
	readResults(t, kept[0])
	if out, _, _ := p2pbench(t, "fleet", dir); !strings.Contains(out, "1 node") {
		t.Errorf("fleet of the directory:\n%s", out)
	}
}
