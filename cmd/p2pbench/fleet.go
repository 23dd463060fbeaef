package main

import (
	"fmt"
	"github.com/p2pbench/p2pbench/internal/units"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/plot"
)

func fleetCommand() *cli.Command {
	return &cli.Command{
		Name:      "fleet",
		Usage:     "one view of many nodes' results: machine types, each figure's spread, outlier nodes and links",
		ArgsUsage: "PATH...",
		Description: "PATH is a results file, a directory (every *.json and *.json.gz under it) or a\n" +
			"glob pattern. Nodes are grouped by machine type (GPUs and the link of every ordered\n" +
			"pair); within a type, a figure is an outlier when it is at least --z robust z-scores\n" +
			"(|x - median| / (1.4826 MAD)) and at least --threshold from the median of the same\n" +
			"figure on the same link class across the type's nodes, and worse than it (one-sided);\n" +
			"lat_copy_device, which nothing judges, and classes of too few figures are not judged,\n" +
			"and each type says so. Unreadable inputs are listed, never dropped. Exit status 4 when no\n" +
			"node could be read or judged; with --fail-on-outlier, 5 for outliers, failures or\n" +
			"unreadable inputs.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: " + strings.Join(fleet.Formats(), ", ")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the view to `FILE` instead of standard output"},
			&cli.Float64Flag{Name: "z", Value: fleet.DefaultZ, Usage: "robust z-score at or beyond which a figure may be an outlier"},
			&cli.StringFlag{Name: "threshold", Value: "5%", Usage: "least distance from the class median for an outlier, e.g. 5% or 2.5"},
			&cli.StringFlag{Name: "plot", Usage: "also draw each machine type's heatmap and spreads into directory `DIR`"},
			&cli.StringFlag{Name: "plot-format", Value: "png", Usage: "image formats of --plot, comma-separated: png, svg, pdf"},
			&cli.StringFlag{Name: "report", Usage: "also write the fleet report to `FILE` (.pdf or .md)"},
			&cli.BoolFlag{Name: "fail-on-outlier", Usage: "exit with status 5 when a node is not OK or an input is unreadable"},
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
	if opt.Z = c.Float64("z"); !(opt.Z > 0) {
		return usageError{fmt.Errorf("--z %v is not a positive number", opt.Z)}
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
	f, err := interruptible(c.Context, func() (*fleet.Fleet, error) { return fleet.Load(paths, opt) })
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
		if slices.Contains(formats, "pdf") {
		}
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
// be judged (nothing done is no OK), and with status 5 under
// --fail-on-outlier when a node is an outlier or failed, or an input could
// not be read.
func fleetAttention(c *cli.Context, f *fleet.Fleet) error {
	judged := 0
	for _, n := range f.Nodes {
		if n.Verdict != fleet.NotJudged {
			judged++
		}
	}
	switch {
	case len(f.Nodes) == 0:
		return failedFigures(fmt.Errorf("no node's results could be read (%d input%s unreadable)", len(f.Unreadable), units.Plural(len(f.Unreadable), "", "s")))
	case judged == 0:
		return failedFigures(fmt.Errorf("none of the %d node%s could be judged: each class needs figures of %d or more pairs or nodes of a machine type", len(f.Nodes), units.Plural(len(f.Nodes), "", "s"), fleet.MinJudged))
	}
	if !c.Bool("fail-on-outlier") {
		return nil
	}
	var first string
	bad := 0
	for _, n := range f.Nodes {
		if n.Verdict == fleet.Outlier || n.Verdict == fleet.Failed {
			if bad == 0 {
				first = fmt.Sprintf(" (first: %s %s)", n.Name, n.Verdict)
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
