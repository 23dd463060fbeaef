package ipc_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
	"golang.org/x/sys/unix"
)

// The IPC tests run the real process machinery: the children are this test
// binary again, running only TestIPCHelperProcess, which serves the parent
// as `p2pbench ipc-child` does.

// TestIPCHelperProcess is no test of its own: it is the child process of the
// IPC tests, and skips unless one of them started it (its arguments after
// "--" begin with "ipc-child": helperCommand).
func TestIPCHelperProcess(t *testing.T) {
	if flag.Arg(0) != "ipc-child" {
		t.Skip("the child process of the IPC tests; runs only when they start it")
	}
	os.Exit(serveIPCHelper(flag.Args()))
}

// serveIPCHelper serves as `p2pbench ipc-child` does, on the simulated
// machine of "--simulate" (else the real driver), with the test faults of
// "--fault" (ipc.FaultEnv's value, given as an argument so that the tests
// that set one run in parallel: no test sets the environment).
func serveIPCHelper(args []string) int {
	machine := ""
	for i, a := range args {
		if i+1 == len(args) {
			break
		}
		switch a {
		case "--simulate":
			machine = args[i+1]
		case "--fault":
			os.Setenv(ipc.FaultEnv, args[i+1])
		}
	}
	var drv gpu.Driver
	if machine != "" {
		d, err := sim.New(machine)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ipc helper:", err)
			return 2
		}
		drv = d
	} else {
		d, err := cuda.Open()
		if err != nil {
			fmt.Fprintln(os.Stderr, "ipc helper:", err)
			return 2
		}
		drv = gpu.NewCUDADriver(d)
	}
	defer drv.Close()
	conn, err := ipc.ChildConn()
	if err == nil {
		err = ipc.Serve(context.Background(), drv, conn)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ipc helper:", err)
		return 1
	}
	return 0
}

// helperCommand is the child command line of the tests (machine "" is the
// real driver).
func helperCommand(t *testing.T, machine string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{exe, "-test.run=^TestIPCHelperProcess$", "--", "ipc-child"}
	if machine != "" {
		args = append(args, "--simulate", machine)
	}
	return args
}

// ipcHarness runs ipc.Run on the simulated 2× H200 and remembers the children.
type ipcHarness struct {
	t    *testing.T
	opt  ipc.Options
	drv  gpu.Driver
	mu   sync.Mutex
	kids []ipc.ChildInfo
	ops  []string // "rank:op" of every answered request, in order
}

func newIPCHarness(t *testing.T, tests ...results.Test) *ipcHarness {
	d, err := sim.New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	h := &ipcHarness{t: t, drv: d}
	h.opt = ipc.Options{Timeout: 10 * time.Second, Child: helperCommand(t, "h200x2")}
	h.opt.Devices, h.opt.Tests, h.opt.Size, h.opt.Samples, h.opt.Verify = []int{0, 1}, tests, 64<<10, 3, true
	// One round: the tests of failures count requests of one pass
	// (TestIPCRounds measures in rounds).
	h.opt.Rounds = 1
	ipc.SetAfterMap(&h.opt, func(kids []ipc.ChildInfo) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.kids = kids
	})
	ipc.SetTrace(&h.opt, func(rank int, op string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.ops = append(h.ops, fmt.Sprintf("%d:%s", rank, op))
	})
	return h
}

// fault makes the children fail as ipc.FaultEnv's value f says.
func (h *ipcHarness) fault(f string) {
	if f != "" {
		h.opt.Child = append(h.opt.Child, "--fault", f)
	}
}

func (h *ipcHarness) run(ctx context.Context) (*results.Run, error) {
	run := &results.Run{Schema: results.SchemaVersion}
	err := ipc.Run(ctx, h.drv, h.opt, run)
	return run, err
}

func (h *ipcHarness) pid(rank int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range h.kids {
		if k.Rank == rank {
			return k.Pid
		}
	}
	h.t.Fatalf("no child of rank %d", rank)
	return 0
}

// checkNoChildren fails unless every child the run started is gone.
func (h *ipcHarness) checkNoChildren() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.kids) == 0 {
		h.t.Fatal("the run reported no children")
	}
	for _, k := range h.kids {
		if err := syscall.Kill(k.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			h.t.Errorf("child of rank %d (pid %d) is still there after Run returned (kill 0: %v)", k.Rank, k.Pid, err)
		}
	}
}

