package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/internal/measure"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// ipcChildCommand is the hidden subcommand each child of `ipc` runs.
const ipcChildCommand = "ipc-child"

func init() {
	names := results.SelectNames(results.CommandIPC)
	commands = append(commands,
		&cli.Command{
			Name:  "ipc",
			Usage: "measure P2P across processes through CUDA IPC: one process per GPU, copy engine, SM copies, chase and ping-pong, and two processes on one GPU",
			Flags: []cli.Flag{devicesFlag, simulateFlag, jsonFlag,
				&cli.StringFlag{Name: "tests", Aliases: []string{"t"}, Value: "all", Usage: "tests to run, comma-separated: " + strings.Join(names, ", ")},
				&cli.IntFlag{Name: "samples", Value: 20, Usage: "samples per bandwidth figure"},
				&cli.BoolFlag{Name: "no-verify", Usage: "skip checking the data that moved (recorded in the results)"},
				&cli.DurationFlag{Name: "latch-timeout", Value: 5 * time.Second, Usage: "longest a latch may hold a stream before it gives up"},
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the results file `FILE` (JSON; partial results are kept on Ctrl-C)"},
				&cli.StringFlag{Name: "size", Value: "512MiB", Usage: "transfer size of the bandwidth tests"},
				&cli.StringFlag{Name: "variant", Usage: "SM copy kernel variant (default: bulk on sm_90 and later, else " + kernels.DefaultCopyVariant + "): " + strings.Join(copyVariants(), ", ")},
				&cli.IntFlag{Name: "blocks-per-sm", Usage: "SM copy grid: blocks per SM (default: the variant's own)"},
				&cli.IntFlag{Name: "block-size", Usage: "SM copy block size, threads, a multiple of 32 (default: the variant's own)"},
				&cli.StringFlag{Name: "tuning", Usage: "use the SM copy configurations tuned in results file `FILE` (from bw --tune)"},
				&cli.BoolFlag{Name: "no-same-gpu", Usage: "leave out the baseline of two processes on the first device"},
				&cli.DurationFlag{Name: "child-timeout", Value: time.Minute, Usage: "longest to wait for any answer of a child process before it counts as hung and is killed"},
				&cli.StringFlag{Name: "reference", Usage: "results files `FILES` of bw, lat or all on this machine (comma-separated), to compare the IPC figures with the same-process ones"},
			},
			Action: ipcAction,
		},
		&cli.Command{
			Name:   ipcChildCommand,
			Usage:  "one child process of `p2pbench ipc` (started by it, never by hand)",
			Hidden: true,
			Flags:  []cli.Flag{simulateFlag},
			Action: ipcChildAction,
		})
}

// ipcOptions reads the flags of `ipc`.
func ipcOptions(c *cli.Context, s *session) (ipc.Options, error) {
	o := ipc.Options{SkipSameGPU: c.Bool("no-same-gpu"), Timeout: c.Duration("child-timeout")}
	tests, err := results.ParseTests(c.String("tests"), results.CommandIPC)
	if err != nil {
		return o, usageError{err}
	}
	if o.Settings, err = settings(c, s, tests, true); err != nil {
		return o, err
	}
	switch {
	case o.Timeout <= 0:
		return o, usageError{errors.New("--child-timeout must be positive")}
	case len(s.devices) < 2 && o.SkipSameGPU:
		return o, usageError{errors.New("one device and --no-same-gpu leave no pair to measure")}
	}
	o.Child, err = ipcChildArgs(s)
	return o, err
}

// ipcChildArgs is the command line of every child of an IPC run in session
// s: this program's hidden subcommand, and the simulated machine if any. It
// holds no handle: handles travel on descriptor 3 only.
func ipcChildArgs(s *session) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to start the IPC children: %w", err)
	}
	args := []string{exe, ipcChildCommand}
	if s.sim != "" {
		args = append(args, "--simulate", s.sim)
	}
	return args, nil
}

func ipcAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("ipc takes no arguments (got %q)", c.Args().First())}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	opt, err := ipcOptions(c, s)
	if err != nil {
		return err
	}
	var ref *results.Run
	if paths := c.String("reference"); paths != "" {
		ref = &results.Run{}
		for _, path := range strings.Split(paths, ",") {
			r, err := results.Read(strings.TrimSpace(path))
			if err != nil {
				return fmt.Errorf("--reference: %w", err)
			}
			ref.Figures = append(ref.Figures, r.Figures...)
		}
	}
	out := c.String("output")
	if err := prepareOutput("--output", out); err != nil {
		return err
	}
	run := newRun(s)
	run.Verify = opt.Verify
	env, topo, err := bench.Discover(s.drv, s.mon, s.devices)
	if err != nil {
		return err
	}
	run.Environment, run.Topology = env, topo

	saver := &saver{path: out, run: run}
	bar := newProgress()
	opt.Progress = func(done, total int, step string) {
		bar.update(done, total, step)
		saver.maybeSave(false)
	}
	runErr := ipc.Run(c.Context, s.drv, opt, run)
	bar.finish()
	saveErr := finishRun(s, run, runErr, saver)
	if c.Bool("json") {
		if err := run.Encode(os.Stdout); err != nil {
			return err
		}
	} else {
		fmt.Fprint(os.Stdout, simLabel(run))
		printIPC(os.Stdout, run, ref)
		printLinkEfficiency(os.Stdout, run, ipcSize(run))
		printFailures(os.Stdout, run)
	}
	if saveErr != nil {
		return saveErr
	}
	if out != "" {
		fmt.Fprintf(os.Stderr, "results: %s\n", out)
	}
	if errors.Is(runErr, context.Canceled) {
		where := "not saved (no -o given)"
		if out != "" {
			where = "saved to " + out
		}
		return cli.Exit(fmt.Sprintf("p2pbench: interrupted; every child process was stopped; the %d figures measured so far are %s", len(run.Figures), where), 130)
	}
	return runErr
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
		d, err := sim.New(m)
		if err != nil {
			conn.Close()
			return usageError{err}
		}
		drv = d
	} else {
		d, err := cuda.Open()
		if err != nil {
			conn.Close()
			return err
		}
		drv = gpu.NewCUDADriver(d)
	}
	defer drv.Close()
	return ipc.Serve(c.Context, drv, conn)
}

// ipcSameGPU reports whether f is of the same-GPU baseline.
func ipcSameGPU(f *results.Figure) bool { return f.Params["same_gpu"] == "true" }

// printIPC prints the IPC figures of run: matrices like bw and lat, the
// same-GPU baseline, and IPC against the same-process figures found in run
// or in ref (which may be nil).
// ipcSize is the transfer size of a run's IPC bandwidth figures (0: none).
func ipcSize(run *results.Run) uint64 {
	for _, f := range run.Figures {
		if f.Test.IsIPC() && f.Unit == results.UnitGBps {
			return f.Size
		}
	}
	return 0
}

func printIPC(w io.Writer, run *results.Run, ref *results.Run) {
	size := ipcSize(run)
	// The matrices show the copies as one-GPU-per-process jobs make them;
	// the copy engine with the peer's buffer opened on the peer's device is
	// in the comparison below.
	cross := func(test string, more func(f *results.Figure) bool) func(f *results.Figure) bool {
		return func(f *results.Figure) bool {
			return string(f.Test) == test && !ipcSameGPU(f) && !f.OpenedOnPeerGPU() && more(f)
		}
	}
	every := func(*results.Figure) bool { return true }
	for _, t := range []struct{ test, title string }{
		{"ipc_ce_read", "IPC copy engine, read (pull: cuMemcpyAsync in the destination's process)"},
		{"ipc_ce_write", "IPC copy engine, write (push: cuMemcpyAsync in the source's process)"},
		{"ipc_sm_read", "IPC SM copy kernel, read (pull: kernel in the destination's process)"},
		{"ipc_sm_write", "IPC SM copy kernel, write (push: kernel in the source's process)"},
	} {
		title := fmt.Sprintf("%s, GB/s (median, %s, decimal GB/s); across processes; row = source, column = destination", t.title, results.FormatBytes(size))
		printMatrix(w, run, title, cross(t.test, every), "%.1f", true)
	}
	for _, t := range []string{"ipc_ce_bidir", "ipc_sm_bidir"} {
		for _, dir := range []string{"read", "write"} {
			title := fmt.Sprintf("IPC %s, both processes at once, %s, total GB/s of both directions, %s; row/column = the pair",
				strings.ToUpper(t[4:6]), dir, results.FormatBytes(size))
			printMatrix(w, run, title, cross(t, func(f *results.Figure) bool { return string(f.Direction) == dir && f.Part == results.PartTotal }), "%.1f", false)
		}
	}
	for _, ws := range measure.ChaseWorkingSets {
		title := fmt.Sprintf("IPC pointer chase, working set %s: ns per dependent load (median); row = process owning the memory, column = process running the chase", results.FormatBytes(ws))
		printMatrix(w, run, title, cross("ipc_lat_chase", func(f *results.Figure) bool { return f.Size == ws }), "%.0f", false)
	}
	printMatrix(w, run, "IPC ping-pong, one-way latency, ns (half a round trip, median); row = initiator, column = responder",
		cross("ipc_lat_pingpong", func(f *results.Figure) bool { return f.Params["measure"] == "one_way" }), "%.0f", false)
	printIPCSameGPU(w, run)
	printIPCComparison(w, run, ref)
}

