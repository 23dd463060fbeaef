package session

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/sysinfo"
	"github.com/p2pbench/p2pbench/results"
)

// Target is the machine a run asks for: a device selection (nil: all) on
// the GPUs or on a simulated machine (Sim, one of sim.Machines), with the
// seed of its noise and its injected health.
type Target struct {
	Devices []int
	Sim     string
	Seed    int64
	Health  []sim.Option
}

// Machine is an opened driver with its monitor (nil without NVML) and the
// selected devices.
type Machine struct {
	Driver  gpu.Driver
	Monitor gpu.Monitor
	Devices []int
	// Sim and Seed are the simulated machine's ("" on the GPUs).
	Sim  string
	Seed int64
	// Traffic names the file a simulated machine's NVLink counters are
	// shared in with the run's IPC children ("" for none).
	Traffic string
	// nvmlErr is why NVML could not be opened, nil when it was (or when
	// the machine is simulated).
	nvmlErr error
	// driverClosed is closed once the driver is (closeDriver).
	driverClosed chan struct{}
	closing      sync.Once
}

// trySimulated is the simulated machine the error of a machine without
// libcuda suggests: the smallest, seconds and little memory (dgx-h100
// takes a minute or two and 8 GB), as the README's.
const trySimulated = "h200x2"

// Open opens the real driver (and NVML if present) or the simulated
// machine, and checks the device selection against it. No driver, no
// device or a selected device that is absent is an error of kind NoGPU.
func Open(t Target) (*Machine, error) {
	m := &Machine{Sim: t.Sim, Seed: t.Seed}
	if t.Sim != "" {
		if err := m.openSimulated(t); err != nil {
			return nil, err
		}
	} else if err := m.openGPUs(); err != nil {
		return nil, err
	}
	var err error
	m.Devices, err = bench.SelectDevices(m.Driver, t.Devices)
	if err != nil {
		m.Close()
		var ce *cuda.Error
		if errors.Is(err, bench.ErrNoDevice) || errors.As(err, &ce) {
			return nil, noGPU(err)
		}
		return nil, usage(err)
	}
	return m, nil
}

// openSimulated opens the simulated machine of t. Its NVLink counters are
// the machine's: the IPC children count their copies where the parent
// reads them, in a file no name outlives the run (sharedTraffic).
func (m *Machine) openSimulated(t Target) error {
	opts := []sim.Option{sim.WithSeed(t.Seed)}
	if f, path := sharedTraffic(); f != nil {
		m.Traffic = path
		opts = append(opts, sim.WithSharedTraffic(f))
	}
	d, err := sim.New(t.Sim, append(opts, t.Health...)...)
	if err != nil {
		return usage(err)
	}
	m.Driver, m.Monitor = d, d.Monitor()
	return nil
}

// openGPUs opens the driver, and NVML beside it: each takes a part of the
// run's start (half a second in all).
func (m *Machine) openGPUs() error {
	nv := make(chan gpu.Monitor, 1)
	go func() {
		mon, err := gpu.OpenNVML()
		if err != nil {
			m.nvmlErr = err // read after <-nv
			nv <- nil
			return
		}
		nv <- mon
	}()
	d, err := cuda.Open()
	mon := <-nv
	if err != nil {
		if mon != nil {
			mon.Close()
		}
		if errors.Is(err, cuda.ErrNoLibrary) {
			err = fmt.Errorf("%w (or run with --simulate %s to try p2pbench without a GPU)", err, trySimulated)
		}
		return noGPU(err)
	}
	m.Driver, m.Monitor = gpu.NewCUDADriver(d), mon
	return nil
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

// closeDriver closes the driver in the background: once nothing more is
// measured, its contexts, memory and pinned host memory go away while the
// run's end (the health read through NVML, the verdict, the writing) goes
// on, each about a tenth of a second; Close waits for it.
func (m *Machine) closeDriver() {
	m.closing.Do(func() {
		m.driverClosed = make(chan struct{})
		go func() {
			defer close(m.driverClosed)
			if m.Driver != nil {
				_ = m.Driver.Close()
			}
		}()
	})
}

// Close closes the driver and the monitor.
func (m *Machine) Close() {
	m.closeDriver()
	<-m.driverClosed
	if m.Monitor != nil {
		_ = m.Monitor.Close()
	}
}

// Record starts the results record of a run on the machine by the program
// of version, started with the command line args.
func (m *Machine) Record(version string, args []string) *results.Run {
	host, _ := os.Hostname()
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
		Simulated:  m.Driver.Simulated(),
		SimMachine: m.Sim,
		Host:       host,
		Start:      time.Now().UTC(),
		Verify:     true,
	}
}

// Discover records the environment and topology of the machine's devices
// in run.
func (m *Machine) Discover(run *results.Run) error {
	env, topo, err := bench.Discover(m.Driver, m.Monitor, m.Devices)
	if err != nil {
		return err
	}
	if m.nvmlErr != nil {
		// Why NVML is missing, naming the file tried: a broken library
		// given by P2PBENCH_LIBNVML is not dropped without a word.
		for i, n := range topo.Notes {
			if n == bench.NoNVML {
				topo.Notes[i] = results.ClipText(bench.NoNVMLBecause(m.nvmlErr))
			}
		}
	}
	sys := sysinfo.Read(os.DirFS("/"))
	env.System = &sys
	run.Environment, run.Topology = env, topo
	return nil
}
