package verdict

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// Noise is about the measurement, not the machine. A figure is noisy when
// a large transfer's samples spread (CV above NoisyCV at LargeTransfer or
// more) or its rounds fall in groups further apart than DisagreeFraction.
// Each noisy figure is given the cause the run's own readings support:
// another program's process beside it, its GPUs' clocks held down or
// moving, errors on its GPUs' NVLinks, or a mode the test is known to
// keep for a whole process. A cause with a judged figure among its noisy
// figures warns; one line per cause, not per test. Noise without a cause
// the evidence supports is a note that names the noisy paths and what the
// noise does to their intervals: nothing in the run blames the machine.
const (
	// NoisyCV: coefficient of variation above which a large bandwidth
	// figure is noisy.
	NoisyCV = 0.01
	// LargeTransfer is the size from which bandwidth figures should be
	// steady (CV ≤ NoisyCV).
	LargeTransfer = 256 << 20
	// DisagreeFraction: the rounds of a figure disagree when their medians
	// fall in groups further apart than this, relative to the figure's
	// median (two modes): noise spreads round medians evenly (by up to 6%
	// between processes of the 2× H200 at small sizes), a mode splits them.
	DisagreeFraction = 0.10
)

// knownModes are the tests whose figures are known to settle in one of
// two modes for a whole process or chain (hardware.md): their rounds that
// disagree are explained.
var knownModes = map[results.Test]string{
	results.LatCopyDevice: unjudged[results.LatCopyDevice],
	results.LatChase:      "a chain followed beyond L2 settles in one of two modes (on the 2× H200 about 850 and 990 ns per load); every round builds a new chain, so the median is over the modes the rounds met and the interval spans them",
	results.IPCLatChase:   "a chain followed beyond L2 settles in one of two modes (on the 2× H200 about 850 and 990 ns per load); every round builds a new chain, so the median is over the modes the rounds met and the interval spans them",
}

// unjudged are the tests whose figures nothing holds to a bound or to
// each other (the tables report them), and why.
var unjudged = map[results.Test]string{
	results.LatCopyDevice: "one copy's device time depends on state a process keeps (on the 2× H200 12.1 or 20.3 µs by process): the table reports it, nothing judges it; the back-to-back figure (lat_copy_b2b) is what each copy costs",
	results.LatCopyHost:   "a small copy's time from the host's call to its return is the host's scheduling as much as the link's (separate processes of one machine read it up to 25% apart, compare/FALLBACK.md): the table reports it, nothing judges it",
}

// Unjudged says why the figures of test t are judged by nothing (not by
// check, nor by fleet among nodes); "" for a test whose figures may be
// judged.
func Unjudged(t results.Test) string { return unjudged[t] }

// WarnOnly reports whether the figures of test t warn at most, never fail:
// small copies, which move between modes with how they were queued (their
// latency bounds, bound.modes; and among a fleet's nodes).
func WarnOnly(t results.Test) bool { return smallCopy(t) }

// noisyFigure is a figure that varied more than it should, with its cause.
type noisyFigure struct {
	f        *results.Figure
	disagree bool // its rounds disagree (else its samples spread)
	cause    string
	judged   bool
}

