package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/infile"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// measuringFlags are the flags of every measuring command (bw, lat, atomic,
// ipc, all): the machine, the tests (named in the help), the samples and
// their checks, and where the results go.
func measuringFlags(command results.Command, output cli.Flag) []cli.Flag {
	return []cli.Flag{devicesFlag, simulateFlag, healthFlag, seedFlag, jsonFlag,
		&cli.StringFlag{Name: "tests", Aliases: []string{"t"}, Value: "all", Usage: "tests to run, comma-separated: " + strings.Join(results.SelectNames(command), ", ")},
		&cli.IntFlag{Name: "samples", Value: results.DefaultSamples, Usage: "samples per bandwidth figure, taken over the rounds"},
		roundsFlag, renewFlag, noVerifyFlag, latchTimeoutFlag,
		&cli.BoolFlag{Name: "allow-busy", Usage: "measure even while other programs' compute processes are on the selected GPUs (their figures are marked); without it the run refuses, exit status 4"},
		output,
	}
}

// roundsFlag and renewFlag say how each figure's samples are spread over a
// run, noVerifyFlag and latchTimeoutFlag how they are checked and bounded
// (every measuring command and mnnvl).
var (
	noVerifyFlag     = &cli.BoolFlag{Name: "no-verify", Usage: "skip checking the data that moved (recorded in the results)"}
	latchTimeoutFlag = &cli.DurationFlag{Name: "latch-timeout", Value: 5 * time.Second, Usage: "longest a latch may hold a stream before it gives up"}
	roundsFlag       = &cli.IntFlag{Name: "rounds", Value: results.DefaultRounds, Usage: "rounds each figure's samples are taken in, spread over the run (every round a pass over every test; at most --samples): what varies between rounds varies between runs, and gives each figure its interval and run-to-run CV"}
	renewFlag        = &cli.StringFlag{Name: "renew", Value: measure.DefaultRenewal.String(), Usage: "what is made afresh on every device between rounds: all, none, or a list of " +
		"offset (the buffers moved to other pages, the ping-pong's flags to another slot), alloc (the buffers allocated afresh), streams, events (the timing events and the latch), " +
		"modules (the kernels loaded again), small (a new buffer of flags and timestamps), context (the work in a new green context)"}
)

// outputFlag is -o of bw, lat, atomic and ipc.
var outputFlag = &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the results file `FILE` (JSON; saved now and then, and kept on Ctrl-C, SIGTERM and SIGHUP)"}

// copyFlags are the flags of the copy tests (bw, ipc, all); size is the
// default of --size's help.
func copyFlags(sizeUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "size", Value: fmt.Sprintf("%dMiB", results.DefaultSize>>20), Usage: sizeUsage},
		&cli.StringFlag{Name: "variant", Usage: "SM copy kernel variant (default: bulk on sm_90 and later, else " + kernels.DefaultCopyVariant + "): " + strings.Join(kernels.CopyVariants(), ", ")},
		&cli.IntFlag{Name: "blocks-per-sm", Usage: "SM copy grid: blocks per SM, 1 to 32", DefaultText: "the variant's own"},
		&cli.IntFlag{Name: "block-size", Usage: "SM copy block size, threads, a multiple of 32 up to 1024", DefaultText: "the variant's own"},
		&cli.StringFlag{Name: "tuning", Usage: "use the SM copy configurations tuned in results file `FILE` (from bw --tune)"},
	}
}

// readSettings reads the flags that bw, lat, atomic, all and ipc share into
// settings for the given tests; copies says whether the command has the
// flags of the copy tests. The devices, the monitor and the watch are the
// session's (see measuring.settle); the tuned configurations come from
// readTuning.
func readSettings(c *cli.Context, tests []results.Test, copies bool) (measure.Settings, error) {
	o := measure.Settings{Tests: tests, Samples: c.Int("samples"), Rounds: c.Int("rounds"), Verify: !c.Bool("no-verify"), LatchTimeout: c.Duration("latch-timeout")}
	// Without --rounds, fewer samples than the default rounds make one
	// round per sample.
	if !c.IsSet("rounds") {
		o.Rounds = min(o.Rounds, o.Samples)
	}
	if err := o.Validate(); err != nil {
		return o, cmdline.Usage(err)
	}
	var err error
	if o.Renew, err = measure.ParseRenewal(c.String("renew")); err != nil {
		return o, cmdline.Usage(fmt.Errorf("--renew: %w", err))
	}
	if !copies {
		return o, nil
	}
	if o.Size, err = measure.ParseTransferSize(c.String("size")); err != nil {
		return o, cmdline.Usage(fmt.Errorf("--size: %w", err))
	}
	if o.SM, err = smConfig(c); err != nil {
		return o, err
	}
	return o, nil
}

// readTuning reads the SM copy configurations of the --tuning file, if
// any; it is an input, read once the outputs are checked against it.
func readTuning(c *cli.Context) (map[measure.TuneKey]measure.SMConfig, error) {
	f := c.String("tuning")
	if f == "" {
		return nil, nil
	}
	prev, err := readRun(c.Context, f)
	if err != nil {
		return nil, fmt.Errorf("--tuning: %w", err)
	}
	if len(prev.Tuning) == 0 {
		return nil, fmt.Errorf("--tuning: %s holds no tuning results (make them with p2pbench bw --tune -o FILE)", f)
	}
	return measure.TunedFrom(prev.Tuning), nil
}

// smConfig reads the SM copy kernel's flags.
func smConfig(c *cli.Context) (measure.SMConfig, error) {
	sm := measure.SMConfig{Variant: c.String("variant"), BlocksPerSM: c.Int("blocks-per-sm"), BlockSize: c.Int("block-size")}
	if _, ok := kernels.CopyKernelByVariant(sm.Variant); sm.Variant != "" && !ok {
		return sm, cmdline.Usage(fmt.Errorf("unknown --variant %q; the variants are: %s", sm.Variant, strings.Join(kernels.CopyVariants(), ", ")))
	}
	if c.IsSet("blocks-per-sm") && (sm.BlocksPerSM < 1 || sm.BlocksPerSM > 32) {
		return sm, cmdline.Usage(fmt.Errorf("--blocks-per-sm must be between 1 and 32 (got %d)", sm.BlocksPerSM))
	}
	if c.IsSet("block-size") && (sm.BlockSize < 32 || sm.BlockSize > 1024 || sm.BlockSize%32 != 0) {
		return sm, cmdline.Usage(fmt.Errorf("--block-size must be a multiple of 32 between 32 and 1024 (got %d)", sm.BlockSize))
	}
	return sm, nil
}

// readRun reads a results file; a signal stops the wait, even one for a
// FIFO that no process writes.
func readRun(ctx context.Context, path string) (*results.Run, error) {
	// A FIFO or a device would block the read, or never end it: refused
	// before it is opened (exit status 2).
	if err := infile.Check(path); errors.Is(err, infile.ErrNotRegular) {
		return nil, err
	}
	return interrupt.Wait(ctx, func() (*results.Run, error) { return results.Read(path) })
}