// checkShutdownOrder fails unless every child acknowledged closing its
// mappings before any child was told to free its memory and exit.
func (h *ipcHarness) checkShutdownOrder(live int) {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	lastUnmap, firstExit, unmaps, exits := -1, len(h.ops), 0, 0
	for i, op := range h.ops {
		switch {
		case strings.HasSuffix(op, ":unmap"):
			lastUnmap = i
			unmaps++
		case strings.HasSuffix(op, ":exit"):
			firstExit = min(firstExit, i)
			exits++
		}
	}
	if lastUnmap > firstExit {
		h.t.Errorf("a child freed its memory (exit) before every importer had closed its mappings (unmap): %v", h.ops)
	}
	if exits != live {
		h.t.Errorf("%d children acknowledged exit, want %d: %v", exits, live, h.ops)
	}
}

func figureKey(f *results.Figure) string {
	k := fmt.Sprintf("%s %d→%d %s %s same_gpu=%s", f.Test, f.Src, f.Dst, f.Direction, f.Part, f.Params["same_gpu"])
	if m := f.Params["measure"]; m != "" {
		k += " " + m
	}
	if f.Test == results.IPCLatChase {
		k += " " + results.FormatBytes(f.Size)
	}
	if o := f.Params["ipc_open"]; o != "" {
		k += " " + o
	}
	return k
}

// wantFigures lists every figure a run of all IPC tests on 0, 1 and the
// same-GPU baseline makes.
func wantFigures() []string {
	var out []string
	for _, p := range []struct {
		s, d int
		same string
	}{{0, 1, "false"}, {1, 0, "false"}, {0, 0, "true"}} {
		add := func(test, dir, part, extra string) {
			k := fmt.Sprintf("%s %d→%d %s %s same_gpu=%s", test, p.s, p.d, dir, part, p.same)
			if extra != "" {
				k += " " + extra
			}
			out = append(out, k)
		}
		for _, e := range []string{"ce", "sm"} {
			opens := []string{""}
			if e == "ce" && p.same == "false" {
				// The copy engine again with the peer's buffer opened in a
				// context on the peer's device.
				opens = append(opens, "peer_device_context")
			}
			for _, o := range opens {
				add("ipc_"+e+"_read", "read", "", o)
				add("ipc_"+e+"_write", "write", "", o)
				if p.same == "true" {
					continue // two processes on one GPU take turns: no "both at once"
				}
				for _, dir := range []string{"read", "write"} {
					for _, part := range []string{"forward", "reverse", "total"} {
						add("ipc_"+e+"_bidir", dir, part, o)
					}
				}
			}
		}
		add("ipc_lat_chase", "", "", "1 MiB")
		add("ipc_lat_chase", "", "", "256 MiB")
		if p.same == "true" {
			continue // the same GPU's ping-pong would time the time slices
		}
		add("ipc_lat_pingpong", "", "", "round_trip")
		add("ipc_lat_pingpong", "", "", "one_way")
	}
	slices.Sort(out)
	return out
}