// noiseItems finds the noisy figures and gives each line per cause;
// judged is false when the run has no figure a noise rule looks at.
func noiseItems(run *results.Run, judged map[string]bool, h *health, c *clocks) (items []results.CheckItem, any bool) {
	pairs := run.Topology.PairIndex()
	devices := run.DeviceIndices()
	causeOf := func(f *results.Figure, disagree bool) string {
		if len(f.OtherProcesses) > 0 {
			return fmt.Sprintf("other programs' processes (pids %v) were on the figures' GPUs", f.OtherProcesses)
		}
		for _, d := range f.GPUs(devices) {
			if why := c.moved[d]; why != "" {
				return fmt.Sprintf("GPU %d's clocks moved or were held down (%s)", d, why)
			}
		}
		if p, ok := pairs[[2]int{f.Src, f.Dst}]; ok && p.NVLinks > 0 && (h.erring[f.Src] || h.erring[f.Dst]) {
			return "the figures' NVLinks replayed or retrained during the run (see the links check)"
		}
		if why := knownModes[f.Test]; disagree && why != "" {
			return "known modes: " + why
		}
		return ""
	}
	var noisy []noisyFigure
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Failed() || f.Stats == nil {
			continue
		}
		// A CV needs samples: a figure of one value (an import's) has
		// none to spread.
		large := f.Unit == results.UnitGBps && f.Size >= LargeTransfer && f.Stats.N > 1
		meds := roundMedians(f)
		any = any || large || len(meds) > 0
		dis := len(meds) > 0 && disagree(meds)
		if !dis && !(large && f.Stats.CV > NoisyCV) {
			continue
		}
		noisy = append(noisy, noisyFigure{f: f, disagree: dis, cause: causeOf(f, dis), judged: judged[f.Key()]})
	}
	byCause := map[string][]noisyFigure{}
	var order []string
	for _, n := range noisy {
		if byCause[n.cause] == nil {
			order = append(order, n.cause)
		}
		byCause[n.cause] = append(byCause[n.cause], n)
	}
	for _, cause := range order {
		ns := byCause[cause]
		if cause == "" {
			items = append(items, unexplainedNoise(ns, len(h.read) > 0 || c.judged))
			continue
		}
		st := results.StatusNote
		if strings.HasPrefix(cause, "known modes") {
			var tests []string
			for _, n := range ns {
				if t := string(n.f.Test); !slices.Contains(tests, t) {
					tests = append(tests, t)
				}
			}
			items = append(items, results.CheckItem{Status: st, Subject: strings.Join(tests, ", "),
				Message: fmt.Sprintf("the rounds of %d figure%s fall in groups more than %.0f%% apart (%s): %s", len(ns), units.Plural(len(ns), "", "s"), 100*DisagreeFraction, worstRounds(ns), cause)})
			continue
		}
		judgedN := 0
		for _, n := range ns {
			if n.judged {
				judgedN++
			}
		}
		msg := fmt.Sprintf("%d figures varied more than a steady measurement does (%s): %s", len(ns), noisePaths(ns), cause)
		if judgedN > 0 {
			st = results.StatusWarn
			msg += fmt.Sprintf("; %d of them judged: trust them less, and rerun once the cause is gone", judgedN)
		} else {
			msg += "; none of them is judged"
		}
		items = append(items, results.CheckItem{Status: st, Subject: pathSubject(ns), Message: msg})
	}
	return items, any
}

// oneValueEach reports whether every figure of run that has statistics has
// them of one value (an import of a tool that prints one value a figure):
// nothing for the noise check to hold steady.
func oneValueEach(run *results.Run) bool {
	n := 0
	for i := range run.Figures {
		if st := run.Figures[i].Stats; st != nil {
			if st.N > 1 {
				return false
			}
			n++
		}
	}
	return n > 0
}

// unexplainedNoise is the note of the noisy figures no reading explains.
func unexplainedNoise(ns []noisyFigure, readings bool) results.CheckItem {
	why := "the run's readings name no cause (no other program's process, clocks neither held down nor moved, no NVLink replay or retraining): the variation is the measurement's on these paths (a VM's host path varies so), not a fault of the machine the run can name"
	if !readings {
		why = "the run has no health readings to tell a cause by"
	}
	return results.CheckItem{Status: results.StatusNote, Subject: pathSubject(ns),
		Message: fmt.Sprintf("%d figures varied more than a steady measurement does (%s): %s; their intervals are wider for it, so compare them with care", len(ns), noisePaths(ns), why)}
}

