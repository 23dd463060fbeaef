package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/internal/infile"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
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
	var err error
	if cmp.groups, err = positionalGroups(c); err != nil {
		return cmp, err
	}
	if len(cmp.groups) == 1 {
		// No "--": every file a side of its own.
		files := cmp.groups[0]
		cmp.groups = nil
		for _, f := range files {
			cmp.groups = append(cmp.groups, []string{f})
		}
	}
	for i, g := range cmp.groups {
		if len(g) == 0 {
			return cmp, usageError{fmt.Errorf("compare: group %d of the files (between \"--\") is empty", i+1)}
		}
		cmp.inputs = append(cmp.inputs, g...)
	}
	if len(cmp.groups) < 2 {
		return cmp, usageError{fmt.Errorf("compare needs a baseline and at least one other results file, got %d", len(cmp.inputs))}
	}
	if cmp.opt.Threshold, err = compare.ParseThreshold(c.String("threshold")); err != nil {
		return cmp, usageError{err}
	}
	cmp.opt.AcrossMethods, cmp.opt.AcrossMachines = c.Bool("across-methods"), c.Bool("across-machines")
	if cmp.opt.Alpha = c.Float64("alpha"); !(cmp.opt.Alpha > 0 && cmp.opt.Alpha < 1) {
		return cmp, usageError{fmt.Errorf("--alpha %v is not between 0 and 1", cmp.opt.Alpha)}
	}
	if cmp.format = c.String("format"); !slices.Contains(compare.Formats(), cmp.format) && cmp.format != "md" {
		return cmp, usageError{fmt.Errorf("unknown format %q; the formats are %s", cmp.format, strings.Join(compare.Formats(), ", "))}
	}
	cmp.output, cmp.plot = c.String("output"), c.String("plot")
	if cmp.plot != "" {
		cmp.plotFormat = strings.TrimPrefix(strings.ToLower(filepath.Ext(cmp.plot)), ".")
		if cmp.plotFormat != "png" && cmp.plotFormat != "svg" && cmp.plotFormat != "pdf" {
			return cmp, usageError{fmt.Errorf("--plot %q: name a .png, .svg or .pdf file", cmp.plot)}
		}
	}
	return cmp, nil
}

func compareAction(c *cli.Context) error {
	cmp, err := comparisonOf(c)
	if err != nil {
		return err
	}
	for _, out := range []string{cmp.output, cmp.plot} {
		if err := outfile.Check(out, cmp.inputs...); err != nil {
			return err
		}
	}
	for _, in := range cmp.inputs {
		if err := infile.Check(in); errors.Is(err, infile.ErrNotRegular) {
			return err // a FIFO would block the read: refused before it is opened
		}
	}
	inputs, err := interruptible(c.Context, func() ([]compare.Input, error) { return compare.ReadGroups(cmp.groups) })
	if err != nil {
		return err
	}
	res, err := interruptible(c.Context, func() (*compare.Result, error) { return compare.Compare(inputs, cmp.opt) })
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
		if cmp.plotFormat == "pdf" {
		}
		if err := writeRendered(c.Context, cmp.plot, func(w io.Writer) error { return changeChart(inputs, res).WriteTo(w, cmp.plotFormat) }); err != nil {
			return err
		}
	}
	if err := nothingCompared(res); err != nil {
		return err
	}
	if !c.Bool("fail-on-regression") {
		return nil
	}
	if regs := res.Regressions(); len(regs) > 0 {
		return statusError{exitVerdict, fmt.Errorf("%s%s", regressedText(regs), notGatedText(res))}
	}
	if err := machinesNotGated(res); err != nil {
		return err
	}
	if s := notGatedText(res); s != "" {
		fmt.Fprintf(c.App.ErrWriter, "no regression%s\n", s)
	}
	return nil
}

// machinesNotGated fails (exit status 4: not judged) where a side is
// another machine whose changes the gate did not judge: of another kind,
// or of one kind without --across-machines. A gate asked to judge must not
// pass what it did not.
func machinesNotGated(res *compare.Result) error {
	for _, m := range res.Machines {
		if m.Same == compare.MachineSame || m.Same == compare.MachineUnknown && m.Kind {
			continue
		}
		name := res.Names[m.Side]
		if !m.Kind {
			return failedFigures(fmt.Errorf("not judged: %s and the baseline %s are machines of different kinds (%s): their changes are shown, never gated", name, res.Names[0], m.Why))
		}
		if !res.AcrossMachines {
			return failedFigures(fmt.Errorf("not judged: %s and the baseline %s are different machines of one kind (%s); --across-machines holds each figure to the spread between such machines", name, res.Names[0], m.Why))
		}
	}
	return nil
}