func TestIPCSimulatedRun(t *testing.T) {
	h := newIPCHarness(t)
	h.opt.Rounds = 3 // one sample of each bandwidth figure per round
	h.opt.Renew = measure.DefaultRenewal
	start := time.Now()
	run, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("%d figures in %v", len(run.Figures), time.Since(start))
	var got []string
	for i := range run.Figures {
		f := &run.Figures[i]
		got = append(got, figureKey(f))
		if f.Error != "" || f.Stats == nil {
			t.Errorf("%s: error %q, stats %v", figureKey(f), f.Error, f.Stats)
		} else if len(f.Rounds) != 3 || f.Stats.Rounds == nil || f.Stats.Rounds.N != 3 {
			t.Errorf("%s: rounds %v (stats %+v), want 3", figureKey(f), f.Rounds, f.Stats.Rounds)
		}
		if f.Params["processes"] != "2" || f.Params["ipc_mapping"] != "simulated" {
			t.Errorf("%s: params %v, want processes=2 and ipc_mapping=simulated", figureKey(f), f.Params)
		}
		if c := run.Convention(f.Test); !strings.Contains(c, "across processes (CUDA IPC)") {
			t.Errorf("%s: convention %q does not say it is across processes", figureKey(f), c)
		}
		if want := results.VerifyPassed; f.Unit == results.UnitGBps && f.Verify != want {
			t.Errorf("%s: verify %q, want %q", figureKey(f), f.Verify, want)
		}
	}
	slices.Sort(got)
	if want := wantFigures(); !slices.Equal(got, want) {
		t.Errorf("figures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !run.Simulated {
		t.Error("run.Simulated is false for a run on the simulated driver")
	}
	// Four buffers per rank, three ranks each mapping two peers.
	if !slices.ContainsFunc(run.Notes, func(n string) bool { return strings.Contains(n, "24 second opens returned the first pointer") }) {
		t.Errorf("no note of the reference-counting check in %q", run.Notes)
	}
	run.Environment.Devices = []results.Device{{Index: 0}, {Index: 1}}
	if err := run.Validate(); err != nil {
		t.Errorf("the run does not validate: %v", err)
	}
	// Before the second and the third round, every child renews.
	h.mu.Lock()
	renewed := 0
	for _, op := range h.ops {
		if strings.HasSuffix(op, ":renew") {
			renewed++
		}
	}
	h.mu.Unlock()
	if renewed != 2*3 {
		t.Errorf("%d renewals, want 2 rounds × 3 children", renewed)
	}
	h.checkNoChildren()
	h.checkShutdownOrder(3)
}

// TestIPCChildFailures makes one child crash or hang at chosen points: its
// pairs must fail with the reason, the other pairs finish, and no process
// may be left. On a simulated run every request of a pair goes to the child
// of its first rank (it hosts the stand-in of the second), which decides
// where a fault lands: pair 0→1 and the same-GPU baseline 0→0 (ranks 0 and
// 2) go to rank 0, pair 1→0 to rank 1.
func TestIPCChildFailures(t *testing.T) {
	t.Parallel()
	cross := func(f *results.Figure) bool { return f.Params["same_gpu"] == "false" }
	cases := []struct {
		name, fault string
		timeout     time.Duration
		fails       func(f *results.Figure) bool
		reason      string
	}{
		{"crash at hello", "1:hello:crash", 0, cross, "exit status 3"},
		{"crash at map", "1:map:crash", 0, cross, "exit status 3"},
		{"crash at first fill", "1:fill:crash", 0,
			func(f *results.Figure) bool { return f.Src == 1 }, "test fault: crash at fill"},
		{"crash in bidirectional follow", "0:follow:crash", 0,
			func(f *results.Figure) bool { return !(f.Test == results.IPCCERead && cross(f) && f.Src == 0) }, "exit status 3"},
		{"baseline child crashes", "2:map:crash", 0,
			func(f *results.Figure) bool { return !cross(f) }, "exit status 3"},
		{"hang at time", "1:time:hang", time.Second,
			func(f *results.Figure) bool { return f.Src == 1 }, "did not answer in time"},
		{"hang at ping-pong wait", "1:pingpong_wait:hang", time.Second,
			func(f *results.Figure) bool { return f.Src == 1 && f.Test == results.IPCLatPingPong }, "did not answer in time"},
		{"hang at unmap", "1:unmap:hang", time.Second, func(*results.Figure) bool { return false }, ""},
		{"crash at exit", "1:exit:crash", 0, func(*results.Figure) bool { return false }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newIPCHarness(t, results.IPCCERead, results.IPCCEBidir, results.IPCLatPingPong)
			h.fault(tc.fault)
			if tc.timeout > 0 {
				h.opt.Timeout = tc.timeout
			}
			run, err := h.run(context.Background())
			if err != nil {
				t.Fatalf("Run: %v (a failing child must not fail the run)", err)
			}
			// Per pair between the GPUs: ipc_ce_read and its six bidirectional
			// figures, each twice (own context, peer-device context), and
			// the ping-pong's two; the same-GPU baseline: read and ping-pong.
			if want := 2*(2*(1+6)+2) + 1; len(run.Figures) != want {
				t.Errorf("%d figures, want %d (failed ones included)", len(run.Figures), want)
			}
			failures := 0
			for i := range run.Figures {
				f := &run.Figures[i]
				want := tc.fails(f)
				if failed := f.Error != ""; failed != want {
					t.Errorf("%s: failed=%v (%q), want %v", figureKey(f), failed, f.Error, want)
				}
				if f.Error == "" {
					continue
				}
				failures++
				if !strings.Contains(f.Error, tc.reason) || !strings.Contains(f.Error, "ipc pair") {
					t.Errorf("%s: error %q does not name the pair and say %q", figureKey(f), f.Error, tc.reason)
				}
			}
			t.Logf("%d of %d figures failed", failures, len(run.Figures))
			h.checkNoChildren()
			if tc.fault != "1:unmap:hang" && tc.fault != "1:exit:crash" {
				h.checkShutdownOrder(len(h.kids) - min(1, failures))
			}
		})
	}
}

