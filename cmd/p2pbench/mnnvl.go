package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/launch"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/session"
)

// mnnvlCommand is one rank of a run across the nodes of a multi-node NVLink
// domain, started once per GPU by a launcher.
func mnnvlCommand() *cli.Command {
	flags := []cli.Flag{jsonFlag, outputFlag,
		&cli.StringFlag{Name: "tests", Aliases: []string{"t"}, Value: "all", Usage: "tests to run, comma-separated: every ipc test but the bidirectional ones (all)"},
		&cli.IntFlag{Name: "samples", Value: 20, Usage: "samples per bandwidth figure"},
		roundsFlag, renewFlag, noVerifyFlag, latchTimeoutFlag,
		&cli.DurationFlag{Name: "child-timeout", Value: time.Minute, Usage: "longest to wait for any answer of a rank before it counts as hung and is dropped"},
		&cli.StringFlag{Name: "rendezvous", Usage: "`HOST:PORT` where rank 0 listens and the other ranks dial (default: $MASTER_ADDR:$MASTER_PORT)"},
		&cli.DurationFlag{Name: "rendezvous-wait", Value: 2 * time.Minute, Usage: "longest the ranks wait for each other at the rendezvous"},
		&cli.IntFlag{Name: "rank", Value: -1, DefaultText: "the launcher's: Open MPI, PMIx, Slurm, a Kubernetes indexed Job", Usage: "this process's rank"},
		&cli.IntFlag{Name: "ranks", DefaultText: "the launcher's", Usage: "number of processes, one per GPU"},
		&cli.IntFlag{Name: "device", Value: -1, DefaultText: "the launcher's local rank, else 0", Usage: "this rank's GPU on its node"},
		&cli.StringFlag{Name: "imex-channel", Value: ipc.DefaultIMEXChannel, Usage: "the IMEX channel device every rank must see"},
	}
	for _, f := range copyFlags("transfer size of the bandwidth tests") {
		if f.Names()[0] != "tuning" { // tuned per pair of one machine's devices
			flags = append(flags, f)
		}
	}
	return &cli.Command{
		Name: "mnnvl",
		Usage: "measure across the nodes of a multi-node NVLink domain (GB200 NVL72 and the like): one process per GPU under a launcher, " +
			"memory shared as fabric handles, checks of IMEX, fabric handles and the NVLink domain first; rank 0 writes the results " +
			"(not yet validated on multi-node hardware)",
		Flags:  flags,
		Action: mnnvlAction,
	}
}

func mnnvlAction(c *cli.Context) error {
	if err := cmdline.NoArgs(c); err != nil {
		return err
	}
	opt, err := mnnvlOptions(c)
	if err != nil {
		return err
	}
	o := sessionOptions(c, session.Target{})
	o.Fabric, o.Path = &opt, c.String("output")
	s, err := session.Fabric(c.Context, o)
	if err != nil {
		return err
	}
	if s == nil {
		fmt.Fprintf(c.App.ErrWriter, "mnnvl: rank %d served rank 0, which holds the results\n", opt.Rank)
		return nil
	}
	defer s.Close()
	runErr := s.Measure()
	if errors.Is(runErr, ipc.ErrPreflight) {
		return runErr
	}
	return finish(c, s, runErr, false, nil)
}

// mnnvlOptions reads the flags of mnnvl and, where they leave it open, the
// launcher's environment; every number is checked here, before the driver
// loads (ipc.FabricOptions.Validate).
func mnnvlOptions(c *cli.Context) (ipc.FabricOptions, error) {
	var o ipc.FabricOptions
	env, err := launch.Detect(os.Getenv, os.Hostname)
	if err != nil {
		return o, cmdline.Usage(err)
	}
	o.Rank, o.Ranks, o.Device, o.Job, o.Host = env.Rank, env.Size, env.LocalRank, env.JobID, env.Host
	for _, name := range []string{"rank", "device"} {
		if v := c.Int(name); c.IsSet(name) && v < 0 {
			return o, cmdline.Usage(fmt.Errorf("--%s %d: want 0 or more", name, v))
		}
	}
	if r := c.Int("rank"); r >= 0 {
		o.Rank = r
	}
	if c.IsSet("ranks") {
		o.Ranks = c.Int("ranks")
		if o.Ranks < 2 || o.Ranks > units.MaxDevices {
			return o, cmdline.Usage(fmt.Errorf("--ranks %d: want 2 to %d processes, one per GPU of the domain (one process has no peer to measure)", o.Ranks, units.MaxDevices))
		}
	}
	if d := c.Int("device"); d >= 0 {
		o.Device = d
	}
	o.Rendezvous = cmp.Or(c.String("rendezvous"), env.Master)
	o.Wait, o.IMEXChannel, o.Timeout = c.Duration("rendezvous-wait"), c.String("imex-channel"), c.Duration("child-timeout")
	// A --tests that names no test is said once the rest is found right.
	var testsErr error
	if t := c.String("tests"); t != "all" {
		o.Tests, testsErr = results.ParseTests(t, results.CommandIPC)
	}
	if err := o.Validate(); err != nil {
		return o, cmdline.Usage(err)
	}
	if testsErr != nil {
		return o, cmdline.Usage(testsErr)
	}
	o.Settings, err = readSettings(c, o.Tests, true)
	return o, err
}
