package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/p2pbench/p2pbench/internal/measure"
	"github.com/p2pbench/p2pbench/results"
)

// titles of the matrix tests.
var matrixTitles = map[string]string{
	"ce_read":    "Copy engine, read (pull: issued by the destination)",
	"ce_write":   "Copy engine, write (push: issued by the source)",
	"sm_read":    "SM copy kernel, read (pull: kernel on the destination)",
	"sm_write":   "SM copy kernel, write (push: kernel on the source)",
	"nop2p_copy": "Copy without peer access (staged through the host)",
	"lat_chase":  "Pointer chase",
}

// devicesOf returns the device indices of the run.
func devicesOf(run *results.Run) []int {
	var ds []int
	for _, d := range run.Environment.Devices {
		ds = append(ds, d.Index)
	}
	return ds
}

// cellText is a figure's median for a table, or why there is none.
func cellText(f *results.Figure, format string) string {
	switch {
	case f == nil:
		return "n/a"
	case f.Error != "":
		if n := f.ErrorName; n != "" {
			return "ERR " + strings.TrimPrefix(n, "CUDA_ERROR_")
		}
		return "ERR"
	case f.Verify == results.VerifyFailed:
		return "BADDATA"
	case f.Stats == nil:
		return "n/a"
	}
	return fmt.Sprintf(format, f.Stats.Median)
}

