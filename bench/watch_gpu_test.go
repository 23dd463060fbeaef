//go:build gpu

package bench_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/gpu/gputest"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// busyHelperEnv makes the test binary hold a context and 1 GiB on the
// device it names (TestGPUBusyHelper) until it is killed: another program
// on a GPU.
const busyHelperEnv = "P2PBENCH_BUSY_HELPER"

// busyHelperReady is the line the helper prints once it is on the GPU.
const busyHelperReady = "busy helper: on the GPU"

func TestGPUBusyHelper(t *testing.T) {
	dev, err := strconv.Atoi(os.Getenv(busyHelperEnv))
	if err != nil {
		t.Skip("another program on a GPU for TestGPUWatch; runs only when it starts it")
	}
	d, err := cuda.Open()
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Context(dev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.MemAlloc(1 << 30); err != nil {
		t.Fatal(err)
	}
	// On the GPU now, with a context and memory: say so to the test that
	// started it, which waits for this line before it asks NVML.
	fmt.Println(busyHelperReady)
	// Held until the test that started it closes our stdin (or kills us).
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// watchedGPURun measures ce_read and h2d on devs of the real machine under a
// Watch of NVML, with the health read before and after.
func watchedGPURun(t *testing.T, drv gpu.Driver, mon gpu.Monitor, devs []int, allowBusy bool) (*results.Run, error) {
	t.Helper()
	opt := options(results.H2D)
	if len(devs) > 1 {
		opt.Tests = append(opt.Tests, results.CERead)
	}
	opt.Devices, opt.Size, opt.Samples = devs, 64<<20, 5
	opt.Watch = measure.NewWatch(mon, allowBusy)
	run := &results.Run{Schema: results.SchemaVersion, Verify: true}
	var err error
	if run.Environment, run.Topology, err = bench.Discover(drv, mon, opt.Devices); err != nil {
		t.Fatal(err)
	}
	err = bench.NewEngine(drv, opt).Run(context.Background(), run)
	run.Environment.HealthAfter = bench.ReadHealth(mon, run.Environment.Devices)
	if verr := run.Validate(); verr != nil {
		t.Errorf("the run does not validate: %v", verr)
	}
	return run, err
}

// TestGPUWatch runs under the watch on an idle machine (this process must
// not count as another program, and the health must show no failing link
// or memory), then with another program on the last GPU of the first two
// (GPU 1, or GPU 0 on a machine of one): refused by default, and with busy
// GPUs allowed, every figure touching that GPU marked.
func TestGPUWatch(t *testing.T) {
	drv := gputest.OpenAtLeast(t, 1)
	devs := []int{0}
	if n, _ := drv.DeviceCount(); n > 1 {
		devs = []int{0, 1}
	}
	busyDev := devs[len(devs)-1]
	mon, err := gpu.OpenNVML()
	if err != nil {
		t.Skipf("no NVML: %v", err)
	}
	defer mon.Close()
	run, err := watchedGPURun(t, drv, mon, devs, false)
	if err != nil {
		t.Fatalf("an idle machine: %v (another program on the GPUs? see nvidia-smi)", err)
	}
	for _, h := range run.Environment.HealthBefore {
		t.Logf("health before, GPU %d: %d links, ECC %v, remapped rows %+v, throttle %v, unavailable %q",
			h.Device, len(h.Links), h.ECC, h.RemappedRows, h.ThrottleReasons, h.Unavailable)
	}
	t.Logf("during the run: %+v; notes %q", run.Environment.DuringRun, run.Environment.Notes)
	for _, f := range run.HealthFindings() {
		// Clocks held down are the machine's policy, not a fault; nor are
		// data errors a link detected and corrected or retried (an idle
		// link's CRC-data and ECC-data counters can rise by a few, with
		// replay, recovery and CRC-flit at 0).
		if f.Check == results.HealthThrottle || (f.Check == results.HealthLinkErrors && (f.What == string(results.LinkECCData) || f.What == string(results.LinkCRCData))) {
			t.Logf("health finding: %s", f)
			continue
		}
		t.Errorf("health finding on an idle machine: %s", f)
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(exe, "-test.run=^TestGPUBusyHelper$")
	helper.Env = append(os.Environ(), busyHelperEnv+"="+strconv.Itoa(busyDev))
	hold, err := helper.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	said, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { hold.Close(); helper.Wait() }()
	// The helper's line once its context and memory are on the GPU.
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(said)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == busyHelperReady {
				ready <- true
				io.Copy(io.Discard, said)
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the helper ended before it was on the GPU")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the helper was not on the GPU within 30 s")
	}
	info, _ := drv.DeviceInfo(busyDev)
	ps, err := mon.Processes(busyDev, info.PCIBusID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ps, func(p results.Process) bool { return p.PID != os.Getpid() }) {
		t.Fatalf("NVML does not list the helper on GPU %d once it holds a context and memory there: %+v", busyDev, ps)
	}
	t.Logf("GPU %d processes: %+v (helper pid %d)", busyDev, ps, helper.Process.Pid)
	_, err = watchedGPURun(t, drv, mon, devs, false)
	var busy *measure.BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("with another program on GPU %d: %v, want a BusyError", busyDev, err)
	}
	t.Logf("refused: %v", err)
	if !slices.ContainsFunc(busy.Processes, func(p results.Process) bool { return p.PID == helper.Process.Pid && p.Device == busyDev }) {
		t.Logf("the helper's pid %d is not among them: NVML's pids are another namespace's (a container)", helper.Process.Pid)
	}
	run, err = watchedGPURun(t, drv, mon, devs, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range run.Figures {
		if marked := len(f.OtherProcesses) > 0; marked != (f.Src == busyDev || f.Dst == busyDev) {
			t.Errorf("%s %d→%d: other processes %v", f.Test, f.Src, f.Dst, f.OtherProcesses)
		}
	}
	t.Logf("other processes: %+v", run.Environment.OtherProcesses)
}
