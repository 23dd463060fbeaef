package main

import (
	"errors"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/results"
)

func init() {
	commands = append(commands, &cli.Command{
		Name:      "show",
		Usage:     "print the tables and summary of a results file",
		ArgsUsage: "RESULTS.json",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageError{errors.New("show takes one results file")}
			}
			run, err := results.Read(c.Args().First())
			if err != nil {
				return err
			}
			if run.Topology != nil && len(run.Figures) == 0 {
				printTopology(os.Stdout, run)
				return nil
			}
			printRun(os.Stdout, run, "")
			for _, f := range run.Figures {
				if f.Test.IsIPC() {
					printIPC(os.Stdout, run, nil)
					break
				}
			}
			printSummary(os.Stdout, run, run.End.Sub(run.Start).Round(100*time.Millisecond))
			return nil
		},
	})
}