// TestIPCChildKilledMidRun kills a child with SIGKILL after the first pair:
// the parent must notice, fail the later pairs of that child, finish the
// others, and leave nothing behind.
func TestIPCChildKilledMidRun(t *testing.T) {
	h := newIPCHarness(t, results.IPCCEWrite, results.IPCSMBidir, results.IPCLatChase)
	h.opt.Progress = func(done, total int, step string) {
		if done == 1 {
			if err := syscall.Kill(h.pid(1), syscall.SIGKILL); err != nil {
				t.Errorf("killing the child of rank 1: %v", err)
			}
		}
	}
	run, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for i := range run.Figures {
		f := &run.Figures[i]
		wantFail := f.Src == 1 // the pair 1→0, after the kill
		if failed := f.Error != ""; failed != wantFail {
			t.Errorf("%s: failed=%v (%q), want %v", figureKey(f), failed, f.Error, wantFail)
		}
		if wantFail && !strings.Contains(f.Error, "signal: killed") {
			t.Errorf("%s: error %q does not say the child was killed", figureKey(f), f.Error)
		}
	}
	if !slices.ContainsFunc(run.Notes, func(n string) bool { return strings.Contains(n, "rank 1") && strings.Contains(n, "killed") }) {
		t.Errorf("the notes do not report the killed child: %q", run.Notes)
	}
	h.checkNoChildren()
}

// TestIPCCancel cancels the run (Ctrl-C) between pairs and while a child is
// stopped in the middle of a request: Run must return context.Canceled
// soon, keep what was measured, and stop every child.
func TestIPCCancel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, fault string
		// cancelAt is the pair after which to cancel; -1: when rank 1 stops.
		cancelAt int
		figures  int // figures kept
	}{
		// Pair 0→1: read, write and six bidirectional figures, each with the
		// peer's buffer opened in the process's own context and in one on
		// the peer's device, and the ping-pong's two.
		{"between pairs", "", 1, 2*(1+1+6) + 2},
		// Pair 0→1 runs in rank 0's child; rank 1 stops in pair 1→0's
		// first bidirectional sample, after its reads and writes, and
		// answers nothing more (not even that sample's arm: stopSelf).
		{"child stopped mid-request", "1:arm:stop", -1, 2*(1+1+6) + 2 + 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newIPCHarness(t, results.IPCCERead, results.IPCCEWrite, results.IPCCEBidir, results.IPCLatPingPong)
			h.fault(tc.fault)
			h.opt.Timeout = time.Minute // only the cancellation may end the stopped child
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h.opt.Progress = func(done, total int, step string) {
				if done == tc.cancelAt {
					cancel()
				}
				if done == 0 && tc.cancelAt < 0 {
					go func() {
						waitStopped(t, h.pid(1))
						cancel()
					}()
				}
			}
			run, err := h.run(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: %v, want context.Canceled", err)
			}
			if len(run.Figures) != tc.figures {
				t.Errorf("%d figures kept, want %d", len(run.Figures), tc.figures)
			}
			for i := range run.Figures {
				if f := &run.Figures[i]; f.Error != "" {
					t.Errorf("%s: %s (a cancelled test must leave no failed figure)", figureKey(f), f.Error)
				}
			}
			h.checkNoChildren()
		})
	}
}

