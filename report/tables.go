package report

import (
	"cmp"
	"fmt"
	"github.com/p2pbench/p2pbench/internal/units"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// Tables returns the result tables of run as the measuring commands and
// show print them: the bandwidth matrices at the run's matrix size; host,
// local and aggregate copies; bandwidth against transfer size; the latency
// and atomic tables; the figures across processes (matrices, two processes
// on one GPU, and each beside the same figure within one process, taken
// from run or else from ref, which may be nil); what the NVLink counters
// saw; and the figures that failed. Tables of tests the run did not make
// are left out.
func Tables(run, ref *results.Run) *Document {
	d := newDocument(run, "")
	devs := run.DeviceIndices()
	size := run.MatrixSize()
	inProcess := func(unit results.Unit) {
		for _, info := range results.Catalogue() {
			if info.SameProcess == "" && info.Unit == unit {
				testMatrices(d, devs, info, figuresOf(run, info.Name, nil), size)
			}
		}
	}
	inProcess(results.UnitGBps)
	singlesTable(d, run)
	ncclTables(d, run)
	sweepTable(d, run)
	inProcess(results.UnitNs)
	copyLatencyTable(d, run)
	atomicsTable(d, run)
	ipcTables(d, run, ref, devs)
	if size == 0 {
		size = ipcSize(run)
	}
	if rows := results.LinkEfficiency(run, size); len(rows) > 0 {
		t := wireTable(rows)
		t.title = fmt.Sprintf("On the wire: NVLink counters of both devices around each figure of %s, medians over pairs", results.FormatBytes(size))
		t.notes = []string{"wire = raw bytes the links carried per payload byte in the data's direction (headers, requests, responses included); " +
			"back = raw bytes counted in the other direction per payload byte (one-way figures); wire rate = GB/s × wire"}
		d.table(t)
	}
	failuresTable(d, run)
	return d
}

// figuresOf returns the figures of a test that keep accepts (all when keep is nil).
func figuresOf(run *results.Run, test results.Test, keep func(*results.Figure) bool) []*results.Figure {
	var out []*results.Figure
	for i := range run.Figures {
		if f := &run.Figures[i]; f.Test == test && (keep == nil || keep(f)) {
			out = append(out, f)
		}
	}
	return out
}

// where returns the figures that keep accepts.
func where(figs []*results.Figure, keep func(*results.Figure) bool) []*results.Figure {
	var out []*results.Figure
	for _, f := range figs {
		if keep(f) {
			out = append(out, f)
		}
	}
	return out
}

// testMatrices adds the source × destination tables of one test's figures,
// shaped by its kind (an IPC test by its same-process twin's): a one-way
// bandwidth test at size with the sum of its cells; each direction's total
// of a test both ways; the pointer chase per working set; the ping-pong's
// one-way latency per flag ordering.
func testMatrices(d *Document, devs []int, info results.TestInfo, figs []*results.Figure, size uint64) {
	kind := info
	if info.SameProcess != "" {
		kind = info.SameProcess.Info()
	}
	switch {
	case kind.Matrix && kind.BothWays:
		for _, dir := range []results.Direction{results.DirRead, results.DirWrite} {
			title := fmt.Sprintf("%s, %s, total %s of both directions, %s, median; row and column = the pair",
				info.Title, map[results.Direction]string{results.DirRead: "both pulling", results.DirWrite: "both pushing"}[dir],
				info.Unit, results.FormatBytes(size))
			matrixTable(d, devs, devs, title, where(figs, func(f *results.Figure) bool {
				return f.Direction == dir && f.Part == results.PartTotal && f.Size == size
			}), false)
		}
	case kind.Matrix:
		title := fmt.Sprintf("%s, %s, %s, median of samples; row = source, column = destination", info.Title, info.Unit, results.FormatBytes(size))
		matrixTable(d, devs, devs, title, where(figs, func(f *results.Figure) bool { return f.Size == size }), true)
	case kind.Name == results.LatChase:
		for _, ws := range sizesOf(figs) {
			title := fmt.Sprintf("%s, working set %s: ns per dependent load, median; row = memory holding the chain, column = GPU running the thread",
				info.Title, results.FormatBytes(ws))
			matrixTable(d, devs, devs, title, where(figs, func(f *results.Figure) bool { return f.Size == ws }), false)
		}
	case kind.Name == results.LatHostChase:
		for _, ws := range sizesOf(figs) {
			title := fmt.Sprintf("%s, working set %s: ns per dependent load, median; column = GPU running the thread", info.Title, results.FormatBytes(ws))
			matrixTable(d, []int{results.HostDevice}, devs, title, where(figs, func(f *results.Figure) bool { return f.Size == ws }), false)
		}
	case kind.Name == results.LatPingPong:
		oneWay := where(figs, func(f *results.Figure) bool { return f.Params["measure"] == "one_way" })
		var orders []string
		for _, f := range oneWay {
			if o := f.Params["ordering"]; !slices.Contains(orders, o) {
				orders = append(orders, o)
			}
		}
		for _, o := range orders {
			flags := ""
			if o != "" {
				flags = " (" + o + " flags)"
			}
			title := fmt.Sprintf("%s%s, one-way latency (half a round trip), ns, median; row = initiator, column = responder", info.Title, flags)
			matrixTable(d, devs, devs, title, where(oneWay, func(f *results.Figure) bool { return f.Params["ordering"] == o }), false)
		}
	}
}

// sizesOf returns the sizes of figs, smallest first.
func sizesOf(figs []*results.Figure) []uint64 {
	var out []uint64
	for _, f := range figs {
		if !slices.Contains(out, f.Size) {
			out = append(out, f.Size)
		}
	}
	slices.Sort(out)
	return out
}

// matrixTable adds a source (rows) × destination (cols) table of figs, -1
// being the host; with sum, a note gives the sum of the cells' medians.
func matrixTable(d *Document, rows, cols []int, title string, figs []*results.Figure, sum bool) {
	cell := map[[2]int]*results.Figure{}
	for _, f := range figs {
		cell[[2]int{f.Src, f.Dst}] = f
	}
	if len(cell) == 0 {
		return
	}
	t := &table{title: title, header: []string{`src\dst`}, align: strings.Repeat("r", len(cols)+1)}
	for _, dv := range cols {
		t.header = append(t.header, strconv.Itoa(dv))
	}
	total := 0.0
	for _, s := range rows {
		row := []string{strconv.Itoa(s)}
		if s < 0 {
			row[0] = "host"
		}
		for _, dv := range cols {
			f, ok := cell[[2]int{s, dv}]
			if !ok {
				row = append(row, "-")
				continue
			}
			if v, ok := f.Value(); ok {
				total += v
			}
			row = append(row, cellText(f))
		}
		t.rows = append(t.rows, row)
	}
	if sum {
		t.notes = []string{fmt.Sprintf("sum of the cells: %.1f %s", total, figs[0].Unit)}
	}
	d.table(t)
}

// cellText is a figure's median as a table shows it, formatted for its
// unit, or why there is none.
func cellText(f *results.Figure) string {
	return cellFormat(f, func(v float64) string {
		switch f.Unit {
		case results.UnitGBps:
			return strconv.FormatFloat(v, 'f', 1, 64)
		case results.UnitNs:
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'g', 3, 64)
	})
}

// cellFormat is a figure's median formatted by format, with the half-width
// of its interval over rounds where it has rounds ("393.1 ±0.2%"), its
// failure label (Figure.FailureLabel), or "n/a" for no figure or no
// statistics.
func cellFormat(f *results.Figure, format func(float64) string) string {
	s := medianFormat(f, format)
	if f == nil || f.Failed() {
		return s
	}
	if sp := f.Stats.RoundSpread(); sp != "" {
		s += " ±" + sp
	}
	return s
}

// medianFormat is cellFormat without the interval.
func medianFormat(f *results.Figure, format func(float64) string) string {
	switch {
	case f == nil:
		return "n/a"
	case f.Failed():
		return f.FailureLabel()
	case f.Stats == nil:
		return "n/a"
	}
	return format(f.Stats.Median)
}

func cvText(f *results.Figure) string {
	if f.Stats == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*f.Stats.CV)
}

