package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// Judge holds run to exp and returns its verdict: every figure exp judges,
// every figure across processes held to its twin in one process, every
// figure that failed, and the checks of the run in the order a report
// lists them (see checkKinds). The error, a *SpecError, is for
// expectations that do not fit the run (a link class no pair has, a
// baseline that shares no figure with it); the command line exits 2 for it.
//
// The verdict is PASS, WARN or FAIL by its worst check; NOT JUDGED where
// nothing failed and no figure was judged (the bandwidth, latency and pairs
// checks judged nothing): a file without a judged figure is not a machine
// that passed, even when its health readings are clean (a link at half
// speed shows in its figures, not in its error counters), nor one that
// merely warned — a warning (--no-verify, --allow-busy) never turns
// "nothing judged" into a status automation accepts. The warnings stay in
// the checks. A check with nothing to judge by is not judged, never PASS.
func Judge(run *results.Run, exp Expectations) (*results.Verdict, error) {
	judge, err := exp.forRun(run)
	if err != nil {
		return nil, err
	}
	v := &results.Verdict{Status: results.StatusPass}
	// The figures in one process (and every figure that failed), then those
	// across processes, held to their twins in one process.
	byKey := map[string]results.FigureVerdict{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Test.Info().SameProcess != "" && !f.Failed() {
			continue
		}
		if fv, ok := judgeFigure(run, f, judge); ok {
			byKey[fv.Key] = fv
		}
	}
	ipcFigures, ipcChecked, ipcJudged := ipcJudge(run, func(key string) (results.FigureVerdict, bool) {
		fv, ok := byKey[key]
		return fv, ok
	})
	for _, fv := range ipcFigures {
		byKey[fv.Key] = fv
	}
	// Latency across processes is held to the table too, where it has
	// the kind: the worse of the two verdicts stands, and the latency
	// check lists it.
	ipcTable := map[string]bool{}
	if m, ok := exp.(*model); ok {
		for i := range run.Figures {
			f := &run.Figures[i]
			if f.Test.Info().SameProcess == "" || f.Unit == results.UnitGBps || f.Failed() {
				continue
			}
			b, ok := latBound(run, f, m.latHeld, m.latNote, m.peerLinks, m.latBounds)
			if !ok {
				continue
			}
			v, _ := f.Value()
			tv := b.judge(f, v)
			if old, had := byKey[tv.Key]; !had || !old.Status.Worse(tv.Status) {
				byKey[tv.Key] = tv
				ipcTable[tv.Key] = true
			}
		}
	}
	// The verdicts in the run's order.
	figs := map[string]*results.Figure{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if fv, ok := byKey[f.Key()]; ok {
			v.Figures = append(v.Figures, fv)
			figs[fv.Key] = f
			delete(byKey, f.Key())
		}
	}
	v.Expectations = exp.Source()
	j := &judgement{run: run, v: v, figs: figs, health: readHealth(run), clocks: readClocks(run),
		ipcItems: ipcChecked, ipcJudged: ipcJudged, ipcTable: ipcTable}
	j.health.bandwidth = j.peerBandwidth
	v.Checks = j.checks()
	judged := false // some check of the figures judged something
	for _, c := range v.Checks {
		if c.Status.Worse(v.Status) {
			v.Status = c.Status
		}
		judged = judged || figureCheck(c.Name) && c.Status != results.StatusNotJudged && c.Status != results.StatusNote
		if c.Status == results.StatusFail || c.Status == results.StatusWarn {
			if a := adviceFor(c); a != "" && !slices.Contains(v.NextSteps, a) {
				v.NextSteps = append(v.NextSteps, a)
			}
		}
	}
	if !judged && v.Status != results.StatusFail {
		v.Status = results.StatusNotJudged
	}
	clipTexts(v)
	return v, nil
}

// Record gives run its verdict against exp (the expectation table of its
// machine when nil), naming build as its judge.
func Record(run *results.Run, exp Expectations, build string) error {
	if exp == nil {
		exp = Model(run)
	}
	v, err := Judge(run, exp)
	if err != nil {
		return err
	}
	v.Build = build
	run.Verdict = v
	return nil
}

