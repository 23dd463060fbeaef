package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/sysinfo"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// Flags of every command that opens the GPUs.
var (
	devicesFlag  = &cli.StringFlag{Name: "devices", Aliases: []string{"d"}, Usage: "devices to use, e.g. 0,2 or 0-3 (default: all)"}
	simulateFlag = &cli.StringFlag{Name: "simulate", Usage: "run on a simulated machine instead of the GPUs: " + strings.Join(sim.Machines(), ", ") + " (every figure is labelled SIMULATED)"}
	jsonFlag     = &cli.BoolFlag{Name: "json", Usage: "print the results as JSON instead of tables"}
	healthFlag   = &cli.StringSliceFlag{Name: "simulate-health", Usage: "with --simulate, inject a health condition `SPEC` (repeatable): " + strings.Join(sim.HealthSpecs, ", ")}
	seedFlag     = &cli.Int64Flag{Name: "simulate-seed", Value: 1, Usage: "with --simulate, the seed of the simulated machine's noise: runs with different seeds differ as runs of separate processes on a real machine do"}
)

// target is the machine a command asks for: a device selection (nil: all)
// on the GPUs or on a simulated machine, with its injected health.
type target struct {
	devices []int
	sim     string
	seed    int64
	health  []sim.Option
}

// targetOf reads --devices, --simulate and --simulate-health; it opens
// nothing.
func targetOf(c *cli.Context) (target, error) {
	devices, err := units.ParseDeviceList(c.String("devices"))
	if err != nil {
		return target{}, usageError{err}
	}
	t := target{devices: devices, sim: c.String("simulate"), seed: c.Int64("simulate-seed")}
	if t.sim != "" && !slices.Contains(sim.Machines(), t.sim) {
		return t, usageError{fmt.Errorf("unknown simulated machine %s; the machines are: %s", results.QuoteShort(t.sim), strings.Join(sim.Machines(), ", "))}
	}
	if c.IsSet("simulate-seed") && t.sim == "" {
		return t, usageError{errors.New("--simulate-seed needs --simulate")}
	}
	for _, spec := range c.StringSlice("simulate-health") {
		if t.sim == "" {
			return t, usageError{fmt.Errorf("--simulate-health %s needs --simulate", spec)}
		}
		o, err := sim.ParseHealth(spec)
		if err != nil {
			return t, usageError{fmt.Errorf("--simulate-health: %w", err)}
		}
		t.health = append(t.health, o)
	}
	return t, nil
}

// session is an opened driver with its optional monitor and the selected
// devices.
type session struct {
	drv gpu.Driver
	mon gpu.Monitor
	// nvmlErr is why NVML could not be opened, nil when it was (or when
	// the machine is simulated).
	nvmlErr error
	devices []int
	sim     string
	seed    int64
	// traffic names the file a simulated machine's NVLink counters are
	// shared in with the run's IPC children ("" for none).
	traffic string
	// driverClosed is closed once the driver is (closeDriver).
	driverClosed chan struct{}
	closing      sync.Once
}

// closeDriver closes the driver in the background: once nothing more is
// measured, its contexts, memory and pinned host memory go away while the
// run's end (the health read through NVML, the verdict, the writing) goes
// on, each about a tenth of a second; Close waits for it.
func (s *session) closeDriver() {
	s.closing.Do(func() {
		s.driverClosed = make(chan struct{})
		go func() {
			defer close(s.driverClosed)
			if s.drv != nil {
				_ = s.drv.Close()
			}
		}()
	})
}

func (s *session) Close() {
	s.closeDriver()
	<-s.driverClosed
	if s.mon != nil {
		_ = s.mon.Close()
	}
}

// sharedTraffic opens the file a simulated machine's NVLink counters are
// shared in with the run's IPC children: a temporary file removed at once,
// which the children open through this process's descriptor
// (/proc/PID/fd/N, on Linux, where the IPC tests run), so that no name is
// left behind however the run ends. nil where it cannot be made: the
// children then count for themselves, and their rows have no counters.
func sharedTraffic() (*os.File, string) {
	if runtime.GOOS != "linux" {
		return nil, ""
	}
	f, err := os.CreateTemp("", "p2psim-nvlink-")
	if err != nil {
		return nil, ""
	}
	os.Remove(f.Name())
	g, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDWR|os.O_APPEND, 0)
	f.Close()
	if err != nil {
		return nil, ""
	}
	return g, fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), g.Fd())
}

