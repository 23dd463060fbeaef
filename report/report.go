package report

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// maxPairRows is the most pairs listed one per row; more are summarised.
const maxPairRows = 12

// maxHeadlineRows is the most rows the headline table gives one per pair
// and figure, about a page; a machine with more (4 GPUs: 12 pairs × 9
// figures) gets a row per figure and rank, naming the slowest pair, and
// its heatmaps show every pair.
const maxHeadlineRows = 40

// Report returns the report a buyer reads, about a dozen pages for 8 GPUs.
// It opens with the answer (the run's verdict and the machine's identity,
// see verdictPage), then the system and its environment, the topology and
// driver attributes, headline bandwidth against the limits of the path
// each figure crosses, what the NVLink counters saw, every item the
// verdict's checks found (in full, once), then the NVLink error counters
// per GPU and per link that bear the link findings out, for a ticket
// (linkHealthSection: the links where a counter other than ECC-data
// rose), in brief how the headline figures are computed, and last the
// figures a buyer reads (heatmaps only where a matrix has more cells than
// its table shows at a glance). Full adds everything else, every method
// after the figures.
func Report(run *results.Run) *Document { return report(run, false) }

// Full returns the whole report: Report's sections, each starting a page,
// with the verdict in detail (every judged figure), every finding in full,
// every figure of package plot and how every test's figures are computed.
func Full(run *results.Run) *Document { return report(run, true) }

func report(run *results.Run, full bool) *Document {
	host := run.Host
	if host == "" {
		host = "unknown host"
	}
	d := newDocument(run, reportTitle(run, host))
	d.compact = !full
	// The checks, the headline figures and the plots read the run
	// independently: on a run of hundreds of thousands of figures they are
	// worth every processor.
	var (
		headlines []Headline
		figs      []plot.Chart
		wg        sync.WaitGroup
	)
	wg.Add(2)
	go func() { defer wg.Done(); headlines = Headlines(run) }()
	go func() {
		defer wg.Done()
		figs = plot.Charts(run)
		if !full {
			key := keyFigure(run)
			figs = slices.DeleteFunc(figs, func(f plot.Chart) bool { return !key(f.Name) })
		}
	}()
	wg.Wait()
	d.Findings = findingsOf(run.Verdict)
	verdictPage(d, run, headlines)
	if linksFlagged(run.Verdict) && len(run.LinkCounters()) > 0 {
		d.para("For a ticket on a link: every NVLink error counter of each GPU and link, before and after the run, is in the section NVLink health, after the Findings.")
	}
	systemSection(d, run)
	topologySection(d, run)
	headlineSection(d, run, headlines)
	if len(headlines) > 0 {
		wireSection(d, run, headlines[0].Size)
	}
	if full {
		verdictDetails(d, run, false, true)
	}
	findingsSection(d, run, d.Findings, d.firstPageFindings)
	// The counters of every link follow the findings they bear out: where
	// an engineer opening a ticket on a link looks.
	linkHealthSection(d, run, full)
	if !full {
		// In brief, the methods flow on from the sections before, and the
		// figures, a page each, end the report.
		conventionsSection(d, run, full, headlines)
	}
	if len(figs) > 0 {
		d.pageSection("Figures")
		for _, f := range figs {
			d.Figure(f)
		}
	}
	if full {
		conventionsSection(d, run, full, headlines)
	}
	return d
}

// reportTitle names the report by its machine: the system's vendor and
// product where DMI gave them, else the host; an imported run by its tool.
func reportTitle(run *results.Run, host string) string {
	what := host
	if s := run.Environment.System; s != nil && s.Product != "" {
		what = strings.TrimSpace(s.Vendor+" "+s.Product) + " (host " + host + ")"
	}
	tool := "p2pbench"
	if run.Imported != nil {
		tool = strings.TrimSpace(run.Tool.Name + " " + run.Tool.Version)
		return tool + " results (imported by p2pbench): " + what
	}
	return tool + " report: " + what
}