// clipTexts bounds the verdict's texts as a results file bounds them
// (results.ClipText): texts quoted from a file or a spec (a path, a name)
// never make a verdict that would not read back.
func clipTexts(v *results.Verdict) {
	src := &v.Expectations
	src.Name, src.File = results.ClipText(src.Name), results.ClipText(src.File)
	for i := range src.Notes {
		src.Notes[i] = results.ClipText(src.Notes[i])
	}
	for i := range v.NextSteps {
		v.NextSteps[i] = results.ClipText(v.NextSteps[i])
	}
	for i := range v.Checks {
		c := &v.Checks[i]
		c.Summary = results.ClipText(c.Summary)
		for j := range c.Items {
			c.Items[j].Subject, c.Items[j].Message = results.ClipText(c.Items[j].Subject), results.ClipText(c.Items[j].Message)
		}
	}
	for i := range v.Figures {
		v.Figures[i].Reason = results.ClipText(v.Figures[i].Reason)
	}
}

// Failing reports whether a verdict fails automation: a FAIL, or with
// strict a WARN too. The command line exits 5 for a failing verdict and 0
// otherwise.
func Failing(v *results.Verdict, strict bool) bool {
	return v.Status == results.StatusFail || strict && v.Status == results.StatusWarn
}

// judgeFigure judges one figure: a figure that failed FAILs, or is a NOTE
// when the run explains its failure (Run.ExplainedFailure); the others as
// judge says. A figure short of its bound that was measured beside another
// program WARNs rather than FAILs: the shortfall may be that program's.
func judgeFigure(run *results.Run, f *results.Figure, judge figureJudge) (results.FigureVerdict, bool) {
	if f.Failed() {
		fv := results.FigureVerdict{Key: f.Key(), Status: results.StatusFail}
		what := "could not be measured (" + f.FailureLabel() + "): " + f.Error
		if f.Error == "" {
			what = "moved data that did not verify: " + f.VerifyDetail
		}
		fv.Reason = what
		if why := run.ExplainedFailure(f); why != "" {
			fv.Status, fv.Reason = results.StatusNote, what+"; known and explained: "+why
		}
		return fv, true
	}
	fv, ok := judge(f)
	if ok && fv.Status == results.StatusFail && len(f.OtherProcesses) > 0 {
		fv.Status = results.StatusWarn
		fv.Reason += fmt.Sprintf("; measured beside other programs' processes (pids %v): the shortfall may be theirs, rerun on idle GPUs", f.OtherProcesses)
	}
	return fv, ok
}

// figureCheck reports whether the check of that name judges figures of the
// machine: a verdict passes only where one of them judged something.
func figureCheck(name string) bool {
	return name == "bandwidth" || name == "latency" || name == "pairs"
}

// checkKind is one line of a verdict, and what to do when it fails or
// warns. machine is true for the checks that judge the machine; the others
// judge the run (its hygiene and its measurements).
type checkKind struct {
	name, title string
	machine     bool
	advice      string
}

