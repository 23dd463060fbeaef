package plot

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/results"
)

// Comparison draws a comparison (compare.Compare of inputs): every run's
// changes against the baseline (ChangeChart).
func Comparison(inputs []compare.Input, res *compare.Result) Chart {
	var changes []Change
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
			label := fmt.Sprintf("%s %s", compare.PairText(row.Src, row.Dst), results.FormatBytes(row.Size))
			if row.Direction != "" && !strings.HasSuffix(string(row.Test), string(row.Direction)) {
				label = string(row.Direction) + " " + label
			}
			if row.Part != "" {
				label = string(row.Part) + " " + label
			}
			changes = append(changes, Change{Group: group, Label: label, Pct: ch.Pct,
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
		caption = append(caption, fmt.Sprintf("%s %s: %s", role, sideName(in), CaptionLines(in.Runs[0])[0]))
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
	return ChangeChart(title, sub, changes, 100*res.Threshold, caption, simulated)
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
