package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

// ipcChildName is the hidden command each child of an IPC run runs.
const ipcChildName = "ipc-child"

// simTrafficFlag names, for a simulated IPC child, the file its machine's
// NVLink counters are shared in with the parent (sim.WithSharedTraffic).
var simTrafficFlag = &cli.StringFlag{Name: "simulate-nvlink-counters", Hidden: true}

func ipcCommand() *cli.Command {
	flags := measuringFlags(results.CommandIPC, outputFlag)
	flags = append(flags, copyFlags("transfer size of the bandwidth tests")...)
	flags = append(flags,
		&cli.BoolFlag{Name: "no-same-gpu", Usage: "leave out the baseline of two processes on the first device"},
		&cli.StringFlag{Name: "handles", Value: "legacy", Usage: "how the processes share memory, comma-separated, each with processes of its own: legacy (cuIpcGetMemHandle), vmm (cuMemCreate memory exported as POSIX file descriptors, passed with SCM_RIGHTS; figures labelled ipc_handle=vmm_posix_fd), all"},
		&cli.DurationFlag{Name: "child-timeout", Value: time.Minute, Usage: "longest to wait for any answer of a child process before it counts as hung and is killed"},
		&cli.StringFlag{Name: "reference", Usage: "results files `FILES` of bw, lat or all on this machine (comma-separated), to compare the IPC figures with the same-process ones"},
	)
	return &cli.Command{
		Name:   "ipc",
		Usage:  "measure P2P across processes through CUDA IPC: one process per GPU, copy engine, SM copies, chase and ping-pong, and two processes on one GPU",
		Flags:  flags,
		Action: ipcAction,
	}
}

// ipcChildCommand is one child process of an IPC run (ipc or all).
func ipcChildCommand() *cli.Command {
	return &cli.Command{
		Name:   ipcChildName,
		Usage:  "one child process of `p2pbench ipc` (started by it, never by hand)",
		Hidden: true,
		Flags:  []cli.Flag{simulateFlag, seedFlag, simTrafficFlag},
		Action: ipcChildAction,
	}
}

func ipcAction(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	t, err := targetOf(c)
	if err != nil {
		return err
	}
	opt, err := ipcOptions(c)
	if err != nil {
		return err
	}
	refs := strings.Split(c.String("reference"), ",")
	if c.String("reference") == "" {
		refs = nil
	}
	if err := outfile.Writable(c.String("output"), append(refs, c.String("tuning"))...); err != nil {
		return err
	}
	ref, err := readReference(c, refs)
	if err != nil {
		return err
	}
	if opt.Tuned, err = readTuning(c); err != nil {
		return err
	}
	m, err := startMeasuring(c, t, c.String("output"), append(refs, c.String("tuning"))...)
	if err != nil {
		return err
	}
	defer m.close()
	if len(m.s.devices) < 2 && opt.SkipSameGPU {
		return usageError{errors.New("one device and --no-same-gpu leave no pair to measure")}
	}
	if opt.Child, err = ipcChildArgs(m.s); err != nil {
		return err
	}
	if err := m.claim(); err != nil {
		return err
	}
	m.settle(&opt.Settings)
	m.stopNote = "every child process was stopped"
	runErr := ipc.Run(c.Context, m.s.drv, opt, m.run)
	return m.finish(runErr, func(run *results.Run) []*report.Document {
		return []*report.Document{report.Tables(run, ref)}
	})
}

// ipcOptions reads the flags of ipc.
func ipcOptions(c *cli.Context) (ipc.Options, error) {
	o := ipc.Options{SkipSameGPU: c.Bool("no-same-gpu"), Timeout: c.Duration("child-timeout")}
	if o.Timeout <= 0 {
		return o, usageError{errors.New("--child-timeout must be positive")}
	}
	var err error
	if o.Handles, err = ipc.ParseHandles(c.String("handles")); err != nil {
		return o, usageError{fmt.Errorf("--handles: %w", err)}
	}
	tests, err := results.ParseTests(c.String("tests"), results.CommandIPC)
	if err != nil {
		return o, usageError{err}
	}
	o.Settings, err = readSettings(c, tests, true)
	return o, err
}

// readReference reads the figures of the --reference files into one run
// (nil when there are none).
func readReference(c *cli.Context, paths []string) (*results.Run, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	ref := &results.Run{}
	for _, path := range paths {
		r, err := readRun(c.Context, strings.TrimSpace(path))
		if err != nil {
			return nil, fmt.Errorf("--reference: %w", err)
		}
		ref.Figures = append(ref.Figures, r.Figures...)
	}
	return ref, nil
}

// ipcChildArgs is the command line of every child of an IPC run of
// session s: this program's hidden command, and on a simulated machine the
// machine and its seed. It holds no handle: handles travel on descriptor 3
// only.
func ipcChildArgs(s *session) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to start the IPC children: %w", err)
	}
	args := []string{exe, ipcChildName}
	if s.sim != "" {
		args = append(args, "--simulate", s.sim, "--simulate-seed", strconv.FormatInt(s.seed, 10))
		if s.traffic != "" {
			args = append(args, "--"+simTrafficFlag.Name, s.traffic)
		}
	}
	return args, nil
}

// ipcChildAction is one child: it opens the driver the parent uses (real or
// the same simulated machine) and serves the parent on descriptor 3.
func ipcChildAction(c *cli.Context) error {
	conn, err := ipc.ChildConn()
	if err != nil {
		return err
	}
	var drv gpu.Driver
	if m := c.String("simulate"); m != "" {
		opts := []sim.Option{sim.WithSeed(c.Int64("simulate-seed")), sim.AsIPCChild()}
		if path := c.String(simTrafficFlag.Name); path != "" {
			// The parent's counters; without them this child counts
			// for itself.
			if f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0); err == nil {
				opts = append(opts, sim.WithSharedTraffic(f))
			}
		}
		d, err := sim.New(m, opts...)
		if err != nil {
			conn.Close()
			return usageError{err}
		}
		drv = d
	} else {
		d, err := cuda.Open()
		if err != nil {
			conn.Close()
			return noGPU(err)
		}
		drv = gpu.NewCUDADriver(d)
	}
	defer drv.Close()
	return ipc.Serve(c.Context, drv, conn)
}