// waitStopped waits until pid, a child of this process, is stopped: waitid
// blocks until the kernel reports the stop (or the child's end), and WNOWAIT
// leaves the report, and the child, to the run that waits on it.
func waitStopped(t *testing.T, pid int) {
	const cldStopped = 5 // CLD_STOPPED, siginfo's si_code of a stopped child
	type report struct {
		code int32
		err  error
	}
	got := make(chan report, 1)
	go func() {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
		got <- report{info.Code, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Errorf("waiting for pid %d to stop: %v", pid, r.err)
		} else if r.code != cldStopped {
			t.Errorf("pid %d ended (si_code %d) instead of stopping", pid, r.code)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("pid %d never stopped", pid)
	}
}

// inheritedFiles lists the descriptors this test process holds open across
// exec (without close-on-exec) by number, with what they name: whoever started
// the test gave them, and every process it starts inherits them, children of
// p2pbench's or not.
func inheritedFiles(t *testing.T) map[string]string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	given := map[string]string{}
	for _, fd := range fds {
		info, err := os.ReadFile("/proc/self/fdinfo/" + fd.Name())
		if err != nil {
			continue // the directory's own descriptor, closed meanwhile
		}
		var flags int
		for _, l := range strings.Split(string(info), "\n") {
			if f, ok := strings.CutPrefix(l, "flags:"); ok {
				fmt.Sscanf(strings.TrimSpace(f), "%o", &flags)
			}
		}
		if flags&unix.O_CLOEXEC != 0 {
			continue
		}
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil {
			given[fd.Name()] = target
		}
	}
	return given
}

// TestIPCHandlesStayPrivate checks, while the children run, that no handle
// they exchanged appears in any child's command line or environment (raw,
// hex, base64 or as JSON numbers), and that a child holds no file: its
// descriptors are the socketpair, pipes, /dev/null and kernel files.
func TestIPCHandlesStayPrivate(t *testing.T) {
	given := inheritedFiles(t)
	h := newIPCHarness(t, results.IPCCERead, results.IPCLatPingPong)
	checked := 0
	ipc.SetAfterMap(&h.opt, func(kids []ipc.ChildInfo) {
		var handles [][]byte
		for _, k := range kids {
			handles = append(handles, k.Handles...)
		}
		if want := 3 * 4; len(handles) != want {
			t.Errorf("%d handles exported by %d children, want %d (send, recv and small buffers and an event each)", len(handles), len(kids), want)
		}
		for _, k := range kids {
			for _, what := range []string{"cmdline", "environ"} {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", k.Pid, what))
				if err != nil {
					t.Fatalf("child %d: %v", k.Rank, err)
				}
				for _, hd := range handles {
					for _, enc := range handleEncodings(hd) {
						if bytes.Contains(b, enc) {
							t.Errorf("child %d: its %s holds a handle (as %q)", k.Rank, what, enc)
						}
					}
				}
				checked++
			}
			fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", k.Pid))
			if err != nil {
				t.Fatalf("child %d: %v", k.Rank, err)
			}
			sockets := 0
			for _, fd := range fds {
				target, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", k.Pid), fd.Name()))
				if err != nil {
					continue // closed meanwhile
				}
				switch {
				case strings.HasPrefix(target, "socket:"):
					sockets++
				case strings.HasPrefix(target, "pipe:"), strings.HasPrefix(target, "anon_inode:"), target == "/dev/null",
					strings.HasPrefix(target, "/sys/"), strings.HasPrefix(target, "/proc/"):
					// Kernel files (the runtime reads its cgroup's CPU quota).
				case given[fd.Name()] == target:
					// The test's own starter left it open across exec (a
					// shell's lock, say): every process it starts has it.
				default:
					t.Errorf("child %d: descriptor %s is %s; a child holds no file", k.Rank, fd.Name(), target)
				}
			}
			if sockets != 1 {
				t.Errorf("child %d has %d sockets open, want 1 (its end of the socketpair)", k.Rank, sockets)
			}
		}
	})
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if checked != 6 {
		t.Errorf("checked %d command lines and environments, want 6", checked)
	}
}

// handleEncodings are the forms a leaked handle could take.
func handleEncodings(h []byte) [][]byte {
	js, _ := json.Marshal([64]byte(h))
	return [][]byte{
		h,
		[]byte(hex.EncodeToString(h)),
		[]byte(strings.ToUpper(hex.EncodeToString(h))),
		[]byte(base64.StdEncoding.EncodeToString(h)),
		[]byte(base64.RawURLEncoding.EncodeToString(h)),
		js[1 : len(js)-1],
	}
}