// keyFigure says which figures the buyer's report shows: a heatmap only
// of a matrix larger than 3×3 (smaller ones are tables already) and only
// of the copy engine's one-way tests and the all-pairs aggregate; the size
// curves, the rank scatter, the chase latency and the atomics' throughput.
// The NVLink counters' chart draws the On the wire table's figures: the
// full report has it.
func keyFigure(run *results.Run) func(name string) bool {
	gpus := len(run.Environment.Devices)
	if run.Topology != nil && len(run.Topology.Devices) > 0 {
		gpus = len(run.Topology.Devices)
	}
	return func(name string) bool {
		switch name {
		case "heatmap_ce_read", "heatmap_ce_write", "heatmap_all_pairs":
			return gpus > 3
		case "size", "size_read", "size_write", "latency_chase", "atomic_throughput":
			return true
		case "rank":
			return true // drawn only where pairs differ in rank
		}
		return strings.HasPrefix(name, "nccl_") // an imported nccl-tests run's collectives

	}
}

// conventionsSection says how the figures of each test of the run are
// computed, as the run's catalogue words it: every test in full, the
// headline tests' alone otherwise. A method several tests share (the
// steady state, SM copies in one launch, an import's way of taking its
// values) is said once, under the table, with the tests it covers; each
// test's row says what is its own and names its methods.
func conventionsSection(d *Document, run *results.Run, full bool, hs []Headline) {
	tests := run.Tests()
	if !full {
		shown := map[results.Test]bool{}
		for _, h := range hs {
			shown[h.Test] = true
		}
		tests = slices.DeleteFunc(slices.Clone(tests), func(t results.Test) bool { return !shown[t] })
	}
	var convs []string
	var shown []results.Test
	for _, tt := range tests {
		if c := run.Convention(tt); c != "" {
			convs = append(convs, c)
			shown = append(shown, tt)
		}
	}
	if len(shown) == 0 {
		return
	}
	d.Section("How the figures are computed")
	if !full {
		d.para("The headline tests in brief; p2pbench report --full says it for every test of the run, and the results file holds each test's convention.")
	}
	own, methods := sharedMethods(convs)
	t := &table{header: []string{"test", "unit", "how its figures are computed", "method"}, align: "llll"}
	for i, tt := range shown {
		var names []string
		for _, m := range methods {
			if slices.Contains(m.tests, i) {
				names = append(names, m.name)
			}
		}
		how := own[i]
		if how == "" {
			how = "as its methods say"
		}
		t.rows = append(t.rows, []string{tt.Title() + " (" + string(tt) + ")", string(tt.Info().Unit), how, strings.Join(names, ", ")})
	}
	if len(methods) == 0 {
		t.header, t.align = t.header[:3], t.align[:3]
		for i := range t.rows {
			t.rows[i] = t.rows[i][:3]
		}
	}
	d.table(t)
	for _, m := range methods {
		var names []string
		for _, i := range m.tests {
			names = append(names, string(shown[i]))
		}
		d.para("Method %s, of %s: %s.", m.name, strings.Join(names, ", "), m.text)
	}
}

// method is a run of clauses that several tests' conventions share.
type method struct {
	name  string // "A", "B", ...
	text  string
	tests []int // indices of the conventions that hold it
}

// minMethodChars is the least a shared run of clauses holds to be said once
// as a method: shorter ones ("row = source, column = destination") stay
// in each test's words.
const minMethodChars = 150

// sharedMethods splits conventions into clauses ("; " outside brackets)
// and finds the runs of consecutive clauses that the same two or more
// conventions hold, of minMethodChars or more: those are the methods, said
// once; own is each convention's words without them.
func sharedMethods(convs []string) (own []string, methods []method) {
	clauses := make([][]string, len(convs))
	holders := map[string][]int{}
	for i, c := range convs {
		clauses[i] = splitClauses(c)
		for _, cl := range clauses[i] {
			if h := holders[cl]; len(h) == 0 || h[len(h)-1] != i {
				holders[cl] = append(h, i)
			}
		}
	}
	byText := map[string]int{}
	own = make([]string, len(convs))
	for i, cls := range clauses {
		var mine []string
		for j := 0; j < len(cls); {
			k := j + 1
			for k < len(cls) && slices.Equal(holders[cls[k]], holders[cls[j]]) {
				k++
			}
			run := strings.Join(cls[j:k], "; ")
			if len(holders[cls[j]]) >= 2 && utf8.RuneCountInString(run) >= minMethodChars {
				if _, ok := byText[run]; !ok {
					byText[run] = len(methods)
					methods = append(methods, method{name: string(rune('A' + len(methods)%26)), text: run, tests: holders[cls[j]]})
				}
			} else {
				mine = append(mine, cls[j:k]...)
			}
			j = k
		}
		own[i] = strings.Join(mine, "; ")
	}
	return own, methods
}