// singlesTable lists the bandwidth figures that are no matrix: copies
// between host and devices (every part), copies within a device, and the
// totals of the aggregates between devices, each named with its direction
// and part where it has them.
func singlesTable(d *Document, run *results.Run) {
	t := &table{title: "Host, local and aggregate copies, decimal GB/s, median", header: []string{"test", "transfer", "size", "GB/s", "CV", "verify"},
		align: "llrrrl"}
	dirs := map[results.Test]map[results.Direction]bool{} // the directions of each test
	for _, f := range run.Figures {
		if dirs[f.Test] == nil {
			dirs[f.Test] = map[results.Direction]bool{}
		}
		dirs[f.Test][f.Direction] = true
	}
	for i := range run.Figures {
		f := &run.Figures[i]
		info := f.Test.Info()
		parts := !info.NeedsPair // the host tests show every part
		if info.Unit != results.UnitGBps || info.Matrix || info.SameProcess != "" || f.Engine == results.EngineNCCL ||
			!parts && f.Part != results.PartNone && f.Part != results.PartTotal {
			continue
		}
		name := info.Short
		if len(dirs[f.Test]) > 1 {
			name += ", " + string(f.Direction)
		}
		g := *f
		if parts && f.Part != results.PartNone {
			name += ", " + string(f.Part)
			if f.Part == results.PartReverse {
				g.Src, g.Dst = f.Dst, f.Src // the way its data moves
			}
		}
		t.rows = append(t.rows, []string{name, results.TransferName(&g), results.FormatBytes(f.Size), cellText(f), cvText(f), f.Verify})
	}
	d.table(t)
}

