package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
)

func init() {
	commands = append(commands, &cli.Command{
		Name:      "compare",
		Usage:     "compare results files figure by figure, benchstat-style, against the first",
		ArgsUsage: "BASE.json NEW.json [MORE.json...]",
		Description: "For every figure the baseline shares with another run: each run's median with its\n" +
			"confidence interval, the change against the baseline, and whether it is significant\n" +
			"(Mann-Whitney U test over the raw samples, golang.org/x/perf/benchmath). A regression is\n" +
			"a significant change of at least the threshold in the bad direction: lower GB/s or\n" +
			"Gop/s, higher ns. Runs of different machines are compared on the figures they share.",
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "alpha", Value: 0.05, Usage: "significance level of the U test"},
			&cli.StringFlag{Name: "threshold", Value: "5%", Usage: "smallest change that counts as a regression or improvement, e.g. 5% or 2.5"},
			&cli.BoolFlag{Name: "fail-on-regression", Usage: "exit with status 1 when any figure regressed"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: " + strings.Join(compare.Formats(), ", ")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the comparison to `FILE` instead of standard output"},
			&cli.StringFlag{Name: "plot", Usage: "also draw the changes into `FILE` (.png, .svg or .pdf)"},
		},
		Action: compareAction,
	})
}

func compareAction(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil {
		return err
	}
	if len(args) < 2 {
		return usageError{fmt.Errorf("compare needs a baseline and at least one other results file, got %d", len(args))}
	}
	threshold, err := compare.ParseThreshold(c.String("threshold"))
	if err != nil {
		return usageError{err}
	}
	alpha := c.Float64("alpha")
	if !(alpha > 0 && alpha < 1) {
		return usageError{fmt.Errorf("--alpha %v is not between 0 and 1", alpha)}
	}
	format := c.String("format")
	if !contains(compare.Formats(), format) && format != "md" {
		return usageError{fmt.Errorf("unknown format %q; the formats are %s", format, strings.Join(compare.Formats(), ", "))}
	}
	plotPath, plotFormat := c.String("plot"), ""
	if plotPath != "" {
		plotFormat = strings.TrimPrefix(strings.ToLower(filepath.Ext(plotPath)), ".")
		if plotFormat != "png" && plotFormat != "svg" && plotFormat != "pdf" {
			return usageError{fmt.Errorf("--plot %q: name a .png, .svg or .pdf file", plotPath)}
		}
	}
	if err := prepareOutput("--output", c.String("output")); err != nil {
		return err
	}
	if err := prepareOutput("--plot", plotPath); err != nil {
		return err
	}
	inputs, err := compare.ReadInputs(args)
	if err != nil {
		return err
	}
	res, err := compare.Compare(inputs, compare.Options{Alpha: alpha, Threshold: threshold})
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return compare.Write(w, res, format) }
	if out := c.String("output"); out != "" {
		err = writeFileAtomic(out, write)
	} else {
		err = write(os.Stdout)
	}
	if err != nil {
		return err
	}
	if plotPath != "" {
		if err := changeChart(inputs, res).WriteFile(plotPath, plotFormat); err != nil {
			return err
		}
	}
	if regs := res.Regressions(); c.Bool("fail-on-regression") && len(regs) > 0 {
		r := regs[0]
		first := strings.Join(strings.Fields(strings.Join([]string{string(r.Test), string(r.Engine), string(r.Direction), string(r.Part),
			pairLabel(r.Src, r.Dst), results.FormatBytes(r.Size), r.Params}, " ")), " ")
		return cli.Exit(fmt.Sprintf("%d figure%s regressed by %g%% or more (first: %s)",
			len(regs), map[bool]string{true: "", false: "s"}[len(regs) == 1], 100*threshold, first), 1)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// changeChart turns the comparison into a chart of every run's changes
// against the baseline.
func changeChart(inputs []compare.Input, res *compare.Result) plot.Figure {
	var changes []plot.Change
	for i := 1; i < len(inputs); i++ {
		for _, row := range res.Rows {
			ch := row.Changes[i-1]
			if !ch.Valid {
				continue
			}
			group := string(row.Test)
			if len(inputs) > 2 {
				group += " (" + filepath.Base(inputs[i].Name) + ")"
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
		caption = append(caption, fmt.Sprintf("%s %s: %s", role, filepath.Base(in.Name), plot.CaptionLines(in.Run)[0]))
		simulated = simulated || in.Run.Simulated
	}
	names := make([]string, len(inputs)-1)
	for i := range names {
		names[i] = filepath.Base(inputs[i+1].Name)
	}
	title := fmt.Sprintf("Changes of %s against %s", strings.Join(names, ", "), filepath.Base(inputs[0].Name))
	sub := fmt.Sprintf("change of each figure's median in percent; Mann–Whitney U test at alpha %g; dashed lines: ±%g%% threshold", res.Alpha, 100*res.Threshold)
	return plot.ChangeChart(title, sub, changes, 100*res.Threshold, caption, simulated)
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
