package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// LinkHealth returns the NVLink health section alone, for show: every
// NVLink error counter the run read, per GPU and per link (see
// linkHealthSection); nothing for a run without those readings.
func LinkHealth(run *results.Run) *Document {
	d := newDocument(run, "")
	d.blocks = nil // under the other documents of show, whose banners say what the run is
	linkHealthSection(d, run, true)
	return d
}

// maxLinkRows is the most links the per-link table lists one by one; on a
// larger machine it lists those whose counters rose (or were read only in
// part) and counts the rest.
const maxLinkRows = 72

// linkHealthSection shows every NVLink error counter the run read, before
// and after it, with its rise and its rate over the GPU's readings: the
// GPU totals DCGM reads, then each link. The link check of the verdict
// judges them; this section only shows them. Where every is false (the
// buyer's report) it lists the links where a counter other than ECC-data
// rose, and counts the others.
func linkHealthSection(d *Document, run *results.Run, every bool) {
	rows := run.LinkCounters()
	if len(rows) == 0 {
		return
	}
	d.Section("NVLink health: every error counter")
	d.para("%s", "NVML's NVLink error counters, read before the first test and after the last: each link's "+
		"(nvmlDeviceGetNvLinkErrorCounter: replay 0, recovery 1, CRC-flit 2, CRC-data 3, ECC-data 4) and each GPU's "+
		"totals over its links (nvmlDeviceGetFieldValues: NVML_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL), which DCGM's health "+
		"watch reads. The counters run from the driver's load; a rate is the rise over the time between the GPU's two "+
		"readings, the run's traffic window. nvidia-smi nvlink -e is not a way to see the CRC-data counter: its CRC "+
		"column read 0 on the machines p2pbench was checked on while this counter counted. The link check of the "+
		"verdict judges them as DCGM does.")
	secs := map[int]float64{}
	for _, r := range rows {
		if _, ok := secs[r.Device]; !ok {
			if from, to, ok := run.HealthWindow(r.Device); ok {
				secs[r.Device] = to.Sub(from).Seconds()
			}
		}
	}
	if t := totalsTable(run, rows, secs, every); t != nil {
		d.tableOrCount(t)
	}
	d.tableOrCount(perLinkTable(rows, secs, every))
}

// tableOrCount adds t, or where it lists no row (the buyer's report: no
// GPU or link where a counter other than ECC-data rose), what it would
// count and its notes, said.
func (d *Document) tableOrCount(t *table) {
	if len(t.rows) > 0 {
		d.table(t)
		return
	}
	d.para("%s", t.title+": "+strings.Join(t.notes, "; ")+".")
}

// counterLabel names a counter in a table's header.
var counterLabel = map[results.LinkCounter]string{
	results.LinkReplay: "replay", results.LinkRecovery: "recovery", results.LinkCRCFlit: "CRC-flit",
	results.LinkCRCData: "CRC-data", results.LinkECCData: "ECC-data",
}

// rateText is n errors over secs seconds, "" when the time is unknown.
func rateText(n uint64, secs float64) string {
	if secs <= 0 {
		return ""
	}
	r := float64(n) / secs
	if r >= 10 {
		return fmt.Sprintf("%.1f/s", r)
	}
	return fmt.Sprintf("%.2g/s", r)
}

// totalsTable lists each GPU's totals: the field's reading before and
// after, its rise and rate, and the links' own rise beside it; a total
// the driver did not give says so. Unless every (the buyer's report), it
// lists the GPUs where a total other than ECC-data rose, or where a total
// and its links' sum differ, and counts the rest, as perLinkTable does
// the links: 72 GPUs' five totals would be 360 rows of corrected errors.
// nil when the run read no totals.
func totalsTable(run *results.Run, rows []results.LinkCounterRow, secs map[int]float64, every bool) *table {
	linkRise := map[[2]int]uint64{}
	for _, r := range rows {
		if r.Link >= 0 {
			linkRise[[2]int{r.Device, slices.Index(results.LinkErrorCounters, r.Counter)}] += r.Rise()
		}
	}
	t := &table{title: "GPU totals (nvmlDeviceGetFieldValues), beside the links' own counters summed",
		header: []string{"GPU", "counter", "before", "after", "rise", "rate", "links' rise"}, align: "llrrrrr"}
	g := totalsListed(rows, linkRise, every)
	for _, r := range rows {
		if r.Link >= 0 || !g.listed[r.Device] {
			continue
		}
		lr := linkRise[[2]int{r.Device, slices.Index(results.LinkErrorCounters, r.Counter)}]
		agree := fmt.Sprint(lr)
		if lr != r.Rise() {
			agree += " (differs)"
		}
		t.rows = append(t.rows, []string{fmt.Sprint(r.Device), counterLabel[r.Counter], fmt.Sprint(r.Before), fmt.Sprint(r.After),
			fmt.Sprint(r.Rise()), rateText(r.Rise(), secs[r.Device]), agree})
	}
	t.notes = append(g.notes(len(t.rows) > 0), totalsNotes(run)...)
	if len(t.rows) == 0 && len(t.notes) == 0 {
		return nil
	}
	if len(t.rows) == 0 && len(g.read) == 0 {
		t.rows = append(t.rows, []string{"", "none read", "", "", "", "", ""})
	}
	return t
}

