package bench

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// Preview is a run's plan laid out without opening a device: its link
// classes and detail pairs, the steps the engine would take, and their
// estimated duration (cost.go).
type Preview struct {
	Plan *results.Plan
	// Pairs is the number of ordered pairs; Groups the groups of pairs the
	// matrices measure at once, by link class name (those of two or more).
	Pairs  int
	Groups map[string][]int
	// Once and PerRound count the steps taken once (tuning, interference
	// check) and in each of Rounds rounds.
	Once, PerRound, Rounds int
	Estimate               time.Duration
}

// NewPreview lays out the plan of opt on the machine env and topo describe.
func NewPreview(opt Options, env results.Environment, topo *results.Topology) *Preview {
	e := NewEngine(nil, opt)
	for _, d := range topo.Devices {
		e.devs[d] = &measure.Device{Index: d}
		e.order = append(e.order, d)
	}
	e.schedule(&results.Run{Environment: env, Topology: topo})
	once := append(e.tuneSteps(), e.interferenceSteps()...)
	each := e.plan()
	p := &Preview{Plan: e.sched, Pairs: len(topo.Pairs), Groups: map[string][]int{}, Once: len(once), PerRound: len(each), Rounds: e.rounds}
	p.Estimate = runCost + setupCost*time.Duration(len(e.order)) + e.countersCost() + e.ipcCost() + e.checksCost() + e.pinCost()
	for _, st := range once {
		p.Estimate += st.cost
	}
	for _, st := range each {
		p.Estimate += time.Duration(e.rounds) * st.cost
	}
	class := map[results.PairID]string{}
	for _, c := range e.sched.Classes {
		for _, q := range c.Pairs {
			class[q] = c.Name
		}
	}
	for _, g := range groups(e.order, e.sched.Classes) {
		if len(g) > 1 {
			p.Groups[class[g[0]]] = append(p.Groups[class[g[0]]], len(g))
		}
	}
	return p
}

// setupCost is what opening a device and allocating its buffers take (read
// off the traces, as the other fixed costs: 0.2-0.3 s for two on a 2× H100).
const setupCost = 150 * time.Millisecond

// pinPerGiB is what pinning host memory for the host tests costs a GiB,
// the devices' regions allocated at once: faulted in on every CPU and
// registered (cuda.HostRegisterMin), 2 GiB take no more than the warm-up's
// 0.2 s on a 2× H100 (docs/findings.md, "Behind the code").
const pinPerGiB = 100 * time.Millisecond

// pinCost is what pinning the host tests' regions (bench/host.go
// startPinning) adds to a run: it starts with the warm-up, which on the 2×
// H100 waited for it, so what it takes beyond the warm-up.
func (e *Engine) pinCost() time.Duration {
	gib := float64(e.hostRegionsWanted()) * float64(e.opt.Size) / (1 << 30)
	return max(0, time.Duration(gib*float64(pinPerGiB))-e.opt.WarmUp)
}

// Summary says in a line what the plan measures and how long it should take.
func (p *Preview) Summary() string {
	return fmt.Sprintf("plan: %s; %d steps (%d once, %d in each of %d rounds), estimated %s",
		PlanText(p.Plan, p.Pairs), p.Once+p.Rounds*p.PerRound, p.Once, p.PerRound, p.Rounds, p.Estimate.Round(time.Second))
}

// Write prints the plan: the link classes with their pairs, representatives
// and groups measured at once, the detail pairs, the steps and the estimate.
func (p *Preview) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d ordered pairs in %d link class(es):\n", p.Pairs, len(p.Plan.Classes))
	for _, c := range p.Plan.Classes {
		fmt.Fprintf(&b, "  %s: %d pairs, representatives %s", c.Name, len(c.Pairs), pairList(c.Representatives))
		if gs := p.Groups[c.Name]; len(gs) > 0 {
			most := 0
			for _, n := range gs {
				most = max(most, n)
			}
			fmt.Fprintf(&b, "; matrices in %d groups of up to %d pairs at once (checked for interference first)", len(gs), most)
		} else {
			b.WriteString("; matrices one pair at a time")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "detail (%s): %d pairs: %s\n", p.Plan.Mode, len(p.Plan.Detail), clip(pairList(p.Plan.Detail), 400))
	fmt.Fprintf(&b, "%s\n", p.Summary())
	b.WriteString("the estimate: each figure's samples timed as they will be (steady-state windows of copies of size ÷ the link's bandwidth at 87%), per-batch and per-figure costs, 12 to 45 ms per latency or atomics step, the NVLink counter readings, the tests across processes and the run's own start and end, with the fixed costs of a 2× H100 (bench/cost.go)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// PlanText says in words which pairs a plan measures in detail.
func PlanText(p *results.Plan, pairs int) string {
	classes := fmt.Sprintf("the representatives of %d link class(es)", len(p.Classes))
	switch p.Mode {
	case results.PlanAllPairs:
		return fmt.Sprintf("every test on all %d pairs (--all-pairs)", pairs)
	case results.PlanSampled:
		names := make([]string, len(p.EveryPair))
		for i, t := range p.EveryPair {
			names[i] = string(t)
		}
		return fmt.Sprintf("the matrices of %s on all %d pairs; the other matrices, latency, atomics and staged copies on %d pairs "+
			"(%s and %d peer(s) of each device drawn with seed %d: --sample-peers, --sample-seed); size sweeps and the tests across processes "+
			"on the representatives; the tests of many pairs at once record their totals only (--all-pairs: every test on every pair)",
			strings.Join(names, " and "), pairs, len(p.Detail), classes, p.PeersPerDevice, p.Seed)
	}
	return fmt.Sprintf("the matrices on all %d pairs; the size sweeps, latency, atomics, staged copies and the tests across processes on %d pairs, %s (--all-pairs: every pair)",
		pairs, len(p.Detail), classes)
}

func pairList(ps []results.PairID) string {
	s := make([]string, len(ps))
	for i, q := range ps {
		s[i] = fmt.Sprintf("%d→%d", q[0], q[1])
	}
	return strings.Join(s, ", ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:strings.LastIndex(s[:n], ",")] + ", …"
}