// sweepTable shows bandwidth against size of every one-way pair copy
// measured at several sizes, with each curve's half-peak size.
func sweepTable(d *Document, run *results.Run) {
	type key struct {
		test     results.Test
		src, dst int
	}
	curves := map[key]map[uint64]*results.Figure{}
	sizes := map[uint64]bool{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if info := f.Test.Info(); !info.Matrix || info.BothWays || f.Src < 0 || f.Dst < 0 || f.Src == f.Dst {
			continue
		}
		k := key{f.Test, f.Src, f.Dst}
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
	for k, c := range curves {
		if len(c) > 1 {
			keys = append(keys, k)
		}
	}
	order := catalogueOrder()
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.src != b.src {
			return a.src < b.src
		}
		if a.dst != b.dst {
			return a.dst < b.dst
		}
		return order[a.test] < order[b.test]
	})
	t := &table{title: "Bandwidth against transfer size, decimal GB/s, median, per ordered pair", header: []string{"size"},
		align: strings.Repeat("r", len(keys)+1), notes: []string{"n½ = the smallest size reaching half of the pair's peak bandwidth"}}
	halfPeak := []string{"n½"}
	for _, k := range keys {
		t.header = append(t.header, k.test.Info().Short+" "+pairName(k.src, k.dst))
		hp := "-"
		if z := results.HalfPeakOf(curves[k]); z > 0 {
			hp = results.FormatBytes(z)
		}
		halfPeak = append(halfPeak, hp)
	}
	for _, z := range slices.Sorted(maps.Keys(sizes)) {
		row := []string{results.FormatBytes(z)}
		for _, k := range keys {
			row = append(row, medianFormat(curves[k][z], func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }))
		}
		t.rows = append(t.rows, row)
	}
	t.rows = append(t.rows, halfPeak)
	d.table(t)
}

// copyLatencyTable sets, per pair, direction and size, what one small copy
// costs: as the host waits for it, back to back on the GPU, and alone on
// the GPU's events.
func copyLatencyTable(d *Document, run *results.Run) {
	type key struct {
		src, dst int
		dir      results.Direction
		size     uint64
	}
	kinds := []results.Test{results.LatCopyHost, results.LatCopyB2B, results.LatCopyDevice}
	headers := map[results.Test]string{results.LatCopyHost: "host µs", results.LatCopyB2B: "back to back µs", results.LatCopyDevice: "device µs"}
	cells := map[key]map[results.Test]*results.Figure{}
	var order []key
	has := map[results.Test]bool{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if headers[f.Test] == "" {
			continue
		}
		k := key{f.Src, f.Dst, f.Direction, f.Size}
		if cells[k] == nil {
			cells[k] = map[results.Test]*results.Figure{}
			order = append(order, k)
		}
		cells[k][f.Test], has[f.Test] = f, true
	}
	t := &table{title: "Small-copy latency, µs, median: host = enqueue + synchronize of one cuMemcpyPeerAsync, what an application waits for; " +
		"back to back = per copy of copies queued on one stream between two CUDA events; device = one copy between two CUDA events (latch-held), its events' own cost included",
		header: []string{"pair", "way", "size"}, align: "rlr"}
	var tests []results.Test
	for _, test := range kinds {
		if has[test] {
			tests = append(tests, test)
			t.header, t.align = append(t.header, headers[test]), t.align+"r"
		}
	}
	us := func(v float64) string { return strconv.FormatFloat(v/1e3, 'f', 2, 64) }
	way := map[results.Direction]string{results.DirRead: "pull", results.DirWrite: "push"}
	for _, k := range order {
		row := []string{pairName(k.src, k.dst), way[k.dir], results.FormatBytes(k.size)}
		for _, test := range tests {
			row = append(row, cellFormat(cells[k][test], us))
		}
		t.rows = append(t.rows, row)
	}
	d.table(t)
}