// splitClauses splits s at "; " outside brackets.
func splitClauses(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch {
		case r == '(' || r == '[':
			depth++
		case r == ')' || r == ']':
			depth = max(depth-1, 0)
		case r == ';' && depth == 0 && strings.HasPrefix(s[i:], "; "):
			out = append(out, s[start:i])
			start = i + 2
		}
	}
	return append(out, s[start:])
}

func systemSection(d *Document, run *results.Run) {
	d.Section("System and environment")
	kv := &itemTable{table{header: []string{"item", "value"}, align: "ll"}}
	machineItems(kv, run)
	softwareItems(kv, run)
	runItems(kv, run)
	d.table(&kv.table)
	devicesTable(d, run)
	stateTable(d, run.Environment)
}

// itemTable is a table of items and their values.
type itemTable struct{ table }

// add adds item k with value v, unless v is empty.
func (t *itemTable) add(k, v string) {
	if v != "" {
		t.rows = append(t.rows, []string{k, v})
	}
}

// machineItems are the machine's: its host, system, GPUs, and when the run
// was made.
func machineItems(kv *itemTable, run *results.Run) {
	kv.add("host", run.Host)
	if sys := run.Environment.System; sys != nil {
		kv.add("system", strings.TrimSpace(sys.Vendor+" "+sys.Product))
		kv.add("system serial", sys.Serial)
		kv.add("CPU", sys.CPU)
		kv.add("kernel", sys.Kernel)
		kv.add("OS", sys.OS)
		for _, u := range BoundedNotes(sys.Unreadable) {
			kv.add("not read", u)
		}
	}
	kv.add("GPUs", run.GPUSummary())
	if !run.Start.IsZero() {
		when := run.Start.UTC().Format("2006-01-02 15:04:05 UTC")
		if !run.End.IsZero() {
			when += fmt.Sprintf(" (%s)", run.End.Sub(run.Start).Round(time.Second))
		}
		kv.add("date", when)
	}
}

// softwareItems are the software's: the driver, CUDA, the library, NVML,
// the tool that measured (or the one imported, and what the import lacks)
// and its command line.
func softwareItems(kv *itemTable, run *results.Run) {
	env := run.Environment
	driver := env.DriverRelease
	if env.DriverVersion > 0 {
		driver = strings.TrimSpace(fmt.Sprintf("%s (cuDriverGetVersion %d)", driver, env.DriverVersion))
	}
	kv.add("driver", driver)
	kv.add("CUDA", env.CUDAVersion)
	kv.add("library", env.Library)
	if im := run.Imported; im != nil {
		// The other tool's version is its own; what p2pbench knows of
		// the machine beyond the input is nothing.
		kv.add(run.Tool.Name, run.Tool.Version)
		kv.add("imported by", cmp.Or(im.Importer, "p2pbench"))
		kv.add("imported from", im.File+" ("+im.Format+")")
		kv.add("NVML", "not in the import")
		for _, u := range BoundedNotes(im.Unknown) {
			kv.add("not in the import", u)
		}
	} else {
		kv.add("NVML", yesNo(env.NVML))
		kv.add("p2pbench", strings.TrimSpace(run.Tool.Version+" "+run.Tool.GoOS+"/"+run.Tool.GoArch))
	}
	kv.add("command", results.ClipText(strings.Join(BoundedNotes(run.Tool.Command), " ")))
}

