package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/session"
)

func topoCommand() *cli.Command {
	return &cli.Command{
		Name:  "topo",
		Usage: "show devices, peer access, P2P attributes, atomic capabilities and NVLinks",
		Description: "Reads what the driver (and NVML, when present) says about every selected device and\n" +
			"every ordered pair. --check also runs the documented error cases of the peer-access\n" +
			"calls on the real devices and reports where the driver differs from its documentation.",
		Flags: []cli.Flag{devicesFlag, simulateFlag, healthFlag, jsonFlag,
			&cli.BoolFlag{Name: "check", Usage: "run the driver conformance cases (leaves peer access as found)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "also write the results file `FILE`"},
		},
		Action: topoAction,
	}
}

func topoAction(c *cli.Context) error {
	if err := cmdline.NoArgs(c); err != nil {
		return err
	}
	t, err := targetOf(c)
	if err != nil {
		return err
	}
	out := c.String("output")
	if err := outfile.Writable(out); err != nil { // nothing made before the driver opens
		return err
	}
	run, err := session.Topology(session.Options{Target: t, Version: version, Args: cmdline.Args(c)}, c.Bool("check"))
	if err != nil {
		return err
	}
	if out != "" {
		if err := outfile.Check(out); err != nil { // makes its directory
			return err
		}
		if err := outfile.Write(out, run.EncodeFor(out)); err != nil {
			return err
		}
	}
	err = printRun(c, run, []*report.Document{report.Topology(run)})
	if err == nil && out != "" {
		fmt.Fprintf(c.App.ErrWriter, "results: %s\n", out)
	}
	return err
}
