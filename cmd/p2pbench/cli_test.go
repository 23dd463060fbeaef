package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/results"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "p2pbench-cli")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "p2pbench")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// p2pbench runs the binary with no libcuda reachable.
func p2pbench(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "P2PBENCH_LIBCUDA=/nonexistent/libcuda.so.1", "P2PBENCH_LIBNVML=/nonexistent/libnvidia-ml.so.1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestBadInputsFailCleanly(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topo"}, "libcuda.so.1"},
		{[]string{"bw"}, "libcuda.so.1"},
		{[]string{"topo", "--simulate", "nope"}, "unknown simulated machine"},
		{[]string{"topo", "--simulate", "h200x2", "--devices", "0,7"}, "device 7 does not exist"},
		{[]string{"topo", "--simulate", "h200x2", "--devices", "zero"}, "bad device list"},
		{[]string{"topo", "--simulate", "h200x2", "--devices", "1,1"}, "listed twice"},
		{[]string{"bw", "--simulate", "h200x2", "--size", "0"}, "at least 4 bytes"},
		{[]string{"bw", "--simulate", "h200x2", "--size", "6B"}, "multiple of 4"},
		{[]string{"bw", "--simulate", "h200x2", "--size", "1TiB"}, "free"},
		{[]string{"bw", "--simulate", "h200x2", "--sizes", "1GiB:4B"}, "smaller than"},
		{[]string{"bw", "--simulate", "h200x2", "--tests", "ce_read,warp_drive"}, "unknown test \"warp_drive\""},
		{[]string{"bw", "--simulate", "h200x2", "--variant", "v9"}, "unknown --variant"},
		{[]string{"bw", "--simulate", "h200x2", "--block-size", "33"}, "multiple of 32"},
		{[]string{"bw", "--simulate", "h200x2", "--samples", "0"}, "--samples"},
		{[]string{"bw", "--simulate", "h200x2", "--tuning", "/nonexistent.json"}, "nonexistent.json"},
		{[]string{"lat", "--simulate", "h200x2", "--tests", "ce_read"}, "unknown test"},
		{[]string{"bw", "--simulate", "h200x2", "--devices", "0", "--tests", "ce_read,sm_bidir"}, "need two devices, and only device 0 is selected"},
		{[]string{"lat", "--simulate", "h200x2", "--devices", "1", "--tests", "lat_pingpong"}, "needs two devices, and only device 1 is selected"},
		{[]string{"topo", "--bogus-flag"}, "bogus-flag"},
		{[]string{"nosuchcommand"}, ""},
	} {
		_, stderr, code := p2pbench(t, tc.args...)
		if code == 0 {
			t.Errorf("%v: exit 0, want non-zero", tc.args)
		}
		if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic:") {
			t.Errorf("%v: a Go panic or stack trace:\n%s", tc.args, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stderr %q does not mention %q", tc.args, stderr, tc.want)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n"); tc.want != "" && lines > 3 {
			t.Errorf("%v: %d lines of error, want a short message:\n%s", tc.args, lines+1, stderr)
		}
	}
}

func TestSimulatedTopoSaysSimulated(t *testing.T) {
	out, _, code := p2pbench(t, "topo", "--simulate", "h200x2", "--check")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"SIMULATED", "NVIDIA H200", "performance_rank", "NV18", "DIFFERS", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"} {
		if !strings.Contains(out, want) {
			t.Errorf("topo output lacks %q", want)
		}
	}
	js, _, code := p2pbench(t, "topo", "--simulate", "h200x2", "--json")
	if code != 0 {
		t.Fatalf("--json exit %d", code)
	}
	run, err := results.Decode(strings.NewReader(js))
	if err != nil || !run.Simulated || run.Topology == nil || len(run.Topology.Pairs) != 2 {
		t.Fatalf("topo --json: %v, %+v", err, run)
	}
}

func TestAllSimulatedWritesAResultsDirectory(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := p2pbench(t, "all", "--simulate", "h200x2", "--size", "1MiB", "--sizes", "4KiB:1MiB:16", "--samples", "3", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"SIMULATED", "Summary", "CE read GB/s", "pointer chase", "ping-pong", "cuMemcpyPeerAsync", "Atomics"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	run, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !run.Complete || !run.Simulated || run.SimMachine != "h200x2" || len(run.Figures) < 100 {
		t.Errorf("complete %v, simulated %v (%q), %d figures", run.Complete, run.Simulated, run.SimMachine, len(run.Figures))
	}
}

func TestInterruptKeepsPartialResults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "partial.json")
	cmd := exec.Command(binary, "bw", "--simulate", "nvl72", "--devices", "0-7", "--tests", "ce_read,ce_write,sm_read,sm_write", "--size", "64MiB", "--sizes", "4B:64MiB", "--samples", "20", "-o", file)
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the run has measured something, then interrupt it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if run, err := results.Read(file); err == nil && len(run.Figures) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no partial results file appeared")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130; stderr: %s", err, e.String())
	}
	run, err := results.Read(file)
	if err != nil {
		t.Fatalf("the partial file does not read back: %v", err)
	}
	if run.Complete || !strings.Contains(run.Stopped, "interrupted") || len(run.Figures) == 0 {
		t.Errorf("complete %v, stopped %q, %d figures", run.Complete, run.Stopped, len(run.Figures))
	}
	if !strings.Contains(e.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted: %s", e.String())
	}
}