// totalsGPUs are the GPUs whose totals were read, those the table lists,
// and of the others those where only ECC-data rose.
type totalsGPUs struct{ read, listed, eccOnly map[int]bool }

// totalsListed chooses the GPUs whose totals the table lists: every GPU
// with every, else those where a total other than ECC-data rose or a total
// and its links' sum (linkRise) differ.
func totalsListed(rows []results.LinkCounterRow, linkRise map[[2]int]uint64, every bool) totalsGPUs {
	g := totalsGPUs{read: map[int]bool{}, listed: map[int]bool{}, eccOnly: map[int]bool{}}
	for _, r := range rows {
		if r.Link >= 0 {
			continue
		}
		g.read[r.Device] = true
		differs := linkRise[[2]int{r.Device, slices.Index(results.LinkErrorCounters, r.Counter)}] != r.Rise()
		switch {
		case every, differs, r.Counter != results.LinkECCData && r.Rise() > 0:
			g.listed[r.Device] = true
		case r.Rise() > 0:
			g.eccOnly[r.Device] = true
		}
	}
	return g
}

// notes count the GPUs the table does not list (more of them when it
// lists some).
func (g totalsGPUs) notes(some bool) []string {
	more := ""
	if some {
		more = " more"
	}
	ecc, quiet := 0, 0
	for d := range g.read {
		switch {
		case g.listed[d]:
		case g.eccOnly[d]:
			ecc++
		default:
			quiet++
		}
	}
	var notes []string
	if ecc > 0 {
		notes = append(notes, fmt.Sprintf("%d%s GPU%s where only ECC-data rose (errors the links corrected), as their links' sums: p2pbench show and report --full list them",
			ecc, more, units.Plural(ecc, "", "s")))
	}
	if quiet > 0 {
		notes = append(notes, fmt.Sprintf("%d%s GPU%s where no total rose: p2pbench show and report --full list them", quiet, more, units.Plural(quiet, "", "s")))
	}
	return notes
}

// totalsNotes say which totals the driver did not give, and the data-link
// totals after the run: one note for the GPUs that read alike (on a
// healthy machine every GPU's are 0), where a line per GPU would say the
// same 8 or 72 times.
func totalsNotes(run *results.Run) []string {
	var notes, dl []string
	dlGPUs := map[string][]int{}
	for _, h := range run.Environment.HealthAfter {
		for _, c := range results.LinkErrorCounters {
			if why, na := h.LinkTotalUnavailable(c, false); na {
				notes = append(notes, fmt.Sprintf("GPU %d's %s total: N/A (%s): DCGM's health watch would see nothing of it", h.Device, counterLabel[c], why))
			}
		}
		if len(h.LinkDL) > 0 {
			var parts []string
			for _, c := range results.LinkDLCounters {
				if v, ok := h.LinkDL[c]; ok {
					parts = append(parts, fmt.Sprintf("%s %d", c, v))
				}
			}
			p := strings.Join(parts, ", ")
			if dlGPUs[p] == nil {
				dl = append(dl, p)
			}
			dlGPUs[p] = append(dlGPUs[p], h.Device)
		}
	}
	for _, p := range dl {
		notes = append(notes, fmt.Sprintf("%s data-link totals after the run (NVML_FI_DEV_NVLINK_ERROR_DL_*, which DCGM 4.5.3 and later fail above 0 before Blackwell): %s", gpusOf(dlGPUs[p]), p))
	}
	return notes
}