// open opens the real driver (and NVML if present) or the simulated
// machine, and checks the device selection against it. No driver, no device
// or a selected device that is absent is exit status 3.
func (t target) open() (*session, error) {
	s := &session{sim: t.sim, seed: t.seed}
	if t.sim != "" {
		// The NVLink counters are the machine's: the IPC children count
		// their copies where the parent reads them, in a file no name
		// outlives the run (sharedTraffic).
		opts := []sim.Option{sim.WithSeed(t.seed)}
		if f, path := sharedTraffic(); f != nil {
			s.traffic = path
			opts = append(opts, sim.WithSharedTraffic(f))
		}
		d, err := sim.New(t.sim, append(opts, t.health...)...)
		if err != nil {
			return nil, usageError{err}
		}
		s.drv, s.mon = d, d.Monitor()
	} else {
		// NVML starts beside the driver: each takes a part of the run's
		// start (half a second in all).
		nv := make(chan gpu.Monitor, 1)
		go func() {
			m, err := gpu.OpenNVML()
			if err != nil {
				s.nvmlErr = err // read after <-nv
				nv <- nil
				return
			}
			nv <- m
		}()
		d, err := cuda.Open()
		mon := <-nv
		if err != nil {
			if mon != nil {
				mon.Close()
			}
			if errors.Is(err, cuda.ErrNoLibrary) {
				// The smallest simulated machine: seconds and little memory
				// (dgx-h100 takes a minute or two and 8 GB), as the README's.
				err = fmt.Errorf("%w (or run with --simulate %s to try p2pbench without a GPU)", err, trySimulated)
			}
			return nil, noGPU(err)
		}
		s.drv, s.mon = gpu.NewCUDADriver(d), mon
	}
	var err error
	s.devices, err = bench.SelectDevices(s.drv, t.devices)
	if err != nil {
		s.Close()
		var ce *cuda.Error
		if errors.Is(err, bench.ErrNoDevice) || errors.As(err, &ce) {
			return nil, noGPU(err)
		}
		return nil, usageError{err}
	}
	return s, nil
}

// trySimulated is the simulated machine the error of a machine without
// libcuda suggests.
const trySimulated = "h200x2"

// newRun starts the results record of command c.
func newRun(c *cli.Context, s *session) *results.Run {
	host, _ := os.Hostname()
	args, _ := c.App.Metadata[argsKey].([]string)
	// Each word within the results file's limit, so that the run can
	// always be read back.
	command := make([]string, len(args))
	for i, a := range args {
		command[i] = results.ClipText(a)
	}
	return &results.Run{
		Schema: results.SchemaVersion,
		Tool: results.Tool{Name: "p2pbench", Version: version, Command: command,
			GoOS: runtime.GOOS, GoArch: runtime.GOARCH},
		Simulated:  s.drv.Simulated(),
		SimMachine: s.sim,
		Host:       host,
		Start:      time.Now().UTC(),
		Verify:     true,
	}
}

// discover records the environment and topology of the session's devices
// in run.
func (s *session) discover(run *results.Run) error {
	env, topo, err := bench.Discover(s.drv, s.mon, s.devices)
	if err != nil {
		return err
	}
	if s.nvmlErr != nil {
		// Why NVML is missing, naming the file tried: a broken library
		// given by P2PBENCH_LIBNVML is not dropped without a word.
		for i, n := range topo.Notes {
			if n == bench.NoNVML {
				topo.Notes[i] = results.ClipText(bench.NoNVMLBecause(s.nvmlErr))
			}
		}
	}
	sys := sysinfo.Read(os.DirFS("/"))
	env.System = &sys
	run.Environment, run.Topology = env, topo
	return nil
}