// runItems are the run's: simulated or not, its data verified, complete,
// and its notes.
func runItems(kv *itemTable, run *results.Run) {
	sim := "no: measured on GPUs"
	if run.Simulated {
		sim = "YES: synthetic figures"
		if run.SimMachine != "" {
			sim += " (" + run.SimMachine + ")"
		}
	}
	kv.add("simulated", sim)
	verified := "yes"
	if why := verdict.Unverified(run); why != "" {
		verified = "no"
		if run.Imported.VerificationUnknown() != "" {
			verified = "not known"
		}
		if run.Verdict != nil {
			verified += " (the measurements check's finding says why)"
		} else {
			verified += ": " + why
		}
	}
	kv.add("data verified", verified)
	complete := "yes"
	if !run.Complete {
		complete = "NO: " + run.Stopped
	}
	kv.add("complete", complete)
	// Notes go in the table: a section of their own would often be a
	// page holding one line.
	for _, n := range BoundedNotes(uniqueNotes(run.Environment.Notes, run.Notes)) {
		kv.add("note", n)
	}
}

// devicesTable lists the GPUs as the driver describes them. Of an
// imported run, a column its input does not record (zero for every GPU) is
// left out and named under the table as not in the import.
func devicesTable(d *Document, run *results.Run) {
	devs := run.Environment.Devices
	if len(devs) == 0 {
		return
	}
	d.Heading(2, "GPUs")
	cols := []struct {
		header string
		align  byte
		get    func(results.Device) string // "" where the device has no value
	}{
		{"GPU", 'l', func(dv results.Device) string { return strconv.Itoa(dv.Index) }},
		{"name", 'l', func(dv results.Device) string { return dv.Name }},
		{"UUID", 'l', func(dv results.Device) string { return dv.UUID }},
		{"PCI bus id", 'l', func(dv results.Device) string { return dv.PCIBusID }},
		{"CC", 'l', func(dv results.Device) string { return dv.ComputeCapability }},
		{"SMs", 'r', func(dv results.Device) string { return nonZero(dv.SMCount, strconv.Itoa(dv.SMCount)) }},
		{"memory", 'r', func(dv results.Device) string {
			return nonZero(dv.MemoryBytes, fmt.Sprintf("%.1f GiB", float64(dv.MemoryBytes)/(1<<30)))
		}},
		{"L2", 'r', func(dv results.Device) string {
			return nonZero(dv.L2CacheBytes, results.FormatBytes(uint64(max(dv.L2CacheBytes, 0))))
		}},
		{"copy engines", 'r', func(dv results.Device) string { return nonZero(dv.AsyncEngines, strconv.Itoa(dv.AsyncEngines)) }},
		{"unified addressing", 'l', func(dv results.Device) string {
			if dv.UnifiedAddressing || run.Imported == nil {
				return yesNo(dv.UnifiedAddressing)
			}
			return ""
		}},
	}
	t := &table{}
	var missing []string
	for _, c := range cols {
		known := false
		for _, dv := range devs {
			known = known || c.get(dv) != ""
		}
		if !known && run.Imported != nil {
			missing = append(missing, c.header)
			continue
		}
		t.header = append(t.header, c.header)
		t.align += string(c.align)
	}
	for _, dv := range devs {
		var row []string
		for _, c := range cols {
			if !slices.Contains(missing, c.header) {
				row = append(row, c.get(dv))
			}
		}
		t.rows = append(t.rows, row)
	}
	if len(missing) > 0 {
		t.notes = []string{"Not in the import: " + strings.Join(missing, ", ") + " (" + possessive(run.Tool.Name) + " output does not give them)."}
	}
	d.table(t)
	boardsTable(d, devs)
}

// nonZero is text where n is not zero, else "".
func nonZero[N int | int64 | uint64](n N, text string) string {
	if n == 0 {
		return ""
	}
	return text
}