// regressedText counts the regressions, lost figures apart, and names the
// first.
func regressedText(regs []compare.Row) string {
	lost := 0
	for _, r := range regs {
		if slices.ContainsFunc(r.Changes, func(c compare.Change) bool { return c.Lost != "" }) {
			lost++
		}
	}
	first := rowLabel(regs[0])
	if ch := regs[0].Changes[slices.IndexFunc(regs[0].Changes, func(c compare.Change) bool { return c.Regression })]; ch.Lost != "" {
		first += ": " + ch.Lost
	}
	text := fmt.Sprintf("%d figure%s regressed beyond their noise floor", len(regs)-lost, plural(len(regs)-lost))
	if lost > 0 {
		text = fmt.Sprintf("%d figure%s the baseline measured failed or missing, %s", lost, plural(lost), text)
	}
	return text + " (first: " + first + ")"
}

// notGatedText says, after the gate's verdict, what it did not gate: the
// baseline's figures a run's plan left out.
func notGatedText(res *compare.Result) string {
	if n := len(res.NotMeasured); n > 0 {
		return fmt.Sprintf("; %d figure%s of the baseline not measured by a run whose plan differs (not gated: see \"Not measured\" in the output)", n, plural(n))
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// nothingCompared fails (exit status 4) when a run shares no figure with
// the baseline that both have a value for, and lost none the baseline
// measured: a comparison that says nothing must not pass for one that found
// no regression.
func nothingCompared(res *compare.Result) error {
	for i := 1; i < len(res.Names); i++ {
		if !slices.ContainsFunc(res.Rows, func(r compare.Row) bool { return r.Changes[i-1].Valid || r.Changes[i-1].Lost != "" }) {
			shared := 0
			for _, r := range res.Rows {
				if r.Cells[i].Present {
					shared++
				}
			}
			if shared > 0 {
				return failedFigures(fmt.Errorf("nothing was compared: %s shares %d figure%s with the baseline %s, none with a value on both sides and a change a percentage can say", res.Names[i], shared, plural(shared), res.Names[0]))
			}
			return failedFigures(fmt.Errorf("nothing was compared: %s shares no figure with the baseline %s", res.Names[i], res.Names[0]))
		}
	}
	return nil
}

// rowLabel names a row of a comparison in one line.
func rowLabel(r compare.Row) string {
	return strings.Join(strings.Fields(strings.Join([]string{string(r.Test), string(r.Engine), string(r.Direction), string(r.Part),
		pairLabel(r.Src, r.Dst), results.FormatBytes(r.Size), r.Params}, " ")), " ")
}

// changeChart turns the comparison into a chart of every run's changes
// against the baseline.
func changeChart(inputs []compare.Input, res *compare.Result) plot.Chart {
	var changes []plot.Change
	for i := 1; i < len(inputs); i++ {
		for _, row := range res.Rows {
			ch := row.Changes[i-1]
			if !ch.Valid {
				continue
			}
			group := string(row.Test)
			if len(inputs) > 2 {
				group += " (" + sideName(inputs[i]) + ")"
			}
			label := fmt.Sprintf("%s %s", pairLabel(row.Src, row.Dst), results.FormatBytes(row.Size))
			if row.Direction != "" && !strings.HasSuffix(string(row.Test), string(row.Direction)) {
				label = string(row.Direction) + " " + label
			}
			if row.Part != "" {
				label = string(row.Part) + " " + label
			}
			changes = append(changes, plot.Change{Group: group, Label: label, Pct: ch.Pct,
				Significant: ch.Significant, Regression: ch.Regression, Improvement: ch.Improvement})
		}
	}
	var caption []string
	simulated := false
	for i, in := range inputs {
		role := "new"
		if i == 0 {
			role = "base"
		}
		caption = append(caption, fmt.Sprintf("%s %s: %s", role, sideName(in), plot.CaptionLines(in.Runs[0])[0]))
		for _, r := range in.Runs {
			simulated = simulated || r.Simulated
		}
	}
	names := make([]string, len(inputs)-1)
	for i := range names {
		names[i] = sideName(inputs[i+1])
	}
	title := fmt.Sprintf("Changes of %s against %s", strings.Join(names, ", "), sideName(inputs[0]))
	sub := fmt.Sprintf("change of each figure's median in percent; Mann–Whitney U test at alpha %g; flagged: beyond the figure's noise floor; dashed lines: ±%g%% threshold", res.Alpha, 100*res.Threshold)
	return plot.ChangeChart(title, sub, changes, 100*res.Threshold, caption, simulated)
}

// sideName is a side's files without their directories, joined by " + "
// (compare.ReadGroups names a side by its paths so joined).
func sideName(in compare.Input) string {
	paths := strings.Split(in.Name, " + ")
	for i, p := range paths {
		paths[i] = filepath.Base(p)
	}
	return strings.Join(paths, " + ")
}

func pairLabel(src, dst int) string {
	end := func(d int) string {
		if d < 0 {
			return "*"
		}
		return fmt.Sprint(d)
	}
	return end(src) + "→" + end(dst)
}
