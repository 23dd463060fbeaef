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
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usageError{fmt.Errorf("report takes one results file, got %d arguments", len(args))}
	}
	path := args[0]
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
	if err := prepareOutput("--output", out); err != nil {
		return err
	}
	run, err := results.Read(path)
	if err != nil {
		return err
	}
	doc := report.Report(run)
	write := doc.WritePDF
	if format == "md" {
		// Figures go in a directory beside the Markdown, linked relatively
		// so that the pair can be moved together (into a wiki, say).
		figDir := strings.TrimSuffix(out, filepath.Ext(out)) + "_files"
		write = func(w io.Writer) error { return doc.WriteMarkdown(w, figDir, filepath.Base(figDir)) }
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

// positionalArgs returns a command's positional arguments, applying the
// flags given after them: urfave/cli stops reading flags at the first
// argument, and `p2pbench report RESULTS.json -o report.pdf` is how people
// write it. "--" ends the flags.
func positionalArgs(c *cli.Context) ([]string, error) {
	boolFlag := map[string]bool{}
	// primary maps every name of a flag to its first: urfave/cli gives each
	// alias a value of its own, and reads the first.
	primary := map[string]string{}
	for _, f := range c.Command.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			primary[n] = f.Names()[0]
			boolFlag[n] = isBool
		}
	}
	var pos []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if primary[name] == "" {
			return nil, usageError{fmt.Errorf("flag provided but not defined: %s", a)}
		}
		switch {
		case boolFlag[name] && !hasValue:
			value = "true"
		case !hasValue:
			if i+1 >= len(args) {
				return nil, usageError{fmt.Errorf("flag needs an argument: %s", a)}
			}
			i++
			value = args[i]
		}
		if err := c.Set(primary[name], value); err != nil {
			return nil, usageError{fmt.Errorf("invalid value %q for flag %s: %w", value, a, err)}
		}
	}
	return pos, nil
}
