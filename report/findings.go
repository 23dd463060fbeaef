package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// Severity ranks findings.
type Severity int

const (
	// Problem is a result that is wrong or a machine that is unhealthy:
	// failed measurements, data that did not verify, a slow link.
	Problem Severity = iota
	// Warning is a result to trust less: noisy figures, clocks that moved,
	// another program on the GPUs, IPC slower than in one process for no
	// reason the counters show.
	Warning
	// Note is behaviour that is known and explained, never a reason to
	// doubt the machine: a pair without peer access whose P2P tests could
	// not run, atomics that are not atomic over a link without native
	// atomics, IPC copies that cost more on the wire as the NVLink counters
	// show, a driver that differs from its documentation.
	Note
)

func (s Severity) String() string {
	switch s {
	case Problem:
		return "problem"
	case Warning:
		return "warning"
	}
	return "note"
}

// Finding is the result of one automatic check.
type Finding struct {
	Severity Severity
	// Check names the check: failed, bad_data, slow_pair, ipc_slower,
	// clock_change, temperature_rise, noisy, rounds_disagree, conformance,
	// incomplete, and
	// the health checks of results.HealthCheck (link_errors, link_down, ...).
	Check string
	// Subject is what the finding is about: "ce_read 7→0", "GPU 3".
	Subject string
	Message string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: %s: %s", f.Severity, f.Subject, f.Message)
}

// Thresholds of the checks.
const (
	// SlowPairFraction: a pair this far below the median of the pairs of
	// its performance rank is slow.
	SlowPairFraction = 0.10
	// IPCSlowerFraction: IPC figures this much worse than in-process ones.
	IPCSlowerFraction = 0.02
	// ClockChangeFraction: SM clock change between the start and end of a run.
	ClockChangeFraction = 0.05
	// TemperatureRiseC: temperature rise between the start and end of a run.
	TemperatureRiseC = 15
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
	// slowPairMinSize: smaller transfers are bound by per-transfer latency,
	// where pairs differ by noise rather than by link.
	slowPairMinSize = 1 << 20
)

// Findings runs every check on the run and returns what they found,
// problems first, then warnings, then notes. It never prints: the caller decides how to show them.
func Findings(run *results.Run) []Finding {
	ix := newPairIndex(run)
	var out []Finding
	out = append(out, incomplete(run)...)
	out = append(out, failures(run)...)
	out = append(out, slowPairs(run, ix)...)
	out = append(out, ipcSlower(run)...)
	out = append(out, stateChanges(run)...)
	out = append(out, health(run)...)
	out = append(out, noisy(run)...)
	out = append(out, roundsDisagree(run)...)
	out = append(out, conformance(run)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity < out[j].Severity })
	return out
}

// pairIndex looks up topology pairs.
type pairIndex struct {
	pairs  map[[2]int]results.Pair
	differ bool // pairs have several performance ranks
}

func newPairIndex(run *results.Run) *pairIndex {
	ix := &pairIndex{pairs: run.Topology.PairIndex()}
	ranks := map[int]bool{}
	for _, p := range ix.pairs {
		if r, ok := p.PerformanceRank(); ok {
			ranks[r] = true
		}
	}
	ix.differ = len(ranks) > 1
	return ix
}

func (ix *pairIndex) rank(src, dst int) (int, bool) {
	p, ok := ix.pairs[[2]int{src, dst}]
	if !ok {
		return 0, false
	}
	return p.PerformanceRank()
}

// pairName names an ordered pair of devices: "0→1".
func pairName(src, dst int) string { return fmt.Sprintf("%d→%d", src, dst) }

// transferName names a figure's transfer: "0→1", "host→2", "all→3" (the
// ends of aggregates are all devices), "host, all GPUs" (the total of a
// host test of every device at once).
func transferName(f *results.Figure) string {
	if f.Src < 0 && f.Dst < 0 && !f.Test.Info().NeedsPair {
		return "host, all GPUs"
	}
	end := func(d int) string {
		switch {
		case d >= 0:
			return strconv.Itoa(d)
		case f.Test.Info().NeedsPair:
			return "all"
		}
		return "host"
	}
	return end(f.Src) + "→" + end(f.Dst)
}