// ipcRowLabel names a figure in the IPC lists.
func ipcRowLabel(f *results.Figure) string {
	label := strings.TrimPrefix(string(f.Test), "ipc_")
	for _, s := range []string{string(f.Direction), string(f.Part), f.Params["measure"]} {
		if s != "" {
			label += " " + s
		}
	}
	if f.Test == "ipc_lat_chase" {
		label += " " + results.FormatBytes(f.Size)
	}
	if f.OpenedOnPeerGPU() {
		label += " [opened on peer GPU]"
	}
	return label
}

func ipcFormat(f *results.Figure) string {
	if f.Unit == results.UnitNs {
		return "%.0f"
	}
	return "%.1f"
}

// printIPCSameGPU lists the baseline of two processes on one GPU.
func printIPCSameGPU(w io.Writer, run *results.Run) {
	var rows []*results.Figure
	for i := range run.Figures {
		if f := &run.Figures[i]; f.Test.IsIPC() && ipcSameGPU(f) {
			rows = append(rows, f)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nIPC baseline: two processes on device %d (the IPC path without a link), median\n", rows[0].Src)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TEST\tVALUE\tUNIT\tCV\tVERIFY")
	for _, f := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ipcRowLabel(f), cellText(f, ipcFormat(f)), f.Unit, cvText(f), f.Verify)
	}
	tw.Flush()
}

// printIPCComparison sets every cross-GPU IPC figure beside its same-process
// counterpart, from run itself or else from ref.
func printIPCComparison(w io.Writer, run *results.Run, ref *results.Run) {
	type row struct{ ipc, same *results.Figure }
	var rows []row
	for i := range run.Figures {
		f := &run.Figures[i]
		if !f.Test.IsIPC() || ipcSameGPU(f) || f.Stats == nil || f.Error != "" {
			continue
		}
		g := ipcCounterpart(f, run)
		if g == nil && ref != nil {
			g = ipcCounterpart(f, ref)
		}
		if g != nil {
			rows = append(rows, row{f, g})
		}
	}
	if len(rows) == 0 {
		if ref == nil {
			fmt.Fprintln(w, "\n(no same-process figures to compare with: run `p2pbench all`, or give --reference with a bw/lat results file of this machine)")
		}
		return
	}
	fmt.Fprintln(w, "\nIPC against the same process (median): the same test, pair, size and engine, one process per GPU vs one process for both")
	fmt.Fprintln(w, "[opened on peer GPU]: the copy engine again, the peer's buffer opened in the process's context on the peer's GPU and copied with cuMemcpyPeerAsync between the two contexts")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TEST\tPAIR\tIPC\tSAME PROCESS\tUNIT\tIPC − SAME\t")
	for _, r := range rows {
		diff := 100 * (r.ipc.Stats.Median - r.same.Stats.Median) / r.same.Stats.Median
		fmt.Fprintf(tw, "%s\t%d→%d\t%s\t%s\t%s\t%+.1f%%\t\n", ipcRowLabel(r.ipc), r.ipc.Src, r.ipc.Dst,
			cellText(r.ipc, ipcFormat(r.ipc)), cellText(r.same, ipcFormat(r.same)), r.ipc.Unit, diff)
	}
	tw.Flush()
}

// ipcCounterpart finds in run the same-process figure an IPC figure repeats:
// its test without "ipc_", the same pair, size, engine, direction and part
// (and measure, for the ping-pong), measured without error.
func ipcCounterpart(f *results.Figure, run *results.Run) *results.Figure {
	twin, ok := f.SameProcessTwin()
	if !ok {
		return nil
	}
	key := twin.Key()
	for i := range run.Figures {
		g := &run.Figures[i]
		if g.Test == twin.Test && g.Key() == key && g.Stats != nil && g.Error == "" && g.Stats.Median > 0 {
			return g
		}
	}
	return nil
}
