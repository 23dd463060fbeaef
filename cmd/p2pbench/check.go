package main

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/export"
	"github.com/p2pbench/p2pbench/internal/cmdline"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/session"
	"github.com/p2pbench/p2pbench/verdict"
)

// verdictFlags are the flags that choose what a run is judged against
// (check and all).
func verdictFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "expect", Usage: "judge against the minimum figures of spec `FILE` (JSON; see examples/expect/)"},
		&cli.StringFlag{Name: "baseline", Usage: "judge against the results `FILE` of a known-good machine"},
		&cli.StringFlag{Name: "threshold", Value: "5%", Usage: "with --baseline: the least worsening that fails, e.g. 5% or 2.5"},
		&cli.BoolFlag{Name: "strict", Usage: "a WARN verdict fails too (exit status 5)"},
	}
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "judge a results file: PASS, WARN or FAIL for every figure and check, against expectations",
		ArgsUsage: "RESULTS.json",
		Description: "Without --expect or --baseline, the figures are held to p2pbench's expectation\n" +
			"table (verdict/EXPECTATIONS.md: several machines' reference runs and published results,\n" +
			"the vendor's figure with a wide margin where none measured the path; never the machine's\n" +
			"own). Link health is NVIDIA's DCGM policy on the NVLink counters (replay, recovery, CRC\n" +
			"rates), naming GPU and link; other programs on the GPUs and clocks held down warn; known,\n" +
			"explained behaviour is a note; what was not read is not judged. Exit status 0 for PASS\n" +
			"and WARN (5 for WARN with --strict), 5 for FAIL, 4 for NOT JUDGED (no figure judged), 2 for\n" +
			"a spec or baseline that cannot judge the run (an entry that matches no figure included).",
		Flags: append(verdictFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "also write the results with their verdict to `FILE`"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "what to print: text (the verdict page), junit (JUnit XML for CI: a test case per check and per judged figure) or prometheus (the verdict and headline figures as Prometheus text, metrics p2pbench_*, GPUs labelled by serial, for node_exporter's textfile collector)"}),
		Action: checkAction,
	}
}

func checkAction(c *cli.Context) error {
	args, err := cmdline.Positional(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return cmdline.Usage(fmt.Errorf("check takes one results file, got %d arguments", len(args)))
	}
	in, out := args[0], c.String("output")
	format := c.String("format")
	if format != "text" && format != "junit" && format != "prometheus" {
		return cmdline.Usage(fmt.Errorf("--format %q: want text, junit or prometheus", format))
	}
	if err := outfile.Check(out, in, c.String("expect"), c.String("baseline")); err != nil {
		return err
	}
	exp, err := expectationsOf(c)
	if err != nil {
		return err
	}
	run, err := readRun(c.Context, in)
	if err != nil {
		return err
	}
	if err := session.Judge(run, exp, version); err != nil {
		return err
	}
	if err := writeVerdict(c, run, format); err != nil {
		return err
	}
	if out != "" {
		if err := outfile.Write(out, run.EncodeFor(out)); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "results: %s\n", out)
	}
	return verdictStatus(c, run.Verdict)
}

// writeVerdict prints run's verdict in format: the verdict page (text),
// JUnit XML or Prometheus text.
func writeVerdict(c *cli.Context, run *results.Run, format string) error {
	switch format {
	case "junit":
		return export.WriteJUnit(c.App.Writer, run, c.Bool("strict"))
	case "prometheus":
		return export.WritePrometheus(c.App.Writer, run)
	}
	return report.Verdict(run).WriteText(c.App.Writer)
}

// expectationsOf reads --expect and --baseline (at most one of them); nil
// without either: the expectation table for the run's machine.
func expectationsOf(c *cli.Context) (verdict.Expectations, error) {
	spec, base := c.String("expect"), c.String("baseline")
	switch {
	case spec != "" && base != "":
		return nil, cmdline.Usage(errors.New("--expect and --baseline exclude each other: judge against one of them"))
	case base == "" && c.IsSet("threshold"):
		return nil, cmdline.Usage(errors.New("--threshold is the least worsening against --baseline, and there is none: give --baseline FILE, or leave --threshold out"))
	case spec != "":
		s, err := interrupt.Wait(c.Context, func() (*verdict.Spec, error) { return verdict.LoadSpec(spec) })
		if err != nil {
			return nil, cmdline.Usage(err)
		}
		return s, nil
	case base != "":
		threshold, err := compare.ParseThreshold(c.String("threshold"))
		if err != nil {
			return nil, cmdline.Usage(err)
		}
		run, err := readRun(c.Context, base)
		if err != nil {
			return nil, cmdline.Usage(fmt.Errorf("--baseline: %w", err))
		}
		return verdict.FromBaseline(run, base, threshold), nil
	}
	return nil, nil
}

// verdictStatus is exit status 5 for a failing verdict (a WARN too under
// --strict), naming the first failing check, and 4 for a verdict that
// judged nothing of the machine (NOT JUDGED is no PASS).
func verdictStatus(c *cli.Context, v *results.Verdict) error {
	if v != nil && v.Status == results.StatusNotJudged {
		// One line within a screen's width: what to do about it is on the
		// screen above, under What to do next.
		return failedFigures(errors.New("verdict NOT JUDGED: no figure of the run is one the expectations cover"))
	}
	if v == nil || !verdict.Failing(v, c.Bool("strict")) {
		return nil
	}
	why := ""
	for _, ch := range v.Checks {
		if ch.Status == v.Status {
			why = fmt.Sprintf(" (first: %s: %s)", ch.Title, cmp.Or(ch.Short, ch.Summary))
			break
		}
	}
	return statusError{exitVerdict, fmt.Errorf("verdict %s%s", v.Status.Label(), why)}
}
