package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// Flags shared by the measuring commands.
var (
	devicesFlag  = &cli.StringFlag{Name: "devices", Aliases: []string{"d"}, Usage: "devices to use, e.g. 0,2 or 0-3 (default: all)"}
	simulateFlag = &cli.StringFlag{Name: "simulate", Usage: "run on a simulated machine instead of the GPUs: " + strings.Join(sim.Machines(), ", ") + " (every figure is labelled SIMULATED)"}
	jsonFlag     = &cli.BoolFlag{Name: "json", Usage: "print the results as JSON instead of tables"}
)

// session is an opened driver with its optional monitor and selected devices.
type session struct {
	drv     gpu.Driver
	mon     gpu.Monitor
	devices []int
	sim     string
}

func (s *session) Close() {
	if s.mon != nil {
		_ = s.mon.Close()
	}
	if s.drv != nil {
		_ = s.drv.Close()
	}
}

// openSession opens the real driver (and NVML if present) or a simulated
// machine, and checks the device selection.
func openSession(c *cli.Context) (*session, error) {
	want, err := units.ParseDeviceList(c.String("devices"))
	if err != nil {
		return nil, usageError{err}
	}
	s := &session{sim: c.String("simulate")}
	if s.sim != "" {
		d, err := sim.New(s.sim)
		if err != nil {
			return nil, usageError{fmt.Errorf("unknown simulated machine %q; the machines are: %s", s.sim, strings.Join(sim.Machines(), ", "))}
		}
		s.drv, s.mon = d, d.Monitor()
	} else {
		d, err := cuda.Open()
		if err != nil {
			if errors.Is(err, cuda.ErrNoLibrary) {
				return nil, fmt.Errorf("%v (or run with --simulate %s to try p2pbench without a GPU)", err, sim.Machines()[0])
			}
			return nil, err
		}
		s.drv = gpu.NewCUDADriver(d)
		if m, err := gpu.OpenNVML(); err == nil {
			s.mon = m
		}
	}
	s.devices, err = bench.SelectDevices(s.drv, want)
	if err != nil {
		s.Close()
		var ce *cuda.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, usageError{err}
	}
	return s, nil
}

// newRun starts a results record for this invocation.
func newRun(s *session) *results.Run {
	host, _ := os.Hostname()
	return &results.Run{
		Schema: results.SchemaVersion,
		Tool: results.Tool{Name: "p2pbench", Version: version, Command: os.Args,
			GoOS: runtime.GOOS, GoArch: runtime.GOARCH},
		Simulated:  s.drv.Simulated(),
		SimMachine: s.sim,
		Host:       host,
		Start:      time.Now().UTC(),
		Verify:     true,
	}
}

// simLabel is printed above every table of a simulated run.
func simLabel(run *results.Run) string {
	if run.Simulated {
		return fmt.Sprintf("SIMULATED (machine %q): these figures come from a model, not from a GPU.\n", run.SimMachine)
	}
	return ""
}