// perLinkTable lists every link's counters: a value that did not move, or
// "before → after +rise (rate)". On a machine of more than maxLinkRows
// links, or unless every, it lists those where a counter rose and counts
// the rest; unless every, those where a counter other than ECC-data
// (errors the link corrected in flight) rose.
func perLinkTable(rows []results.LinkCounterRow, secs map[int]float64, every bool) *table {
	links := linkCountersOf(rows, every)
	header := []string{"GPU", "link"}
	for _, c := range results.LinkErrorCounters {
		header = append(header, counterLabel[c])
	}
	t := &table{title: "Each link (nvmlDeviceGetNvLinkErrorCounter): before → after, rise and rate where it rose",
		header: header, align: "rr" + strings.Repeat("r", len(results.LinkErrorCounters))}
	all := every && len(links) <= maxLinkRows
	quiet, ecc := 0, 0
	for _, l := range links {
		switch {
		case all || l.rose:
			t.rows = append(t.rows, l.row(secs[l.dev]))
		case l.eccOnly:
			ecc++
		default:
			quiet++
		}
	}
	more := ""
	if len(t.rows) > 0 {
		more = " more"
	}
	if ecc > 0 {
		t.notes = append(t.notes, fmt.Sprintf("%d%s link%s where only ECC-data rose: p2pbench show and report --full list them",
			ecc, more, units.Plural(ecc, "", "s")))
	}
	if quiet > 0 {
		t.notes = append(t.notes, fmt.Sprintf("%d%s link%s where no counter rose: the results file holds their values (environment.health_before and health_after)",
			quiet, more, units.Plural(quiet, "", "s")))
	}
	return t
}

// linkCounters are one link's counters: whether any rose, or (unless
// every) only ECC-data, which is then not said to have risen.
type linkCounters struct {
	dev, link     int
	counters      map[results.LinkCounter]results.LinkCounterRow
	rose, eccOnly bool
}

// linkCountersOf gathers rows by link, in order of GPU and link.
func linkCountersOf(rows []results.LinkCounterRow, every bool) []*linkCounters {
	type key struct{ dev, link int }
	byLink := map[key]*linkCounters{}
	for _, r := range rows {
		if r.Link < 0 {
			continue
		}
		k := key{r.Device, r.Link}
		if byLink[k] == nil {
			byLink[k] = &linkCounters{dev: r.Device, link: r.Link, counters: map[results.LinkCounter]results.LinkCounterRow{}}
		}
		l := byLink[k]
		l.counters[r.Counter] = r
		l.rose = l.rose || r.Rise() > 0
	}
	for _, l := range byLink {
		other := false
		for c, r := range l.counters {
			other = other || c != results.LinkECCData && r.Rise() > 0
		}
		if !every && l.rose && !other {
			l.rose, l.eccOnly = false, true
		}
	}
	return slices.SortedFunc(maps.Values(byLink), func(a, b *linkCounters) int {
		if a.dev != b.dev {
			return a.dev - b.dev
		}
		return a.link - b.link
	})
}

// row is the link's row: each counter's value, or before → after, its rise
// and its rate over secs where it rose.
func (l *linkCounters) row(secs float64) []string {
	row := []string{fmt.Sprint(l.dev), fmt.Sprint(l.link)}
	for _, c := range results.LinkErrorCounters {
		r, ok := l.counters[c]
		switch {
		case !ok:
			row = append(row, "not read")
		case r.Rise() == 0:
			row = append(row, fmt.Sprint(r.After))
		default:
			cell := fmt.Sprintf("%d → %d +%d", r.Before, r.After, r.Rise())
			if rt := rateText(r.Rise(), secs); rt != "" {
				cell += " (" + rt + ")"
			}
			row = append(row, cell)
		}
	}
	return row
}

// gpusOf names devices for a sentence's subject: "GPU 3's", "GPUs 0–7'",
// "GPUs 0–3, 5 and 7'" (runs of three or more as a range).
func gpusOf(devs []int) string {
	if len(devs) == 1 {
		return fmt.Sprintf("GPU %d's", devs[0])
	}
	devs = slices.Sorted(slices.Values(devs))
	var parts []string
	for i := 0; i < len(devs); {
		j := i
		for j+1 < len(devs) && devs[j+1] == devs[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d–%d", devs[i], devs[j]))
		default:
			for k := i; k <= j; k++ {
				parts = append(parts, fmt.Sprint(devs[k]))
			}
		}
		i = j + 1
	}
	if len(parts) > 1 {
		return "GPUs " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + "'"
	}
	return "GPUs " + parts[0] + "'"
}