// boardsTable lists the GPU boards' identity (NVML), where any was read.
func boardsTable(d *Document, devs []results.Device) {
	t := &table{title: "GPU boards (NVML)", header: []string{"GPU", "serial", "board part number", "VBIOS", "InfoROM"}, align: "lllll"}
	for _, dv := range devs {
		if dv.Serial == "" && dv.BoardPartNumber == "" && dv.VBIOS == "" && dv.InfoROM == "" {
			continue
		}
		t.rows = append(t.rows, []string{strconv.Itoa(dv.Index), dv.Serial, dv.BoardPartNumber, dv.VBIOS, dv.InfoROM})
	}
	d.table(t)
}

// stateTable sets the NVML readings at the start of the run beside those at its end.
func stateTable(d *Document, env results.Environment) {
	if len(env.StateStart) == 0 && len(env.StateEnd) == 0 {
		return
	}
	d.Heading(2, "GPU state at the start and the end of the run (NVML)")
	end := map[int]results.DeviceState{}
	for _, s := range env.StateEnd {
		end[s.Index] = s
	}
	t := &table{header: []string{"GPU", "SM clock MHz", "memory clock MHz", "temperature °C", "power W"}, align: "lrrrr"}
	for _, s := range env.StateStart {
		e, ok := end[s.Index]
		arrow := func(a, b string) string {
			if !ok {
				return a
			}
			return a + " → " + b
		}
		t.rows = append(t.rows, []string{strconv.Itoa(s.Index),
			arrow(strconv.Itoa(s.SMClockMHz), strconv.Itoa(e.SMClockMHz)),
			arrow(strconv.Itoa(s.MemClockMHz), strconv.Itoa(e.MemClockMHz)),
			arrow(strconv.Itoa(s.TempC), strconv.Itoa(e.TempC)),
			arrow(fmt.Sprintf("%.0f", s.PowerW), fmt.Sprintf("%.0f", e.PowerW))})
	}
	d.table(t)
}

// linksFlagged reports whether the verdict's link check failed or warned.
func linksFlagged(v *results.Verdict) bool {
	if v == nil {
		return false
	}
	return slices.ContainsFunc(v.Checks, func(c results.Check) bool {
		return c.Name == "links" && (c.Status == results.StatusFail || c.Status == results.StatusWarn)
	})
}

