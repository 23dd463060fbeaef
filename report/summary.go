package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// Summary returns the one screen that ends `all` and `show`: the best and
// worst pair of every headline figure against its link (Headlines), the
// latencies side by side, and what failed, what was noisy and the run's
// notes.
func Summary(run *results.Run) *Document {
	d := newDocument(run, "Summary")
	hs := Headlines(run)
	if t := headlineSummary(hs); len(hs) > 0 {
		t.title = fmt.Sprintf("Bandwidth at %s against the link limit, median", results.FormatBytes(hs[0].Size))
		d.table(t)
	}
	d.table(latencySummary(run))
	fails := run.Failures()
	var noisiest *results.Figure
	for i := range run.Figures {
		f := &run.Figures[i]
		// A figure of one value (an import's) has no spread to be noisy in.
		if f.Unit == results.UnitGBps && f.Size >= verdict.LargeTransfer && f.Stats != nil && f.Stats.N >= 2 && (noisiest == nil || f.Stats.CV > noisiest.Stats.CV) {
			noisiest = f
		}
	}
	lines := []string{fmt.Sprintf("%d figures", len(run.Figures))}
	if took := run.End.Sub(run.Start); took > 0 {
		lines[0] += " in " + took.Round(100*time.Millisecond).String()
	}
	lines[0] += fmt.Sprintf("; %d failed, %d with bad data", fails.Errors, fails.BadData)
	if noisiest != nil {
		lines[0] += fmt.Sprintf("; largest CV at ≥ %s: %.2f%% (%s)", results.FormatBytes(verdict.LargeTransfer), 100*noisiest.Stats.CV, results.FigureName(noisiest))
	}
	if why := verdict.Unverified(run); why != "" {
		lines = append(lines, "Data not verified: "+why+".")
	}
	for _, n := range BoundedNotes(uniqueNotes(run.Notes)) {
		lines = append(lines, "note: "+n)
	}
	d.para("%s", strings.Join(lines, "\n"))
	return d
}

// Where says where the rest of a run is, under the one screen that ends
// all: the results file and the commands that show and report it.
func Where(results string) *Document {
	d := &Document{}
	d.para("Everything measured is in %s. Every table, and each finding in full:\n"+
		"  p2pbench show %s\n"+
		"The report for a procurement file (PDF):\n"+
		"  p2pbench report %s", results, results, results)
	return d
}

// headlineSummary gives each kind of headline figure's best median, its
// worst with the pair, and the worst as a share of that pair's link.
func headlineSummary(hs []Headline) *table {
	t := &table{header: []string{"figure", "best GB/s", "worst GB/s (pair)", "worst of link limit"}, align: "lrrr"}
	type kind struct{ best, worst *Headline }
	kinds := map[string]*kind{}
	var order []string
	for i := range hs {
		h := &hs[i]
		if h.Stats == nil {
			continue
		}
		k := kinds[h.Label()]
		switch {
		case k == nil:
			kinds[h.Label()] = &kind{best: h, worst: h}
			order = append(order, h.Label())
		case h.Stats.Median > k.best.Stats.Median:
			k.best = h
		case h.Stats.Median < k.worst.Stats.Median:
			k.worst = h
		}
	}
	for _, label := range order {
		k := kinds[label]
		of := "-"
		if w := k.worst; w.LinkGBps > 0 {
			of = fmt.Sprintf("%.0f%% of %s GB/s", w.PercentOfLink(), fmtGBps(w.LinkGBps))
		}
		t.rows = append(t.rows, []string{label, fmt.Sprintf("%.1f", k.best.Stats.Median),
			fmt.Sprintf("%.1f (%s)", k.worst.Stats.Median, pairName(k.worst.Src, k.worst.Dst)), of})
	}
	return t
}

// latencySummary gives the range over pairs of each kind of latency, each
// named for what it measures.
func latencySummary(run *results.Run) *table {
	t := &table{title: "Latency, median; range over pairs", header: []string{"latency", "lowest", "highest", "unit"}, align: "lrrl"}
	peer := func(f *results.Figure) bool { return f.Src != f.Dst }
	param := func(k, v string) func(*results.Figure) bool {
		return func(f *results.Figure) bool { return f.Params[k] == v }
	}
	add := func(label string, test results.Test, scale float64, unit string, keep ...func(*results.Figure) bool) {
		var v []float64
		for _, f := range figuresOf(run, test, func(f *results.Figure) bool {
			for _, k := range keep {
				if !k(f) {
					return false
				}
			}
			return true
		}) {
			if m, ok := f.Value(); ok {
				v = append(v, m/scale)
			}
		}
		if len(v) > 0 {
			f := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
			t.rows = append(t.rows, []string{label, f(slices.Min(v)), f(slices.Max(v)), unit})
		}
	}
	add("pointer chase, peer memory in its L2 (load-to-use)", results.LatChase, 1, "ns", peer, param("cache", "in_l2"))
	add("pointer chase, peer memory beyond L2", results.LatChase, 1, "ns", peer, param("cache", "beyond_l2"))
	add("pointer chase, local memory beyond L2 (baseline)", results.LatChase, 1, "ns",
		func(f *results.Figure) bool { return f.Src == f.Dst }, param("cache", "beyond_l2"))
	add("pointer chase, pinned host memory (host-device latency)", results.LatHostChase, 1, "ns")
	add("ping-pong one way, release/acquire flags", results.LatPingPong, 1, "ns", param("measure", "one_way"), param("ordering", "release_acquire"))
	add("ping-pong one way, relaxed flags", results.LatPingPong, 1, "ns", param("measure", "one_way"), param("ordering", "relaxed"))
	smallest := func(f *results.Figure) bool { return f.Size == 4 }
	way := func(dir results.Direction) func(*results.Figure) bool {
		// A file without pushed copies has pulled ones without a way.
		return func(f *results.Figure) bool { return f.Direction == dir || dir == results.DirRead && f.Direction == "" }
	}
	add("4-byte cuMemcpyPeerAsync back to back, per copy, pulled", results.LatCopyB2B, 1e3, "µs", smallest, way(results.DirRead))
	add("4-byte cuMemcpyPeerAsync back to back, per copy, pushed", results.LatCopyB2B, 1e3, "µs", smallest, way(results.DirWrite))
	add("4-byte cuMemcpyPeerAsync, host end to end, pulled", results.LatCopyHost, 1e3, "µs", smallest, way(results.DirRead))
	add("4-byte cuMemcpyPeerAsync, host end to end, pushed", results.LatCopyHost, 1e3, "µs", smallest, way(results.DirWrite))
	// One copy's device time only where its rounds agree (rounds_disagree
	// says where they do not); a file without rounds has not shown it.
	add("4-byte cuMemcpyPeerAsync, device time", results.LatCopyDevice, 1e3, "µs", smallest, verdict.RoundsAgree)
	add("remote atomic add u32, distinct addresses", results.AtomicTput, 1, string(results.UnitGOps), peer, param("op", "red_add_u32"), param("contended", "false"))
	return t
}
