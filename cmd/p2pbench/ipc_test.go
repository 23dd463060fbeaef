package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/ipc"
)

// ipcSmall is a quick ipc run on the simulated 2× H200.
var ipcSmall = []string{"ipc", "--simulate", "h200x2", "--size", "64KiB", "--samples", "3"}

// ipc on the simulated 2× H200: its children are real processes, of this
// test binary (see TestMain).
func TestIPCSimulatedRun(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "ipc.json")
	out, stderr, status := p2pbench(t, append(ipcSmall, "-o", file)...)
	if status != exitOK {
		t.Fatalf("exit status %d: %s", status, stderr)
	}
	for _, want := range []string{"SIMULATED", "Across processes: copy engine read", "Across processes: copy engine, both directions at once",
		"Across processes: flag ping-pong", "Across processes, both on device 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	run := readResults(t, file)
	// 48 as one-GPU-per-process jobs copy, less the same GPU's ping-pong
	// (round trip and one way: two processes on one GPU time-slice), and
	// 16 copy-engine figures again with the peer's buffer opened on the
	// peer's GPU.
	if !run.Simulated || !run.Complete || len(run.Figures) != 46+16 {
		t.Errorf("simulated=%v complete=%v with %d figures, want a complete simulated run of 62", run.Simulated, run.Complete, len(run.Figures))
	}
	for _, f := range run.Figures {
		if f.Error != "" {
			t.Errorf("%s %d→%d: %s", f.Test, f.Src, f.Dst, f.Error)
		}
	}
}

// ipc --handles legacy,vmm measures each figure twice, the second time with
// VMM handles, and sets the two beside each other; an unknown kind is a
// usage error.
func TestIPCHandles(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "ipc.json")
	out, stderr, status := p2pbench(t, append(ipcSmall, "--tests", "ipc_ce_read", "--handles", "legacy,vmm", "-o", file)...)
	if status != exitOK {
		t.Fatalf("exit status %d: %s", status, stderr)
	}
	if !strings.Contains(out, "VMM handles against legacy handles") {
		t.Errorf("no table of VMM against legacy handles:\n%s", out)
	}
	vmm := 0
	for _, f := range readResults(t, file).Figures {
		if f.Params["ipc_handle"] == "vmm_posix_fd" {
			vmm++
		}
	}
	if vmm != 5 {
		t.Errorf("%d figures with VMM handles, want 5 (two pairs, each twice, and the same-GPU baseline)", vmm)
	}
	if _, stderr, status := p2pbench(t, append(ipcSmall, "--handles", "cuda")...); status != exitUsage || !strings.Contains(stderr, "--handles") {
		t.Errorf("--handles cuda: exit status %d, %q; want %d naming the flag", status, stderr, exitUsage)
	}
}

// ipc --reference sets each figure beside the same one within one process.
func TestIPCAgainstOneProcess(t *testing.T) {
	t.Parallel()
	ref := filepath.Join(t.TempDir(), "bw.json")
	if _, stderr, status := p2pbench(t, "bw", "--simulate", "h200x2", "--size", "64KiB", "--sizes", "none", "--samples", "3", "--tests", "ce_read,ce_write", "-o", ref); status != exitOK {
		t.Fatalf("bw: exit status %d: %s", status, stderr)
	}
	out, stderr, status := p2pbench(t, append(ipcSmall, "--tests", "ipc_ce_read,ipc_ce_write", "--reference", ref)...)
	if status != exitOK {
		t.Fatalf("exit status %d: %s", status, stderr)
	}
	if !strings.Contains(out, "Across processes against one process") || strings.Count(out, "→") < 4 {
		t.Errorf("no comparison table:\n%s", out)
	}
}

// A child that crashes fails its figures (exit status 4), not the run.
func TestIPCCrashingChild(t *testing.T) {
	t.Setenv(ipc.FaultEnv, "1:hello:crash")
	out, stderr, status := p2pbench(t, append(ipcSmall, "--tests", "ipc_ce_read")...)
	if status != exitFailed || !strings.Contains(stderr, "4 of 5 figures failed") {
		t.Fatalf("exit status %d, stderr %q; want %d (a failed child fails figures) and their count", status, stderr, exitFailed)
	}
	if !strings.Contains(out, "4 figures failed") || !strings.Contains(out, "exit status 3") || !strings.Contains(out, "ipc_open=peer_device_context") {
		t.Errorf("the output does not report the crashed child:\n%s", out)
	}
}