// printMatrix writes a source × destination table of the figures matching keep.
func printMatrix(w io.Writer, run *results.Run, title string, keep func(f *results.Figure) bool, format string, sum bool) {
	devs := devicesOf(run)
	cell := map[[2]int]*results.Figure{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if keep(f) {
			cell[[2]int{f.Src, f.Dst}] = f
		}
	}
	if len(cell) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "src\\dst\t")
	for _, d := range devs {
		fmt.Fprintf(tw, "%d\t", d)
	}
	fmt.Fprintln(tw)
	total := 0.0
	for _, s := range devs {
		fmt.Fprintf(tw, "%d\t", s)
		for _, d := range devs {
			f, ok := cell[[2]int{s, d}]
			if !ok {
				fmt.Fprint(tw, "-\t")
				continue
			}
			if f.Stats != nil && f.Error == "" {
				total += f.Stats.Median
			}
			fmt.Fprintf(tw, "%s\t", cellText(f, format))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if sum {
		fmt.Fprintf(w, "SUM %.1f\n", total)
	}
}

func printRun(w io.Writer, run *results.Run, command string) {
	fmt.Fprint(w, simLabel(run))
	size := matrixSize(run)
	for _, t := range []string{"ce_read", "ce_write", "sm_read", "sm_write", "nop2p_copy"} {
		title := fmt.Sprintf("%s, GB/s (median of samples, %s, decimal GB/s); row = source, column = destination", matrixTitles[t], results.FormatBytes(size))
		printMatrix(w, run, title, func(f *results.Figure) bool { return string(f.Test) == t && f.Size == size }, "%.1f", true)
	}
	for _, t := range []string{"ce_bidir", "sm_bidir"} {
		for _, dir := range []string{"read", "write"} {
			title := fmt.Sprintf("%s, both directions at once, %s, total GB/s of both directions, %s; row/column = the pair",
				strings.ToUpper(t[:2]), dir, results.FormatBytes(size))
			printMatrix(w, run, title, func(f *results.Figure) bool {
				return string(f.Test) == t && string(f.Direction) == dir && f.Part == results.PartTotal && f.Size == size
			}, "%.1f", false)
		}
	}
	printLinkEfficiency(w, run, size)
	printSingles(w, run)
	printSweep(w, run)
	printLatency(w, run)
	printAtomics(w, run)
	printFailures(w, run)
}

// matrixSize is the size most pairwise bandwidth figures of the run use.
func matrixSize(run *results.Run) uint64 {
	count := map[uint64]int{}
	for _, f := range run.Figures {
		switch f.Test {
		case "ce_read", "ce_write", "ce_bidir", "sm_read", "sm_write", "sm_bidir", "nop2p_copy":
			count[f.Size]++
		}
	}
	best, n := uint64(measure.DefaultSize), 0
	for s, c := range count {
		if c > n || (c == n && s > best) {
			best, n = s, c
		}
	}
	return best
}

// printSingles lists the per-device and aggregate figures.
func printSingles(w io.Writer, run *results.Run) {
	var rows []results.Figure
	for _, f := range run.Figures {
		switch f.Test {
		case "h2d", "d2h", "local_copy":
			rows = append(rows, f)
		case "all_to_one", "one_to_all", "all_pairs":
			if f.Part == "total" {
				rows = append(rows, f)
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nHost, local and aggregate copies (decimal GB/s, median; -1 = host or all devices)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TEST\tSRC\tDST\tSIZE\tGB/s\tCV\tVERIFY")
	for _, f := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", f.Test, f.Src, f.Dst, results.FormatBytes(f.Size), cellText(&f, "%.1f"), cvText(&f), f.Verify)
	}
	tw.Flush()
}

func cvText(f *results.Figure) string {
	if f.Stats == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*f.Stats.CV)
}

// printSweep shows bandwidth against size per pair, and the half-peak size.
func printSweep(w io.Writer, run *results.Run) {
	type key struct {
		test     string
		src, dst int
	}
	curves := map[key]map[uint64]*results.Figure{}
	sizes := map[uint64]bool{}
	for i := range run.Figures {
		f := &run.Figures[i]
		switch f.Test {
		case "ce_read", "ce_write", "sm_read", "sm_write":
		default:
			continue
		}
		k := key{string(f.Test), f.Src, f.Dst}
		if curves[k] == nil {
			curves[k] = map[uint64]*results.Figure{}
		}
		curves[k][f.Size] = f
		sizes[f.Size] = true
	}
	if len(sizes) < 3 {
		return
	}
	var keys []key
	for k := range curves {
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
	var sz []uint64
	for s := range sizes {
		sz = append(sz, s)
	}
	slices.Sort(sz)
	fmt.Fprintln(w, "\nBandwidth against transfer size (decimal GB/s, median), per ordered pair src→dst")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "SIZE\t")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s %d→%d\t", k.test, k.src, k.dst)
	}
	fmt.Fprintln(tw)
	for _, s := range sz {
		fmt.Fprintf(tw, "%s\t", results.FormatBytes(s))
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t", cellText(curves[k][s], "%.4g"))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "n½\t")
	for _, k := range keys {
		hp := results.HalfPeakOf(curves[k])
		if hp == 0 {
			fmt.Fprint(tw, "-\t")
		} else {
			fmt.Fprintf(tw, "%s\t", results.FormatBytes(hp))
		}
	}
	fmt.Fprintln(tw)
	tw.Flush()
	fmt.Fprintln(w, "n½ = the smallest size reaching half of the pair's peak bandwidth")
}

func printLatency(w io.Writer, run *results.Run) {
	for _, ws := range measure.ChaseWorkingSets {
		title := fmt.Sprintf("Pointer chase, working set %s: ns per dependent load (median); row = memory holding the chain, column = GPU running the thread", results.FormatBytes(ws))
		printMatrix(w, run, title, func(f *results.Figure) bool { return f.Test == "lat_chase" && f.Size == ws }, "%.0f", false)
	}
	for _, ord := range []string{"release_acquire", "relaxed"} {
		printMatrix(w, run, fmt.Sprintf("Ping-pong (%s flags), one-way latency, ns (half a round trip, median); row = initiator, column = responder", ord),
			func(f *results.Figure) bool {
				return f.Test == "lat_pingpong" && f.Params["measure"] == "one_way" && f.Params["ordering"] == ord
			}, "%.0f", false)
	}
	var rows []results.Figure
	for _, f := range run.Figures {
		if f.Test == "lat_copy_device" || f.Test == "lat_copy_host" {
			rows = append(rows, f)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nSmall-copy latency, µs (median): device = GPU time of one cuMemcpyPeerAsync (events, latch-held); host = enqueue + synchronize as an application sees it")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "PAIR\tSIZE\tDEVICE µs\tHOST µs\t")
	type k struct {
		s, d int
		z    uint64
	}
	dev := map[k]*results.Figure{}
	host := map[k]*results.Figure{}
	var order []k
	for i := range rows {
		f := &rows[i]
		kk := k{f.Src, f.Dst, f.Size}
		if dev[kk] == nil && host[kk] == nil {
			order = append(order, kk)
		}
		if f.Test == "lat_copy_device" {
			dev[kk] = f
		} else {
			host[kk] = f
		}
	}
	us := func(f *results.Figure) string {
		if f == nil || f.Stats == nil || f.Error != "" {
			return cellText(f, "%.2f")
		}
		return fmt.Sprintf("%.2f", f.Stats.Median/1e3)
	}
	for _, x := range order {
		fmt.Fprintf(tw, "%d→%d\t%s\t%s\t%s\t\n", x.s, x.d, results.FormatBytes(x.z), us(dev[x]), us(host[x]))
	}
	tw.Flush()
}

func printAtomics(w io.Writer, run *results.Run) {
	var figs []*results.Figure
	pairs := map[[2]int]bool{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Test == "atomic_tput" || f.Test == "atomic_latency" {
			figs = append(figs, f)
			pairs[[2]int{f.Src, f.Dst}] = true
		}
	}
	if len(figs) == 0 {
		return
	}
	var ps [][2]int
	for p := range pairs {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i][0] < ps[j][0] || (ps[i][0] == ps[j][0] && ps[i][1] < ps[j][1]) })
	fmt.Fprintln(w, "\nAtomics (system scope), median; columns = issuing GPU→GPU holding the memory (same = local); every counter checked exactly")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "OPERATION\tMEASURE\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "%d→%d\t", p[0], p[1])
	}
	fmt.Fprintln(tw, "DRIVER (native / caps)\t")
	type row struct{ op, measure string }
	cells := map[row]map[[2]int]*results.Figure{}
	var rows []row
	driver := map[row]string{}
	for _, f := range figs {
		m := "Gop/s distinct"
		if f.Params["contended"] == "true" {
			m = "Gop/s contended"
		}
		if f.Test == "atomic_latency" {
			m = "ns chain"
		}
		r := row{f.Params["op"], m}
		if cells[r] == nil {
			cells[r] = map[[2]int]*results.Figure{}
			rows = append(rows, r)
		}
		cells[r][[2]int{f.Src, f.Dst}] = f
		if f.Src != f.Dst && driver[r] == "" {
			driver[r] = f.Params["native_atomic_supported"] + " / " + f.Params["driver_caps"]
		}
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t", r.op, r.measure)
		format := "%.3g"
		if strings.HasPrefix(r.measure, "ns") {
			format = "%.0f"
		}
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t", cellText(cells[r][p], format))
		}
		fmt.Fprintf(tw, "%s\t\n", orDash(driver[r]))
	}
	tw.Flush()
}

