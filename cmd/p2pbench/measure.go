package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/launch"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/session"
)

// measureCommand is bw, lat, atomic or all: the tests of one process (all:
// and then those across processes).
func measureCommand(name, usage string) *cli.Command {
	output := cli.Flag(outputFlag)
	if name == "all" {
		output = &cli.StringFlag{Name: "dir", Usage: "results directory `DIR`, a pattern: %h host, %r rank (Slurm, Open MPI, PMIx, Kubernetes indexed Job), %j job id, %t time, %% (default: p2pbench-%h-%t, under a launcher p2pbench-%h-%r-%t)"}
	}
	flags := measuringFlags(testCommand(name), output)
	if name == "bw" || name == "all" {
		sizes := ""
		if name == "all" {
			sizes = results.DefaultSweep
		}
		flags = append(flags, copyFlags("transfer size of the pairwise matrices")...)
		flags = append(flags,
			&cli.StringFlag{Name: "sizes", Value: sizes, Usage: "size sweep for CE and SM read/write, e.g. 4B:1GiB (powers of two), 4B:1GiB:4 (of four) or 4KiB,1MiB; \"none\" for no sweep"},
			&cli.BoolFlag{Name: "tune", Usage: "first search SM copy variant and grid per pair and direction; the winners are recorded and used"},
		)
	}
	if name == "all" {
		flags = append(flags, verdictFlags()...)
		flags = append(flags, &cli.BoolFlag{Name: "tables", Usage: "print every result table and the summary too, not only the one screen of the verdict (p2pbench show RESULTS.json prints them later)"})
	}
	flags = append(flags, planFlags...)
	return &cli.Command{Name: name, Usage: usage, Flags: flags, Action: measureAction}
}

// testCommand is the catalogue's command of a measuring command: every
// test for all.
func testCommand(name string) results.Command {
	if name == "all" {
		return ""
	}
	return results.Command(name)
}

// measureAction runs bw, lat, atomic or all.
func measureAction(c *cli.Context) error {
	t, opt, err := measureFlags(c)
	if err != nil {
		return err
	}
	if c.Bool("dry-run") {
		return dryRun(c, t, opt)
	}
	o, err := measureOptions(c, t, &opt)
	if err != nil {
		return err
	}
	t0 := time.Now()
	s, err := session.Start(c.Context, o)
	if err != nil {
		return err
	}
	defer closeSession(c, s)
	trace(c, "start: the driver, NVML, the machine's discovery and health", time.Since(t0))
	if err := s.Prepare(); err != nil {
		return err
	}
	if c.Command.Name == "all" {
		fmt.Fprintln(c.App.ErrWriter, report.Wrap("p2pbench: "+bench.NewPreview(opt, s.Run.Environment, s.Run.Topology).Summary(), report.ScreenWidth))
	}
	runErr := s.Measure()
	t1 := time.Now()
	defer func() { trace(c, "end: health, the verdict, writing and printing", time.Since(t1)) }()
	return finish(c, s, runErr, c.Command.Name == "all", nil)
}

// measureFlags reads the flags of bw, lat, atomic and all: the machine and
// the tests.
func measureFlags(c *cli.Context) (session.Target, bench.Options, error) {
	if err := cmdline.NoArgs(c); err != nil {
		return session.Target{}, bench.Options{}, err
	}
	t, err := targetOf(c)
	if err != nil {
		return t, bench.Options{}, err
	}
	opt, err := benchOptions(c)
	return t, opt, err
}

// measureOptions checks the outputs of bw, lat, atomic and all and reads
// their inputs into the session's options. Every input is read and every
// check made before the results directory is made: a refused run leaves
// nothing behind. The output is checked first (an output that is an input
// is refused unread); all's --dir is an output directory itself (another
// user's link refused).
func measureOptions(c *cli.Context, t session.Target, opt *bench.Options) (session.Options, error) {
	all := c.Command.Name == "all"
	o := sessionOptions(c, t)
	o.Bench, o.AcrossProcesses, o.KeepAside, o.Judge = opt, all, all, all
	o.Inputs = []string{c.String("tuning"), c.String("expect"), c.String("baseline")}
	var err error
	if o.Path, err = resultsPath(c); err != nil {
		return o, err
	}
	if all {
		// A --dir that is a file is said as Writable says it, naming
		// results.json.
		if err := outfile.DirWritable(filepath.Dir(o.Path)); err != nil && !errors.Is(err, syscall.ENOTDIR) {
			return o, err
		}
	}
	if err := outfile.Writable(o.Path, o.Inputs...); err != nil {
		return o, err
	}
	if all {
		if o.Expect, err = expectationsOf(c); err != nil {
			return o, err
		}
	}
	opt.Tuned, err = readTuning(c)
	return o, err
}

// benchOptions reads the flags of bw, lat, atomic and all.
func benchOptions(c *cli.Context) (bench.Options, error) {
	var o bench.Options
	tests, err := results.ParseTests(c.String("tests"), testCommand(c.Command.Name))
	if err != nil {
		return o, cmdline.Usage(err)
	}
	copies := c.Command.Name == "bw" || c.Command.Name == "all"
	if copies && c.Bool("tune") && c.String("tuning") != "" {
		return o, cmdline.Usage(fmt.Errorf("--tune and --tuning exclude each other"))
	}
	if copies {
		if o.Sweep, err = measure.ParseSweep(c.String("sizes")); err != nil {
			return o, cmdline.Usage(fmt.Errorf("--sizes: %w", err))
		}
		o.Tune = c.Bool("tune")
	}
	if o.Plan, err = readPlan(c); err != nil {
		return o, err
	}
	o.Settings, err = readSettings(c, tests, copies)
	return o, err
}

// resultsPath is the results file of bw, lat and atomic (-o, maybe none)
// or of all: results.json in --dir, whose pattern is filled from the
// launcher's environment (%h host, %r rank, %j job id, %t time; see
// internal/launch), by default launch.Env.DefaultPattern.
func resultsPath(c *cli.Context) (string, error) {
	if c.Command.Name != "all" {
		return c.String("output"), nil
	}
	env, err := launch.Detect(os.Getenv, os.Hostname)
	if err != nil {
		return "", cmdline.Usage(err)
	}
	pattern := cmp.Or(c.String("dir"), env.DefaultPattern())
	dir, warning, err := env.Expand(pattern, time.Now().UTC())
	if err != nil {
		return "", cmdline.Usage(fmt.Errorf("--dir %q: %w", pattern, err))
	}
	if warning != "" {
		fmt.Fprintln(c.App.ErrWriter, report.Wrap("p2pbench: warning: "+warning, report.ScreenWidth))
	}
	return filepath.Join(dir, "results.json"), nil
}
