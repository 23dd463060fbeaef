package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/session"
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
	if err := o.Validate(); err != nil {
		return o, cmdline.Usage(err)
	}
	return o, nil
}

// dryRun prints the plan of a measuring command on t's machine: it reads
// the topology (no context is created) and measures nothing. all says
// where its results would go: the --dir pattern filled from the launcher,
// to check it before a run under srun or mpirun.
func dryRun(c *cli.Context, t session.Target, opt bench.Options) error {
	for _, f := range []string{"output", "json"} {
		if c.IsSet(f) {
			return cmdline.Usage(fmt.Errorf("--dry-run measures nothing, so --%s has nothing to write: leave one of them out", f))
		}
	}
	if c.Command.Name == "all" {
		path, err := resultsPath(c)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "p2pbench: dry run: the results would go to %s\n", path)
	}
	p, err := session.Plan(t, opt)
	if err != nil {
		return err
	}
	if t.Sim != "" {
		fmt.Fprintf(c.App.Writer, "SIMULATED machine %s\n", t.Sim)
	}
	return p.Write(c.App.Writer)
}