// checkKinds are a verdict's checks, in order.
var checkKinds = []checkKind{
	{name: "bandwidth", title: "Bandwidth", machine: true,
		advice: "Bandwidth below expectation: rerun p2pbench all to confirm; if a pair stays low, check its links (nvidia-smi nvlink -s and -e, nvidia-smi topo -m) and its GPUs' PCIe links (nvidia-smi -q -d PCIE), then open a ticket with the vendor with this report."},
	{name: "latency", title: "Latency and atomics", machine: true,
		advice: "Latency or atomics outside expectation: rerun to confirm (small figures vary from run to run), then check the pair's link as for bandwidth."},
	{name: "links", title: "NVLink and PCIe links", machine: true}, // advice: linksAdvice
	{name: "memory", title: "GPU memory", machine: true,
		advice: "Memory errors: the GPU needs service (reset it for a pending row remap; have it replaced if remapping failed or uncorrected errors keep rising)."},
	{name: "processes", title: "Other programs on the GPUs",
		advice: "Other programs used the GPUs during the run (measured with --allow-busy): rerun on idle GPUs before trusting the figures."},
	{name: "clocks", title: "Clocks and temperature",
		advice: "Clocks held down or moving: check cooling, power limits and application clocks (nvidia-smi -q -d PERFORMANCE,CLOCK), then rerun."},
	{name: "measurements", title: "Every figure measured",
		advice: "Figures failed or did not verify: rerun; report a failure that stays, with its message, to p2pbench's maintainers (to the vendor where the driver refused a pair)."},
	{name: "pairs", title: "Pairs alike within their link class", machine: true,
		advice: "A pair slower than the others of its link class: check that pair's links as for bandwidth, then rerun to confirm."},
	{name: "noise", title: "Figures steady",
		advice: "Figures varied with a cause the run's readings show: remove the cause (another program, clocks, link errors) and rerun."},
	{name: "ipc", title: "Across processes, against one process",
		advice: "Copies across processes short of the same in one process: rerun the ipc tests and compare the report's IPC arrangements: one short while the others are not points at how the copies are issued, not at the links."},
	{name: "driver", title: "Driver behaviour"},
}

// adviceFor is what to do about a check that failed or warned.
func adviceFor(c results.Check) string {
	if c.Name == "links" {
		return linksAdvice(c)
	}
	return kindOf(c.Name).advice
}

// peerBandwidth says how GPU dev's judged copies to and from other GPUs
// stood against what was expected of them: "its copies between GPUs at
// 99–100% of expected (8 figures)"; "" when none was judged against an
// expected figure.
// The verdicts are gone through once for every GPU (peerPct): once a GPU
// they were 11,500 figures looked up 72 times at 72 GPUs.
func (j *judgement) peerBandwidth(dev int) string {
	if j.peerPct == nil {
		j.peerPct = map[int][]float64{}
		for _, fv := range j.v.Figures {
			f := j.figs[fv.Key]
			if f == nil || f.Unit != results.UnitGBps || f.Failed() || fv.Expected <= 0 || f.Src < 0 || f.Dst < 0 || f.Src == f.Dst ||
				f.Test.Info().SameProcess != "" {
				continue
			}
			for _, d := range []int{f.Src, f.Dst} {
				j.peerPct[d] = append(j.peerPct[d], 100*fv.Value/fv.Expected)
			}
		}
	}
	pct := j.peerPct[dev]
	if len(pct) == 0 {
		return ""
	}
	lo, hi := fmt.Sprintf("%.0f", slices.Min(pct)), fmt.Sprintf("%.0f", slices.Max(pct))
	span := lo
	if lo != hi {
		span = lo + "–" + hi
	}
	return fmt.Sprintf("its copies between GPUs at %s%% of expected (%d figure%s)", span, len(pct), units.Plural(len(pct), "", "s"))
}

func kindOf(name string) checkKind {
	i := slices.IndexFunc(checkKinds, func(k checkKind) bool { return k.name == name })
	return checkKinds[i]
}

// MachineCheck reports whether the check of that name judges the machine
// (its bandwidth, links, memory, pairs) rather than the run (its hygiene
// and measurements): a report says a machine is not as good as it should
// be only when one of these fails.
func MachineCheck(name string) bool {
	i := slices.IndexFunc(checkKinds, func(k checkKind) bool { return k.name == name })
	return i >= 0 && checkKinds[i].machine
}

// maxItems bounds the items a check lists; the figure verdicts hold them all.
const maxItems = 20

// judgement is what Judge gathered to make the checks.
type judgement struct {
	run       *results.Run
	v         *results.Verdict
	figs      map[string]*results.Figure
	health    *health
	clocks    *clocks
	ipcItems  []results.CheckItem
	ipcJudged bool
	// ipcTable are the figures across processes the latency table judged.
	ipcTable map[string]bool
	// peerPct are each GPU's judged copies to and from other GPUs, in
	// percent of what was expected of them (peerBandwidth's), made once.
	peerPct map[int][]float64
}

