package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/report"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the tables and summary of a results file",
		ArgsUsage: "RESULTS.json",
		Action:    showAction,
	}
}

func showAction(c *cli.Context) error {
	args, err := cmdline.Positional(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return cmdline.Usage(errors.New("show takes one results file"))
	}
	run, err := readRun(c.Context, args[0])
	if err != nil {
		return err
	}
	docs, err := interrupt.Wait(c.Context, func() ([]*report.Document, error) { return report.Shown(run), nil })
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := d.WriteText(c.App.Writer); err != nil {
			return err
		}
	}
	return nil
}
