package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/infile"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/plot"
)

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare results files figure by figure, benchstat-style, against the first",
		ArgsUsage: "BASE.json NEW.json [MORE.json...]  or  BASE1.json [BASE2.json...] -- NEW1.json [NEW2.json...] [-- ...]",
		Description: "For every figure the baseline shares with another run — the same test, pair, size,\n" +
			"direction and part, whatever kernel variant or grid measured it (a changed method is shown\n" +
			"beside the row) — each run's median with its interval, the change against the baseline,\n" +
			"and whether it is significant (Mann-Whitney U test, golang.org/x/perf/benchmath) on\n" +
			"independent units only: the medians of the rounds each figure was measured in, or of the\n" +
			"runs where each side is three runs or more; never a run's samples. A regression is a change\n" +
			"in the bad direction (lower GB/s or Gop/s, higher ns) of at least the noise floor, and\n" +
			"significant where it could be tested. The floor is 3 × the rounds' run-to-run CV where the\n" +
			"rounds carry what differs between processes (\"replicates\": \"process\" in the file); other\n" +
			"runs have no run-to-run estimate of their own, which the output says, and their floor adds\n" +
			"a fallback per family of tests and size, measured between processes on real machines\n" +
			"(compare/FALLBACK.md). Never below the threshold. The output starts with what was flagged\n" +
			"and why; the full tables follow. \"--\" groups files: the runs of one configuration\n" +
			"(separate processes) compared as one side. Runs of different machines are compared on the\n" +
			"figures they share; a run that shares none with the baseline is an error (exit status 4).\n" +
			"A figure the baseline measured that a run failed or lacks is a regression, unless the run's\n" +
			"plan left it out (listed as not measured). A figure measured by another method (kernel,\n" +
			"or a build that measures otherwise: results/methods.go) shows what changed and is not\n" +
			"gated unless --across-methods. Runs of two machines (other GPU UUIDs) are not gated unless\n" +
			"--across-machines, which holds each figure to the spread between machines of one kind that\n" +
			"real VMs showed; with --fail-on-regression such a comparison exits 4 (not judged) unless a\n" +
			"figure was lost (5). Machines of different kinds are never gated.",
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "significance level of the U test"},
			&cli.StringFlag{Name: "threshold", Value: "1%", Usage: "smallest change that counts as a regression or improvement, whatever the noise floor, e.g. 1% or 2.5"},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "exit with status 5 when any figure regressed"},
			&cli.BoolFlag{Name: "across-machines", Usage: "gate runs of two machines of one kind (other GPU UUIDs), each figure held to the spread between such machines; without it their changes are shown, not gated, and --fail-on-regression exits 4 (not judged) unless a figure was lost"},
			&cli.BoolFlag{Name: "across-methods", Usage: "gate the figures measured by another method too (another kernel, or a build that measures otherwise); without it their changes are shown with what changed, not flagged"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: " + strings.Join(compare.Formats(), ", ")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the comparison to `FILE` instead of standard output"},
			&cli.StringFlag{Name: "plot", Usage: "also draw the changes into `FILE` (.png, .svg or .pdf)"},
		},
		Action: compareAction,
	}
}

// comparison is what the flags of compare ask for.
type comparison struct {
	// groups are the sides, each its files.
	groups     [][]string
	inputs     []string
	opt        compare.Options
	format     string
	output     string
	plot       string
	plotFormat string
}

// comparisonOf reads compare's arguments and flags.
func comparisonOf(c *cli.Context) (comparison, error) {
	var cmp comparison
	groups, err := cmdline.Groups(c)
	if err != nil {
		return cmp, err
	}
	if cmp.groups, cmp.inputs, err = compare.Sides(groups); err != nil {
		return cmp, cmdline.Usage(err)
	}
	if cmp.opt.Threshold, err = compare.ParseThreshold(c.String("threshold")); err != nil {
		return cmp, cmdline.Usage(err)
	}
	cmp.opt.AcrossMethods, cmp.opt.AcrossMachines, cmp.opt.Alpha = c.Bool("across-methods"), c.Bool("across-machines"), c.Float64("alpha")
	if err := cmp.opt.Validate(); err != nil {
		return cmp, cmdline.Usage(err)
	}
	cmp.format = c.String("format")
	if err := compare.CheckFormat(cmp.format); err != nil {
		return cmp, cmdline.Usage(err)
	}
	cmp.output, cmp.plot = c.String("output"), c.String("plot")
	if cmp.plot != "" {
		cmp.plotFormat = strings.TrimPrefix(strings.ToLower(filepath.Ext(cmp.plot)), ".")
		if cmp.plotFormat != "png" && cmp.plotFormat != "svg" && cmp.plotFormat != "pdf" {
			return cmp, cmdline.Usage(fmt.Errorf("--plot %q: name a .png, .svg or .pdf file", cmp.plot))
		}
	}
	return cmp, nil
}

func compareAction(c *cli.Context) error {
	cmp, err := comparisonOf(c)
	if err != nil {
		return err
	}
	inputs, res, err := compareInputs(c, cmp)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		if cmp.format != "json" { // text from the files, written where a terminal may show it
			w = termsafe.New(w)
		}
		return compare.Write(w, res, cmp.format)
	}
	if cmp.output != "" {
		err = writeRendered(c.Context, cmp.output, write)
	} else {
		err = write(c.App.Writer)
	}
	if err != nil {
		return err
	}
	if cmp.plot != "" {
		if err := writeRendered(c.Context, cmp.plot, func(w io.Writer) error { return plot.Comparison(inputs, res).WriteTo(w, cmp.plotFormat) }); err != nil {
			return err
		}
	}
	return gate(c, res)
}

// compareInputs checks compare's outputs and inputs, reads the inputs and
// compares them.
func compareInputs(c *cli.Context, cmp comparison) ([]compare.Input, *compare.Result, error) {
	for _, out := range []string{cmp.output, cmp.plot} {
		if err := outfile.Check(out, cmp.inputs...); err != nil {
			return nil, nil, err
		}
	}
	for _, in := range cmp.inputs {
		if err := infile.Check(in); errors.Is(err, infile.ErrNotRegular) {
			return nil, nil, err // a FIFO would block the read: refused before it is opened
		}
	}
	inputs, err := interrupt.Wait(c.Context, func() ([]compare.Input, error) { return compare.ReadGroups(cmp.groups) })
	if err != nil {
		return nil, nil, err
	}
	res, err := interrupt.Wait(c.Context, func() (*compare.Result, error) { return compare.Compare(inputs, cmp.opt) })
	return inputs, res, err
}

// gate is compare's exit status: 4 when a run compared nothing, and under
// --fail-on-regression 5 for a regression, 4 for a run of another machine
// the gate did not judge; what it did not gate is said.
func gate(c *cli.Context, res *compare.Result) error {
	if s := res.NothingCompared(); s != "" {
		return failedFigures(errors.New(s))
	}
	if !c.Bool("fail-on-regression") {
		return nil
	}
	if s := res.Regressed(); s != "" {
		return statusError{exitVerdict, errors.New(s)}
	}
	if s := res.NotJudged(); s != "" {
		return failedFigures(errors.New(s))
	}
	if s := res.NotGated(); s != "" {
		fmt.Fprintf(c.App.ErrWriter, "no regression%s\n", s)
	}
	return nil
}
