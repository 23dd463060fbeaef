package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/progress"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/report"
)

func fleetCommand() *cli.Command {
	return &cli.Command{
		Name:      "fleet",
		Usage:     "one view of many nodes' results: each node's verdict, machine types, each figure's spread, nodes and links below their peers",
		ArgsUsage: "PATH...",
		Description: "PATH is a results file, a directory (every *.json and *.json.gz under it) or a\n" +
			"glob pattern. A node's verdict (PASS, WARN, FAIL, NOT JUDGED) is the worst of its own\n" +
			"(the verdict its run records: a node whose run FAILed fails; one another build gave by its\n" +
			"expectation table is judged again by this build, as check does), its run's failures, and its\n" +
			"peers': nodes are grouped by machine type (GPUs, the link of every ordered pair,\n" +
			"simulated or not), and a figure is below its peers when it is at least --threshold worse\n" +
			"than the median of the same figure on the same link class across the type's nodes and\n" +
			"significant beyond their spread and its own noise (Holm over the fleet's comparisons at\n" +
			"--alpha): a WARN, 10% or more a FAIL. Nodes whose own verdict failed on their links or\n" +
			"memory are not held to their peers. lat_copy_device, which nothing judges, and classes\n" +
			"of too few figures are not judged, and each type says so. Unreadable inputs are listed,\n" +
			"never dropped; the command's own outputs are never read. Exit status 4 when no node\n" +
			"could be read or judged; with --fail-on-outlier, 5 when a node FAILs or is below its\n" +
			"peers or of another topology, or an input is unreadable (a node that only WARNed on\n" +
			"its own does not count).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: " + strings.Join(fleet.Formats(), ", ")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the view to `FILE` instead of standard output"},
			&cli.StringFlag{Name: "threshold", Value: fmt.Sprintf("%g%%", 100*fleet.DefaultThreshold), Usage: "least deficit against the class median for a figure below its peers, e.g. 3% or 2.5"},
			&cli.StringFlag{Name: "alpha", Value: fmt.Sprintf("%g%%", 100*fleet.DefaultAlpha), Usage: "family-wise false-alarm rate over the fleet's comparisons, in percent: e.g. 1% or 0.1"},
			&cli.StringFlag{Name: "plot", Usage: "also draw each machine type's heatmap and spreads into directory `DIR`"},
			&cli.StringFlag{Name: "plot-format", Value: "png", Usage: "image formats of --plot, comma-separated: png, svg, pdf"},
			&cli.StringFlag{Name: "report", Usage: "also write the fleet report to `FILE` (.pdf or .md)"},
			&cli.BoolFlag{Name: "fail-on-outlier", Usage: "exit with status 5 when a node FAILs or is below its peers, or an input is unreadable"},
		},
		Action: fleetAction,
	}
}

func fleetAction(c *cli.Context) error {
	paths, err := cmdline.Positional(c)
	if err != nil {
		return err
	}
	fo, err := fleetOutputsOf(c, paths)
	if err != nil {
		return err
	}
	bar := progress.New(c.App.ErrWriter, os.Getenv("TERM"))
	fo.opt.Build = version
	fo.opt.Progress = func(done, total int) { bar.Update(done, total, "reading results") }
	f, err := interrupt.Wait(c.Context, func() (*fleet.Fleet, error) { return fleet.Load(paths, fo.opt) })
	bar.Finish()
	if err != nil {
		return err
	}
	if err := fo.write(c, f, paths); err != nil {
		return err
	}
	if s := f.NothingJudged(); s != "" {
		return failedFigures(errors.New(s))
	}
	if s := f.NeedAttention(); s != "" && c.Bool("fail-on-outlier") {
		return statusError{exitVerdict, errors.New(s)}
	}
	return nil
}

// fleetOutputs are what the flags of fleet ask for: how to read the nodes
// and judge them, and what to write.
type fleetOutputs struct {
	opt                  fleet.Options
	format, output       string
	plot                 string
	plotFormats          []string
	report, reportFormat string
}

// fleetOutputsOf reads fleet's flags and checks its outputs against the
// inputs at paths.
func fleetOutputsOf(c *cli.Context, paths []string) (fleetOutputs, error) {
	fo := fleetOutputs{format: c.String("format"), output: c.String("output"), plot: c.String("plot"), report: c.String("report")}
	if len(paths) == 0 {
		return fo, cmdline.Usage(fmt.Errorf("fleet needs at least one results file, directory or pattern"))
	}
	var err error
	if fo.opt.Threshold, err = compare.ParseThreshold(c.String("threshold")); err != nil {
		return fo, cmdline.Usage(err)
	}
	if fo.opt.Alpha, err = compare.ParseThreshold(c.String("alpha")); err != nil || !(fo.opt.Alpha > 0) || fo.opt.Alpha >= 1 {
		return fo, cmdline.Usage(fmt.Errorf("--alpha %q: want a rate above 0 and below 100%%, e.g. 1%%", c.String("alpha")))
	}
	if err := fleet.CheckFormat(fo.format); err != nil {
		return fo, cmdline.Usage(err)
	}
	if fo.plotFormats, err = plot.ParseFormats(c.String("plot-format")); err != nil {
		return fo, cmdline.Usage(err)
	}
	// fleet's --format is its view's: the report's format comes from the
	// file's extension alone.
	if fo.reportFormat = report.FormatOf(fo.report); fo.report != "" && fo.reportFormat == "" {
		return fo, cmdline.Usage(fmt.Errorf("--report %q: name a .pdf or .md file", fo.report))
	}
	for _, out := range []string{fo.output, fo.report} {
		if err := outfile.Check(out, paths...); err != nil {
			return fo, err
		}
	}
	// A directory read may hold the command's own outputs of an earlier
	// run: they are never read.
	fo.opt.Exclude = []string{fo.output, fo.report}
	return fo, nil
}

// write writes the fleet's view, and its plots and report when asked.
func (fo fleetOutputs) write(c *cli.Context, f *fleet.Fleet, paths []string) error {
	write := func(w io.Writer) error {
		if fo.format != "json" { // text from the files, written where a terminal may show it
			w = termsafe.New(w)
		}
		return f.Write(w, fo.format)
	}
	var err error
	if fo.output != "" {
		err = writeRendered(c.Context, fo.output, write)
	} else {
		err = write(c.App.Writer)
	}
	if err != nil {
		return err
	}
	if fo.plot != "" {
		written, err := plot.WriteAll(c.Context, f.Figures(), fo.plot, fo.plotFormats, paths...)
		for _, p := range written {
			fmt.Fprintln(c.App.ErrWriter, "plot:", p)
		}
		if err != nil {
			return err
		}
	}
	if fo.report == "" {
		return nil
	}
	doc := f.Document(true)
	if fo.reportFormat == "pdf" {
		err = writeRendered(c.Context, fo.report, doc.WritePDF)
	} else {
		err = doc.WriteMarkdownFiles(c.Context, fo.report, paths...)
	}
	if err == nil {
		fmt.Fprintln(c.App.ErrWriter, "report:", fo.report)
	}
	return err
}