// printFailures lists every figure that failed, with its error.
func printFailures(w io.Writer, run *results.Run) {
	var bad []results.Figure
	for _, f := range run.Figures {
		if f.Error != "" || f.Verify == results.VerifyFailed {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%d figure(s) failed:\n", len(bad))
	for i, f := range bad {
		if i == 20 {
			fmt.Fprintf(w, "  … and %d more (see the results file)\n", len(bad)-20)
			break
		}
		why := f.Error
		if why == "" {
			why = f.VerifyDetail
		}
		what := string(f.Test) + " " + string(f.Engine)
		for _, x := range []string{string(f.Direction), string(f.Part)} {
			if x != "" {
				what += " " + x
			}
		}
		if f.OpenedOnPeerGPU() {
			what += " [opened on peer GPU]"
		}
		fmt.Fprintf(w, "  %s %d→%d %s: %s\n", what, f.Src, f.Dst, results.FormatBytes(f.Size), why)
	}
}

// printSummary is the one-screen end of `all`.
func printSummary(w io.Writer, run *results.Run, elapsed time.Duration) {
	fmt.Fprintln(w, "\n==== Summary ====")
	fmt.Fprint(w, simLabel(run))
	size := matrixSize(run)
	linkOf := map[[2]int]float64{}
	if run.Topology != nil {
		for _, p := range run.Topology.Pairs {
			linkOf[[2]int{p.Src, p.Dst}] = p.LinkGBps
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tBEST\tWORST (pair)\tOF LINK LIMIT\t")
	// factor is 2 for totals of both directions, which the links carry twice over.
	headline := func(label string, factor float64, keep func(f *results.Figure) bool) {
		best, worst := math.Inf(-1), math.Inf(1)
		var wp [2]int
		for i := range run.Figures {
			f := &run.Figures[i]
			if !keep(f) || f.Stats == nil || f.Error != "" {
				continue
			}
			m := f.Stats.Median
			best = math.Max(best, m)
			if m < worst {
				worst, wp = m, [2]int{f.Src, f.Dst}
			}
		}
		if math.IsInf(best, -1) {
			return
		}
		eff := "-"
		if l := factor * linkOf[wp]; l > 0 {
			eff = fmt.Sprintf("%.0f%% of %.0f GB/s", 100*worst/l, l)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f (%d→%d)\t%s\t\n", label, best, worst, wp[0], wp[1], eff)
	}
	at := func(test, dir, part string) func(f *results.Figure) bool {
		return func(f *results.Figure) bool {
			return string(f.Test) == test && f.Size == size && (dir == "" || string(f.Direction) == dir) && string(f.Part) == part
		}
	}
	headline("CE read GB/s", 1, at("ce_read", "", ""))
	headline("CE write GB/s", 1, at("ce_write", "", ""))
	headline("CE both ways (write), total", 2, at("ce_bidir", "write", "total"))
	headline("SM read GB/s", 1, at("sm_read", "", ""))
	headline("SM write GB/s", 1, at("sm_write", "", ""))
	headline("SM both ways, reading, total", 2, at("sm_bidir", "read", "total"))
	headline("SM both ways, writing, total", 2, at("sm_bidir", "write", "total"))
	headline("No-P2P (staged) GB/s", 1, at("nop2p_copy", "", ""))
	tw.Flush()

	// Latencies side by side, each named for what it measures.
	header := false
	lat := func(label string, keep func(f *results.Figure) bool, scale float64, unit string) {
		var v []float64
		for i := range run.Figures {
			f := &run.Figures[i]
			if keep(f) && f.Stats != nil && f.Error == "" {
				v = append(v, f.Stats.Median/scale)
			}
		}
		if len(v) > 0 {
			if !header {
				fmt.Fprintln(w, "\nLatency (median; range over pairs):")
				header = true
			}
			slices.Sort(v)
			fmt.Fprintf(w, "  %-58s %8.2f … %.2f %s\n", label, v[0], v[len(v)-1], unit)
		}
	}
	lat("pointer chase, peer memory in its L2 (load-to-use)", func(f *results.Figure) bool {
		return f.Test == "lat_chase" && f.Src != f.Dst && f.Size == measure.ChaseWorkingSets[0]
	}, 1, "ns")
	lat("pointer chase, peer memory beyond L2", func(f *results.Figure) bool {
		return f.Test == "lat_chase" && f.Src != f.Dst && f.Size == measure.ChaseWorkingSets[1]
	}, 1, "ns")
	lat("pointer chase, local memory beyond L2 (baseline)", func(f *results.Figure) bool {
		return f.Test == "lat_chase" && f.Src == f.Dst && f.Size == measure.ChaseWorkingSets[1]
	}, 1, "ns")
	lat("ping-pong one way, release/acquire flags", func(f *results.Figure) bool {
		return f.Test == "lat_pingpong" && f.Params["measure"] == "one_way" && f.Params["ordering"] == "release_acquire"
	}, 1, "ns")
	lat("ping-pong one way, relaxed flags", func(f *results.Figure) bool {
		return f.Test == "lat_pingpong" && f.Params["measure"] == "one_way" && f.Params["ordering"] == "relaxed"
	}, 1, "ns")
	lat("4-byte cuMemcpyPeerAsync, device time", func(f *results.Figure) bool { return f.Test == "lat_copy_device" && f.Size == 4 }, 1e3, "µs")
	lat("4-byte cuMemcpyPeerAsync, host end to end", func(f *results.Figure) bool { return f.Test == "lat_copy_host" && f.Size == 4 }, 1e3, "µs")
	lat("remote atomic add u32, distinct addresses (Gop/s)", func(f *results.Figure) bool {
		return f.Test == "atomic_tput" && f.Src != f.Dst && f.Params["op"] == "red_add_u32" && f.Params["contended"] == "false"
	}, 1, "Gop/s")

	failed, badData, worstCV := 0, 0, 0.0
	var worstCVFig string
	for _, f := range run.Figures {
		if f.Error != "" {
			failed++
		}
		if f.Verify == results.VerifyFailed {
			badData++
		}
		if f.Unit == "GB/s" && f.Size >= 256<<20 && f.Stats != nil && f.Stats.CV > worstCV {
			worstCV = f.Stats.CV
			worstCVFig = fmt.Sprintf("%s %s %d→%d", f.Test, f.Part, f.Src, f.Dst)
		}
	}
	fmt.Fprintf(w, "\n%d figures in %s; %d failed, %d with bad data", len(run.Figures), elapsed.Round(100*time.Millisecond), failed, badData)
	if worstCVFig != "" {
		fmt.Fprintf(w, "; largest CV at ≥ 256 MiB: %.2f%% (%s)", 100*worstCV, worstCVFig)
	}
	fmt.Fprintln(w)
	if !run.Verify {
		fmt.Fprintln(w, "Data verification was OFF (--no-verify).")
	}
	for _, n := range run.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// printLinkEfficiency shows what the NVLink counters recorded around the
// figures at size: raw bytes on the wire per payload byte, and the wire rate
// that implies. Nothing when no figure has counters.
func printLinkEfficiency(w io.Writer, run *results.Run, size uint64) {
	rows := results.LinkEfficiency(run, size)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nOn the wire (NVLink counters of both devices around each figure, %s; medians over pairs):\n", results.FormatBytes(size))
	fmt.Fprintln(w, "  wire = raw bytes the links carried per payload byte in the data's direction (headers, requests, responses included);")
	fmt.Fprintln(w, "  back = raw bytes counted in the other direction per payload byte (one-way figures); wire rate = GB/s × wire")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TEST\tENGINE\tDIRECTION\tPAIRS\tGB/s\tWIRE\tBACK\tWIRE RATE GB/s\t")
	for _, e := range rows {
		dir := string(e.Direction)
		if e.Part != "" {
			dir += " " + string(e.Part)
		}
		back := "-"
		if e.Back > 0 {
			back = fmt.Sprintf("%.3f", e.Back)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%.1f\t%.3f\t%s\t%.1f\t\n", e.Test, e.Engine, dir, e.Pairs, e.GBps, e.Wire, back, e.WireGBps)
	}
	tw.Flush()
}
