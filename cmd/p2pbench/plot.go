package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw the figures of a results file: heatmaps, size curves, rank scatter, latency, atomics",
		ArgsUsage: "RESULTS.json",
		Description: "Writes one file per figure the results have data for (figures of tests the run did\n" +
			"not make are skipped) and prints their paths. Every figure is captioned with the host,\n" +
			"GPUs, driver, CUDA and p2pbench versions and the date; a simulated run is watermarked.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "directory `DIR` for the figures (default: RESULTS-plots beside the results file)"},
			&cli.StringFlag{Name: "format", Value: "png", Usage: "image formats, comma-separated: png, svg, pdf"},
		},
		Action: plotAction,
	}
}

func plotAction(c *cli.Context) error {
	args, err := cmdline.Positional(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return cmdline.Usage(fmt.Errorf("plot takes one results file, got %d arguments", len(args)))
	}
	in := args[0]
	formats, err := plot.ParseFormats(c.String("format"))
	if err != nil {
		return cmdline.Usage(err)
	}
	run, err := readRun(c.Context, in)
	if err != nil {
		return err
	}
	dir := c.String("output")
	if dir == "" {
		dir = results.Stem(in) + "-plots"
	}
	figs := plot.Charts(run)
	if len(figs) == 0 {
		// Nothing drawn is no success (exit status 4), and no directory.
		return failedFigures(fmt.Errorf("%s has no figures to plot: nothing drawn", in))
	}
	// The directory is this plot's while it draws (plot.WriteDir): a second
	// plot into it fails at once, naming the first.
	paths, removed, err := plot.WriteDir(c.Context, figs, dir, formats, in)
	for _, p := range paths {
		fmt.Fprintln(c.App.Writer, p)
	}
	if len(removed) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "p2pbench: removed %d figure%s of an earlier plot into %s that this run has not: %s\n",
			len(removed), units.Plural(len(removed), "", "s"), dir, strings.Join(report.BoundedNotes(removed), ", "))
	}
	return err
}
