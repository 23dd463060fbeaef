package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// Across processes: every figure measured across processes (ipc_*) is
// held to the same figure measured in one process in the same run, not to
// the table: what two processes add is the question, and the run's own
// in-process figure answers what the machine does. A shortfall beyond the
// noise of the two warns, naming the arrangement (where the peer's buffer
// was opened, which handles shared it), with what the NVLink counters saw
// of where the difference went; it fails only where the in-process figure
// fails too (the machine is then short either way). Where the counters
// show the links as busy as in one process and each payload byte costing
// more on the wire, the shortfall is explained: a note.
//
// The noise of a comparison is the largest of IPCNoiseFloor (for a
// latency IPCLatencyFloor), three times
// the two figures' combined relative standard error, and the spread of the
// in-process figure's round medians (which covers the modes some figures
// keep for a whole process).
const IPCNoiseFloor = 0.02

// IPCLatencyFloor is the noise of a latency across processes against one
// process: two processes' kernels meet through memory each process mapped
// for itself, and the ping-pong's round trip across processes stands
// −6.2% and −1.2% from the same kernels in one process in the 2× H200's
// two reference runs, which no run's own rounds show (its rounds keep one
// process's mapping); on the held-out 2× H100 between −1.4% and +3.8%
// over fourteen runs (docs/verdict.md).
const IPCLatencyFloor = 0.065

// ipcCompared is one figure across processes against its twin.
type ipcCompared struct {
	f, g      *results.Figure
	v, w      float64
	worse     float64 // the relative shortfall (> 0: worse across processes)
	noise     float64
	st        results.Status
	wire      string
	explained bool
}

// ipcJudge holds every IPC figure of run that has a twin in one process to
// it; twinVerdict gives the twin's own verdict, where it has one. It
// returns the figures' verdicts and the items of the ipc check (one per
// arrangement and outcome); judged is false when no IPC figure has a twin.
func ipcJudge(run *results.Run, twinVerdict func(key string) (results.FigureVerdict, bool)) (fvs []results.FigureVerdict, items []results.CheckItem, judged bool) {
	inProcess := map[string]*results.Figure{}
	for i := range run.Figures {
		if f := &run.Figures[i]; f.Test.Info().SameProcess == "" {
			inProcess[f.Key()] = f
		}
	}
	var all []ipcCompared
	for i := range run.Figures {
		f := &run.Figures[i]
		twin, ok := f.SameProcessTwin()
		if !ok {
			continue
		}
		g := inProcess[twin.Key()]
		if g == nil {
			continue
		}
		v, okF := f.Value()
		w, okG := g.Value()
		if !okF || !okG || w <= 0 {
			continue
		}
		c := ipcCompared{f: f, g: g, v: v, w: w, worse: 1 - v/w}
		if f.LowerIsBetter() {
			c.worse = v/w - 1
		}
		floor := IPCNoiseFloor
		if f.Unit == results.UnitNs {
			floor = IPCLatencyFloor
		}
		c.noise = max(floor, 3*math.Hypot(RelativeError(f), RelativeError(g)), roundSpread(g))
		c.st = results.StatusPass
		if c.worse > c.noise {
			c.wire, c.explained = wireCompared(f, g)
			c.st = results.StatusWarn
			if tv, ok := twinVerdict(g.Key()); ok && tv.Status == results.StatusFail {
				c.st = results.StatusFail
			} else if c.explained {
				c.st = results.StatusNote
			}
		}
		all = append(all, c)
		fvs = append(fvs, c.verdict())
	}
	return fvs, ipcItems(all), len(all) > 0
}

