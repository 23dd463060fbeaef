//go:build gpu

package ipc_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/gpu/gputest"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/results"
)

// openGPUs opens the real driver and skips without two GPUs.
func openGPUs(t *testing.T) gpu.Driver { return gputest.OpenAtLeast(t, 2) }

// TestGPUIPCOneDevice runs every IPC test with one GPU: two processes share
// it (the same-GPU baseline), every figure measured and its data verified.
func TestGPUIPCOneDevice(t *testing.T) {
	drv := gputest.OpenAtLeast(t, 1)
	run := &results.Run{Schema: results.SchemaVersion}
	opt := ipcOptions(t)
	opt.Devices = []int{0}
	if err := ipc.Run(context.Background(), drv, opt, run); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(run.Figures) == 0 {
		t.Fatal("no figures")
	}
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Error != "" || f.Verify == results.VerifyFailed || f.Stats == nil {
			t.Errorf("%s: error %q, verify %s %s", figureKey(f), f.Error, f.Verify, f.VerifyDetail)
			continue
		}
		if f.Params["same_gpu"] != "true" {
			t.Errorf("%s: on one device, but same_gpu is %q", figureKey(f), f.Params["same_gpu"])
		}
		t.Log(figureKey(f) + ": " + formatMedian(f))
	}
}

// ipcOptions are the settings of a run on GPUs 0 and 1, verified, with
// children of this test binary on the real driver.
func ipcOptions(t *testing.T, tests ...results.Test) ipc.Options {
	var o ipc.Options
	o.Devices, o.Verify, o.Tests, o.Child = []int{0, 1}, true, tests, helperCommand(t, "")
	return o
}

// TestGPUIPC measures every IPC test on GPUs 0 and 1 and the same tests in
// one process, with the NVLink counters. Across processes the copy engine
// must keep the links as busy as in one process (wire rate within 2%), and
// move as much payload (within 2%) except when both directions read: a read
// issued from another process is a real pull, whose read requests cost wire
// bytes, while in one process the driver moves a "read" as it moves a write
// (the same wire bytes per payload byte). There the payload gap must be what
// the wire bytes per payload byte predict, within 1%.
func TestGPUIPC(t *testing.T) {
	drv := openGPUs(t)
	mon, err := gpu.OpenNVML()
	if err != nil {
		t.Logf("no NVML (%v): payload only", err)
		mon = nil
	}
	ctx := context.Background()
	same := &results.Run{Schema: results.SchemaVersion}
	var sameOpt bench.Options
	sameOpt.Devices, sameOpt.Verify, sameOpt.Monitor = []int{0, 1}, true, mon
	sameOpt.Tests = []results.Test{results.CERead, results.CEWrite, results.CEBidir, results.SMRead, results.SMWrite, results.SMBidir, results.LatChase, results.LatPingPong}
	eng := bench.NewEngine(drv, sameOpt)
	if err := eng.Run(ctx, same); err != nil {
		t.Fatalf("same-process run: %v", err)
	}
	run := &results.Run{Schema: results.SchemaVersion}
	opt := ipcOptions(t)
	opt.Monitor = mon
	if err := ipc.Run(ctx, drv, opt, run); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, n := range run.Notes {
		t.Logf("note: %s", n)
	}
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Error != "" || f.Verify == results.VerifyFailed {
			t.Errorf("%s: %s %s", figureKey(f), f.Error, f.VerifyDetail)
			continue
		}
		line := figureKey(f) + ": " + formatMedian(f)
		if g := counterpart(f, same); g != nil {
			ratio := f.Stats.Median / g.Stats.Median
			line += " vs same process " + formatMedian(g)
			if f.Engine != results.EngineCopy || f.Params["same_gpu"] != "false" {
				t.Log(line)
				continue
			}
			wf, okf := f.Wire()
			wg, okg := g.Wire()
			// Both directions at once, a copy engine that reads from the
			// other GPU: the pulling GPU's when the peer's buffer is opened
			// in the process's own context; the pushed-to GPU's when it is
			// opened in a context on the peer's device (the driver then
			// drives the copy from there).
			peerCtx := f.Params["ipc_open"] == "peer_device_context"
			realRead := f.Test == results.IPCCEBidir && (f.Direction == results.DirRead) != peerCtx
			if okf && okg {
				line += fmt.Sprintf("; wire bytes per payload byte %.3f vs %.3f", wf, wg)
				if r := f.Stats.Median * wf / (g.Stats.Median * wg); math.Abs(r-1) > 0.02 {
					t.Errorf("%s: IPC kept the links %.1f%% busier or idler than one process (over 2%%)", figureKey(f), 100*(r-1))
				}
				if realRead && math.Abs(ratio*wf/wg-1) > 0.01 {
					t.Errorf("%s: IPC moved %.1f%% of the same-process payload, the wire bytes per payload byte predict %.1f%%", figureKey(f), 100*ratio, 100*wg/wf)
				}
			}
			if math.Abs(ratio-1) > 0.02 && !(realRead && okf && okg) {
				t.Errorf("%s: IPC %.1f GB/s is %.1f%% off the same-process %.1f GB/s (over 2%%)", figureKey(f), f.Stats.Median, 100*(ratio-1), g.Stats.Median)
			}
		}
		t.Log(line)
	}
	for _, test := range []results.Test{results.IPCSMRead, results.IPCSMWrite, results.IPCSMBidir, results.IPCLatChase, results.IPCLatPingPong} {
		if len(run.FiguresOf(test)) == 0 {
			t.Errorf("no %s figure", test)
		}
	}
	peer := 0
	for _, f := range run.FiguresOf(results.IPCCEBidir) {
		if f.Params["ipc_open"] == "peer_device_context" && f.Direction == "read" && f.Part == "total" && f.Error == "" {
			peer++
		}
	}
	if peer != 2 {
		t.Errorf("%d measured both-ways reads with the peer's buffer opened on its device, want 2", peer)
	}
}

