package measure

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/montanaflynn/stats"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// The method check (results.MethodCheck): plain windows of about
// CheckWindow each, CheckWindows of them, behind one untimed repetition.
const (
	CheckWindow  = 20 * time.Millisecond
	CheckWindows = 2
	// checkFloor is the least disagreement that counts; windowCost the
	// start and end cost of one timed window a plain window carries (a few
	// µs by the copy engine and SM kernels on an H100 and an H200: 10 µs is
	// an upper bound), which is what a short plain window of small copies
	// may read low by.
	checkFloor = 0.005
	windowCost = 10 * time.Microsecond
)

// CheckTiming is the plain timing of a method check for transfers whose
// longest repetition takes longest milliseconds: about CheckWindow of
// repetitions, at most maxReps, behind one untimed repetition.
func CheckTiming(longest float64) Timing {
	reps := maxReps
	if longest > 0 {
		reps = int(math.Ceil(float64(CheckWindow) / float64(time.Millisecond) / longest))
	}
	return Timing{Reps: max(results.MinSteadyReps, min(reps, maxReps)), Warmup: 1}
}

// Checked says whether figures timed with t get a method check: those
// whose samples are a steady-state fit, or plain windows shorter than
// results.PlainWindow, for transfers lasting longest milliseconds.
func Checked(t Timing, longest float64) bool {
	return t.Short > 0 || float64(t.Reps)*longest < float64(results.PlainWindow)/float64(time.Millisecond)
}

// Plain times the transfers of ts with plain windows of t (CheckTiming),
// windows of them, and returns per transfer the milliseconds of one
// repetition in each window. A transfer with OpN (SM copies from
// InKernelRepsFrom) times each window as one launch of t.Reps copies:
// what nvbandwidth times (its copy kernel repeats the copy loopCount times
// in one launch between two events), so the check holds the figure
// against that tool's method too.
func (tm Timer) Plain(ctx context.Context, ts []Transfer, t Timing, windows int) ([][]float64, error) {
	t.Short = 0
	return tm.Measure(ctx, ts, t, windows)
}

// NewCheck starts the method check of a figure from the plain windows'
// figures (in the figure's unit) and their repetitions.
func NewCheck(samples []float64, reps int) *results.MethodCheck {
	return &results.MethodCheck{RepsPerSample: reps, Samples: figstats.RoundSamples(samples)}
}

// JudgeCheck holds f (its rounds merged) against its plain windows
// (f.Check), where both have figures: it fills the check's medians, delta,
// tolerance and verdict, and where they disagree makes the plain windows
// f's samples. The plain windows were taken right after f's last round,
// so that round is what they are held against: rounds differ by what the
// renewals between them change, a method's error does not. windowMs is the
// length of one plain window in milliseconds. It returns whether f was
// replaced.
func JudgeCheck(f *results.Figure, windowMs float64) bool {
	c := f.Check
	if c == nil || len(c.Samples) == 0 || len(f.Samples) == 0 || f.Error != "" {
		return false
	}
	last := f.Samples
	if n := len(f.Rounds); n > 0 && f.Rounds[n-1] > 0 && f.Rounds[n-1] <= len(f.Samples) {
		last = f.Samples[len(f.Samples)-f.Rounds[n-1]:]
	}
	plain := figstats.ComputeStats(c.Samples)
	c.Median = plain.Median
	c.MethodMedian = figstats.Median(last)
	if c.Median <= 0 {
		return false
	}
	c.Delta = c.MethodMedian/c.Median - 1
	tol := max(checkFloor, 3*(plain.Max-plain.Min)/c.Median, 3*robustCV(f.Samples))
	if _, fitted := f.Params[ParamShortReps]; len(last) == 1 && len(f.Samples) > 1 && !fitted {
		// A last round of one plain window (no fit: the method is the
		// plain window's own, its length aside) is held against the plain
		// windows alone: its noise is the spread of such windows, one a
		// round. A fit's spread is no such measure: a short window that
		// carried a cold copy in some rounds spread them and would hide
		// itself (bench's TestMethodCheckCatchesAColdShortWindow). The
		// windows' own spread keeps a host copy whose rounds vary by a few
		// percent from being replaced for lying within them
		// (docs/methods.md, "The method checks itself").
		tol = max(tol, 3*figstats.ComputeStats(f.Samples).CV)
	}
	if windowMs > 0 {
		tol = max(tol, float64(windowCost)/float64(time.Millisecond)/windowMs)
	}
	c.Tolerance = tol
	c.Agrees = math.Abs(c.Delta) <= tol
	if c.Agrees {
		return false
	}
	c.Replaced = true
	f.Samples = append([]float64(nil), c.Samples...)
	f.Rounds = nil
	f.Stats = figstats.ComputeRoundStats(f.Samples, nil)
	return true
}

// CheckNote is the run's note of a figure its method check replaced.
func CheckNote(f results.Figure) string {
	c := f.Check
	return fmt.Sprintf("method check: %s: the figure's own timing gave %.4g %s in its last round, plain windows of %d back-to-back repetitions %.4g (%+.1f%%, beyond the ±%.1f%% the noise allows); the plain windows stand",
		results.FigureName(&f), c.MethodMedian, f.Unit, c.RepsPerSample, c.Median, 100*c.Delta, 100*c.Tolerance)
}

// robustCV is the spread of samples from their median absolute deviation,
// as a coefficient of variation (1.4826 MAD / median): the figure's own
// noise, which a method error that shifts most of its rounds does not
// widen.
func robustCV(samples []float64) float64 {
	m := figstats.Median(samples)
	if m == 0 {
		return 0
	}
	// Fails only on no samples, which JudgeCheck never passes.
	mad, _ := stats.MedianAbsoluteDeviation(samples)
	return 1.4826 * mad / math.Abs(m)
}