// atomicsTable sets every atomic figure of an operation and measure in a
// row, one column per pair, with what the driver says of the pair.
func atomicsTable(d *Document, run *results.Run) {
	type row struct{ op, measure string }
	cells := map[row]map[[2]int]*results.Figure{}
	var rows []row
	driver := map[row]string{}
	pairs := map[[2]int]bool{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Test != results.AtomicTput && f.Test != results.AtomicLatency {
			continue
		}
		r := row{f.Params["op"], "Gop/s distinct"}
		switch {
		case f.Test == results.AtomicLatency:
			r.measure = "ns chain"
		case f.Params["contended"] == "true":
			r.measure = "Gop/s contended"
		}
		if cells[r] == nil {
			cells[r] = map[[2]int]*results.Figure{}
			rows = append(rows, r)
		}
		p := [2]int{f.Src, f.Dst}
		cells[r][p], pairs[p] = f, true
		if f.Src != f.Dst && driver[r] == "" {
			driver[r] = f.Params["native_atomic_supported"] + " / " + f.Params["driver_caps"]
		}
	}
	ps := slices.SortedFunc(maps.Keys(pairs), func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	t := &table{title: "Atomics (system scope), median; columns = issuing GPU→GPU holding the memory (the same GPU: local); every counter checked exactly",
		header: []string{"operation", "measure"}, align: strings.Repeat("r", len(ps)+3)}
	for _, p := range ps {
		t.header = append(t.header, pairName(p[0], p[1]))
	}
	t.header = append(t.header, "driver (native / caps)")
	for _, r := range rows {
		line := []string{r.op, r.measure}
		for _, p := range ps {
			line = append(line, cellText(cells[r][p]))
		}
		t.rows = append(t.rows, append(line, cmp.Or(driver[r], "-")))
	}
	d.table(t)
}

// failuresTable lists the figures that failed, with why (the first
// maxFailuresListed; the results file has them all).
func failuresTable(d *Document, run *results.Run) {
	const maxFailuresListed = 20
	var bad []*results.Figure
	for i := range run.Figures {
		if f := &run.Figures[i]; f.Failed() {
			bad = append(bad, f)
		}
	}
	t := &table{title: fmt.Sprintf("%d figure%s failed", len(bad), units.Plural(len(bad), "", "s")), header: []string{"figure", "failure", "why"}, align: "lll"}
	for _, f := range bad[:min(len(bad), maxFailuresListed)] {
		why := f.Error
		if why == "" {
			why = f.VerifyDetail
		}
		t.rows = append(t.rows, []string{results.FigureName(f), f.FailureLabel(), why})
	}
	if len(bad) > maxFailuresListed {
		t.notes = []string{fmt.Sprintf("… and %d more (see the results file)", len(bad)-maxFailuresListed)}
	}
	d.table(t)
}

// ncclTables show an imported nccl-tests run as nccl-tests does: per
// collective, each size's bus and algorithm bandwidth out of place and in
// place, and its time.
func ncclTables(d *Document, run *results.Run) {
	for _, coll := range results.NCCLCollectives() {
		bw, tm, _ := results.NCCLTests(coll)
		type row struct{ cells [5]string }
		rows := map[uint64]*row{}
		var sizes []uint64
		ranks := ""
		for i := range run.Figures {
			f := &run.Figures[i]
			if f.Test != bw && f.Test != tm {
				continue
			}
			r := rows[f.Size]
			if r == nil {
				r = &row{}
				rows[f.Size] = r
				sizes = append(sizes, f.Size)
			}
			ranks = f.Params["ranks"]
			inPlace := f.Params[results.ParamNCCLInPlace] == "true"
			col := -1
			switch {
			case f.Test == tm && !inPlace:
				col = 4
			case f.Test == bw && f.Params[results.ParamNCCLBandwidth] == results.NCCLBusBW:
				col = 0
			case f.Test == bw && f.Params[results.ParamNCCLBandwidth] == results.NCCLAlgBW:
				col = 2
			}
			if col < 0 {
				continue
			}
			if inPlace && col < 4 {
				col++
			}
			if f.Test == tm {
				r.cells[col] = medianFormat(f, func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) })
			} else {
				r.cells[col] = cellText(f)
			}
		}
		if len(sizes) == 0 {
			continue
		}
		slices.Sort(sizes)
		title := "NCCL " + coll + " (nccl-tests), decimal GB/s as nccl-tests prints them"
		if ranks != "" {
			title += ", " + ranks + " ranks"
		}
		t := &table{title: title, header: []string{"size", "busbw", "busbw in place", "algbw", "algbw in place", "time µs"}, align: "rrrrrr",
			notes: []string{"busbw: nccl-tests' bus bandwidth, which it scales so that it can be held against the links' peak whatever the number of ranks; algbw: size / time; time: out of place"}}
		for _, z := range sizes {
			c := rows[z].cells
			t.rows = append(t.rows, []string{results.FormatBytes(z), c[0], c[1], c[2], c[3], c[4]})
		}
		d.table(t)
	}
}