// checks makes the verdict's checks.
func (j *judgement) checks() []results.Check {
	run := j.run
	judgedKeys := map[string]bool{}
	for _, fv := range j.v.Figures {
		judgedKeys[fv.Key] = true
	}
	var out []results.Check
	for _, k := range checkKinds {
		c := results.Check{Name: k.name, Title: k.title}
		var judged bool
		switch k.name {
		case "bandwidth", "latency":
			judged = j.figureCheck(&c, k.name == "bandwidth")
		case "links":
			c.Items, _ = j.health.linkItems()
			c.Summary, judged = j.health.linksSummary()
			c.Short = j.health.linksShort()
		case "memory":
			c.Items, judged = j.health.memoryItems()
			c.Summary = "no uncorrected ECC error and no row remapping during the run"
			c.Short = "no ECC error, no row remapping"
		case "processes":
			c.Items, judged = j.health.processItems()
			c.Summary = "no other program's compute process on the GPUs"
			c.Short = "none"
		case "clocks":
			c.Items, judged = j.clocks.items, j.clocks.judged
			c.Summary = j.clocks.summary(run)
			c.Short = "clocks and temperatures steady"
		case "measurements":
			c.Items, judged = measurementItems(run), len(run.Figures) > 0
			c.Summary = measurementSummary(run)
			c.Short = measurementShort(run)
		case "pairs":
			c.Items, judged, c.Summary = pairItems(run)
			c.Short = "no pair low within its link class"
			if !judged {
				c.Short = fmt.Sprintf("no link class of %d pairs or more", pairMinClass)
			}
		case "noise":
			c.Items, judged = noiseItems(run, judgedKeys, j.health, j.clocks)
			c.Summary = fmt.Sprintf("large transfers steady (CV at most %.0f%% from %s), rounds agree (within %.0f%%)",
				100*NoisyCV, results.FormatBytes(LargeTransfer), 100*DisagreeFraction)
			c.Short = "large transfers steady, rounds agree"
		case "ipc":
			c.Items, judged = j.ipcItems, j.ipcJudged
			c.Summary = fmt.Sprintf("figures across processes within the noise (%.0f%% or more) of the same figures in one process", 100*IPCNoiseFloor)
			c.Short = "as in one process, within the noise"
		case "driver":
			c.Items, judged = conformanceItems(run), run.Topology != nil && len(run.Topology.Conformance) > 0
			c.Summary = "the driver answers as documented"
			c.Short = "answers as documented"
		}
		if !judged && len(c.Items) == 0 {
			if k.name == "noise" && oneValueEach(run) {
				c.Status = results.StatusNotJudged
				c.Summary = "not judged: one value per figure, without samples or rounds to hold steady"
				c.Short = "not judged: one value per figure"
				out = append(out, c)
				continue
			}
			if k.name == "ipc" || k.name == "driver" || k.name == "noise" {
				continue // nothing of the kind in this run
			}
			c.Status = results.StatusNotJudged
			if k.name != "links" && k.name != "pairs" { // their summaries say why
				c.Summary, c.Short = notJudged(k.name, j.v), notJudgedShort(k.name, j.v)
			}
			if u := j.unplaced(); k.name == "bandwidth" && u > 0 {
				c.Summary = fmt.Sprintf("%d figure%s between GPUs not judged: the run records no topology (which links join its GPUs), which the table needs to judge them", u, units.Plural(u, "", "s"))
				c.Short = "no topology to judge by"
			}
			out = append(out, c)
			continue
		}
		summarize(&c, judged)
		out = append(out, c)
	}
	return out
}

// MaxShort is the most characters a check's Short holds: a screen of 100
// columns holds it beside the check's status and title.
const MaxShort = 46

// notJudgedShort says in a few words why a check had nothing to judge.
func notJudgedShort(name string, v *results.Verdict) string {
	switch name {
	case "bandwidth":
		return "no figure the expectations cover"
	case "latency":
		if v.Expectations.Kind == results.ExpectModel && slices.ContainsFunc(v.Expectations.Notes, latencyMethodNote) {
			return "measured another way than the table"
		}
		if v.Expectations.Kind == results.ExpectModel {
			return "none in the table: give --expect or --baseline"
		}
		return "no figure the expectations cover"
	case "measurements":
		return "the run has no figures"
	case "clocks":
		return "no clock readings"
	}
	return "no health readings (NVML)"
}

