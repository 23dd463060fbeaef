package results

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The numbers of the timing method that the conventions state. Package
// measure times by these, and the conventions' words are made of them
// (conventions.go), so what a report says of the method is what the method
// does; TestConventionsStateTheMethod holds the words to them.
const (
	// MinSteadyReps is the fewest copies of a steady-state window.
	MinSteadyReps = 4
	// PlainWindow is the window of copies from which a steady-state sample
	// takes no short window: two host copies of 512 MiB (19 ms on PCIe
	// Gen5), where a start and end cost of 10 µs is 0.05% of a copy.
	PlainWindow = 10 * time.Millisecond
	// LongSample is the time of a sample's copies from which a figure takes
	// 1/FewSamplesDivisor of its samples (measure.Timing.Samples): copies
	// of 128 MiB and more between NVLink peers, of 16 MiB and more to or
	// from the host. Such a sample fits four copies or more and varies less
	// than the rounds do (0.1–0.5% between runs at these sizes on the 2×
	// H200); the rounds, and the figure's interval and run-to-run CV from
	// them, stay as many.
	LongSample = time.Millisecond
	// FewSamplesDivisor divides the samples asked of a figure of long
	// samples (LongSample), never below one a round.
	FewSamplesDivisor = 4
	// MaxWarmup is the most untimed copies before a window; none are where
	// a copy takes NoWarmupFrom or more, which keeps the engines busy from
	// the first one on.
	MaxWarmup    = 4
	NoWarmupFrom = 2 * time.Millisecond
	// InKernelRepsFrom is the SM copy size from which a timed window of
	// copies is one launch that repeats the copy (ParamInKernelReps).
	InKernelRepsFrom = 64 << 20
	// PingRoundTrips are a ping-pong sample's timed round trips, after as
	// many untimed; PingFlagSlots the places 1 KiB apart its flags take,
	// every one of them in every round.
	PingRoundTrips = 50
	PingFlagSlots  = 32
)

// ms says a duration in whole milliseconds: "10 ms".
func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

// The steady state's plain window was 20 ms in earlier builds and is
// PlainWindow (10 ms) now; some builds' conventions said 20 ms while they
// timed by 10 ms. A file's own host copies tell which its build used: a
// copy to or from the host timed as a plain window (no short window)
// shorter than 20 ms was timed by the 10 ms rule.
const (
	oldPlainWindowWords = "where the window holds 20 ms of copies or more"
	oldPlainWindow      = 20 * time.Millisecond
)

// correctedConvention is a recorded convention with the words fixed that
// its build is known by the file's own figures to have got wrong, said as
// corrected; c as it is otherwise.
func (r *Run) correctedConvention(c string) string {
	if !strings.Contains(c, oldPlainWindowWords) || !r.plainWindowBelow(oldPlainWindow) {
		return c
	}
	return strings.Replace(c, oldPlainWindowWords, "where the window holds "+ms(PlainWindow)+
		" of copies or more (this file's words said 20 ms; its own host copies, timed as plain windows shorter than that, show the build used "+ms(PlainWindow)+")", 1)
}

// plainWindowBelow reports whether a copy to or from the host of the run
// was timed as a plain steady-state window (reps_per_sample without
// short_reps_per_sample) of copies lasting less than d.
func (r *Run) plainWindowBelow(d time.Duration) bool {
	for i := range r.Figures {
		f := &r.Figures[i]
		if f.Test != H2D && f.Test != D2H || f.Stats == nil || f.Stats.Median <= 0 || f.Params["short_reps_per_sample"] != "" {
			continue
		}
		reps, err := strconv.Atoi(f.Params["reps_per_sample"])
		if err != nil || reps < 1 {
			continue
		}
		window := time.Duration(float64(reps) * float64(f.Size) / (f.Stats.Median * 1e9) * float64(time.Second))
		if window < d {
			return true
		}
	}
	return false
}
