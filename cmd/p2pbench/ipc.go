package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/session"
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
		Action: func(c *cli.Context) error {
			return session.Serve(c.Context, session.Child{Sim: c.String("simulate"), Seed: c.Int64("simulate-seed"), Traffic: c.String(simTrafficFlag.Name)})
		},
	}
}

func ipcAction(c *cli.Context) error {
	o, ref, err := ipcSession(c)
	if err != nil {
		return err
	}
	s, err := session.Start(c.Context, o)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Prepare(); err != nil {
		return err
	}
	return finish(c, s, s.Measure(), false, ref)
}

// ipcSession reads the flags of ipc and its inputs (the --reference files,
// the --tuning file) into the options of its session, and the reference
// run.
func ipcSession(c *cli.Context) (session.Options, *results.Run, error) {
	if err := cmdline.NoArgs(c); err != nil {
		return session.Options{}, nil, err
	}
	t, err := targetOf(c)
	if err != nil {
		return session.Options{}, nil, err
	}
	o := sessionOptions(c, t)
	opt, err := ipcOptions(c)
	if err != nil {
		return o, nil, err
	}
	o.IPC, o.Path = &opt, c.String("output")
	refs := strings.Split(c.String("reference"), ",")
	if c.String("reference") == "" {
		refs = nil
	}
	o.Inputs = append(refs, c.String("tuning"))
	if err := outfile.Writable(o.Path, o.Inputs...); err != nil {
		return o, nil, err
	}
	ref, err := readReference(c, refs)
	if err != nil {
		return o, nil, err
	}
	opt.Tuned, err = readTuning(c)
	return o, ref, err
}

// ipcOptions reads the flags of ipc.
func ipcOptions(c *cli.Context) (ipc.Options, error) {
	o := ipc.Options{SkipSameGPU: c.Bool("no-same-gpu"), Timeout: c.Duration("child-timeout")}
	if o.Timeout <= 0 {
		return o, cmdline.Usage(errors.New("--child-timeout must be positive"))
	}
	var err error
	if o.Handles, err = ipc.ParseHandles(c.String("handles")); err != nil {
		return o, cmdline.Usage(fmt.Errorf("--handles: %w", err))
	}
	tests, err := results.ParseTests(c.String("tests"), results.CommandIPC)
	if err != nil {
		return o, cmdline.Usage(err)
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

// ipcChildArgs is the command line of every child of an IPC run on
// machine m: this program's hidden command, and on a simulated machine the
// machine, its seed and the file of its NVLink counters. It holds no
// handle: handles travel on descriptor 3 only.
func ipcChildArgs(m *session.Machine) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to start the IPC children: %w", err)
	}
	args := []string{exe, ipcChildName}
	if m.Sim != "" {
		args = append(args, "--"+simulateFlag.Name, m.Sim, "--"+seedFlag.Name, strconv.FormatInt(m.Seed, 10))
		if m.Traffic != "" {
			args = append(args, "--"+simTrafficFlag.Name, m.Traffic)
		}
	}
	return args, nil
}
