package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/report"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write a report of a results file: system, topology, headline figures, plots, findings",
		ArgsUsage: "RESULTS.json",
		Description: "Writes a multi-page PDF (or Markdown with PNG figures in DIR_files beside it) that a\n" +
			"buyer can read, opening with the run's verdict (a file without one, or with another build's\n" +
			"judgement by the expectation table, is judged by this build's table for the report, page 1\n" +
			"saying what the file's own said; the file is left as it is), and prints what the verdict's\n" +
			"checks found: link health, failed or unverified figures, pairs low in their class, copies\n" +
			"across processes short of one process, clocks, noise and its causes, driver behaviour.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "report `FILE`, .pdf or .md (default: RESULTS-report.pdf beside the results file)"},
			&cli.StringFlag{Name: "format", Usage: "pdf or md (default: from the output file's extension)"},
			&cli.BoolFlag{Name: "full", Usage: "the whole report: every judged figure, every finding in full, every figure and every test's method (default: what a buyer reads, about a dozen pages)"},
		},
		Action: reportAction,
	}
}

func reportAction(c *cli.Context) error {
	args, err := cmdline.Positional(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return cmdline.Usage(fmt.Errorf("report takes one results file, got %d arguments", len(args)))
	}
	in := args[0]
	out, format, err := report.Output(in, c.String("output"), strings.ToLower(c.String("format")))
	if err != nil {
		return cmdline.Usage(err)
	}
	if err := outfile.Check(out, in); err != nil {
		return err
	}
	run, err := readRun(c.Context, in)
	if err != nil {
		return err
	}
	doc, err := report.Judged(run, report.Origin{Build: version, File: in}, c.Bool("full"))
	if err != nil {
		return err
	}
	if format == "pdf" {
		err = writeRendered(c.Context, out, doc.WritePDF)
	} else {
		err = doc.WriteMarkdownFiles(c.Context, out, in)
	}
	if err != nil {
		return err
	}
	findings := doc.Findings
	fmt.Fprintf(c.App.Writer, "%s written; %d finding%s\n", out, len(findings), map[bool]string{true: "", false: "s"}[len(findings) == 1])
	for _, f := range findings {
		fmt.Fprintf(c.App.Writer, "  %s\n", f)
	}
	return nil
}