// FigureName names a figure for people: "ce_bidir write total 0→1 512 MiB",
// with the params that tell it from its neighbours.
func FigureName(f *results.Figure) string {
	parts := []string{string(f.Test)}
	for _, x := range []string{string(f.Direction), string(f.Part)} {
		if x != "" {
			parts = append(parts, x)
		}
	}
	parts = append(parts, transferName(f), results.FormatBytes(f.Size))
	for _, k := range []string{"variant", "op", "contended", "working_set", "measure", results.ParamIPCOpen} {
		if v := f.Params[k]; v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func incomplete(run *results.Run) []Finding {
	if run.Complete {
		return nil
	}
	msg := "the run did not complete; figures after the stop are missing"
	if run.Stopped != "" {
		msg = "the run stopped early (" + run.Stopped + "); figures after the stop are missing"
	}
	return []Finding{{Severity: Problem, Check: "incomplete", Subject: "run", Message: msg}}
}

// maxListed bounds the examples a finding lists.
const maxListed = 4

// failures reports errored figures and failed verifications, one finding
// per test and cause, with a few examples.
func failures(run *results.Run) []Finding {
	type group struct {
		check, test, cause string
		// why explains the failures (Run.ExplainedFailure): a note.
		why      string
		examples []string
		n        int
	}
	groups := map[string]*group{}
	var order []string
	for i := range run.Figures {
		f := &run.Figures[i]
		var check, cause, detail string
		switch {
		case f.Error != "":
			check, cause, detail = "failed", f.ErrorName, f.Error
			if cause == "" {
				cause = "error"
			}
		case f.Verify == results.VerifyFailed:
			check, cause, detail = "bad_data", "verification", f.VerifyDetail
		default:
			continue
		}
		why := run.ExplainedFailure(f)
		k := check + "\x00" + string(f.Test) + "\x00" + cause + "\x00" + why
		g := groups[k]
		if g == nil {
			g = &group{check: check, test: string(f.Test), cause: cause, why: why}
			groups[k] = g
			order = append(order, k)
		}
		g.n++
		if len(g.examples) < maxListed {
			ex := FigureName(f)
			if detail != "" && len(g.examples) == 0 {
				ex += ": " + detail
			}
			g.examples = append(g.examples, ex)
		}
	}
	var out []Finding
	for _, k := range order {
		g := groups[k]
		what := "could not be measured"
		if g.check == "bad_data" {
			what = "moved data that did not verify (the figures cannot be trusted)"
		} else if g.cause != "error" {
			what += " (" + g.cause + ")"
		}
		msg := fmt.Sprintf("%d figure%s %s: %s", g.n, plural(g.n), what, strings.Join(g.examples, "; "))
		if g.n > len(g.examples) {
			msg += fmt.Sprintf("; and %d more", g.n-len(g.examples))
		}
		sev := Problem
		if g.why != "" {
			sev, msg = Note, msg+". Known and explained: "+g.why
		}
		out = append(out, Finding{Severity: sev, Check: g.check, Subject: g.test, Message: msg})
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// slowPairs compares each pair with the pairs of the same performance rank
// on the same figure (test, engine, direction, part, size, params), and
// reports pairs 10% or more below their group's median, once per pair and
// test with the worst case.
func slowPairs(run *results.Run, ix *pairIndex) []Finding {
	worst := slowestOfGroups(run, ix)
	keys := make([]pairTest, 0, len(worst))
	for k := range worst {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.src != b.src {
			return a.src < b.src
		}
		if a.dst != b.dst {
			return a.dst < b.dst
		}
		return a.test < b.test
	})
	var out []Finding
	for _, k := range keys {
		w := worst[k]
		group := fmt.Sprintf("the %d pairs", w.peers)
		if r, ok := ix.rank(k.src, k.dst); ok && ix.differ {
			group = fmt.Sprintf("the %d pairs of performance rank %d", w.peers, r)
		}
		msg := fmt.Sprintf("%s GB/s is %.1f%% below the median of %s (%s GB/s) on %s",
			fmtGBps(w.v), 100*w.deficit, group, fmtGBps(w.med), FigureName(w.f))
		if w.cases > 1 {
			msg += fmt.Sprintf("; %d more of its figures of this test are %.0f%% or more below too", w.cases-1, 100*SlowPairFraction)
		}
		out = append(out, Finding{Severity: Problem, Check: "slow_pair", Subject: fmt.Sprintf("%s %d→%d", k.test, k.src, k.dst), Message: msg})
	}
	return out
}

// pairTest is a pair on one test.
type pairTest struct {
	test     results.Test
	src, dst int
}

// slowCase is a pair's worst figure on a test against the median of its
// group, and how many of its figures of the test are slow.
type slowCase struct {
	f       *results.Figure
	v, med  float64
	deficit float64
	peers   int
	cases   int
}

// slowestOfGroups groups the pair bandwidth figures by everything but the
// pair (the performance rank included) and returns, per pair and test, the
// figures SlowPairFraction or more below their group's median.
func slowestOfGroups(run *results.Run, ix *pairIndex) map[pairTest]*slowCase {
	type groupKey struct {
		test      results.Test
		engine    results.Engine
		direction results.Direction
		part      results.Part
		params    string
		size      uint64
		rank      int
	}
	type member struct {
		f *results.Figure
		v float64
	}
	groups := map[groupKey][]member{}
	for i := range run.Figures {
		f := &run.Figures[i]
		v, ok := f.Value()
		if f.Unit != results.UnitGBps || f.Src < 0 || f.Dst < 0 || f.Src == f.Dst || f.Size < slowPairMinSize || !ok {
			continue
		}
		rank, _ := ix.rank(f.Src, f.Dst)
		k := groupKey{f.Test, f.Engine, f.Direction, f.Part, f.IdentityParams(), f.Size, rank}
		groups[k] = append(groups[k], member{f, v})
	}
	worst := map[pairTest]*slowCase{}
	for _, ms := range groups {
		if len(ms) < 2 {
			continue
		}
		vs := make([]float64, len(ms))
		for i, m := range ms {
			vs[i] = m.v
		}
		sort.Float64s(vs)
		med := medianSorted(vs)
		for _, m := range ms {
			if med <= 0 || m.v > med*(1-SlowPairFraction) {
				continue
			}
			d := 1 - m.v/med
			pt := pairTest{m.f.Test, m.f.Src, m.f.Dst}
			w := worst[pt]
			if w == nil {
				w = &slowCase{}
				worst[pt] = w
			}
			w.cases++
			if d > w.deficit {
				w.f, w.v, w.med, w.deficit, w.peers = m.f, m.v, med, d, len(ms)
			}
		}
	}
	return worst
}

func medianSorted(vs []float64) float64 {
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

func fmtGBps(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// ipcSlower compares each figure across processes with the same figure
// measured within one process.
func ipcSlower(run *results.Run) []Finding {
	inProcess := sameProcessIndex(run, run)
	if len(inProcess) == 0 {
		return nil
	}
	// IPC copies made with the peer's buffer opened on the peer's GPU, by
	// the key of their same-process twin: the alternative to name when the
	// usual IPC copy is the slower one.
	onPeer := map[string]*results.Figure{}
	for i := range run.Figures {
		if f := &run.Figures[i]; f.OpenedOnPeerGPU() {
			if twin, ok := f.SameProcessTwin(); ok {
				onPeer[twin.Key()] = f
			}
		}
	}
	var out []Finding
	for i := range run.Figures {
		f := &run.Figures[i]
		twin, ok := f.SameProcessTwin()
		if !ok {
			continue
		}
		g := inProcess[twin.Key()]
		v, ok := f.Value()
		if g == nil || !ok {
			continue
		}
		w := g.Stats.Median
		change := v/w - 1 // > 0: the IPC figure is larger
		worse := -change
		if f.LowerIsBetter() {
			worse = change
		}
		if worse <= IPCSlowerFraction {
			continue
		}
		msg := fmt.Sprintf("across processes %s %s, in one process %s %s: %.1f%% worse (threshold %.0f%%)",
			fmtGBps(v), f.Unit, fmtGBps(w), g.Unit, 100*worse, 100*IPCSlowerFraction)
		wire, explained := wireCompared(f, g)
		msg += wire
		if alt := onPeer[twin.Key()]; alt != nil && !f.OpenedOnPeerGPU() {
			if a, ok := alt.Value(); ok {
				msg += fmt.Sprintf(". With the peer's buffer opened in the process's context on the peer's GPU (cuMemcpyPeerAsync between the two contexts), "+
					"the same copy moved %s %s (%.1f%% of one process)", fmtGBps(a), alt.Unit, 100*a/w)
			}
		}
		sev := Warning
		if explained {
			sev = Note
		}
		out = append(out, Finding{Severity: sev, Check: "ipc_slower", Subject: FigureName(f), Message: msg})
	}
	return out
}

// wireCompared says what the NVLink counters saw of an IPC bandwidth
// figure f and its same-process twin g, when both have counters, and
// whether they explain the difference: the links carried as many raw bytes
// per second (within IPCSlowerFraction), each payload byte costing more on
// the wire, as copy-engine copies across processes are known to.
func wireCompared(f, g *results.Figure) (string, bool) {
	a, ok1 := f.Wire()
	b, ok2 := g.Wire()
	if !ok1 || !ok2 || f.Unit != results.UnitGBps {
		return "", false
	}
	v, w := f.Stats.Median, g.Stats.Median
	s := fmt.Sprintf(". NVLink counters: %.3f raw bytes per payload byte across processes against %.3f in one process, "+
		"at %.0f and %.0f GB/s of raw bytes", a, b, v*a/partsOf(f), w*b/partsOf(g))
	explained := math.Abs(v*a/(w*b)-1) <= IPCSlowerFraction && a > b
	if explained {
		s += ": the links were as busy, each payload byte cost more on the wire"
	}
	return s, explained
}

// sameProcessIndex indexes by Key the usable figures of runs (the first
// of a key wins) that the IPC figures of ipc repeat within one process.
// Only tests and sizes with an IPC figure are keyed: keys cost time on runs
// of hundreds of thousands of figures.
func sameProcessIndex(ipc *results.Run, runs ...*results.Run) map[string]*results.Figure {
	type testSize struct {
		test results.Test
		size uint64
	}
	twins := map[testSize]bool{}
	for i := range ipc.Figures {
		f := &ipc.Figures[i]
		if t := f.Test.Info().SameProcess; t != "" {
			twins[testSize{t, f.Size}] = true
		}
	}
	idx := map[string]*results.Figure{}
	for _, r := range runs {
		for i := range r.Figures {
			f := &r.Figures[i]
			if !twins[testSize{f.Test, f.Size}] {
				continue
			}
			if v, ok := f.Value(); ok && v != 0 {
				if k := f.Key(); idx[k] == nil {
					idx[k] = f
				}
			}
		}
	}
	return idx
}

// stateChanges compares the NVML readings at the start and the end of the run.
func stateChanges(run *results.Run) []Finding {
	start := map[int]results.DeviceState{}
	for _, s := range run.Environment.StateStart {
		start[s.Index] = s
	}
	var out []Finding
	for _, e := range run.Environment.StateEnd {
		s, ok := start[e.Index]
		if !ok {
			continue
		}
		subject := fmt.Sprintf("GPU %d", e.Index)
		if s.SMClockMHz > 0 {
			change := float64(e.SMClockMHz-s.SMClockMHz) / float64(s.SMClockMHz)
			if math.Abs(change) > ClockChangeFraction {
				why := "throttling (power or heat) or a clock policy change during the run: later figures may be lower"
				if change > 0 {
					why = "the GPU was still at idle clocks when the run started: early figures may have been taken before clocks rose (lock clocks or warm up first)"
				}
				out = append(out, Finding{Severity: Warning, Check: "clock_change", Subject: subject,
					Message: fmt.Sprintf("SM clock %d MHz at the start, %d MHz at the end (%+.1f%%, threshold ±%.0f%%): %s",
						s.SMClockMHz, e.SMClockMHz, 100*change, 100*ClockChangeFraction, why)})
			}
		}
		if rise := e.TempC - s.TempC; rise > TemperatureRiseC {
			out = append(out, Finding{Severity: Warning, Check: "temperature_rise", Subject: subject,
				Message: fmt.Sprintf("%d °C at the start, %d °C at the end (+%d °C, threshold %d °C): check cooling before trusting long runs",
					s.TempC, e.TempC, rise, TemperatureRiseC)})
		}
	}
	return out
}

// health reports what the run's health readings say (Run.HealthFindings):
// a link or memory that failed during the run is a problem; clocks held down
// and other programs on the GPUs are warnings.
func health(run *results.Run) []Finding {
	var out []Finding
	for _, h := range run.HealthFindings() {
		sev := Problem
		if h.Check == results.HealthThrottle || h.Check == results.HealthOtherProcess {
			sev = Warning
		}
		out = append(out, Finding{Severity: sev, Check: string(h.Check), Subject: h.Subject(), Message: h.Message})
	}
	return out
}

// tally is what perTest found of one test's figures: of figures judged, n
// bad, the worst (highest score) of them.
type tally struct {
	test  results.Test
	n, of int
	worst *results.Figure
	score float64
}

// perTest judges the figures of run test by test, in the order of their
// first figure: judge says whether a figure counts (ok), whether it is bad,
// and its score; tests with no bad figure are left out.
func perTest(run *results.Run, judge func(f *results.Figure) (score float64, bad, ok bool)) []tally {
	index := map[results.Test]int{}
	var all []tally
	for i := range run.Figures {
		f := &run.Figures[i]
		score, bad, ok := judge(f)
		if !ok {
			continue
		}
		k, seen := index[f.Test]
		if !seen {
			k = len(all)
			index[f.Test] = k
			all = append(all, tally{test: f.Test})
		}
		t := &all[k]
		t.of++
		if bad {
			t.n++
			if t.worst == nil || score > t.score {
				t.worst, t.score = f, score
			}
		}
	}
	return slices.DeleteFunc(all, func(t tally) bool { return t.n == 0 })
}

// noisy reports large bandwidth figures whose CV exceeds NoisyCV, per test.
func noisy(run *results.Run) []Finding {
	var out []Finding
	for _, g := range perTest(run, func(f *results.Figure) (float64, bool, bool) {
		if f.Unit != results.UnitGBps || f.Size < LargeTransfer || f.Stats == nil || f.Failed() {
			return 0, false, false
		}
		return f.Stats.CV, f.Stats.CV > NoisyCV, true
	}) {
		out = append(out, Finding{Severity: Warning, Check: "noisy", Subject: string(g.test),
			Message: fmt.Sprintf("%d of %d figures of %s or more have a coefficient of variation above %.0f%%; the worst, %s, has %.2f%% (samples %s–%s GB/s): another load on the GPUs or links, or clocks that moved",
				g.n, g.of, results.FormatBytes(LargeTransfer), 100*NoisyCV, FigureName(g.worst), 100*g.worst.Stats.CV,
				fmtGBps(g.worst.Stats.Min), fmtGBps(g.worst.Stats.Max))})
	}
	return out
}

// roundMedians returns the medians of a measured figure's rounds when it
// has at least three of three samples or more (none otherwise: the median
// of two samples is their mean, which one outlier moves).
func roundMedians(f *results.Figure) []float64 {
	if f.Failed() || len(f.Rounds) < 3 || slices.Min(f.Rounds) < 3 {
		return nil
	}
	return results.RoundMedians(f.Samples, f.Rounds)
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

// roundsAgree says whether a figure was measured in three or more rounds
// whose medians agree.
func roundsAgree(f *results.Figure) bool {
	meds := roundMedians(f)
	return len(meds) > 0 && !disagree(meds)
}

// knownModes are the tests whose figures are known to settle in one of
// two modes for a whole process or chain (hardware.md), with what the
// finding says of them: their disagreeing rounds are a note.
var knownModes = map[results.Test]string{
	results.LatCopyDevice: "one copy's device time depends on state a process keeps (on the 2× H200 12.1 or 20.3 µs by process): the table reports it, nothing judges it; the back-to-back figure (lat_copy_b2b) is what each copy costs",
	results.LatChase:      "a chain followed beyond L2 settles in one of two modes (on the 2× H200 about 850 and 990 ns per load); every round builds a new chain, so the median is over the modes the rounds met and the interval spans them",
	results.IPCLatChase:   "a chain followed beyond L2 settles in one of two modes (on the 2× H200 about 850 and 990 ns per load); every round builds a new chain, so the median is over the modes the rounds met and the interval spans them",
}

// roundsDisagree reports, per test, the figures whose rounds disagree: the
// modes of known bimodal figures as notes, any other as a warning.
func roundsDisagree(run *results.Run) []Finding {
	var out []Finding
	for _, g := range perTest(run, func(f *results.Figure) (float64, bool, bool) {
		meds := roundMedians(f)
		if len(meds) == 0 {
			return 0, false, false
		}
		return slices.Max(meds) / slices.Min(meds), disagree(meds), true
	}) {
		meds := roundMedians(g.worst)
		vals := make([]string, len(meds))
		for i, m := range meds {
			if vals[i] = strconv.FormatFloat(m, 'g', 4, 64); m >= 1e4 {
				vals[i] = strconv.FormatFloat(m, 'f', 0, 64)
			}
		}
		msg := fmt.Sprintf("the rounds of %d of %d figures fall in groups more than %.0f%% apart; the widest, %s, has round medians %s %s",
			g.n, g.of, 100*DisagreeFraction, FigureName(g.worst), strings.Join(vals, ", "), g.worst.Unit)
		sev, why := Note, knownModes[g.test]
		if why == "" {
			sev, why = Warning, "something that stays for a while (where buffers landed, another load, clocks) moved these figures between rounds; their intervals cover it, but compare them with care"
		}
		out = append(out, Finding{Severity: sev, Check: "rounds_disagree", Subject: string(g.test), Message: msg + ": " + why})
	}
	return out
}

// conformance notes driver behaviour that differs from the documentation:
// it is the driver's, recorded as it is, and says nothing of the machine.
func conformance(run *results.Run) []Finding {
	if run.Topology == nil {
		return nil
	}
	var out []Finding
	for _, c := range run.Topology.Conformance {
		if c.Matches {
			continue
		}
		msg := fmt.Sprintf("%s on %s: the documentation says %s, the driver returned %s", c.Call, pairName(c.Src, c.Dst), c.Documented, c.Observed)
		if c.Note != "" {
			msg += " (" + c.Note + ")"
		}
		out = append(out, Finding{Severity: Note, Check: "conformance", Subject: c.Name, Message: msg})
	}
	return out
}

// partsOf is how many directions' payload a bandwidth figure adds up: 2 for
// the total of both directions, else 1.
func partsOf(f *results.Figure) float64 {
	if f.Part == results.PartTotal {
		return 2
	}
	return 1
}
