package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/results"
)

// planFlags choose the pairs a measuring command measures in detail, and
// --dry-run prints the plan instead of measuring.
var planFlags = []cli.Flag{
	&cli.BoolFlag{Name: "all-pairs", Usage: "measure every pair in detail (size sweeps, latency, atomics, across processes), not only the representatives of each link class"},
	&cli.IntFlag{Name: "sample-peers", Usage: "sample: besides the representatives, each device measures `K` peers drawn at random in detail",
		DefaultText: fmt.Sprintf("%d on more than %d devices, else none", results.DefaultPeers, results.SampleAbove)},
	&cli.Uint64Flag{Name: "sample-seed", Value: bench.DefaultSeed, Usage: "seed of the peers --sample-peers draws (recorded in the results)"},
	&cli.BoolFlag{Name: "dry-run", Usage: "print the plan (link classes, representatives, pairs measured at once, steps, estimated duration) and measure nothing"},
}

// readPlan reads --all-pairs, --sample-peers and --sample-seed.
func readPlan(c *cli.Context) (bench.PlanOptions, error) {
	o := bench.PlanOptions{AllPairs: c.Bool("all-pairs"), Peers: c.Int("sample-peers"), Seed: c.Uint64("sample-seed")}
	switch {
	case o.Peers < 0:
		return o, usageError{fmt.Errorf("--sample-peers must be 0 or more (got %d)", o.Peers)}
	case o.AllPairs && o.Peers > 0:
		return o, usageError{errors.New("--all-pairs and --sample-peers exclude each other")}
	case o.Seed == 0:
		return o, usageError{errors.New("--sample-seed must not be 0")}
	}
	return o, nil
}

// dryRun prints the plan of a measuring command on t's machine: it reads
// the topology (no context is created) and measures nothing.
func dryRun(c *cli.Context, t target, opt bench.Options) error {
	s, err := t.open()
	if err != nil {
		return err
	}
	defer s.Close()
	env, topo, err := bench.Discover(s.drv, s.mon, s.devices)
	if err != nil {
		return err
	}
	opt.Devices = s.devices
	if s.sim != "" {
		fmt.Fprintf(c.App.Writer, "SIMULATED machine %s\n", s.sim)
	}
	return bench.NewPreview(opt, env, topo).Write(c.App.Writer)
}