// verdict is the figure's verdict.
func (c ipcCompared) verdict() results.FigureVerdict {
	bound := c.w * (1 - c.noise)
	if c.f.LowerIsBetter() {
		bound = c.w * (1 + c.noise)
	}
	fv := results.FigureVerdict{Key: c.f.Key(), Status: c.st, Value: c.v, Expected: c.w, Bound: bound}
	change := fmt.Sprintf("across processes %s %s, in one process %s", fmtValue(c.v), c.f.Unit, fmtValue(c.w))
	switch c.st {
	case results.StatusPass:
		fv.Reason = fmt.Sprintf("%s: within the noise of the two (%.1f%%)", change, 100*c.noise)
	case results.StatusNote:
		fv.Reason = fmt.Sprintf("%s: %.1f%% worse, beyond the noise (%.1f%%), and explained%s", change, 100*c.worse, 100*c.noise, c.wire)
	case results.StatusFail:
		fv.Reason = fmt.Sprintf("%s: %.1f%% worse, beyond the noise (%.1f%%), and the figure in one process fails too%s", change, 100*c.worse, 100*c.noise, c.wire)
	default:
		fv.Reason = fmt.Sprintf("%s: %.1f%% worse, beyond the noise (%.1f%%), with %s%s", change, 100*c.worse, 100*c.noise, arrangement(c.f), c.wire)
	}
	return fv
}

