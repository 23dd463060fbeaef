package ipc_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/results"
)

// leakDirEnv, in a child's environment, makes the test binary a child of
// the IPC tests that reports, into a file of that directory, its open
// descriptors when it starts serving and once it has served, and the VMM
// handles, ranges and mappings its simulated driver still holds.
const leakDirEnv = "P2PBENCH_IPC_TEST_LEAKS"

// TestIPCLeakCheckedHelperProcess is no test of its own: it is the child
// of TestIPCVMM, and skips unless that test started it.
func TestIPCLeakCheckedHelperProcess(t *testing.T) {
	dir := os.Getenv(leakDirEnv)
	if dir == "" {
		t.Skip("the child process of TestIPCVMM; runs only when it starts it")
	}
	os.Exit(serveLeakChecked(dir, flag.Args()))
}

func serveLeakChecked(dir string, args []string) int {
	i := slices.Index(args, "--simulate")
	if i < 0 || i+1 >= len(args) {
		fmt.Fprintln(os.Stderr, "leak-checked helper: no --simulate")
		return 2
	}
	d, err := sim.New(args[i+1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "leak-checked helper:", err)
		return 2
	}
	conn, err := ipc.ChildConn()
	if err != nil {
		fmt.Fprintln(os.Stderr, "leak-checked helper:", err)
		return 2
	}
	before := countFDs()
	err = ipc.Serve(context.Background(), d, conn) // closes conn
	after := countFDs()
	handles, ranges, maps := d.VMMLive()
	d.Close()
	report := fmt.Sprintf("%d %d %d %d %d %v", before-1, after, handles, ranges, maps, err)
	if werr := os.WriteFile(filepath.Join(dir, fmt.Sprint(os.Getpid())), []byte(report), 0o644); werr != nil || err != nil {
		fmt.Fprintln(os.Stderr, "leak-checked helper:", err, werr)
		return 1
	}
	return 0
}

func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents) - 1 // the directory being read
}

// TestIPCVMM runs every IPC test with VMM handles on the simulated 2× H200:
// the same figures as with legacy handles, labelled, their data verified;
// every child ends with as many descriptors open as it started with (the
// channel aside) and no VMM handle, range or mapping left, and frees its
// memory only after every importer unmapped it; the parent, which passes
// the descriptors on, keeps none.
func TestIPCVMM(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count descriptors")
	}
	dir := t.TempDir()
	h := newIPCHarness(t)
	h.opt.Handles = []ipc.Handles{ipc.HandlesVMM}
	t.Setenv(leakDirEnv, dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h.opt.Child = []string{exe, "-test.run=^TestIPCLeakCheckedHelperProcess$", "--", "ipc-child", "--simulate", "h200x2"}
	parentFDs := countFDs()
	run, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := countFDs(); n != parentFDs {
		t.Errorf("the parent has %d descriptors open after the run, %d before", n, parentFDs)
	}
	var got []string
	for i := range run.Figures {
		f := &run.Figures[i]
		got = append(got, figureKey(f))
		if f.Params[results.ParamIPCHandle] != results.IPCHandleVMM {
			t.Errorf("%s: %s=%q, want %q", figureKey(f), results.ParamIPCHandle, f.Params[results.ParamIPCHandle], results.IPCHandleVMM)
		}
		if f.Error != "" || (f.Unit == results.UnitGBps && f.Verify != results.VerifyPassed) {
			t.Errorf("%s: error %q, verify %q", figureKey(f), f.Error, f.Verify)
		}
		if twin, ok := f.SameProcessTwin(); ok && twin.Params[results.ParamIPCHandle] != "" {
			t.Errorf("%s: its twin in one process keeps %s", figureKey(f), results.ParamIPCHandle)
		}
	}
	slices.Sort(got)
	if want := wantFigures(); !slices.Equal(got, want) {
		t.Errorf("figures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.ContainsFunc(run.Notes, func(n string) bool { return strings.Contains(n, "POSIX file descriptors, passed with SCM_RIGHTS") }) {
		t.Errorf("no note of how the handles travelled in %q", run.Notes)
	}
	h.checkNoChildren()
	h.checkShutdownOrder(3)

	reports, err := os.ReadDir(dir)
	if err != nil || len(reports) != 3 {
		t.Fatalf("%d leak reports (%v), want one per child", len(reports), err)
	}
	for _, r := range reports {
		b, err := os.ReadFile(filepath.Join(dir, r.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var before, after, handles, ranges, maps int
		if _, err := fmt.Sscanf(string(b), "%d %d %d %d %d", &before, &after, &handles, &ranges, &maps); err != nil {
			t.Fatalf("child %s reported %q: %v", r.Name(), b, err)
		}
		if after != before || handles+ranges+maps != 0 {
			t.Errorf("child %s: %d descriptors open after serving, %d before (the channel aside); %d VMM handles, %d ranges, %d mappings left",
				r.Name(), after, before, handles, ranges, maps)
		}
	}
}

// With both kinds of handles, the legacy arrangement runs first, then the
// VMM one with children of its own; each figure has its twin in the other.
func TestIPCBothHandles(t *testing.T) {
	h := newIPCHarness(t, results.IPCCERead, results.IPCLatPingPong)
	h.opt.Handles = ipc.AllHandles
	run, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	keys := map[string]int{}
	vmmStarted := false
	for i := range run.Figures {
		f := &run.Figures[i]
		vmm := f.Params[results.ParamIPCHandle] == results.IPCHandleVMM
		if !vmm && vmmStarted {
			t.Errorf("%s: a legacy figure after the VMM ones", figureKey(f))
		}
		vmmStarted = vmmStarted || vmm
		if f.Error != "" {
			t.Errorf("%s: %s", figureKey(f), f.Error)
		}
		if vmm {
			keys[figureKey(f)]--
		} else {
			keys[figureKey(f)]++
		}
	}
	for k, n := range keys {
		if n != 0 {
			t.Errorf("%s: %d more legacy figures than VMM ones", k, n)
		}
	}
	if len(keys) == 0 {
		t.Error("no figures")
	}
	h.checkNoChildren()
}

func TestParseHandles(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []ipc.Handles
		err  bool
	}{
		{"legacy", []ipc.Handles{ipc.HandlesLegacy}, false},
		{"vmm, legacy,vmm", []ipc.Handles{ipc.HandlesVMM, ipc.HandlesLegacy}, false},
		{"all", ipc.AllHandles, false},
		{"fabric", nil, true},
		{"", nil, true},
	} {
		got, err := ipc.ParseHandles(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("ParseHandles(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}