// ShortOf is a check's outcome in a few words: its Short, or of a file of
// an older build, where it has none, the count and subjects of what failed
// and warned ("" for a check that did neither: its Summary says it).
func ShortOf(c results.Check) string {
	if c.Short != "" {
		return c.Short
	}
	fails, warns := 0, 0
	for _, it := range c.Items {
		switch it.Status {
		case results.StatusFail:
			fails++
		case results.StatusWarn:
			warns++
		}
	}
	if fails+warns == 0 {
		return ""
	}
	return badShort(c.Items, fails, warns)
}

// badShort says in a few words how many items of a check failed and
// warned, naming as many of their subjects as fit MaxShort: "2 warned: GPU
// 0, GPU 1", "1 failed, 2 warned: GPU 0 NVLink 3 and 2 more", "3 warned".
func badShort(items []results.CheckItem, fails, warns int) string {
	var counts []string
	if fails > 0 {
		counts = append(counts, fmt.Sprintf("%d failed", fails))
	}
	if warns > 0 {
		counts = append(counts, fmt.Sprintf("%d warned", warns))
	}
	head := strings.Join(counts, ", ")
	var subjects []string
	seen := map[string]bool{}
	for _, it := range items {
		if (it.Status == results.StatusFail || it.Status == results.StatusWarn) && !seen[it.Subject] {
			seen[it.Subject] = true
			subjects = append(subjects, it.Subject)
		}
	}
	for n := len(subjects); n > 0; n-- {
		s := head + ": " + strings.Join(subjects[:n], ", ")
		if n < len(subjects) {
			s += fmt.Sprintf(" and %d more", len(subjects)-n)
		}
		if len([]rune(s)) <= MaxShort {
			return s
		}
	}
	return head
}

// notJudged says why a check had nothing to judge.
func notJudged(name string, v *results.Verdict) string {
	switch name {
	case "bandwidth":
		return "no bandwidth figure that the expectations cover"
	case "latency":
		if v.Expectations.Kind == results.ExpectModel && slices.ContainsFunc(v.Expectations.Notes, latencyMethodNote) {
			return "the expectation table has these GPUs' latency and atomic figures only as other builds measured them, or from fewer than two other machines (see the notes): give --expect or --baseline to judge them"
		}
		if v.Expectations.Kind == results.ExpectModel {
			return "the expectation table has no latency or atomic figure of these GPUs and paths: give --expect or --baseline to judge them"
		}
		return "no latency or atomic figure that the expectations cover"
	case "measurements":
		return "the run has no figures"
	case "clocks":
		return "no clock readings during or at the end of the run"
	}
	return "the run has no health readings (NVML) to judge by"
}

// summarize sets a check's status to its worst item's (not judged when it
// judged nothing and has only notes), and its summary to the failures and
// warnings when it has any; only the first maxItems items are kept.
func summarize(c *results.Check, judged bool) {
	c.Status = results.StatusPass
	if !judged {
		c.Status = results.StatusNotJudged
	}
	bad, fails, notes := 0, 0, 0
	for _, it := range c.Items {
		if it.Status.Worse(c.Status) {
			c.Status = it.Status
		}
		if it.Status == results.StatusFail || it.Status == results.StatusWarn {
			bad++
			if it.Status == results.StatusFail {
				fails++
			}
		} else {
			notes++
		}
	}
	slices.SortStableFunc(c.Items, func(a, b results.CheckItem) int {
		switch {
		case a.Status.Worse(b.Status):
			return -1
		case b.Status.Worse(a.Status):
			return 1
		}
		return 0
	})
	if bad > 0 {
		if c.Name != "bandwidth" && c.Name != "latency" { // theirs count the figures judged
			c.Short = badShort(c.Items, fails, bad-fails)
		}
		first := c.Items[0]
		c.Summary = first.Subject + ": " + first.Message
		if bad > 1 {
			var counts []string
			if fails > 0 {
				counts = append(counts, fmt.Sprintf("%d failed", fails))
			}
			if w := bad - fails; w > 0 {
				counts = append(counts, fmt.Sprintf("%d warned", w))
			}
			c.Summary = fmt.Sprintf("%s; the first: %s", strings.Join(counts, ", "), c.Summary)
		}
	} else if notes > 0 {
		c.Summary += fmt.Sprintf(", but for %d known and explained (see the note%s)", notes, units.Plural(notes, "", "s"))
		if n := fmt.Sprintf("%s (%d note%s)", c.Short, notes, units.Plural(notes, "", "s")); len([]rune(n)) <= MaxShort {
			c.Short = n
		}
	}
	if n := len(c.Items); n > maxItems {
		c.Items = c.Items[:maxItems]
		c.Summary += fmt.Sprintf(" (%d more)", n-maxItems)
	}
}

