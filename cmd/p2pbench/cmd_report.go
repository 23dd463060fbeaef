package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

func init() {
	commands = append(commands, &cli.Command{
		Name:      "report",
		Usage:     "write a report of a results file: system, topology, headline figures, plots, findings",
		ArgsUsage: "RESULTS.json",
		Description: "Writes a multi-page PDF (or Markdown with PNG figures in DIR_files beside it) that a\n" +
			"buyer can read, and prints the findings of the automatic checks: failed or unverified\n" +
			"figures, slow pairs, IPC slower than in one process, clocks or temperatures that moved,\n" +
			"noisy large transfers, driver behaviour that differs from its documentation.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "report `FILE`, .pdf or .md (default: RESULTS-report.pdf beside the results file)"},
			&cli.StringFlag{Name: "format", Usage: "pdf or md (default: from the output file's extension)"},
		},
		Action: reportAction,
	})
}

func reportAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError{fmt.Errorf("report takes one results file, got %d arguments", c.NArg())}
	}
	path := c.Args().First()
	out := c.String("output")
	format := strings.ToLower(c.String("format"))
	if out == "" {
		ext := ".pdf"
		if format == "md" || format == "markdown" {
			ext = ".md"
		}
		out = strings.TrimSuffix(path, filepath.Ext(path)) + "-report" + ext
	}
	if format == "" {
		switch strings.ToLower(filepath.Ext(out)) {
		case ".pdf":
			format = "pdf"
		case ".md", ".markdown":
			format = "md"
		default:
			return usageError{fmt.Errorf("cannot tell the report format from %q: name a .pdf or .md file, or give --format pdf|md", out)}
		}
	}
	if format == "markdown" {
		format = "md"
	}
	if format != "pdf" && format != "md" {
		return usageError{fmt.Errorf("unknown report format %q; the formats are pdf and md", format)}
	}
	run, err := results.Read(path)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return report.WritePDF(w, run) }
	if format == "md" {
		// Figures go in a directory beside the Markdown, linked relatively
		// so that the pair can be moved together (into a wiki, say).
		figDir := strings.TrimSuffix(out, filepath.Ext(out)) + "_files"
		write = func(w io.Writer) error { return report.WriteMarkdown(w, run, figDir, filepath.Base(figDir)) }
	}
	if err := writeFileAtomic(out, write); err != nil {
		return err
	}
	findings := report.Findings(run)
	fmt.Printf("%s written; %d finding%s\n", out, len(findings), map[bool]string{true: "", false: "s"}[len(findings) == 1])
	for _, f := range findings {
		fmt.Printf("  %s\n", f)
	}
	return nil
}

// writeFileAtomic writes a file through a temporary file in the same
// directory, so an error never leaves half a report where one was.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
