package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
)

// Judge holds run to exp and returns its verdict: every figure exp judges
// and every figure that failed, and the checks of the run in the order a
// report lists them (see checkKinds). The error, a *SpecError, is for
// expectations that do not fit the run (a link class no pair has, a
// baseline that shares no figure with it); the command line exits 2 for it.
func Judge(run *results.Run, exp Expectations) (*results.Verdict, error) {
	judge, err := exp.forRun(run)
	if err != nil {
		return nil, err
	}
	v := &results.Verdict{Status: results.StatusPass, Expectations: exp.Source()}
	figs := map[string]*results.Figure{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if fv, ok := judgeFigure(run, f, judge); ok {
			v.Figures = append(v.Figures, fv)
			figs[fv.Key] = f
		}
	}
	v.Checks = checks(run, v, figs, report.Findings(run))
	for _, c := range v.Checks {
		if c.Status.Worse(v.Status) {
			v.Status = c.Status
		}
		if c.Status == results.StatusFail || c.Status == results.StatusWarn {
			v.NextSteps = append(v.NextSteps, kindOf(c.Name).advice)
		}
	}
	return v, nil
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

// checkKind is one line of a verdict: the report findings it gathers, and
// what to do when it fails or warns.
type checkKind struct {
	name, title string
	findings    []string
	advice      string
}

// checkKinds are a verdict's checks, in order.
var checkKinds = []checkKind{
	{name: "bandwidth", title: "Bandwidth",
		advice: "Bandwidth below expectation: rerun p2pbench all to confirm; if a pair stays low, check its links (nvidia-smi nvlink -s and -e, nvidia-smi topo -m) and its GPUs' PCIe links (nvidia-smi -q -d PCIE), then open a ticket with the vendor with this report."},
	{name: "latency", title: "Latency and atomics",
		advice: "Latency or atomics outside expectation: rerun to confirm (small figures vary from run to run), then check the pair's link as for bandwidth."},
	{name: "links", title: "NVLink and PCIe links",
		findings: []string{string(results.HealthLinkErrors), string(results.HealthLinkDown), string(results.HealthLinkSlower)},
		advice:   "A failing link: open a ticket with the vendor naming the GPU and link; NVLink errors or a link that went down point at the link, its cable or the board (nvidia-smi nvlink -e shows the counters)."},
	{name: "memory", title: "GPU memory",
		findings: []string{string(results.HealthECC), string(results.HealthRowRemap)},
		advice:   "Memory errors: the GPU needs service (reset it for a pending row remap; have it replaced if remapping failed or uncorrected errors keep rising)."},
	{name: "processes", title: "Other programs on the GPUs",
		findings: []string{string(results.HealthOtherProcess)},
		advice:   "Other programs used the GPUs during the run: rerun on idle GPUs before trusting the figures."},
	{name: "clocks", title: "Clocks and temperature",
		findings: []string{string(results.HealthThrottle), "clock_change", "temperature_rise"},
		advice:   "Clocks held down or moving: check cooling, power limits and application clocks (nvidia-smi -q -d PERFORMANCE,CLOCK), then rerun."},
	{name: "measurements", title: "Every figure measured",
		findings: []string{"incomplete", "failed", "bad_data"},
		advice:   "Figures failed or their data did not verify: see which in the details; rerun; a pair that keeps failing points at its link or the driver."},
	{name: "pairs", title: "Pairs alike, figures steady",
		findings: []string{"slow_pair", "noisy", "rounds_disagree"},
		advice:   "A pair slower than the others of its kind, or noisy figures or rounds that disagree: check that pair's links as for bandwidth; rerun on an idle machine for noise."},
	{name: "ipc", title: "Across processes",
		findings: []string{"ipc_slower"},
		advice:   "IPC copies slower than in one process without an explanation: rerun the ipc tests; compare the copy calls in the report's IPC section."},
	{name: "driver", title: "Driver behaviour",
		findings: []string{"conformance"}},
}

func kindOf(name string) checkKind {
	i := slices.IndexFunc(checkKinds, func(k checkKind) bool { return k.name == name })
	return checkKinds[i]
}

// maxItems bounds the items a check lists; the figure verdicts hold them all.
const maxItems = 20

// checks makes the verdict's checks from its figure verdicts (figs maps
// their keys to the figures) and the report's findings.
func checks(run *results.Run, v *results.Verdict, figs map[string]*results.Figure, findings []report.Finding) []results.Check {
	var out []results.Check
	for _, k := range checkKinds {
		c := results.Check{Name: k.name, Title: k.title}
		for _, f := range findings {
			if slices.Contains(k.findings, f.Check) {
				c.Items = append(c.Items, results.CheckItem{Status: statusOf(f.Severity), Subject: f.Subject, Message: f.Message})
			}
		}
		var ok bool
		switch k.name {
		case "bandwidth", "latency":
			ok = figureCheck(&c, v, figs, k.name == "bandwidth")
		case "links":
			c.Items = append(c.Items, linkItems(run)...)
			health := len(run.Environment.HealthAfter) > 0
			ok = health || run.Topology != nil && len(run.Topology.Links) > 0
			c.Summary = "no NVLink error counter rose, no link went down or slowed, every link up"
			if !health {
				c.Summary = "every NVLink up before the run; error counters not read (the run has no health readings)"
			}
		case "memory":
			ok, c.Summary = len(run.Environment.HealthAfter) > 0, "no uncorrected ECC error and no row remapping during the run"
		case "processes":
			ok, c.Summary = len(run.Environment.HealthBefore) > 0, "no other program's compute process on the GPUs"
		case "clocks":
			ok = len(run.Environment.DuringRun) > 0 || len(run.Environment.StateEnd) > 0
			c.Summary = "clocks not held down, steady from start to end, temperatures steady"
			if len(run.Environment.DuringRun) == 0 {
				c.Summary = "clocks and temperatures steady from start to end; throttle reasons not read during the run"
			}
		case "measurements":
			ok, c.Summary = true, fmt.Sprintf("all %d figures measured and their data verified", len(run.Figures))
			if !run.Verify {
				c.Items = append(c.Items, results.CheckItem{Status: results.StatusWarn, Subject: "run",
					Message: "run with --no-verify: the data that moved was not checked"})
			}
		case "pairs":
			ok, c.Summary = true, fmt.Sprintf("no pair %.0f%% below the others of its performance rank; large transfers steady", 100*report.SlowPairFraction)
		case "ipc":
			ok = slices.ContainsFunc(run.Figures, func(f results.Figure) bool { return f.Test.IsIPC() })
			c.Summary = fmt.Sprintf("figures across processes within %.0f%% of the same figures in one process", 100*report.IPCSlowerFraction)
		case "driver":
			ok = run.Topology != nil && len(run.Topology.Conformance) > 0
			c.Summary = "the driver answers as documented"
		}
		if !ok && len(c.Items) == 0 {
			if k.name == "ipc" || k.name == "driver" {
				continue // nothing of the kind in this run
			}
			c.Status, c.Summary = results.StatusNotJudged, notJudged(k.name, v)
			out = append(out, c)
			continue
		}
		summarize(&c)
		out = append(out, c)
	}
	return out
}

// statusOf maps a finding's severity to a status.
func statusOf(s report.Severity) results.Status {
	switch s {
	case report.Problem:
		return results.StatusFail
	case report.Warning:
		return results.StatusWarn
	}
	return results.StatusNote
}

// notJudged says why a check had nothing to judge.
func notJudged(name string, v *results.Verdict) string {
	switch name {
	case "bandwidth":
		return "no bandwidth figure that the expectations cover"
	case "latency":
		if v.Expectations.Kind == results.ExpectModel {
			return "the model has no expectation for latency or atomics: give --expect or --baseline to judge them"
		}
		return "no latency or atomic figure that the expectations cover"
	}
	return "the run has no health readings (NVML) to judge by"
}

// summarize sets a check's status to its worst item's, and its summary to
// the failures and warnings when it has any; only the first maxItems items
// are kept.
func summarize(c *results.Check) {
	c.Status = results.StatusPass
	bad, notes := 0, 0
	for _, it := range c.Items {
		if it.Status.Worse(c.Status) {
			c.Status = it.Status
		}
		if it.Status == results.StatusFail || it.Status == results.StatusWarn {
			bad++
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
		first := c.Items[0]
		c.Summary = first.Subject + ": " + first.Message
		if bad > 1 {
			c.Summary = fmt.Sprintf("%d problems; the first: %s", bad, c.Summary)
		}
	} else if notes > 0 {
		c.Summary += fmt.Sprintf(", but for %d known and explained (see the note%s)", notes, plural(notes))
	}
	if n := len(c.Items); n > maxItems {
		c.Items = c.Items[:maxItems]
		c.Summary += fmt.Sprintf(" (%d more)", n-maxItems)
	}
}

// figureCheck fills the bandwidth check (bw) or the latency and atomics
// check from the figure verdicts of their units; false when there are none.
func figureCheck(c *results.Check, v *results.Verdict, figs map[string]*results.Figure, bw bool) bool {
	count := map[results.Status]int{}
	n := 0
	for _, fv := range v.Figures {
		f := figs[fv.Key]
		if (f.Unit == results.UnitGBps) != bw || f.Failed() {
			continue // failed figures are the measurements check's
		}
		n++
		count[fv.Status]++
		if fv.Status == results.StatusFail || fv.Status == results.StatusWarn {
			c.Items = append(c.Items, results.CheckItem{Status: fv.Status, Subject: report.FigureName(f), Message: fv.Reason})
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
	c.Title += " against " + sourceShort(v.Expectations)
	c.Summary = fmt.Sprintf("%d figure%s judged: %s", n, plural(n), strings.Join(parts, ", "))
	return true
}

// sourceShort names the expectations in a few words.
func sourceShort(s results.ExpectationSource) string {
	switch s.Kind {
	case results.ExpectSpec:
		return "the spec"
	case results.ExpectBaseline:
		return "the baseline"
	}
	if s.Conservative {
		return "the model (conservative in part)"
	}
	return "the model"
}

// linkItems are what the run's link facts say beside the health readings:
// a GPU of a model the model knows with fewer NVLinks up than it has
// (FAIL), a PCIe link on fewer lanes than it allows (WARN).
func linkItems(run *results.Run) []results.CheckItem {
	var out []results.CheckItem
	down := map[int][]int{} // device → its links that are down
	counted := map[int]int{}
	if run.Topology != nil {
		for _, dl := range run.Topology.Links {
			for _, l := range dl.Links {
				counted[dl.Device]++
				if !l.Active {
					down[dl.Device] = append(down[dl.Device], l.Link)
				}
			}
		}
	}
	for _, d := range run.Environment.Devices {
		subject := fmt.Sprintf("GPU %d", d.Index)
		if g, ok := gpuModels[d.Name]; ok && g.nvlinks > 0 && counted[d.Index] > 0 {
			if up := counted[d.Index] - len(down[d.Index]); up < g.nvlinks {
				out = append(out, results.CheckItem{Status: results.StatusFail, Subject: subject,
					Message: fmt.Sprintf("%d of the %s's %d NVLinks are up (down: %v) before the run", up, d.Name, g.nvlinks, down[d.Index])})
			}
		}
		if l := d.PCIe; l != nil && l.Width > 0 && l.MaxWidth > 0 && l.Width < l.MaxWidth {
			out = append(out, results.CheckItem{Status: results.StatusWarn, Subject: subject,
				Message: fmt.Sprintf("its PCIe link runs on %d of its %d lanes (%s): reseat the GPU or check the slot", l.Width, l.MaxWidth, l)})
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
