package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
)

func fleetCommand() *cli.Command {
	return &cli.Command{
		Name:      "fleet",
		Usage:     "one view of many nodes' results: each node's verdict, machine types, each figure's spread, nodes and links below their peers",
		ArgsUsage: "PATH...",
		Description: "PATH is a results file, a directory (every *.json and *.json.gz under it) or a\n" +
			"glob pattern. A node's verdict (PASS, WARN, FAIL, NOT JUDGED) is the worst of its own\n" +
			"(the verdict its run records: a node whose run FAILed fails), its run's failures, and its\n" +
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
	paths, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usageError{fmt.Errorf("fleet needs at least one results file, directory or pattern")}
	}
	var opt fleet.Options
	if opt.Threshold, err = compare.ParseThreshold(c.String("threshold")); err != nil {
		return usageError{err}
	}
	if opt.Alpha, err = compare.ParseThreshold(c.String("alpha")); err != nil || !(opt.Alpha > 0) || opt.Alpha >= 1 {
		return usageError{fmt.Errorf("--alpha %q: want a rate above 0 and below 100%%, e.g. 1%%", c.String("alpha"))}
	}
	format := c.String("format")
	if !slices.Contains(fleet.Formats(), format) {
		return usageError{fmt.Errorf("unknown format %q; the formats are %s", format, strings.Join(fleet.Formats(), ", "))}
	}
	formats, err := imageFormats(c.String("plot-format"))
	if err != nil {
		return err
	}
	reportOut, reportFormat := c.String("report"), ""
	if reportOut != "" {
		// fleet's --format is its view's: the report's format comes from
		// the file's extension alone.
		switch strings.ToLower(filepath.Ext(reportOut)) {
		case ".pdf", ".md", ".markdown":
		default:
			return usageError{fmt.Errorf("--report %q: name a .pdf or .md file", reportOut)}
		}
		if reportOut, reportFormat, err = reportOutput("", reportOut, ""); err != nil {
			return err
		}
	}
	for _, out := range []string{c.String("output"), reportOut} {
		if err := outfile.Check(out, paths...); err != nil {
			return err
		}
	}
	// A directory read may hold the command's own outputs of an earlier
	// run: they are never read.
	opt.Exclude = []string{c.String("output"), reportOut}
	bar := newProgress(c.App.ErrWriter, os.Getenv("TERM"))
	opt.Progress = func(done, total int) { bar.Update(done, total, "reading results") }
	f, err := interruptible(c.Context, func() (*fleet.Fleet, error) { return fleet.Load(paths, opt) })
	bar.Finish()
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		if format != "json" { // text from the files, written where a terminal may show it
			w = termsafe.New(w)
		}
		return f.Write(w, format)
	}
	if out := c.String("output"); out != "" {
		err = writeRendered(c.Context, out, write)
	} else {
		err = write(c.App.Writer)
	}
	if err != nil {
		return err
	}
	if dir := c.String("plot"); dir != "" {
		written, err := plot.WriteAll(c.Context, f.Figures(), dir, formats)
		for _, p := range written {
			fmt.Fprintln(c.App.ErrWriter, "plot:", p)
		}
		if err != nil {
			return err
		}
	}
	if reportOut != "" {
		doc := f.Document(true)
		if reportFormat == "pdf" {
			err = writeRendered(c.Context, reportOut, doc.WritePDF)
		} else {
			err = writeMarkdown(c, doc, reportOut, paths...)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(c.App.ErrWriter, "report:", reportOut)
	}
	return fleetAttention(c, f)
}

// fleetAttention fails with status 4 when no node was read or none could
// be judged (nothing done is no PASS), and with status 5 under
// --fail-on-outlier when a node needs attention (it FAILed, or is below
// its peers or of another topology) or an input could not be read.
func fleetAttention(c *cli.Context, f *fleet.Fleet) error {
	judged := 0
	for _, n := range f.Nodes {
		if n.Verdict != results.StatusNotJudged {
			judged++
		}
	}
	switch {
	case len(f.Nodes) == 0:
		return failedFigures(fmt.Errorf("no node's results could be read (%d input%s unreadable)", len(f.Unreadable), units.Plural(len(f.Unreadable), "", "s")))
	case judged == 0:
		return failedFigures(fmt.Errorf("none of the %d node%s could be judged: no run records a verdict that judged it, and each class needs figures of %d or more pairs or nodes of a machine type", len(f.Nodes), units.Plural(len(f.Nodes), "", "s"), fleet.MinJudged))
	}
	if !c.Bool("fail-on-outlier") {
		return nil
	}
	var first string
	bad := 0
	for _, n := range f.Nodes {
		if n.Attention() {
			if bad == 0 {
				first = fmt.Sprintf(" (first: %s %s, peers %s)", n.Name, fleet.Label(n.Verdict), fleet.Label(n.Peers))
			}
			bad++
		}
	}
	if bad == 0 && len(f.Unreadable) == 0 {
		return nil
	}
	return statusError{exitVerdict, fmt.Errorf("%d node%s need%s attention%s, %d input%s unreadable",
		bad, units.Plural(bad, "", "s"), map[bool]string{true: "s", false: ""}[bad == 1], first, len(f.Unreadable), units.Plural(len(f.Unreadable), "", "s"))}
}
