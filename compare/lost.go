package compare

import (
	"fmt"
	"slices"

	"github.com/p2pbench/p2pbench/results"
)

// A figure the baseline measured that another side failed (an error, data
// that did not verify) or lacks is a regression (Change.Lost): the driver
// update that breaks peer access leaves figures failed or missing, and a
// gate that counted them without naming them passed it. The one exception is
// a figure the other side's plan left out on purpose: a test it did not
// select, a size it did not measure, a GPU it did not have, a pair its plan
// did not measure in detail, another tool's run. Those are listed by name as
// not measured (NotMeasured) and are not gated. A run cut short has no plan
// to say what it left out: everything it lacks is lost.

// NotMeasured is a baseline figure with a value that a side did not
// measure because its plan differs.
type NotMeasured struct {
	// Side is the side's index in Result.Names (1 or more).
	Side int          `json:"side"`
	Key  string       `json:"key"`
	Test results.Test `json:"test"`
	// Why says how the side's plan differs: "no ce_read in its plan", "no
	// atomic_tput at 8 B", "GPU 3 not in the run", ….
	Why string `json:"why"`
}

// testPlan is what a side measured of one test.
type testPlan struct {
	sizes  map[uint64]bool
	params map[string]bool
	pairs  map[[2]int]bool
}

// sidePlan is what a side's runs measured, to tell a figure its plan left
// out from one it lost.
type sidePlan struct {
	// complete: every run of the side ran to its end; stopped says why
	// the first that did not stopped.
	complete bool
	stopped  string
	// imported names the other tool of an imported run ("" for none).
	imported string
	devices  map[int]bool
	tests    map[results.Test]*testPlan
	// plans are the runs' plans (nil entries: every test on every pair).
	plans []*results.Plan
}

func planOf(in Input) *sidePlan {
	p := &sidePlan{complete: true, devices: map[int]bool{}, tests: map[results.Test]*testPlan{}}
	for _, r := range in.Runs {
		if !r.Complete && p.complete {
			p.complete, p.stopped = false, r.Stopped
		}
		if r.Imported != nil && p.imported == "" {
			p.imported = toolText(r)
		}
		for _, d := range r.DeviceIndices() {
			p.devices[d] = true
		}
		p.plans = append(p.plans, r.Plan)
		for i := range r.Figures {
			f := &r.Figures[i]
			tp := p.tests[f.Test]
			if tp == nil {
				tp = &testPlan{sizes: map[uint64]bool{}, params: map[string]bool{}, pairs: map[[2]int]bool{}}
				p.tests[f.Test] = tp
			}
			tp.sizes[f.Size] = true
			tp.params[whatParams(f)] = true
			tp.pairs[[2]int{f.Src, f.Dst}] = true
		}
	}
	return p
}

// omits says why the side's plan left out the baseline figure f, or ""
// where nothing in it does: the figure is lost. base is the baseline's
// plan.
func (p *sidePlan) omits(base *sidePlan, f *results.Figure) string {
	switch {
	case base.imported != "" || p.imported != "":
		return "another tool's run measures other figures"
	case !p.complete:
		return ""
	}
	tp := p.tests[f.Test]
	if tp == nil {
		return wholeTest(f.Test)
	}
	for _, d := range []int{f.Src, f.Dst} {
		if d >= 0 && !p.devices[d] {
			return fmt.Sprintf("GPU %d not in the run", d)
		}
	}
	if !tp.sizes[f.Size] {
		return fmt.Sprintf("no %s at %s", f.Test, results.FormatBytes(f.Size))
	}
	if w := whatParams(f); !tp.params[w] {
		return fmt.Sprintf("no %s with %s", f.Test, w)
	}
	if f.Src >= 0 && f.Dst >= 0 && !tp.pairs[[2]int{f.Src, f.Dst}] && !p.plansPair(f) {
		return fmt.Sprintf("pair %s not among its plan's pairs of %s", PairText(f.Src, f.Dst), f.Test)
	}
	return ""
}

// wholeTest is why a side lacks a test it did not measure at all.
func wholeTest(t results.Test) string { return fmt.Sprintf("no %s in its plan", t) }

// plansPair reports whether some run of the side planned to measure f's
// pair: a run without a plan measures every pair, one with a plan its
// detail pairs, and every pair for the matrices it measures on every pair.
func (p *sidePlan) plansPair(f *results.Figure) bool {
	pair := results.PairID{f.Src, f.Dst}
	for _, pl := range p.plans {
		if pl == nil || pl.Mode == results.PlanAllPairs || slices.Contains(pl.Detail, pair) ||
			f.Test.Info().Matrix && (len(pl.EveryPair) == 0 || slices.Contains(pl.EveryPair, f.Test)) {
			return true
		}
	}
	return false
}

// lostText says how a side lost a baseline figure: "failed (ERR
// ILLEGAL_ADDRESS)", "missing", "missing: the run was cut short (…)".
func (p *sidePlan) lostText(failed string) string {
	switch {
	case failed != "":
		return "failed (" + failed + ")"
	case !p.complete:
		return "missing: the run was cut short (" + p.stopped + ")"
	}
	return "missing"
}

// hasValue reports whether some run of the baseline measured the figure.
func hasValue(figs []*results.Figure) bool {
	for _, f := range figs {
		if _, ok := f.Value(); ok {
			return true
		}
	}
	return false
}
