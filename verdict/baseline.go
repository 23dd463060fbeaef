package verdict

import (
	"errors"
	"fmt"
	"strings"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/results"
)

// DefaultThreshold is the least a figure must be worse than the baseline
// to fail: 5%, as vendors' test plans ask ("within 5% of reference").
const DefaultThreshold = 0.05

// baseline holds a run to a known-good run of the same kind of machine.
type baseline struct {
	base      *results.Run
	file      string
	threshold float64
}

// FromBaseline returns expectations that hold a run to base, a known-good
// results file (named file in the verdict): a figure FAILs when it is worse
// than base's by at least threshold (a fraction; 0 means DefaultThreshold)
// and by more than run-to-run noise, and the U test finds the difference
// significant: package compare's noise model (compare.Change.Floor: the
// rounds of both runs, plus what such a figure moved between processes where
// the rounds do not carry it; runs without rounds are not tested, and fail
// beyond the floor alone); worse by as much but not significantly, it WARNs. Figures base lacks, or has no value of, are not
// judged.
func FromBaseline(base *results.Run, file string, threshold float64) Expectations {
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	return &baseline{base: base, file: file, threshold: threshold}
}

func (b *baseline) Source() results.ExpectationSource {
	name := fmt.Sprintf("the known-good run %s (%s", b.file, b.base.GPUSummary())
	if b.base.Host != "" {
		name += " on " + b.base.Host
	}
	if !b.base.Start.IsZero() {
		name += ", " + b.base.Start.UTC().Format("2006-01-02")
	}
	name += ")"
	return results.ExpectationSource{Kind: results.ExpectBaseline, Name: name, File: b.file,
		Notes: []string{fmt.Sprintf("A figure fails when it is at least %.0f%% worse than the baseline, by more than run-to-run noise, "+
			"and significantly so (Mann–Whitney U test at alpha 0.05 over the rounds' medians; runs without rounds are not tested, and fail beyond the floor alone).", 100*b.threshold)}}
}

// Fits checks that the baseline can judge run, before anything of run is
// measured or judged: a baseline is a complete run of the same kind of
// machine, known to be good. Another kind's figures say nothing of whether
// this one is as good as it should be; a simulator's say nothing of real
// hardware (nor a machine's of a simulation); a run cut short is not known
// to be good (its own verdict fails it), and its missing figures would go
// unjudged without a word. compare sets such runs side by side.
func (b *baseline) Fits(run *results.Run) error {
	var err error
	switch mine, theirs := run.GPUSummary(), b.base.GPUSummary(); {
	case mine != theirs:
		err = fmt.Errorf("the baseline is of another machine (%s; this run: %s): judge against a known-good run of the same GPUs, or set the runs side by side with p2pbench compare", theirs, mine)
	case b.base.Simulated && !run.Simulated:
		err = fmt.Errorf("the baseline is a simulated run (p2pbench's simulator of %s), not a known-good machine: judge this run against a real run of the same GPUs, or set the runs side by side with p2pbench compare", clip(b.base.SimMachine))
	case !b.base.Simulated && run.Simulated:
		err = errors.New("this run is simulated and the baseline a real machine's: a simulator's figures say nothing of real hardware; judge a simulated run against a simulated baseline, or set the runs side by side with p2pbench compare")
	case !b.base.Complete:
		stopped := "it stopped early"
		if b.base.Stopped != "" {
			stopped = clip(b.base.Stopped)
		}
		err = fmt.Errorf("the baseline did not complete (%s; %d figures): a known-good run is a complete one; judge against a complete run, or set the runs side by side with p2pbench compare", stopped, len(b.base.Figures))
	}
	if err != nil {
		return &SpecError{File: b.file, Entry: -1, Err: err}
	}
	return nil
}

// clip cuts a text from a file to what a message shows.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

func (b *baseline) forRun(run *results.Run) (figureJudge, error) {
	if err := b.Fits(run); err != nil {
		return nil, err
	}
	res, err := compare.Compare([]compare.Input{{Name: b.file, Runs: []*results.Run{b.base}}, {Name: "run", Runs: []*results.Run{run}}}, compare.Options{Threshold: b.threshold})
	if err != nil {
		return nil, &SpecError{File: b.file, Entry: -1, Err: err}
	}
	if len(res.Rows) == 0 {
		return nil, &SpecError{File: b.file, Entry: -1, Err: errors.New("the baseline shares no figure with the run")}
	}
	rows := make(map[string]*compare.Row, len(res.Rows))
	for i := range res.Rows {
		rows[res.Rows[i].Key] = &res.Rows[i]
	}
	var differ []string
	for _, d := range res.Differences {
		differ = append(differ, fmt.Sprintf("%s: %s", d.What, strings.Join(d.Values, " → ")))
	}
	return func(f *results.Figure) (results.FigureVerdict, bool) {
		row := rows[f.Key()]
		if row == nil || !row.Changes[0].Valid {
			return results.FigureVerdict{}, false
		}
		return b.judge(f, row, differ), true
	}, nil
}

// judge holds figure f to its baseline figure, compared in row.
func (b *baseline) judge(f *results.Figure, row *compare.Row, differ []string) results.FigureVerdict {
	ch := row.Changes[0]
	base, v := row.Cells[0].Center, row.Cells[1].Center
	worse := -ch.Pct / 100
	if row.LowerIsBetter {
		worse = ch.Pct / 100
	}
	// The floor is at least the threshold (compare.Options.Threshold).
	limit := ch.Floor
	out := results.FigureVerdict{Key: f.Key(), Value: v, Expected: base, Bound: base * (1 - limit)}
	if row.LowerIsBetter {
		out.Bound = base * (1 + limit)
	}
	change := fmt.Sprintf("%s %s against the baseline's %s (%+.1f%%)", fmtValue(v), f.Unit, fmtValue(base), ch.Pct)
	gate := fmt.Sprintf("fails at %.1f%% worse (the larger of the %.0f%% threshold and the run-to-run noise %s)", 100*limit, 100*b.threshold, noiseSource[ch.FloorFrom])
	switch {
	case worse < limit:
		out.Status = results.StatusPass
		out.Reason = change + "; " + gate
	case ch.Significant:
		out.Status = results.StatusFail
		out.Reason = fmt.Sprintf("%s, significantly (p = %.3f); %s", change, ch.P, gate)
	case ch.Regression:
		// Untested (too few independent units a side, as in runs without
		// rounds), compare flags a change beyond its floor alone.
		out.Status = results.StatusFail
		out.Reason = fmt.Sprintf("%s, beyond its floor (untested: the runs have too few rounds); %s", change, gate)
	default:
		out.Status = results.StatusWarn
		why := fmt.Sprintf("not significantly (p = %.3f)", ch.P)
		if !ch.Tested {
			why = "with no samples to test"
		}
		out.Reason = fmt.Sprintf("%s, %s: rerun to tell; %s", change, why, gate)
	}
	if len(differ) > 0 && out.Status != results.StatusPass {
		out.Reason += "; the runs differ in " + strings.Join(differ, "; ")
	}
	return out
}

// noiseSource says where a floor's run-to-run noise came from
// (compare.Change.FloorFrom).
var noiseSource = map[string]string{
	"rounds":    "that the rounds of both runs show",
	"runs":      "that the runs show",
	"measured":  "that the runs show plus the fallback measured for such a figure between processes (the runs' rounds do not carry what differs between processes)",
	"modes":     "between the modes such a figure keeps for a whole process, which rounds cannot renew",
	"threshold": "of such a figure",
}