// figureCheck fills the bandwidth check (bw) or the latency and atomics
// check from the verdicts of the figures in one process of their units;
// false when there are none.
func (j *judgement) figureCheck(c *results.Check, bw bool) bool {
	count := map[results.Status]int{}
	n := 0
	for _, fv := range j.v.Figures {
		f := j.figs[fv.Key]
		if (f.Unit == results.UnitGBps) != bw || f.Failed() || f.Test.Info().SameProcess != "" && !j.ipcTable[fv.Key] {
			continue // failed figures are the measurements check's, those across processes the ipc check's (but latency the table holds)
		}
		n++
		count[fv.Status]++
		if fv.Status == results.StatusFail || fv.Status == results.StatusWarn || fv.Status == results.StatusNote {
			c.Items = append(c.Items, results.CheckItem{Status: fv.Status, Subject: results.FigureName(f), Message: fv.Reason})
		}
	}
	if n == 0 {
		return false
	}
	var parts []string
	for _, s := range []results.Status{results.StatusFail, results.StatusWarn, results.StatusPass} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s.Label()))
		}
	}
	c.Summary = fmt.Sprintf("%d figure%s judged: %s", n, units.Plural(n, "", "s"), strings.Join(parts, ", "))
	c.Short = fmt.Sprintf("%d figure%s: %s", n, units.Plural(n, "", "s"), strings.Join(parts, ", "))
	if len(parts) == 1 {
		c.Short = fmt.Sprintf("%d figure%s, all %s", n, units.Plural(n, "", "s"), parts[0][strings.IndexByte(parts[0], ' ')+1:])
	}
	if bw {
		if u := j.unplaced(); u > 0 {
			c.Summary += fmt.Sprintf("; %d figure%s between GPUs not judged: the run records no topology (which links join its GPUs), which the table needs to judge them", u, units.Plural(u, "", "s"))
			if s := fmt.Sprintf("%s; %d not judged", c.Short, u); len([]rune(s)) <= MaxShort {
				c.Short = s
			}
		}
	}
	return true
}

// unplaced counts the figures between GPUs that p2pbench's expectation
// table would judge were the GPUs' links known, in a run that records no
// topology (an import: nvbandwidth and nccl-tests do not print it), so
// that a PASS of the host figures alone says what it left out.
func (j *judgement) unplaced() int {
	if j.run.Topology != nil || j.v.Expectations.Kind != results.ExpectModel {
		return 0
	}
	judged := make(map[string]bool, len(j.v.Figures))
	for _, fv := range j.v.Figures {
		judged[fv.Key] = true
	}
	n := 0
	for i := range j.run.Figures {
		f := &j.run.Figures[i]
		if f.Unit == results.UnitGBps && f.Test.Info().Matrix && f.Test.Info().SameProcess == "" && f.Src >= 0 && f.Dst >= 0 &&
			f.Src != f.Dst && f.Size >= ModelMinSize && !f.Failed() && !judged[f.Key()] {
			n++
		}
	}
	return n
}