// noisePaths names the paths of noisy figures with their tests and what
// the noise does to their intervals.
func noisePaths(ns []noisyFigure) string {
	tests := map[string][]string{}
	var order []string
	cvLo, cvHi, ivHi := 1.0, 0.0, 0.0
	for _, n := range ns {
		p := pathName(n.f)
		if tests[p] == nil {
			order = append(order, p)
		}
		if t := string(n.f.Test); !slices.Contains(tests[p], t) {
			tests[p] = append(tests[p], t)
		}
		cvLo, cvHi = min(cvLo, n.f.Stats.CV), max(cvHi, n.f.Stats.CV)
		if r := n.f.Stats.Rounds; r != nil && n.f.Stats.Median > 0 {
			ivHi = max(ivHi, (r.MedianHi-r.MedianLo)/2/n.f.Stats.Median)
		}
	}
	var parts []string
	for _, p := range order {
		parts = append(parts, p+": "+strings.Join(tests[p], ", "))
	}
	s := strings.Join(parts, "; ") + fmt.Sprintf("; sample CV %.1f–%.1f%%", 100*cvLo, 100*cvHi)
	if ivHi > 0 {
		s += fmt.Sprintf(", intervals up to ±%.1f%%", 100*ivHi)
	}
	return s
}

// pathSubject names the paths of noisy figures, for an item's subject.
func pathSubject(ns []noisyFigure) string {
	var ps []string
	for _, n := range ns {
		if p := pathName(n.f); !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	if len(ps) > 3 {
		return fmt.Sprintf("%s and %d more paths", strings.Join(ps[:3], ", "), len(ps)-3)
	}
	return strings.Join(ps, ", ")
}

// pathName names what a figure's data crossed.
func pathName(f *results.Figure) string {
	switch {
	case f.Src >= 0 && f.Src == f.Dst:
		return fmt.Sprintf("within GPU %d", f.Src)
	case f.Src >= 0 && f.Dst >= 0:
		return fmt.Sprintf("GPU %d→%d", f.Src, f.Dst)
	case f.Test.Info().NeedsPair:
		return "every GPU at once"
	case f.Src >= 0:
		return fmt.Sprintf("GPU %d→host", f.Src)
	case f.Dst >= 0:
		return fmt.Sprintf("host→GPU %d", f.Dst)
	}
	return "host, every GPU"
}

// worstRounds writes the round medians of the figure whose rounds lie
// furthest apart.
func worstRounds(ns []noisyFigure) string {
	var worst *results.Figure
	ratio := 0.0
	for _, n := range ns {
		meds := roundMedians(n.f)
		if r := slices.Max(meds) / slices.Min(meds); worst == nil || r > ratio {
			worst, ratio = n.f, r
		}
	}
	meds := roundMedians(worst)
	vals := make([]string, len(meds))
	for i, m := range meds {
		if vals[i] = strconv.FormatFloat(m, 'g', 4, 64); m >= 1e4 {
			vals[i] = strconv.FormatFloat(m, 'f', 0, 64)
		}
	}
	return fmt.Sprintf("the widest, %s, has round medians %s %s", results.FigureName(worst), strings.Join(vals, ", "), worst.Unit)
}

// roundMedians returns the medians of a measured figure's rounds when it
// has at least three of three samples or more (none otherwise: the median
// of two samples is their mean, which one outlier moves).
func roundMedians(f *results.Figure) []float64 {
	if f.Failed() || len(f.Rounds) < 3 || slices.Min(f.Rounds) < 3 {
		return nil
	}
	return figstats.RoundMedians(f.Samples, f.Rounds)
}

// disagree says whether round medians fall in groups further apart than
// DisagreeFraction of their median: two neighbours of their sorted order
// differ by more.
func disagree(meds []float64) bool {
	sorted := slices.Sorted(slices.Values(meds))
	mid := sorted[len(sorted)/2]
	for i := 1; i < len(sorted); i++ {
		if mid > 0 && (sorted[i]-sorted[i-1])/mid > DisagreeFraction {
			return true
		}
	}
	return false
}

// RoundsAgree says whether a figure was measured in three or more rounds
// whose medians agree (none further apart than DisagreeFraction): a
// figure a summary may quote alone.
func RoundsAgree(f *results.Figure) bool {
	meds := roundMedians(f)
	return len(meds) > 0 && !disagree(meds)
}