// ipcItems gathers the comparisons that did not pass by arrangement and
// outcome: one item each.
func ipcItems(all []ipcCompared) []results.CheckItem {
	type key struct {
		test        results.Test
		dir         results.Direction
		open        string
		handle      string
		size        uint64
		params      string // the twin's identity (measure, working set …)
		st          results.Status
		explanation bool
	}
	groups := map[key][]ipcCompared{}
	var order []key
	for _, c := range all {
		if c.st == results.StatusPass {
			continue
		}
		k := key{c.f.Test, c.f.Direction, c.f.Params[results.ParamIPCOpen], c.f.Params[results.ParamIPCHandle], c.f.Size, c.g.IdentityParams(), c.st, c.explained}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	var out []results.CheckItem
	for _, k := range order {
		cs := groups[k]
		var pairs []string
		var ipcDir, oneDir, worse []float64
		for _, c := range cs {
			if p := fmt.Sprintf("%d→%d", c.f.Src, c.f.Dst); !slices.Contains(pairs, p) {
				pairs = append(pairs, p)
			}
			ipcDir = append(ipcDir, c.v/partsOf(c.f))
			oneDir = append(oneDir, c.w/partsOf(c.g))
			worse = append(worse, 100*c.worse)
		}
		f := cs[0].f
		per := ""
		if f.Unit == results.UnitGBps {
			per = " a direction"
		}
		what := string(f.Test)
		if f.Direction != "" {
			what += " " + string(f.Direction)
		}
		for _, p := range []string{"measure", "working_set"} {
			if v := f.Params[p]; v != "" {
				what += " " + p + "=" + v
			}
		}
		msg := fmt.Sprintf("%s, %s (%s): across processes %s %s%s against %s in one process, %s%% worse, beyond the noise (%.0f%% or more)",
			results.FormatBytes(f.Size), arrangement(f), strings.Join(pairs, ", "), span(ipcDir), f.Unit, per, span(oneDir), spanPct(worse), 100*minOf(cs))
		switch k.st {
		case results.StatusNote:
			msg += cs[0].wire + ": known and explained"
		case results.StatusFail:
			msg += cs[0].wire + "; the figures in one process fail too: the machine is short either way"
		default:
			msg += cs[0].wire
			if cs[0].wire == "" {
				msg += "; no NVLink counters to say where the difference went"
			}
		}
		out = append(out, results.CheckItem{Status: k.st, Subject: what + " " + arrangementShort(f), Message: msg})
	}
	return out
}

func minOf(cs []ipcCompared) float64 {
	m := cs[0].noise
	for _, c := range cs {
		m = min(m, c.noise)
	}
	return m
}

// spanPct writes a range of percentages to a tenth.
func spanPct(vs []float64) string {
	lo, hi := fmt.Sprintf("%.1f", slices.Min(vs)), fmt.Sprintf("%.1f", slices.Max(vs))
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

// span writes the range of vs: "263–293", or one value.
func span(vs []float64) string {
	lo, hi := slices.Min(vs), slices.Max(vs)
	if fmtValue(lo) == fmtValue(hi) {
		return fmtValue(lo)
	}
	return fmtValue(lo) + "–" + fmtValue(hi)
}

// arrangement says where an IPC figure's peer buffer was opened and which
// handles shared it.
func arrangement(f *results.Figure) string {
	open := "the peer's buffer opened in the issuing process's own context"
	if f.OpenedOnPeerGPU() {
		open = "the peer's buffer opened in the issuing process's context on the peer's GPU (" + results.ParamIPCOpen + "=" + results.IPCOpenPeerDevice + ")"
	}
	handle := "legacy IPC handles (cuIpcGetMemHandle)"
	switch f.Params[results.ParamIPCHandle] {
	case results.IPCHandleVMM:
		handle = "VMM handles through a POSIX file descriptor (" + results.ParamIPCHandle + "=" + results.IPCHandleVMM + ")"
	case results.IPCHandleFabric:
		handle = "VMM fabric handles (" + results.ParamIPCHandle + "=" + results.IPCHandleFabric + ")"
	}
	return open + ", " + handle
}

// arrangementShort names the arrangement in a subject.
func arrangementShort(f *results.Figure) string {
	open := "own context"
	if f.OpenedOnPeerGPU() {
		open = results.ParamIPCOpen + "=" + results.IPCOpenPeerDevice
	}
	handle := "legacy handles"
	if h := f.Params[results.ParamIPCHandle]; h != "" {
		handle = results.ParamIPCHandle + "=" + h
	}
	return open + ", " + handle
}

// roundSpread is how far apart a figure's round medians lie, relative to
// its median (0 with fewer than two rounds).
func roundSpread(f *results.Figure) float64 {
	if f.Failed() || len(f.Rounds) < 2 || f.Stats == nil || f.Stats.Median <= 0 {
		return 0
	}
	meds := figstats.RoundMedians(f.Samples, f.Rounds)
	return (slices.Max(meds) - slices.Min(meds)) / f.Stats.Median
}

// wireCompared says what the NVLink counters saw of an IPC bandwidth
// figure f and its in-process twin g, when both have counters, and
// whether they explain the difference: the links carried as many raw
// bytes a second or more (within IPCNoiseFloor), each payload byte costing
// more on the wire. Otherwise it says where the difference went: fewer bytes
// reached the links (the copies were issued more slowly), or as many with
// more of them overhead.
func wireCompared(f, g *results.Figure) (string, bool) {
	a, ok1 := f.Wire()
	b, ok2 := g.Wire()
	if !ok1 || !ok2 || f.Unit != results.UnitGBps {
		return "", false
	}
	v, w := f.Stats.Median, g.Stats.Median
	rawF, rawG := v*a/partsOf(f), w*b/partsOf(g)
	s := fmt.Sprintf("; NVLink counters: %.3f raw bytes per payload byte across processes against %.3f in one process, the links carrying %.0f against %.0f GB/s of raw bytes a direction",
		a, b, rawF, rawG)
	switch {
	case rawF >= rawG*(1-IPCNoiseFloor) && a > b*(1+IPCNoiseFloor):
		return s + ": the links were as busy or busier, each payload byte cost more on the wire", true
	case rawF < rawG*(1-IPCNoiseFloor):
		return s + ": fewer bytes reached the links, so the shortfall is in how the copies were issued across processes, not in the links", false
	}
	return s, false
}

// partsOf is how many directions' payload a bandwidth figure adds up: 2 for
// the total of both directions, else 1.
func partsOf(f *results.Figure) float64 {
	if f.Part == results.PartTotal {
		return 2
	}
	return 1
}
