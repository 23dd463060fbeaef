package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/internal/measure"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

func measureFlags(command string) []cli.Flag {
	fl := []cli.Flag{devicesFlag, simulateFlag, jsonFlag,
		&cli.StringFlag{Name: "tests", Aliases: []string{"t"}, Value: "all", Usage: "tests to run, comma-separated: " + strings.Join(results.SelectNames(testCommand(command)), ", ")},
		&cli.IntFlag{Name: "samples", Value: 20, Usage: "samples per bandwidth figure"},
		&cli.BoolFlag{Name: "no-verify", Usage: "skip checking the data that moved (recorded in the results)"},
		&cli.DurationFlag{Name: "latch-timeout", Value: 5 * time.Second, Usage: "longest a latch may hold a stream before it gives up"},
	}
	if command != "all" {
		fl = append(fl, &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the results file `FILE` (JSON; partial results are kept on Ctrl-C)"})
	} else {
		fl = append(fl, &cli.StringFlag{Name: "dir", Usage: "results directory `DIR` (default: p2pbench-<host>-<time>)"})
	}
	if command == "bw" || command == "all" {
		sizes := ""
		if command == "all" {
			sizes = "4B:1GiB"
		}
		fl = append(fl,
			&cli.StringFlag{Name: "size", Value: "512MiB", Usage: "transfer size of the pairwise matrices"},
			&cli.StringFlag{Name: "sizes", Value: sizes, Usage: "size sweep for CE and SM read/write, e.g. 4B:1GiB (powers of two) or 4KiB,1MiB; \"none\" for no sweep"},
			&cli.StringFlag{Name: "variant", Usage: "SM copy kernel variant (default: bulk on sm_90 and later, else " + kernels.DefaultCopyVariant + "): " + strings.Join(copyVariants(), ", ")},
			&cli.IntFlag{Name: "blocks-per-sm", Usage: "SM copy grid: blocks per SM (default: the variant's own)"},
			&cli.IntFlag{Name: "block-size", Usage: "SM copy block size, threads, a multiple of 32 (default: the variant's own)"},
			&cli.BoolFlag{Name: "tune", Usage: "first search SM copy variant and grid per pair and direction; the winners are recorded and used"},
			&cli.StringFlag{Name: "tuning", Usage: "use the SM copy configurations tuned in results file `FILE` (from bw --tune)"},
		)
	}
	return fl
}

func copyVariants() []string {
	var out []string
	for _, k := range kernels.CopyKernels {
		out = append(out, k.Variant)
	}
	return out
}

func init() {
	for _, c := range []struct{ name, usage string }{
		{"bw", "measure bandwidth of every ordered pair: copy engine and SM, read, write, both ways, aggregates"},
		{"lat", "measure latency: pointer chase, ping-pong, small-copy completion"},
		{"atomic", "measure atomics over each link and locally: throughput, contention and latency, results checked exactly"},
		{"all", "topo + every test into a results directory, with a summary"},
	} {
		command := c.name
		commands = append(commands, &cli.Command{
			Name:   command,
			Usage:  c.usage,
			Flags:  measureFlags(command),
			Action: func(ctx *cli.Context) error { return measureAction(ctx, command) },
		})
	}
}

// testCommand is the catalogue's command of a measuring command: every
// test for all.
func testCommand(command string) results.Command {
	if command == "all" {
		return ""
	}
	return results.Command(command)
}

// options reads the measuring flags.
func options(c *cli.Context, command string, s *session) (bench.Options, error) {
	var o bench.Options
	tests, err := results.ParseTests(c.String("tests"), testCommand(command))
	if err != nil {
		return o, usageError{err}
	}
	if err := checkPairs(tests, s.devices); err != nil {
		return o, err
	}
	copies := command == "bw" || command == "all"
	if copies && c.Bool("tune") && c.String("tuning") != "" {
		return o, usageError{errors.New("--tune and --tuning exclude each other")}
	}
	if o.Settings, err = settings(c, s, tests, copies); err != nil {
		return o, err
	}
	if copies {
		if sw := c.String("sizes"); sw != "" && sw != "none" {
			if o.Sweep, err = units.ParseSizes(sw); err != nil {
				return o, usageError{fmt.Errorf("--sizes: %w", err)}
			}
			for _, z := range o.Sweep {
				if err := measure.CheckTransferSize(z); err != nil {
					return o, usageError{fmt.Errorf("--sizes: %w", err)}
				}
			}
		}
		o.Tune = c.Bool("tune")
	}
	return o, nil
}

// checkPairs fails when every test needs two devices and one is selected,
// and notes the tests left out when some do.
func checkPairs(tests []results.Test, devices []int) error {
	if len(devices) != 1 {
		return nil
	}
	var skipped []string
	for _, t := range tests {
		if info := t.Info(); info.NeedsPair && !slices.Contains(skipped, info.Select) {
			skipped = append(skipped, info.Select)
		}
	}
	need := "need"
	if len(skipped) == 1 {
		need = "needs"
	}
	selected := map[string]bool{}
	for _, t := range tests {
		selected[t.Info().Select] = true
	}
	if len(skipped) == len(selected) {
		return usageError{fmt.Errorf("%s %s two devices, and only device %d is selected (see --devices)",
			strings.Join(skipped, ", "), need, devices[0])}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(os.Stderr, "p2pbench: note: only device %d is selected; skipping %s, which %s two devices\n",
			devices[0], strings.Join(skipped, ", "), need)
	}
	return nil
}

// settings reads the flags bw, lat, atomic, all and ipc share; copies says
// whether the command has the flags of the copy tests (size, SM kernel,
// tuning).
func settings(c *cli.Context, s *session, tests []results.Test, copies bool) (measure.Settings, error) {
	o := measure.Settings{Devices: s.devices, Tests: tests, Samples: c.Int("samples"), Verify: !c.Bool("no-verify"),
		LatchTimeout: c.Duration("latch-timeout"), Monitor: s.mon}
	if o.Samples < 1 || o.Samples > 100000 {
		return o, usageError{fmt.Errorf("--samples must be between 1 and 100000 (got %d)", o.Samples)}
	}
	if o.LatchTimeout <= 0 {
		return o, usageError{errors.New("--latch-timeout must be positive")}
	}
	if !copies {
		return o, nil
	}
	var err error
	if o.Size, err = units.ParseSize(c.String("size")); err == nil {
		err = measure.CheckTransferSize(o.Size)
	}
	if err != nil {
		return o, usageError{fmt.Errorf("--size: %w", err)}
	}
	o.SM = measure.SMConfig{Variant: c.String("variant"), BlocksPerSM: c.Int("blocks-per-sm"), BlockSize: c.Int("block-size")}
	if _, ok := kernels.CopyKernelByVariant(o.SM.Variant); o.SM.Variant != "" && !ok {
		return o, usageError{fmt.Errorf("unknown --variant %q; the variants are: %s", o.SM.Variant, strings.Join(copyVariants(), ", "))}
	}
	if c.IsSet("blocks-per-sm") && (o.SM.BlocksPerSM < 1 || o.SM.BlocksPerSM > 32) {
		return o, usageError{fmt.Errorf("--blocks-per-sm must be between 1 and 32 (got %d)", o.SM.BlocksPerSM)}
	}
	if c.IsSet("block-size") && (o.SM.BlockSize < 32 || o.SM.BlockSize > 1024 || o.SM.BlockSize%32 != 0) {
		return o, usageError{fmt.Errorf("--block-size must be a multiple of 32 between 32 and 1024 (got %d)", o.SM.BlockSize)}
	}
	if f := c.String("tuning"); f != "" {
		prev, err := results.Read(f)
		if err != nil {
			return o, err
		}
		if len(prev.Tuning) == 0 {
			return o, fmt.Errorf("%s holds no tuning results (make them with p2pbench bw --tune -o FILE)", f)
		}
		o.Tuned = measure.TunedFrom(prev.Tuning)
	}
	return o, nil
}

func measureAction(c *cli.Context, command string) error {
	if c.NArg() > 0 {
		return usageError{fmt.Errorf("%s takes no arguments (got %q)", command, c.Args().First())}
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	opt, err := options(c, command, s)
	if err != nil {
		return err
	}
	run := newRun(s)
	run.Verify = opt.Verify
	out := c.String("output")
	if command == "all" {
		dir := c.String("dir")
		if dir == "" {
			host := run.Host
			if host == "" {
				host = "host"
			}
			dir = fmt.Sprintf("p2pbench-%s-%s", host, run.Start.Format("20060102-150405"))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating the results directory: %w", err)
		}
		out = filepath.Join(dir, "results.json")
	}
	if err := prepareOutput("--output", out); err != nil {
		return err
	}
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
	if os.Getenv("P2PBENCH_TRACE") != "" {
		// Where the time goes, step by step, for tuning p2pbench itself.
		opt.Trace = func(step string, took time.Duration) {
			fmt.Fprintf(os.Stderr, "trace: %8.1f ms  %s\n", float64(took.Microseconds())/1e3, step)
		}
	}
	opt.WarmUp = 200 * time.Millisecond
	opt.AfterWarmUp = func() {
		// Clocks as the measurements find them; the idle reading before the
		// warm-up stays in the notes.
		if st := bench.ReadStates(s.mon, run.Environment.Devices); len(st) > 0 {
			for _, x := range run.Environment.StateStart {
				run.Environment.Notes = append(run.Environment.Notes,
					fmt.Sprintf("device %d before the %v warm-up: SM clock %d MHz, memory clock %d MHz, %d °C, %.0f W",
						x.Index, opt.WarmUp, x.SMClockMHz, x.MemClockMHz, x.TempC, x.PowerW))
			}
			run.Environment.StateStart = st
		}
	}
	eng := bench.NewEngine(s.drv, opt)
	start := time.Now()
	runErr := eng.Run(c.Context, run)
	if command == "all" && runErr == nil && len(s.devices) > 0 {
		// The same tests across processes, through CUDA IPC handles.
		t0 := time.Now()
		runErr = runIPCForAll(c, s, opt, run, bar, saver)
		if opt.Trace != nil {
			opt.Trace("ipc", time.Since(t0))
		}
	}
	bar.finish()
	run.Notes = append(run.Notes, eng.Notes()...)
	saveErr := finishRun(s, run, runErr, saver)
	if c.Bool("json") {
		if err := run.Encode(os.Stdout); err != nil {
			return err
		}
	} else {
		printRun(os.Stdout, run, command)
		if command == "all" {
			printIPC(os.Stdout, run, nil)
			printSummary(os.Stdout, run, time.Since(start))
		}
	}
	if saveErr != nil {
		return saveErr
	}
	if out != "" {
		fmt.Fprintf(os.Stderr, "results: %s\n", out)
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			where := "not saved (no -o given)"
			if out != "" {
				where = "saved to " + out
			}
			return cli.Exit(fmt.Sprintf("p2pbench: interrupted; the %d figures measured so far are %s", len(run.Figures), where), 130)
		}
		return runErr
	}
	return nil
}

// runIPCForAll adds the IPC tests to an `all` run, with the engine's settings.
func runIPCForAll(c *cli.Context, s *session, opt bench.Options, run *results.Run, bar *progress, sv *saver) error {
	io := ipc.Options{Settings: opt.Settings}
	io.Tests = slices.DeleteFunc(slices.Clone(opt.Tests), func(t results.Test) bool { return !t.IsIPC() })
	if len(io.Tests) == 0 {
		return nil
	}
	var err error
	if io.Child, err = ipcChildArgs(s); err != nil {
		return err
	}
	io.Progress = func(done, total int, step string) {
		bar.update(done, total, "ipc: "+step)
		sv.maybeSave(false)
	}
	return ipc.Run(c.Context, s.drv, io, run)
}

// finishRun closes the record of a run (end time and state, whether it
// completed and why not) and writes the results file for the last time.
// When that fails the run goes to a file of its own elsewhere, and the
// error says where; callers print their tables before they return it.
func finishRun(s *session, run *results.Run, runErr error, sv *saver) error {
	run.End = time.Now().UTC()
	run.Environment.StateEnd = bench.ReadStates(s.mon, run.Environment.Devices)
	run.Complete = runErr == nil
	switch {
	case errors.Is(runErr, context.Canceled):
		run.Stopped = "interrupted (Ctrl-C or SIGTERM)"
	case runErr != nil:
		run.Stopped = runErr.Error()
	}
	if err := sv.maybeSave(true); err != nil {
		return rescueResults(run, sv.path, err)
	}
	return nil
}

// saver writes the results file now and then during a run, so a crash or a
// kill loses little, and at the end.
type saver struct {
	path string
	run  *results.Run
	mu   sync.Mutex
	last time.Time
}

func (s *saver) maybeSave(final bool) error {
	if s.path == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !final && time.Since(s.last) < 2*time.Second {
		return nil
	}
	s.last = time.Now()
	if !final {
		snap := *s.run
		snap.End = time.Now().UTC()
		snap.Complete = false
		snap.Stopped = "in progress (the run had not finished when this was written)"
		snap.Figures = append([]results.Figure(nil), s.run.Figures...)
		return results.Write(s.path, &snap)
	}
	return results.Write(s.path, s.run)
}

// progress draws a bar on stderr when it is a terminal.
type progress struct{ bar *progressbar.ProgressBar }

func newProgress() *progress {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(1,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond))}
}

func (p *progress) update(done, total int, step string) {
	if p.bar == nil {
		return
	}
	p.bar.ChangeMax(total)
	p.bar.Describe(step)
	_ = p.bar.Set(done)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
