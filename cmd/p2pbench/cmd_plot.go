package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
)

func init() {
	commands = append(commands, &cli.Command{
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
	})
}

func plotAction(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usageError{fmt.Errorf("plot takes one results file, got %d arguments", len(args))}
	}
	path := args[0]
	var formats []string
	for _, f := range strings.Split(c.String("format"), ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		switch f {
		case "png", "svg", "pdf":
			formats = append(formats, f)
		case "":
		default:
			return usageError{fmt.Errorf("unknown image format %q; the formats are png, svg and pdf", f)}
		}
	}
	if len(formats) == 0 {
		return usageError{fmt.Errorf("--format names no image format")}
	}
	run, err := results.Read(path)
	if err != nil {
		return err
	}
	dir := c.String("output")
	if dir == "" {
		dir = strings.TrimSuffix(path, filepath.Ext(path)) + "-plots"
	}
	paths, err := plot.WriteAll(run, dir, formats)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fmt.Fprintf(os.Stderr, "%s has no figures to plot\n", path)
	}
	for _, p := range paths {
		fmt.Println(p)
	}
	return nil
}