// SIGINT stops every child and keeps what was measured.
func TestIPCInterrupted(t *testing.T) {
	file := filepath.Join(t.TempDir(), "partial.json")
	// Rank 1 stops itself in its first bidirectional sample (pair 1→0,
	// after its reads and writes, each twice: with the peer's buffer
	// opened in its own context and on the peer's GPU; pair 0→1's 16
	// figures are done by then).
	t.Setenv(ipc.FaultEnv, "1:arm:stop")
	type result struct {
		stderr string
		status int
	}
	done := make(chan result, 1)
	stops, unwatch := childStops() // the children are this process's
	defer unwatch()
	go func() {
		_, stderr, status := p2pbench(t, append(ipcSmall, "--tests", "ipc_ce_read,ipc_ce_write,ipc_ce_bidir", "-o", file)...)
		done <- result{stderr, status}
	}()
	var stopped int
	select {
	case stopped = <-stops:
	case r := <-done:
		t.Fatalf("the run ended (exit status %d) with no child stopped: %s", r.status, r.stderr)
	case <-time.After(20 * time.Second):
		t.Fatal("no child stopped")
	}
	kids := childrenOf(os.Getpid()) // all three, started before measuring
	argv, err := os.ReadFile("/proc/" + strconv.Itoa(stopped) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	// The simulated machine's shared NVLink counters are named last.
	want := strings.Join([]string{exe, "ipc-child", "--simulate", "h200x2", "--simulate-seed", "1", "--simulate-nvlink-counters"}, "\x00") + "\x00"
	if !strings.HasPrefix(string(argv), want) || strings.Count(string(argv), "\x00") != 8 {
		t.Errorf("a child's command line is %q, want %q and the counters' file", argv, want)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.status != 130 {
		t.Errorf("exit status %d, want 130: %s", r.status, r.stderr)
	}
	for _, pid := range kids {
		if alive(pid) {
			t.Errorf("child %d outlived the run", pid)
		}
	}
	run := readResults(t, file)
	// Pair 0→1's 16 figures and pair 1→0's four one-way ones are kept: the
	// stopped child answers nothing after its stop (ipc's stopSelf), so no
	// bidirectional test ends before the interrupt.
	if run.Complete || !strings.Contains(run.Stopped, "interrupted") || len(run.Figures) != 16+4 {
		t.Errorf("complete=%v stopped=%q with %d figures, want an interrupted run with the 20 figures measured", run.Complete, run.Stopped, len(run.Figures))
	}
	for _, f := range run.Figures {
		if len(f.Samples) == 0 {
			t.Errorf("%s %d→%d: kept without samples (%q)", f.Test, f.Src, f.Dst, f.Error)
		}
	}
	if !strings.Contains(r.stderr, "every child process was stopped") {
		t.Errorf("p2pbench does not say the children were stopped:\n%s", r.stderr)
	}
}

// A killed parent leaves no child behind, though none is left to stop
// them: a stopped child's group is orphaned (the kernel sends it SIGHUP), a
// hung one is killed by the kernel (Pdeathsig), the others see their
// channel close. The parent is this test binary run as p2pbench.
func TestIPCParentKilled(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, fault := range []string{"1:arm:stop", "1:arm:hang"} {
		cmd := exec.Command(exe, append(ipcSmall, "--tests", "ipc_ce_read,ipc_ce_bidir")...)
		cmd.Env = append(os.Environ(), ipc.FaultEnv+"="+fault, asMain+"=1")
		// The fault's signal: the stopped child's pid, from the test
		// binary run as p2pbench, its parent (reportStopsEnv); the hung
		// child's word that it reached the hang, as a hung child looks
		// idle from outside.
		ready := filepath.Join(t.TempDir(), "ready")
		if err := syscall.Mkfifo(ready, 0o600); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(fault, "stop") {
			cmd.Env = append(cmd.Env, reportStopsEnv+"="+ready)
		} else {
			cmd.Env = append(cmd.Env, ipc.FaultReadyEnv+"="+ready)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) // should this test fail before it kills it
		got := readFIFO(t, ready, 20*time.Second)
		// Every child starts before the measuring, so all three are there
		// by the fault.
		kids := childrenOf(cmd.Process.Pid)
		t.Cleanup(func() { // should this test fail, leave nothing behind
			for _, pid := range kids {
				if alive(pid) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
		if len(kids) != 3 {
			t.Fatalf("%s: %d children, want 3", fault, len(kids))
		}
		if strings.HasSuffix(fault, "stop") {
			if pid, _ := strconv.Atoi(got); !slices.Contains(kids, pid) {
				t.Fatalf("%s: the stopped child is %q, none of the children %v", fault, got, kids)
			}
		} else if !strings.HasSuffix(got, "hang") {
			t.Fatalf("%s: the child said %q, want the hang", fault, got)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if left := waitGone(t, kids, 5*time.Second); len(left) > 0 {
			t.Fatalf("%s: children %v outlived their killed parent", fault, left)
		}
	}
}

// alive reports whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// children returns the children of parent with their states (from /proc).
func children(parent int) map[int]string {
	out := map[int]string{}
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		out[pid] = f[0]
	}
	return out
}

func childrenOf(parent int) []int {
	var pids []int
	for pid := range children(parent) {
		pids = append(pids, pid)
	}
	return pids
}
