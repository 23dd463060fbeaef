package report

import (
	"cmp"
	"fmt"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/internal/units"
	"math"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// maxPairColumns is the most pairs the first page's matrix shows one per
// column; more are summarised per kind of figure.
const maxPairColumns = 6

// notJudgedAdvice is what to do about a verdict that judged nothing.
const notJudgedAdvice = "give --expect or --baseline naming its figures, or measure the sizes the expectation table covers (64 MiB or more), before using this file as a baseline."

// maxFailedLines bounds what the first page lists under "What failed".
const maxFailedLines = 4

// Verdict returns the report's first page alone, the answer, for p2pbench
// check and the end of all to print (see verdictPage).
func Verdict(run *results.Run) *Document {
	d := newDocument(run, "Verdict")
	verdictPage(d, run, Headlines(run))
	return d
}

// verdictPage is the report's first page, the answer: the verdict in
// large, the machine, date and driver, one line per check, the headline
// matrix against expectation, what failed and what to do next. It reads
// the run's verdict (results.Run.Verdict); a run without one says so.
func verdictPage(d *Document, run *results.Run, hs []Headline) {
	v := run.Verdict
	if v == nil {
		d.verdict(results.StatusNotJudged, "This results file has no verdict: p2pbench check judges it against p2pbench's model of the machine, "+
			"a spec of least figures (--expect) or a known-good run (--baseline).")
	} else {
		d.verdict(v.Status, verdictLine(v))
	}
	facts := []string{machineLine(run)}
	if im := run.Imported; im != nil {
		line := fmt.Sprintf("Figures: %s, imported from %s (%s) by %s", possessive(strings.TrimSpace(run.Tool.Name+" "+run.Tool.Version)),
			im.File, im.Format, cmp.Or(im.Importer, "p2pbench"))
		if slices.ContainsFunc(run.Figures, func(f results.Figure) bool { return f.Engine.IsSM() }) {
			line += fmt.Sprintf("; SM figures are %s own copy kernels, another method than p2pbench's SM rows", possessive(run.Tool.Name))
		}
		facts = append(facts, line)
	} else {
		facts = append(facts, identityLines(run)...)
	}
	if v != nil {
		facts = append(facts, judgedLine(v))
	}
	d.para("%s", strings.Join(facts, "\n"))
	d.blocks[len(d.blocks)-1].small = true
	if v == nil {
		return
	}
	// With nothing failed or warned, saying so takes two lines: they go
	// above the tables, which then keep page 1 to themselves.
	clear := v.Status != results.StatusFail && v.Status != results.StatusWarn
	if clear {
		failedLines(d, v)
	}
	d.table(checksTable(v, false))
	if t := headlineMatrix(hs, v); t != nil {
		d.table(t)
	}
	if !clear {
		failedLines(d, v)
	}
}

// checksTable is a line per check of v: its status, title and outcome, in
// a sentence or (short, for a screen) in a few words where the verdict has
// them. A check that failed or warned gives its few words on a page too:
// its sentence quotes its first finding, which What failed lists in full.
func checksTable(v *results.Verdict, short bool) *table {
	checks := &table{header: []string{"", "check", "outcome"}, align: "lll", shade: map[[2]int]results.Status{}}
	for i, c := range v.Checks {
		outcome := c.Summary
		bad := c.Status == results.StatusFail || c.Status == results.StatusWarn
		if s := verdict.ShortOf(c); (short || bad) && s != "" {
			outcome = s
		}
		checks.rows = append(checks.rows, []string{c.Status.Label(), c.Title, outcome})
		checks.shade[[2]int{i, 0}] = c.Status
	}
	return checks
}

// machineLine names the machine, the run's date and its driver.
func machineLine(run *results.Run) string {
	env := run.Environment
	machine := "Machine: " + run.GPUSummary()
	if run.Host != "" {
		machine += " (host " + run.Host + ")"
	}
	if !run.Start.IsZero() {
		machine += " · date: " + run.Start.UTC().Format("2006-01-02 15:04 UTC")
	}
	switch {
	case env.DriverRelease != "" && env.CUDAVersion != "":
		machine += " · driver: " + env.DriverRelease + " (CUDA " + env.CUDAVersion + ")"
	case env.DriverRelease != "":
		machine += " · driver: " + env.DriverRelease
	case env.CUDAVersion != "":
		machine += " · CUDA " + env.CUDAVersion
	default:
		machine += " · driver: not recorded"
	}
	return machine
}

// judgedLine says what the verdict held the figures against.
func judgedLine(v *results.Verdict) string {
	judged := "Judged against: " + v.Expectations.Name
	if v.Expectations.Conservative {
		judged += "; loosely where the table has one machine's measurements only or the vendor's figure (see the notes)"
	}
	return judged
}

// maxSerialsListed is the most GPUs whose serials the first page lists.
const maxSerialsListed = 8

// identityLines name the machine for a procurement file: the system
// (vendor, product, serial, CPU, kernel, OS; what could not be read said
// so) and the GPU boards (serials, part numbers, VBIOS, InfoROM).
func identityLines(run *results.Run) []string {
	var out []string
	if s := run.Environment.System; s != nil {
		var parts []string
		sys := strings.TrimSpace(s.Vendor + " " + s.Product)
		if sys == "" {
			sys = "vendor and product unknown"
		}
		serial := s.Serial
		if serial == "" {
			serial = "not readable (the report's system table says why)"
			for _, u := range s.Unreadable {
				if strings.HasPrefix(u, "serial: ") && strings.Contains(u, "root") {
					serial = "not readable (DMI serials need root)"
				}
			}
		}
		what := "System: "
		if run.Simulated {
			what = "Host running the simulator (not simulated): "
		}
		parts = append(parts, what+sys+", serial "+serial)
		if s.CPU != "" {
			cpu := s.CPU
			if s.CPUs > 0 {
				cpu += fmt.Sprintf(" (%d logical CPUs)", s.CPUs)
			}
			parts = append(parts, "CPU: "+cpu)
		}
		if s.OS != "" || s.Kernel != "" {
			parts = append(parts, "OS: "+strings.TrimSpace(s.OS+", kernel "+s.Kernel))
		}
		out = append(out, strings.Join(parts, " · "))
	}
	devs := run.Environment.Devices
	var serials []string
	for _, d := range devs {
		if d.Serial != "" {
			serials = append(serials, fmt.Sprintf("%d: %s", d.Index, d.Serial))
		}
	}
	switch {
	case len(serials) == 0 && run.Environment.NVML && run.Environment.System == nil:
		out = append(out, "GPU serials: not recorded (a results file of an older p2pbench)")
	case len(serials) == 0 && run.Environment.NVML:
		out = append(out, "GPU serials: not given by NVML (the environment's notes say why)")
	case len(serials) == 0:
		out = append(out, "GPU serials: not recorded (no NVML)")
	case len(devs) > maxSerialsListed:
		out = append(out, fmt.Sprintf("GPU serials: %d of %d recorded, listed in the report's GPU boards table", len(serials), len(devs)))
	default:
		line := "GPU serials: " + strings.Join(serials, ", ")
		if len(serials) < len(devs) {
			line += fmt.Sprintf(" (%d of %d: see the notes)", len(serials), len(devs))
		}
		out = append(out, line)
	}
	if b := boardLine(devs); b != "" {
		out[len(out)-1] += " · " + b
	}
	return out
}

// boardLine says the boards' part number, VBIOS and InfoROM versions, or
// "mixed" where the GPUs differ.
func boardLine(devs []results.Device) string {
	var parts []string
	for _, f := range []struct {
		name string
		get  func(results.Device) string
	}{
		{"board part number", func(d results.Device) string { return d.BoardPartNumber }},
		{"VBIOS", func(d results.Device) string { return d.VBIOS }},
		{"InfoROM", func(d results.Device) string { return d.InfoROM }},
	} {
		seen := map[string]bool{}
		var vals []string
		for _, d := range devs {
			if v := f.get(d); v != "" && !seen[v] {
				seen[v] = true
				vals = append(vals, v)
			}
		}
		switch {
		case len(vals) == 1:
			parts = append(parts, f.name+" "+vals[0])
		case len(vals) > 1:
			parts = append(parts, fmt.Sprintf("%s mixed (%d kinds)", f.name, len(vals)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "boards: " + strings.Join(parts, ", ")
}

// verdictLine says what the verdict rests on, in a sentence: which checks
// failed or warned, whether any of them judges the machine (a failure of
// the run's own measurements or hygiene does not say the machine is bad),
// and which checks had nothing to judge by.
func verdictLine(v *results.Verdict) string {
	var failed, warned, notJudged []string
	machine := false
	for _, c := range v.Checks {
		switch c.Status {
		case results.StatusFail:
			failed = append(failed, c.Title)
			machine = machine || verdict.MachineCheck(c.Name)
		case results.StatusWarn:
			warned = append(warned, c.Title)
		case results.StatusNotJudged:
			notJudged = append(notJudged, c.Title)
		}
	}
	unjudged := ""
	if len(notJudged) > 0 {
		unjudged = " Not judged (nothing to judge by): " + strings.Join(notJudged, "; ") + "."
	}
	switch v.Status {
	case results.StatusFail:
		if machine {
			return fmt.Sprintf("%s failed: this machine is not as good as it should be.%s", checksText(failed), unjudged)
		}
		return fmt.Sprintf("%s failed: the run cannot vouch for this machine, though nothing it judged of the machine failed.%s", checksText(failed), unjudged)
	case results.StatusWarn:
		return fmt.Sprintf("Nothing failed, but %s warned: look at them before relying on the figures.%s", checksText(warned), unjudged)
	case results.StatusNotJudged:
		warnedToo := ""
		if len(warned) > 0 {
			warnedToo = fmt.Sprintf(" Besides, %s warned (listed below).", checksText(warned))
		}
		return "Nothing of the machine could be judged: the run has no figure the expectations cover, and a health reading alone does not vouch for its links." + warnedToo + unjudged
	}
	if len(notJudged) > 0 {
		return "Every check that had something to judge passed: this machine is as good as it should be, as far as they go." + unjudged
	}
	return "Every check passed: this machine is as good as it should be."
}

// checksText names checks: "Bandwidth", "2 checks (Links; Memory)".
func checksText(titles []string) string {
	if len(titles) == 1 {
		return "1 check (" + titles[0] + ")"
	}
	return fmt.Sprintf("%d checks (%s)", len(titles), strings.Join(titles, "; "))
}

// headlineMatrix is the headline figures against their verdicts: a row
// per kind of figure, a column per pair (or, for many pairs, the lowest
// and the median), each cell marked and shaded by its figure's status.
func headlineMatrix(hs []Headline, v *results.Verdict) *table {
	if len(hs) == 0 {
		return nil
	}
	verdicts := make(map[string]results.FigureVerdict, len(v.Figures))
	for _, fv := range v.Figures {
		verdicts[fv.Key] = fv
	}
	var kinds []string
	rows := map[string][]Headline{}
	var pairs [][2]int
	seen := map[[2]int]bool{}
	for _, h := range hs {
		l := h.Label()
		if rows[l] == nil {
			kinds = append(kinds, l)
		}
		rows[l] = append(rows[l], h)
		if p := [2]int{h.Src, h.Dst}; !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
	}
	slices.SortFunc(pairs, func(a, b [2]int) int { return (a[0]-b[0])*1000 + a[1] - b[1] })
	t := &table{title: fmt.Sprintf("Headline bandwidth at %s, median GB/s, against expected (typical) and pass at (the least it must reach)", results.FormatBytes(hs[0].Size)),
		shade: map[[2]int]results.Status{}}
	perPair := len(pairs) <= maxPairColumns
	if perPair {
		t.header = []string{"figure"}
		for _, p := range pairs {
			t.header = append(t.header, pairName(p[0], p[1]))
		}
	} else {
		t.header = []string{"figure", "pairs", "lowest (pair)", "median", "not passing"}
	}
	t.header = append(t.header, "expected", "pass at")
	t.align = "l" + strings.Repeat("r", len(t.header)-1)
	for r, k := range kinds {
		row := []string{k}
		var vs []results.FigureVerdict
		if perPair {
			byPair := map[[2]int]Headline{}
			for _, h := range rows[k] {
				byPair[[2]int{h.Src, h.Dst}] = h
			}
			for c, p := range pairs {
				h, ok := byPair[p]
				if !ok {
					row = append(row, "-")
					continue
				}
				fv, judged := verdicts[h.Key]
				row = append(row, headlineCell(h, fv, judged))
				t.shade[[2]int{r, c + 1}] = cellStatus(fv, judged)
				if judged {
					vs = append(vs, fv)
				}
			}
		} else {
			row, vs = headlineSummaryRow(row, rows[k], verdicts)
			t.shade[[2]int{r, 2}] = worstOf(vs)
		}
		row = append(row, sameValue(vs, func(fv results.FigureVerdict) float64 { return fv.Expected }),
			sameValue(vs, func(fv results.FigureVerdict) float64 { return fv.Bound }))
		t.rows = append(t.rows, row)
	}
	if !slices.ContainsFunc(t.rows, func(row []string) bool { return row[len(row)-2] != "" || row[len(row)-1] != "" }) {
		// No figure of the table judged (an import without a topology):
		// columns of nothing would say so in blanks.
		for i := range t.rows {
			t.rows[i] = t.rows[i][:len(t.rows[i])-2]
		}
		t.header = t.header[:len(t.header)-2]
		t.align = t.align[:len(t.align)-2]
		t.title = fmt.Sprintf("Headline bandwidth at %s, median GB/s, none judged (the bandwidth check says why)", results.FormatBytes(hs[0].Size))
	}
	return t
}

// headlineSummaryRow adds to row the pairs, the lowest with its pair, the
// median and how many did not pass, for many pairs; it returns the row and
// the verdicts of the kind.
func headlineSummaryRow(row []string, hs []Headline, verdicts map[string]results.FigureVerdict) ([]string, []results.FigureVerdict) {
	var vs []results.FigureVerdict
	var values []float64
	var lowest *Headline
	count := map[results.Status]int{}
	for i := range hs {
		h := &hs[i]
		if fv, ok := verdicts[h.Key]; ok {
			vs = append(vs, fv)
			count[fv.Status]++
		}
		if h.Stats == nil {
			continue
		}
		values = append(values, h.Stats.Median)
		if lowest == nil || h.Stats.Median < lowest.Stats.Median {
			lowest = h
		}
	}
	var bad []string
	for _, s := range []results.Status{results.StatusFail, results.StatusWarn} {
		if count[s] > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", count[s], s.Label()))
		}
	}
	if len(bad) == 0 {
		bad = []string{"none"}
	}
	low, med := "-", "-"
	if lowest != nil {
		fv, judged := verdicts[lowest.Key]
		low = headlineCell(*lowest, fv, judged) + " (" + pairName(lowest.Src, lowest.Dst) + ")"
		slices.Sort(values)
		med = fmtGBps(figstats.Median(values))
	}
	return append(row, fmt.Sprint(len(hs)), low, med, strings.Join(bad, ", ")), vs
}

// headlineCell is a headline's median, or its failure, marked when its
// verdict did not pass.
func headlineCell(h Headline, fv results.FigureVerdict, judged bool) string {
	cell := h.Failed
	if h.Stats != nil {
		cell = fmtGBps(h.Stats.Median)
	}
	if judged && (fv.Status == results.StatusWarn || fv.Status == results.StatusFail) {
		cell += " (" + fv.Status.Label() + ")"
	}
	return cell
}

func cellStatus(fv results.FigureVerdict, judged bool) results.Status {
	if !judged {
		return results.StatusNotJudged
	}
	return fv.Status
}

// worstOf is the worst status of vs; not judged when vs is empty.
func worstOf(vs []results.FigureVerdict) results.Status {
	if len(vs) == 0 {
		return results.StatusNotJudged
	}
	w := results.StatusPass
	for _, fv := range vs {
		if fv.Status.Worse(w) {
			w = fv.Status
		}
	}
	return w
}

// sameValue is the value all verdicts share (within 0.5%), "varies" when
// they differ, "" when there is none.
func sameValue(vs []results.FigureVerdict, get func(results.FigureVerdict) float64) string {
	first := 0.0
	for _, fv := range vs {
		x := get(fv)
		if x == 0 {
			continue
		}
		if first == 0 {
			first = x
		} else if math.Abs(x/first-1) > 0.005 {
			return "varies"
		}
	}
	if first == 0 {
		return ""
	}
	return fmtGBps(first)
}

// failedLines lists what failed and warned (unless the document is a
// screen, whose checks name them in short), what to do next, and how many
// notes the verdict holds.
func failedLines(d *Document, v *results.Verdict) {
	var fails, warns, notes []string
	for _, c := range v.Checks {
		for _, it := range c.Items {
			line := it.Status.Label() + " — " + it.Subject + ": " + it.Message
			for _, x := range it.Details {
				line += "\n    · " + x
			}
			switch it.Status {
			case results.StatusFail:
				fails = append(fails, line)
			case results.StatusWarn:
				warns = append(warns, line)
			case results.StatusNote:
				notes = append(notes, it.Subject)
			}
		}
	}
	bad := append(fails, warns...)
	noted := ""
	switch {
	case len(notes) > 0 && d.width > 0:
		noted = fmt.Sprintf(" %d note%s of behaviour known and explained: the report's Findings.", len(notes), units.Plural(len(notes), "", "s"))
	case len(notes) > 0:
		noted = fmt.Sprintf(" %d note%s of behaviour known and explained, which does not count against the machine, listed under Findings in the report (p2pbench report).",
			len(notes), units.Plural(len(notes), "", "s"))
	}
	if len(bad) == 0 && v.Status == results.StatusNotJudged {
		d.para("Nothing failed and nothing warned, but nothing of the machine was judged either: %s%s", notJudgedAdvice, noted)
		return
	}
	if len(bad) == 0 {
		d.para("Nothing failed and nothing warned. Keep this results file as the baseline of later runs (p2pbench check NEW.json --baseline THIS.json).%s", noted)
		return
	}
	if d.width == 0 {
		switch {
		case len(fails) == 0:
			d.Heading(2, "What warned")
		case len(warns) == 0:
			d.Heading(2, "What failed")
		default:
			d.Heading(2, "What failed and warned")
		}
		d.firstPageFindings = min(len(bad), maxFailedLines)
		if n := len(bad); n > maxFailedLines {
			bad = append(bad[:maxFailedLines], fmt.Sprintf("and %d more, listed under Findings in the report (p2pbench report)", n-maxFailedLines))
		}
		d.para("%s", strings.Join(bad, "\n"))
		d.Heading(2, "What to do next")
	}
	next := v.NextSteps
	if v.Status == results.StatusNotJudged {
		next = append([]string{"Nothing of the machine was judged: " + notJudgedAdvice}, next...)
	}
	if d.width > 0 { // a screen's heading is the para's first line
		next = append([]string{"What to do next:"}, next...)
	}
	if noted != "" {
		next = append(slices.Clone(next), strings.TrimSpace(noted))
	}
	d.para("%s", strings.Join(next, "\n"))
}

// Details returns the verdict spelled out, for show: what the figures were
// held against and every check with its items in full (see
// verdictDetails; the report --full lists the judged figures too);
// nothing for a run without a verdict.
func Details(run *results.Run) *Document {
	d := newDocument(run, "")
	d.blocks = nil // under the tables and summary, whose banners say what the run is
	verdictDetails(d, run, true, false)
	return d
}

// verdictDetails is the section that spells the verdict out: what the
// figures were held against, where items is set every check with its
// items (show; the report has the checks on page 1 and the items under
// Findings), and where figures is set the judged figures (all of them for
// a small machine; those that did not pass otherwise).
func verdictDetails(d *Document, run *results.Run, items, figures bool) {
	v := run.Verdict
	if v == nil {
		return
	}
	d.Section("The verdict in detail")
	src := v.Expectations
	about := fmt.Sprintf("The figures were held against %s", src.Name)
	if src.File != "" && !strings.Contains(src.Name, src.File) {
		about += " (" + src.File + ")"
	}
	d.para("%s.%s", about, strings.Join(append([]string{""}, BoundedNotes(src.Notes)...), "\n"))
	if items {
		t := &table{header: []string{"", "check", "subject", "finding"}, align: "llll", shade: map[[2]int]results.Status{}}
		add := func(st results.Status, row ...string) {
			t.shade[[2]int{len(t.rows), 0}] = st
			t.rows = append(t.rows, append([]string{st.Label()}, row...))
		}
		for _, c := range v.Checks {
			if len(c.Items) == 0 {
				add(c.Status, c.Title, "", c.Summary)
			}
			for _, it := range c.Items {
				add(it.Status, c.Title, it.Subject, it.Message)
				for _, x := range it.Details {
					t.rows = append(t.rows, []string{"", "", "", "· " + x})
				}
			}
		}
		d.table(t)
	}
	if !figures {
		return
	}
	figs := &table{header: []string{"", "figure", "median", "expected", "pass at", "why"}, align: "llrrrl", shade: map[[2]int]results.Status{}}
	byKey := make(map[string]*results.Figure, len(run.Figures))
	for i := range run.Figures {
		byKey[run.Figures[i].Key()] = &run.Figures[i]
	}
	all := len(v.Figures) <= 2*maxFigureRows
	passed := 0
	for _, fv := range v.Figures {
		f := byKey[fv.Key]
		if f == nil {
			continue
		}
		if !all && (fv.Status == results.StatusPass || fv.Status == results.StatusNote) {
			passed++
			continue
		}
		expected := ""
		if fv.Expected > 0 {
			expected = fmtGBps(fv.Expected)
		}
		figs.shade[[2]int{len(figs.rows), 0}] = fv.Status
		figs.rows = append(figs.rows, []string{fv.Status.Label(), results.FigureName(f), fmtGBps(fv.Value), expected, fmtGBps(fv.Bound), fv.Reason})
	}
	figs.title = fmt.Sprintf("The %d judged figures", len(v.Figures))
	if passed > 0 {
		figs.title = fmt.Sprintf("The judged figures that did not pass (%d more passed or are notes; the results file lists every one)", passed)
	}
	d.table(figs)
}

// maxFigureRows is half the most judged figures the details list one by one.
const maxFigureRows = 60