func formatMedian(f *results.Figure) string {
	return fmt.Sprintf("%.2f %s (cv %.2f%%)", f.Stats.Median, f.Unit, 100*f.Stats.CV)
}

// counterpart finds the same-process figure an IPC figure repeats.
func counterpart(f *results.Figure, same *results.Run) *results.Figure {
	test := f.Test.Info().SameProcess
	for i := range same.Figures {
		g := &same.Figures[i]
		if g.Test == test && g.Src == f.Src && g.Dst == f.Dst && g.Size == f.Size && g.Engine == f.Engine &&
			g.Direction == f.Direction && g.Part == f.Part && g.Params["measure"] == f.Params["measure"] && g.Stats != nil {
			return g
		}
	}
	return nil
}

// TestGPUIPCChildKilled kills rank 1's child with SIGKILL once the first
// pair is measured: the later pairs with rank 1 fail with the reason, the
// same-GPU baseline (ranks 0 and 2) is measured, and nothing is left.
func TestGPUIPCChildKilled(t *testing.T) {
	drv := openGPUs(t)
	var mu sync.Mutex
	var kids []ipc.ChildInfo
	opt := ipcOptions(t, results.IPCCERead, results.IPCCEBidir, results.IPCLatPingPong)
	ipc.SetAfterMap(&opt, func(k []ipc.ChildInfo) { mu.Lock(); kids = k; mu.Unlock() })
	opt.Progress = func(done, total int, step string) {
		if done == 1 {
			mu.Lock()
			defer mu.Unlock()
			if err := syscall.Kill(kids[1].Pid, syscall.SIGKILL); err != nil {
				t.Errorf("killing rank 1: %v", err)
			}
		}
	}
	run := &results.Run{Schema: results.SchemaVersion}
	if err := ipc.Run(context.Background(), drv, opt, run); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for i := range run.Figures {
		f := &run.Figures[i]
		// Every figure of the pair with rank 1 fails from the round in which
		// its child was gone (its earlier rounds' samples stay); the same-GPU
		// baseline (ranks 0 and 2, device 0) is measured.
		wantFail := (f.Src == 1 || f.Dst == 1) && f.Params["same_gpu"] == "false"
		if failed := f.Error != ""; failed != wantFail {
			t.Errorf("%s: failed=%v (%q), want %v", figureKey(f), failed, f.Error, wantFail)
		}
		t.Logf("%s: %s", figureKey(f), f.Error)
	}
	for _, k := range kids {
		if err := syscall.Kill(k.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("child of rank %d (pid %d) outlived the run", k.Rank, k.Pid)
		}
	}
}

// TestGPUIPCLeaderCrash crashes the leading process of a bidirectional
// sample after it queued its half: the follower's stream waits on the dead
// process's start event. Whatever the driver does with that wait, the run
// must record the failure, finish, and leave no process.
func TestGPUIPCLeaderCrash(t *testing.T) {
	drv := openGPUs(t)
	t.Setenv(ipc.FaultEnv, "1:release:crash")
	opt := ipcOptions(t, results.IPCCEBidir, results.IPCCERead)
	var mu sync.Mutex
	var kids []ipc.ChildInfo
	ipc.SetAfterMap(&opt, func(k []ipc.ChildInfo) { mu.Lock(); kids = k; mu.Unlock() })
	run := &results.Run{Schema: results.SchemaVersion}
	if err := ipc.Run(context.Background(), drv, opt, run); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for i := range run.Figures {
		f := &run.Figures[i]
		t.Logf("%s: %s", figureKey(f), f.Error)
		if f.Src == 1 && f.Error == "" {
			t.Errorf("%s: measured although rank 1 crashed", figureKey(f))
		}
	}
	for _, n := range run.Notes {
		t.Logf("note: %s", n)
	}
	for _, k := range kids {
		if err := syscall.Kill(k.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("child of rank %d (pid %d) outlived the run", k.Rank, k.Pid)
		}
	}
}