// countingMonitor's counters advance by a fixed step at every reading, so
// every window of two readings holds exactly one step.
type countingMonitor struct {
	gpu.Monitor // only Traffic is called
	mu          sync.Mutex
	reads       map[int]uint64
}

var trafficStep = results.LinkCounts{TxData: 1000, TxRaw: 1127, RxData: 10, RxRaw: 20}

func (m *countingMonitor) Traffic(dev int, busID string) (results.LinkCounts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads[dev]++
	n := m.reads[dev]
	return results.LinkCounts{TxData: n * trafficStep.TxData, TxRaw: n * trafficStep.TxRaw, RxData: n * trafficStep.RxData, RxRaw: n * trafficStep.RxRaw}, nil
}

func TestIPCFiguresCarryLinkTraffic(t *testing.T) {
	h := newIPCHarness(t, results.IPCCERead, results.IPCCEBidir)
	h.opt.Size = measure.TrafficMinSize
	h.opt.Monitor = &countingMonitor{reads: map[int]uint64{}}
	run, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := results.LinkTraffic{Src: trafficStep, Dst: trafficStep}
	cross := 0
	for _, f := range run.Figures {
		if f.Src == f.Dst {
			if f.Traffic != nil {
				t.Errorf("%s: same-GPU figure with link traffic %+v", f.Key(), f.Traffic)
			}
			continue
		}
		cross++
		if f.Traffic == nil || *f.Traffic != want {
			t.Errorf("%s: traffic %+v, want %+v", f.Key(), f.Traffic, want)
		}
	}
	// ipc_ce_read: 2 ordered pairs; ipc_ce_bidir: 2 pairs × read and write
	// × 3 parts; each again with the peer's buffer opened on its device.
	if cross != 2*(2+2*2*3) {
		t.Errorf("%d figures between the two GPUs, want 28", cross)
	}
	h.checkNoChildren()
}

// TestIPCSizeNearTwoToTheSixtyFour is issue 19's "ipc --size" overflow:
// refused before a child is started.
func TestIPCSizeNearTwoToTheSixtyFour(t *testing.T) {
	h := newIPCHarness(t, results.IPCCERead)
	h.opt.Size = 1<<64 - 4
	run, err := h.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "larger than any GPU's memory") {
		t.Errorf("Run = %v, want the size refused", err)
	}
	if len(run.Figures) != 0 || len(h.kids) != 0 {
		t.Errorf("%d figures, %d children started", len(run.Figures), len(h.kids))
	}
}

// TestIPCSMCopiesInOneLaunch: across processes too, an SM copy of 64 MiB
// or more is timed as one launch per window (the child's SMCopy decides by
// the size, the parent's figure says so by the same rule): at 64 MiB on the
// simulated 2× H200 a launch per copy loses a launch's cost (5.9 µs) on
// every 0.18 ms copy and its windows read 358-359 GB/s; one launch per
// window loses it once and reads 366-368. Below 64 MiB a copy is a launch.
func TestIPCSMCopiesInOneLaunch(t *testing.T) {
	for _, size := range []uint64{64 << 20, 1 << 20} {
		h := newIPCHarness(t, results.IPCSMRead)
		h.opt.Size = size
		run, err := h.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		inKernel := measure.InKernelReps(size)
		for _, f := range run.Figures {
			if f.Error != "" || f.Verify != results.VerifyPassed || f.Stats == nil {
				t.Errorf("%s: error %q, verify %q", f.Key(), f.Error, f.Verify)
				continue
			}
			if got := f.Params[results.ParamInKernelReps] == "true"; got != inKernel {
				t.Errorf("%s: params %v, want in_kernel_reps %v", f.Key(), f.Params, inKernel)
			}
			t.Logf("%s: %.1f GB/s", f.Key(), f.Stats.Median)
			if inKernel && f.Src != f.Dst && f.Stats.Median < 363 {
				t.Errorf("%s: %.1f GB/s: a launch per copy?", f.Key(), f.Stats.Median)
			}
		}
		h.checkNoChildren()
	}
}
