package verdict

import (
	"fmt"
	"strconv"

	"github.com/p2pbench/p2pbench/results"
)

// Expectations say what the figures of a run should reach. Model,
// LoadSpec and FromBaseline make them; Judge holds a run to them.
type Expectations interface {
	// Source describes them, as the verdict records it.
	Source() results.ExpectationSource
	// forRun prepares them for run: a judge of its figures, or an error
	// (a *SpecError) when they cannot judge it.
	forRun(run *results.Run) (figureJudge, error)
}

// figureJudge judges one figure that did not fail; ok is false when the
// expectations say nothing of it.
type figureJudge func(f *results.Figure) (v results.FigureVerdict, ok bool)

// bound is what one figure is held against: rates pass at or above pass
// and fail below fail, times pass at or below pass and fail above fail;
// between the two they warn.
type bound struct {
	// typical is what the figure usually reaches; 0 when only the bounds
	// are known.
	typical    float64
	pass, fail float64
	lower      bool // a time: lower is better
	// modes: a time that moves between modes of its measurement (small
	// copies): beyond pass and up to modeFactor × typical it is a note (a
	// slower mode), beyond that it warns; it never fails.
	modes bool
	// basis says where the numbers come from, for the reason.
	basis string
}

// modeFactor bounds the slower modes of small copies' times: the slowest
// a healthy machine showed reads 1.8× the typical (back-to-back pulls
// queued behind others, 13.3 µs where 7.3 is typical; one copy's device
// time 20.3 µs where another process reads 12.1, 1.7×).
const modeFactor = 2.0

// judge holds the median v of a figure to b.
func (b bound) judge(f *results.Figure, v float64) results.FigureVerdict {
	out := results.FigureVerdict{Key: f.Key(), Value: v, Expected: b.typical, Bound: b.pass}
	worse := func(x, y float64) bool { return x < y }
	if b.lower {
		worse = func(x, y float64) bool { return x > y }
	}
	least, short, fails := "at least", "short of", "below"
	if b.lower {
		least, short, fails = "at most", "over", "above"
	}
	got := fmt.Sprintf("%s %s", fmtValue(v), f.Unit)
	of := ""
	if b.typical > 0 {
		of = fmt.Sprintf(" (%.0f%% of the %s expected)", 100*v/b.typical, fmtValue(b.typical))
	}
	switch {
	case !worse(v, b.pass):
		out.Status = results.StatusPass
		out.Reason = fmt.Sprintf("%s%s, %s %s to pass; %s", got, of, least, fmtValue(b.pass), b.basis)
	case b.modes && b.lower && v <= modeFactor*b.typical:
		out.Status = results.StatusNote
		gotS, passS := distinct(v, b.pass)
		out.Reason = fmt.Sprintf("%s %s%s, %s the %s to pass but within %.0f× the typical: a slower mode of the measurement, known and explained (small copies wait on how they were queued; healthy machines read up to 1.8× the typical); %s",
			gotS, f.Unit, of, short, passS, modeFactor, b.basis)
	case b.modes:
		out.Status = results.StatusWarn
		gotS, passS := distinct(v, b.pass)
		out.Reason = fmt.Sprintf("%s %s%s, %s the %s to pass and beyond %.0f× the typical, slower than any mode of the measurement healthy machines showed: rerun, and look at it if it stays; %s",
			gotS, f.Unit, of, short, passS, modeFactor, b.basis)
	case !worse(v, b.fail):
		out.Status = results.StatusWarn
		gotS, passS := distinct(v, b.pass)
		out.Reason = fmt.Sprintf("%s %s%s, %s the %s to pass but not %s %s, where it would fail: rerun, and look at it if it stays; %s",
			gotS, f.Unit, of, short, passS, fails, fmtValue(b.fail), b.basis)
	case b.pass == b.fail:
		out.Status = results.StatusFail
		must := "it must reach"
		if b.lower {
			must = "it may take"
		}
		gotS, passS := distinct(v, b.pass)
		out.Reason = fmt.Sprintf("%s %s%s, %s the %s %s; %s", gotS, f.Unit, of, short, passS, must, b.basis)
	default:
		out.Status = results.StatusFail
		gotS, failS := distinct(v, b.fail)
		out.Reason = fmt.Sprintf("%s %s%s, %s %s, where it fails (%s %s to pass); %s", gotS, f.Unit, of, fails, failS, least, fmtValue(b.pass), b.basis)
	}
	return out
}

// distinct writes v and the bound x it was held against with as many
// decimals as it takes for them to read differently (up to 4), so that no
// sentence says a figure fails below a bound it prints equal to.
func distinct(v, x float64) (string, string) {
	a, b := fmtValue(v), fmtValue(x)
	for d := 1; a == b && v != x && d <= 4; d++ {
		a, b = strconv.FormatFloat(v, 'f', d, 64), strconv.FormatFloat(x, 'f', d, 64)
	}
	return a, b
}

// fmtValue writes a figure's value with three significant digits or more.
func fmtValue(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
