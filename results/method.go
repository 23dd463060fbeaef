package results

import (
	"fmt"
	"time"
)

// The numbers of the timing method that the conventions state. Package
// measure times by these, and the catalogue's words are made of them
// (methodWords), so what a report says of the method is what the method
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

// The conventions' words of the timing method, made of its numbers.
var (
	convPing = "ns; one thread per GPU bouncing a flag through system-scope stores and loads (ordering release_acquire: st.release.sys / ld.acquire.sys; relaxed: relaxed system-scope, no fences); round_trip = one full exchange, one_way = half of it; each sample is the mean of " +
		fmt.Sprint(PingRoundTrips) + " round trips (%globaltimer), timed after " + fmt.Sprint(PingRoundTrips) + " that warm the exchange up, both flags at one of " +
		fmt.Sprint(PingFlagSlots) + " slots 1 KiB apart, and every round takes a sample at each slot in an order drawn afresh (a ping-pong takes the time of where its flags sit: 577-836 ns one way on an H200), so that every round's median is over the same places; row = initiator, column = responder"
	convSteady = "; steady state: every round first times one copy alone, then each sample a window of reps_per_sample back-to-back copies (at least " +
		fmt.Sprint(MinSteadyReps) + "), both between two CUDA events behind the latch; a sample is (window − the one copy) / (reps_per_sample − 1), one copy's time without the fixed start and end cost of a timed window (short_reps_per_sample = 1); where the window holds " +
		ms(PlainWindow) + " of copies or more (host copies of 512 MiB) no copy alone is timed and a sample is window / reps_per_sample, the window's start and end cost (microseconds) lost in it; a figure whose samples' copies take " +
		ms(LongSample) + " or more (128 MiB and more between NVLink peers, 16 MiB and more to or from the host) takes 1/" + fmt.Sprint(FewSamplesDivisor) +
		" of the samples asked, at least one per round; copies issued on one device at once (host copies both ways, SM copies sharing a device's SMs, pulls into one device) take plain samples instead, one window of reps_per_sample copies each (elapsed / copies): windows of several such copies moved from round to round on an H200"
	convWindow = "; each sample is one window of reps_per_sample back-to-back copies between two CUDA events (elapsed / copies), after up to " +
		fmt.Sprint(MaxWarmup) + " untimed ones where a copy takes under " + ms(NoWarmupFrom) + ": it carries a window's fixed start and end cost divided by reps_per_sample"
	convSMReps = "; SM copies of " + FormatBytes(InKernelRepsFrom) +
		" and more (in_kernel_reps = true, since 2026-11-25; files without the param launched every copy): each timed window and each warm-up is one launch of the copy kernel that repeats the copy reps_per_sample (or warm-up) times, every thread going on to its share of the next copy when done with its share of the last, as nvbandwidth's copy kernel does, so a window ramps up and drains once where a launch per copy paid both for every copy (0.7% of a 512 MiB pull on a 2× H100); smaller copies are a launch each, as an application issuing them makes them"
)
