package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/session"
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
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usageError{fmt.Errorf("report takes one results file, got %d arguments", len(args))}
	}
	in := args[0]
	out, format, err := reportOutput(in, c.String("output"), strings.ToLower(c.String("format")))
	if err != nil {
		return err
	}
	if err := outfile.Check(out, in); err != nil {
		return err
	}
	run, err := readRun(c.Context, in)
	if err != nil {
		return err
	}
	doc, err := reportOf(run, in, c.Bool("full"))
	if err != nil {
		return err
	}
	if format == "pdf" {
		err = writeRendered(c.Context, out, doc.WritePDF)
	} else {
		err = writeMarkdown(c, doc, out, in)
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

// reportOf is the report of run, read from in (the whole report with
// full). A run without a verdict, or with another build's verdict by the
// expectation table, is judged by this build for the report, the file left
// as it is.
func reportOf(run *results.Run, in string, full bool) (*report.Document, error) {
	origin := report.Origin{Build: version, File: in}
	switch v := run.Verdict; {
	case v == nil:
		// A run measured before verdicts existed (or by bw, lat, atomic):
		// judged by the model for the report.
		if err := session.Judge(run, nil, version); err != nil {
			return nil, err
		}
	case v.Build != version && v.Expectations.Kind == results.ExpectModel:
		// Another build's verdict by the expectation table: this build
		// judges the run again by its own table, so that the report gives
		// its answer (an earlier build's rules may have been wrong), and
		// page 1 says what the file's own said. A spec or baseline the
		// report does not have: page 1 says how to judge it again.
		origin.Was = v
		if err := session.Judge(run, nil, version); err != nil {
			return nil, err
		}
	}
	doc := report.Report(run)
	if full {
		doc = report.Full(run)
	}
	doc.SayOrigin(run, origin)
	return doc, nil
}

// reportOutput is the report's file and format ("pdf" or "md") from -o and
// --format: a PDF beside the input by default, the format from the file's
// extension unless given.
func reportOutput(in, out, format string) (string, string, error) {
	if format == "markdown" {
		format = "md"
	}
	if out == "" {
		ext := ".pdf"
		if format == "md" {
			ext = ".md"
		}
		out = resultsStem(in) + "-report" + ext
	}
	if format == "" {
		switch strings.ToLower(filepath.Ext(out)) {
		case ".pdf":
			format = "pdf"
		case ".md", ".markdown":
			format = "md"
		default:
			return "", "", usageError{fmt.Errorf("cannot tell the report format from %q: name a .pdf or .md file, or give --format pdf|md", out)}
		}
	}
	if format != "pdf" && format != "md" {
		return "", "", usageError{fmt.Errorf("unknown report format %q; the formats are pdf and md", format)}
	}
	// A file named for one format and asked in the other would be misnamed.
	switch ext := strings.ToLower(filepath.Ext(out)); {
	case format == "pdf" && (ext == ".md" || ext == ".markdown"), format == "md" && ext == ".pdf":
		return "", "", usageError{fmt.Errorf("--format %s, but -o %s names a %s file: give a name that fits, or leave --format out", format, results.QuoteShort(out), strings.TrimPrefix(ext, "."))}
	}
	return out, format, nil
}

// writeMarkdown writes the report as Markdown to out and its figures as PNG
// files into a directory beside it, linked relatively so that the two can
// be moved together (into a wiki, say). No figure file may be the input.
//
// The Markdown and its figures are several files: the report holds the
// lock of out while it writes them, so that two reports to one file at
// once cannot mix one's text with the other's figures (the second fails
// at once).
func writeMarkdown(c *cli.Context, doc *report.Document, out string, inputs ...string) error {
	unlock, err := outfile.Lock(out)
	if err != nil {
		return err
	}
	defer unlock()
	figDir := strings.TrimSuffix(out, filepath.Ext(out)) + "_files"
	if _, err := outfile.Dir(figDir, inputs...); err != nil {
		return err
	}
	figs := doc.Figures()
	for _, f := range figs {
		if err := outfile.Check(filepath.Join(figDir, f.FileName("png")), inputs...); err != nil {
			return err
		}
	}
	if _, err := plot.WriteAll(c.Context, figs, figDir, []string{"png"}); err != nil {
		return err
	}
	return writeRendered(c.Context, out, func(w io.Writer) error { return doc.WriteMarkdown(termsafe.New(w), filepath.Base(figDir)) })
}