// uniqueNotes are the notes of lists, each once, in their order: files of
// older builds say some twice. A set keeps it one pass: a file may hold
// millions of notes, which a search of the list so far for each made
// hours of work (hostile-input audit N7).
func uniqueNotes(lists ...[]string) []string {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	// Sized at once: a million notes grew the set a table at a time.
	out := make([]string, 0, n)
	seen := make(map[string]bool, n)
	for _, l := range lists {
		for _, n := range l {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// smGapPara says, from the run's own medians, how far the SM path lands
// below the copy engine and the link, and what is known of why.
func smGapPara(d *Document, hs []Headline, measured bool) {
	type acc struct {
		sm, ce, link float64
		n            int
	}
	by := map[string]*acc{}
	var order []string
	for _, h := range hs {
		if h.Stats == nil || h.CEGBps <= 0 || h.LinkGBps <= 0 {
			continue
		}
		l := h.Label()
		if by[l] == nil {
			by[l] = &acc{}
			order = append(order, l)
		}
		a := by[l]
		a.sm, a.ce, a.link, a.n = a.sm+h.Stats.Median, a.ce+h.CEGBps, a.link+h.LinkGBps, a.n+1
	}
	if len(order) == 0 {
		return
	}
	var parts []string
	for _, l := range order {
		a := by[l]
		parts = append(parts, fmt.Sprintf("%s %s GB/s = %.1f%% of the copy engine's %s and %.1f%% of the link (the copy engine: %.1f%%)",
			l, fmtGBps(a.sm/float64(a.n)), 100*a.sm/a.ce, fmtGBps(a.ce/float64(a.n)), 100*a.sm/a.link, 100*a.ce/a.link))
	}
	if measured {
		d.para("SM path against the copy engine, means over pairs of the medians above: %s. "+
			"Why, measured with the NVLink counters: see \"On the wire\" below.", strings.Join(parts, "; "))
		return
	}
	d.para("SM path against the copy engine, means over pairs of the medians above: %s. "+
		"Measured here: both engines' throughput, over the same pairs and sizes. Not measured: the cause of the gap. "+
		"The usual explanation is the payload each link packet carries: SM loads and stores reach the link as cache-line-sized "+
		"requests, each with its own header (a read also sends a request the other way, a write waits for an acknowledgement), "+
		"while the copy engine moves larger transfers. This run has no NVLink counters (NVML lacked them), so this stays a hypothesis; "+
		"kernels/NOTES.md lists the kernel variants tried and how to test it.", strings.Join(parts, "; "))
}

func headlineSection(d *Document, run *results.Run, hs []Headline) {
	if len(hs) == 0 {
		return
	}
	d.Section("Headline bandwidth against the links' limits")
	d.para("Large transfers (%s), decimal GB/s (1e9 B/s) of one direction unless the figure is a total of both directions (held against twice the link). Read = pull, issued by the destination; write = push, issued by the source. The limit is the pair's NVLinks × the payload bandwidth of one link, or, for a pair without NVLinks and a staged copy, the slower of the two GPUs' PCIe links (generation × width); SM figures are also given as a share of the copy-engine figure of the same pair and direction.",
		results.FormatBytes(hs[0].Size))
	if len(hs) <= maxHeadlineRows {
		d.table(headlinePairTable(run, hs))
	} else {
		d.table(headlineRankTable(run, hs, newPairIndex(run)))
	}
	smGapPara(d, hs, len(results.LinkEfficiency(run, hs[0].Size)) > 0)
}

// headlinePairTable lists every headline figure of every pair. A figure of
// one value (an import's) has no spread to show.
func headlinePairTable(run *results.Run, hs []Headline) *table {
	t := &table{header: []string{"figure", "pair", "median", "p5–p95", "CV", "limit", "% of limit", "% of CE"}, align: "llrrrrrr"}
	for _, h := range hs {
		row := []string{h.Label(), pairName(h.Src, h.Dst)}
		switch {
		case h.Stats == nil:
			row = append(row, h.Failed, "", "", limitText(run, h.LinkGBps), "", "")
		case h.Stats.N <= 1:
			row = append(row, fmtGBps(h.Stats.Median), "one value", "", limitText(run, h.LinkGBps), pctText(h.PercentOfLink()), pctText(h.PercentOfCE()))
		default:
			row = append(row, fmtGBps(h.Stats.Median), fmtGBps(h.Stats.P5)+"–"+fmtGBps(h.Stats.P95),
				fmt.Sprintf("%.2f%%", 100*h.Stats.CV), limitText(run, h.LinkGBps), pctText(h.PercentOfLink()), pctText(h.PercentOfCE()))
		}
		t.rows = append(t.rows, row)
	}
	// An import's single values have no CV, and figures without a
	// topology no share of a limit: columns of blanks say nothing.
	dropBlankColumns(t)
	return t
}

// headlineRankTable summarises many pairs: one row per figure and
// performance rank.
func headlineRankTable(run *results.Run, hs []Headline, ix *pairIndex) *table {
	type key struct {
		label string
		rank  int
	}
	type agg struct {
		values, pcts []float64
		limits       map[float64]bool
		failed       int
		noPeer       int // failed as a pair without peer access must (Headline.NoPeer)
		slowest      Headline
	}
	groups := map[key]*agg{}
	var order []key
	for _, h := range hs {
		r, _ := ix.rank(h.Src, h.Dst)
		k := key{h.Label(), r}
		g := groups[k]
		if g == nil {
			g = &agg{limits: map[float64]bool{}}
			groups[k] = g
			order = append(order, k)
		}
		if h.Stats == nil {
			if h.NoPeer {
				g.noPeer++
			} else {
				g.failed++
			}
			continue
		}
		g.values = append(g.values, h.Stats.Median)
		g.limits[h.LinkGBps] = true
		if p := h.PercentOfLink(); p > 0 {
			g.pcts = append(g.pcts, p)
		}
		if g.slowest.Stats == nil || h.Stats.Median < g.slowest.Stats.Median {
			g.slowest = h
		}
	}
	t := &table{header: []string{"figure", "rank", "pairs", "min", "median", "max", "limit", "median % of limit", "slowest pair"}, align: "lrrrrrrrl"}
	for _, k := range order {
		g := groups[k]
		pairsText := strconv.Itoa(len(g.values) + g.failed + g.noPeer)
		var but []string
		if g.noPeer > 0 {
			but = append(but, fmt.Sprintf("%d without peer access", g.noPeer))
		}
		if g.failed > 0 {
			but = append(but, fmt.Sprintf("%d failed", g.failed))
		}
		if len(but) > 0 {
			pairsText += " (" + strings.Join(but, ", ") + ")"
		}
		if len(g.values) == 0 {
			t.rows = append(t.rows, []string{k.label, strconv.Itoa(k.rank), pairsText, "", "", "", "", "", ""})
			continue
		}
		sort.Float64s(g.values)
		sort.Float64s(g.pcts)
		limit := "mixed"
		if len(g.limits) == 1 {
			for l := range g.limits {
				limit = limitText(run, l)
			}
		}
		pct := ""
		if len(g.pcts) > 0 {
			pct = pctText(figstats.Median(g.pcts))
		}
		t.rows = append(t.rows, []string{k.label, strconv.Itoa(k.rank), pairsText, fmtGBps(g.values[0]), fmtGBps(figstats.Median(g.values)),
			fmtGBps(g.values[len(g.values)-1]), limit, pct, fmt.Sprintf("%s (%s)", pairName(g.slowest.Src, g.slowest.Dst), fmtGBps(g.slowest.Stats.Median))})
	}
	return t
}

// limitText is a link limit in GB/s: "unknown" where the run does not
// know it, "not in the import" where an import's input did not give the
// topology.
func limitText(run *results.Run, l float64) string {
	switch {
	case l > 0:
		return fmtGBps(l)
	case run.Imported != nil:
		return "not in the import"
	}
	return "unknown"
}

func pctText(p float64) string {
	if p <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f%%", p)
}

// findingsOf lists what the verdict's checks found (failures first, then
// warnings, then notes), each as "check: subject: message"; none without a
// verdict.
func findingsOf(v *results.Verdict) []Finding {
	if v == nil {
		return nil
	}
	var out []Finding
	for _, c := range v.Checks {
		for _, it := range c.Items {
			out = append(out, Finding{Check: c.Name, CheckItem: it})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Status.Worse(out[j].Status) })
	return out
}

// Finding is one item of a verdict's checks, with the check it belongs to.
type Finding struct {
	Check string
	results.CheckItem
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: %s: %s: %s", f.Status.Label(), f.Check, f.Subject, f.Message)
}

// findingsSection lists every item of the verdict's checks, once and in
// full: the report renders what the verdict decided and judges nothing
// itself. The failures and warnings page 1 lists already (shown of them)
// are not listed again.
func findingsSection(d *Document, run *results.Run, findings []Finding, shown int) {
	d.Section("Findings")
	if run.Verdict == nil {
		d.para("The run has no verdict: nothing was checked.")
		return
	}
	if len(findings) == 0 {
		d.para("The verdict's checks found nothing to report.")
		return
	}
	intro := "Everything the verdict's checks found (a FAIL fails the verdict, a WARN warns, a NOTE is behaviour known and explained); package verdict's documentation and verdict/EXPECTATIONS.md give the rules and thresholds."
	switch {
	case shown == len(findings):
		d.para("%s The %s on page 1 %s all of them.", intro, units.Plural(shown, "finding", "findings"), units.Plural(shown, "is", "are"))
		return
	case shown > 0:
		intro += fmt.Sprintf(" The first %d, on page 1, are not repeated here.", shown)
	}
	d.para("%s", intro)
	t := &table{header: []string{"", "check", "subject", "finding"}, align: "llll", shade: map[[2]int]results.Status{}}
	for _, f := range findings[shown:] {
		t.shade[[2]int{len(t.rows), 0}] = f.Status
		t.rows = append(t.rows, []string{f.Status.Label(), f.Check, f.Subject, f.Message})
	}
	d.table(t)
}
