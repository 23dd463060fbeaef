package verdict

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/results"
)

// The NVLink error check follows DCGM's health watch (NVIDIA/DCGM,
// modules/health/DcgmHealthWatch.cpp, MonitorNVLink4Fields; limits in
// common/DcgmGPUHardwareLimits.h). For each GPU and each of its four
// watched totals (DCGM_FI_DEV_NVLINK_{CRC_FLIT,CRC_DATA,REPLAY,RECOVERY}
// _ERROR_TOTAL, which map to NVML's GPU-total fields
// NVML_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL, read by nvmlDeviceGetFieldValues)
// it takes the first and the last sample within its window, one minute
// back from now when the caller gives no start time, and their difference:
//
//   - replay or recovery: 1 or more fails (DCGM_FR_NVLINK_ERROR_CRITICAL);
//   - CRC flit or data: the difference divided by the window's length
//     (60 s, whatever the samples span) fails at 100 a second or more
//     (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR, "CRC errors only matter at rates
//     of 100+ per second"; DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD) and warns
//     at 1 or more below that (DCGM_LIMIT_MAX_NVLINK_ERROR,
//     DCGM_FR_NVLINK_ERROR_THRESHOLD).
//
// p2pbench takes its own readings for DCGM's samples: before the run, a
// second apart or more between tests and at each round's start, and after
// the run; DCGM is taken to be polled at the last of them. For a run
// shorter than the minute, the minute's start lies before p2pbench's first
// reading: the rise it sees is what the run's readings saw, and errors
// before the run would add to it (the verdict says how many seconds it did
// not see). The verdict follows the health watch so: it fails where DCGM's
// minute holds 100 CRC errors a second or more, or any replay or recovery
// error (one during the run, before DCGM's minute, fails too: p2pbench goes
// further there and says so), and warns of any CRC error during the run.
//
// Beside it, one line each: what DCGM's other rules would say (dcgmi
// diag's per-sample rule, DCGM 4.5.3's check of the data-link totals),
// what the rate during the run's traffic would mean held for a minute, and
// the rate round by round. The ECC-data counter (errors the link corrected
// in flight) is no counter DCGM watches: a note with its rate.
const (
	dcgmCRCPerSecond = 100.0
	dcgmWindow       = 60 * time.Second
	// dcgmDiagPerSample is dcgmi diag's NVLink CRC limit
	// (nvvs/plugin_src/pcie: nvlink_crc_error_threshold, 100): a GPU total
	// that rises by 100 or more between two of its samples, watched once
	// a second, fails (DcgmValuesSinceHolder::DoesValuePassPerSecondThreshold).
	dcgmDiagPerSample = 100.0
	dcgmPolicy        = "DCGM's health watch"
)

// point is one reading of a counter: when, its value, and the round of the
// tests in one process it began (0 outside them).
type point struct {
	t     time.Time
	v     uint64
	round int
}

// series is one counter of one GPU over the run, in time order.
type series struct {
	// field is true for the GPU-total field DCGM reads, false for the sum
	// of the links' counters.
	field  bool
	points []point
}

func (s series) ok() bool { return len(s.points) >= 2 }

// rise is what the counter gained from the first reading to the last (0
// when it went down: a counter reset, which the driver's reload makes).
func (s series) rise() uint64 { return gain(s.points[0], s.points[len(s.points)-1]) }

func gain(a, b point) uint64 {
	if b.v < a.v {
		return 0
	}
	return b.v - a.v
}

// seconds is the time from the first reading to the last.
func (s series) seconds() float64 {
	return s.points[len(s.points)-1].t.Sub(s.points[0].t).Seconds()
}

// minute is DCGM's computation at the last reading: the rise from the
// first reading within dcgmWindow of the last to the last, and the seconds
// of the window before that first reading (those p2pbench did not read).
func (s series) minute() (rise uint64, unseen float64) {
	last := s.points[len(s.points)-1]
	from := last.t.Add(-dcgmWindow)
	i := sort.Search(len(s.points), func(i int) bool { return !s.points[i].t.Before(from) })
	return gain(s.points[i], last), s.points[i].t.Sub(from).Seconds()
}

// fastest is the largest rate between two readings next to each other,
// and their distance in seconds; false with fewer than two readings apart
// in time.
func (s series) fastest() (rate, over float64, ok bool) {
	for i := 1; i < len(s.points); i++ {
		dt := s.points[i].t.Sub(s.points[i-1].t).Seconds()
		if dt <= 0 {
			continue
		}
		if r := float64(gain(s.points[i-1], s.points[i])) / dt; !ok || r > rate {
			rate, over, ok = r, dt, true
		}
	}
	return rate, over, ok
}

// byRound is the counter's rate in each round of the tests in one
// process: from the round's first reading to the next round's (the last
// round to the first reading after it); nil without two rounds read.
func (s series) byRound() []float64 {
	var starts []int // index of each round's first reading, in order
	for i, p := range s.points {
		if p.round > 0 && (i == 0 || s.points[i-1].round != p.round) {
			starts = append(starts, i)
		}
	}
	var out []float64
	for k, i := range starts {
		j := len(s.points) - 1
		if k+1 < len(starts) {
			j = starts[k+1]
		} else {
			for n := i + 1; n < len(s.points); n++ {
				if s.points[n].round != s.points[i].round {
					j = n
					break
				}
			}
		}
		dt := s.points[j].t.Sub(s.points[i].t).Seconds()
		if dt <= 0 {
			return nil
		}
		out = append(out, float64(gain(s.points[i], s.points[j]))/dt)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// gpuLinks is what one GPU's NVLink error readings say.
type gpuLinks struct {
	dev   int
	model string // the GPU's name
	cc    string // its compute capability
	links int    // links whose counters were read before and after
	// judged holds each counter's series as the check judges it; fieldNA
	// why the driver gave no GPU total of a counter; noTotals that the
	// file has no reading of the GPU totals at all (written before they
	// were read).
	judged   map[results.LinkCounter]series
	fieldNA  map[results.LinkCounter]string
	noTotals bool
	// fieldRise and linkRise are the run's rise of the GPU total (where
	// read before and after) and of the links' counters summed.
	fieldRise map[results.LinkCounter]uint64
	linkRise  map[results.LinkCounter]uint64
	// sinceLoad is the links' counters after the run, summed: since the
	// driver loaded.
	sinceLoad map[results.LinkCounter]uint64
	// dl are the data-link totals after the run (nil when not read);
	// dlNA why the driver gave none.
	dl   map[results.LinkCounter]uint64
	dlNA string
	// perLink are the links' rises of each counter, largest first.
	perLink map[results.LinkCounter][]linkRise
}

// readGPULinks gathers every GPU's NVLink error readings, timed as
// results.HealthWindow times them.
func readGPULinks(run *results.Run) []*gpuLinks {
	before := map[int]results.Health{}
	for _, b := range run.Environment.HealthBefore {
		before[b.Device] = b
	}
	during := map[int][]results.LinkErrorReading{}
	for _, w := range run.Environment.DuringRun {
		during[w.Device] = w.LinkErrors
	}
	devs := map[int]results.Device{}
	for _, d := range run.Environment.Devices {
		devs[d.Index] = d
	}
	var out []*gpuLinks
	for _, a := range run.Environment.HealthAfter {
		b, ok := before[a.Device]
		if !ok {
			continue
		}
		g := &gpuLinks{dev: a.Device, model: devs[a.Device].Name, cc: devs[a.Device].ComputeCapability,
			judged: map[results.LinkCounter]series{}, fieldNA: map[results.LinkCounter]string{},
			fieldRise: map[results.LinkCounter]uint64{}, linkRise: map[results.LinkCounter]uint64{},
			sinceLoad: map[results.LinkCounter]uint64{}, perLink: map[results.LinkCounter][]linkRise{}}
		tb, ta, _ := run.HealthWindow(a.Device)
		g.read(b, a, tb, ta, during[a.Device])
		if g.links > 0 {
			out = append(out, g)
		}
	}
	return out
}

// read fills g from the readings before (at tb) and after (at ta) the run
// and those between.
func (g *gpuLinks) read(b, a results.Health, tb, ta time.Time, during []results.LinkErrorReading) {
	was := map[int]results.LinkHealth{}
	for _, l := range b.Links {
		was[l.Link] = l
	}
	linkB, linkA := map[results.LinkCounter]uint64{}, map[results.LinkCounter]uint64{}
	has := map[results.LinkCounter]bool{}
	for _, l := range a.Links {
		p, ok := was[l.Link]
		if !ok || len(l.Errors) == 0 || len(p.Errors) == 0 {
			continue
		}
		g.links++
		for c, y := range l.Errors {
			x, ok := p.Errors[c]
			if !ok {
				continue
			}
			has[c] = true
			linkB[c] += x
			linkA[c] += y
			g.sinceLoad[c] += y
			if y > x {
				g.perLink[c] = append(g.perLink[c], linkRise{dev: g.dev, link: l.Link, counter: c, n: y - x})
			}
		}
	}
	for c := range g.perLink {
		slices.SortStableFunc(g.perLink[c], func(x, y linkRise) int { return cmp.Compare(y.n, x.n) })
	}
	g.noTotals = a.LinkTotals == nil && !mentionsTotals(a)
	for _, c := range results.LinkErrorCounters {
		if why, na := a.LinkTotalUnavailable(c, false); na {
			g.fieldNA[c] = why
		} else if why, na := b.LinkTotalUnavailable(c, false); na {
			g.fieldNA[c] = why
		}
		links := series{points: []point{{t: tb, v: linkB[c]}, {t: ta, v: linkA[c]}}}
		if has[c] {
			g.linkRise[c] = links.rise()
		}
		x, okB := b.LinkTotals[c]
		y, okA := a.LinkTotals[c]
		if !okB || !okA {
			if has[c] {
				g.judged[c] = links
			}
			continue
		}
		field := series{field: true, points: []point{{t: tb, v: x}}}
		for _, r := range during {
			if v, ok := r.Totals[c]; ok && r.Time.After(tb) && r.Time.Before(ta) {
				field.points = append(field.points, point{t: r.Time, v: v, round: r.Round})
			}
		}
		field.points = append(field.points, point{t: ta, v: y})
		g.fieldRise[c] = field.rise()
		// DCGM reads the total; where the links counted more, the links
		// are judged (the verdict says they disagree).
		g.judged[c] = field
		if has[c] && g.linkRise[c] > g.fieldRise[c] {
			g.judged[c] = links
		}
	}
	if a.LinkDL != nil {
		g.dl = a.LinkDL
	} else if why, na := a.LinkTotalUnavailable(results.LinkCRC, true); na {
		g.dlNA = why
	}
}

// mentionsTotals reports whether a reading says why it has no GPU totals.
func mentionsTotals(h results.Health) bool {
	for _, c := range results.LinkErrorCounters {
		if _, na := h.LinkTotalUnavailable(c, false); na {
			return true
		}
	}
	return false
}

// fieldName names the GPU-total field of counter c, as nvml.h does.
func fieldName(c results.LinkCounter) string {
	return map[results.LinkCounter]string{
		results.LinkReplay: "NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", results.LinkRecovery: "NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
		results.LinkCRCFlit: "NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", results.LinkCRCData: "NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
		results.LinkECCData: "NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL",
	}[c]
}

// source names what a series read.
func (g *gpuLinks) source(c results.LinkCounter, s series) string {
	if s.field {
		return fmt.Sprintf("%s, the GPU total DCGM reads, nvmlDeviceGetFieldValues", fieldName(c))
	}
	return "the links' own counters summed, nvmlDeviceGetNvLinkErrorCounter"
}

// totalNote says what DCGM would see of counter c where its GPU total is
// missing or disagrees with the links, "" otherwise.
func (g *gpuLinks) totalNote(c results.LinkCounter) string {
	if why, na := g.fieldNA[c]; na {
		return fmt.Sprintf("%s reads %s, which this driver answers N/A (%s): it would see nothing of these errors, which p2pbench judges by the links' own counters", dcgmPolicy, fieldName(c), why)
	}
	if fr, ok := g.fieldRise[c]; ok && fr != g.linkRise[c] {
		return fmt.Sprintf("the GPU total (%s) rose by %d, the links' counters by %d: they disagree; DCGM reads the total, p2pbench judges the larger", fieldName(c), fr, g.linkRise[c])
	}
	if g.noTotals {
		return "this file has no reading of the GPU total DCGM reads (written before p2pbench read it): the links' counters stand for it"
	}
	return ""
}

// counterItem judges counter c of g as DCGM's health watch would, polled
// at the end of the run; bandwidth says how the GPU's figures stood
// against expected ("" when none was judged). ok is false when the
// counter did not rise.
func (g *gpuLinks) counterItem(c results.LinkCounter, bandwidth string) (results.CheckItem, bool) {
	it, ok := g.counterJudged(c, bandwidth)
	// Where DCGM would see nothing (the total N/A), the message says so;
	// a total that disagrees, or none in the file, a detail.
	switch note := g.totalNote(c); {
	case !ok || note == "":
	case g.fieldNA[c] != "":
		it.Message += "; " + note
	default:
		it.Details = append([]string{capital(note)}, it.Details...)
	}
	return it, ok
}

// counterJudged is counterItem without what it says of the GPU total.
func (g *gpuLinks) counterJudged(c results.LinkCounter, bandwidth string) (results.CheckItem, bool) {
	s, read := g.judged[c]
	if !read || !s.ok() || s.rise() == 0 {
		return results.CheckItem{}, false
	}
	rise := s.rise()
	name := counterName[c]
	subject := fmt.Sprintf("GPU %d NVLinks", g.dev)
	it := results.CheckItem{Subject: subject}
	where := g.whereLinks(c)
	secs := s.seconds()
	if secs <= 0 {
		it.Status = results.StatusWarn
		if c == results.LinkReplay || c == results.LinkRecovery {
			it.Status = results.StatusFail
		}
		it.Message = fmt.Sprintf("%s rose by %d %s during a run of unknown duration (%s): %s fails any replay or recovery error and CRC errors at %.0f a second, which cannot be told here",
			name, rise, where, g.source(c, s), dcgmPolicy, dcgmCRCPerSecond)
		return it, true
	}
	minute, unseen := s.minute()
	perMinute := float64(minute) / dcgmWindow.Seconds()
	during := float64(rise) / secs
	window := g.windowDetail(s, unseen)
	if c == results.LinkReplay || c == results.LinkRecovery {
		it.Status = results.StatusFail
		inMinute := fmt.Sprintf("%d of them in DCGM's minute at the run's end", minute)
		if minute == 0 {
			inMinute = "none of them in DCGM's minute at the run's end: p2pbench fails any during the run"
		}
		it.Message = fmt.Sprintf("%d %s errors %s (%s); %s fails any replay or recovery error in its minute (DCGM_FR_NVLINK_ERROR_CRITICAL: the count \"should be 0\"), %s",
			rise, name, where, g.source(c, s), dcgmPolicy, inMinute)
		it.Details = append(it.Details, window)
		return it, true
	}
	msg := fmt.Sprintf("%s rose by %d %s (%s): %d in DCGM's minute at the run's end, %s a second", name, rise, where, g.source(c, s), minute, fmtRate(perMinute))
	if perMinute >= dcgmCRCPerSecond {
		it.Status = results.StatusFail
		msg += fmt.Sprintf(", at or above the %.0f a second at which %s fails (DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD; \"CRC errors only matter at rates of 100+ per second\")", dcgmCRCPerSecond, dcgmPolicy)
	} else {
		it.Status = results.StatusWarn
		msg += fmt.Sprintf(", under the %.0f a second at which %s fails (\"CRC errors only matter at rates of 100+ per second\"), so it warns, as of any (DCGM_FR_NVLINK_ERROR_THRESHOLD)", dcgmCRCPerSecond, dcgmPolicy)
	}
	msg += fmt.Sprintf("; %s a second during the run's %.1f s", fmtRate(during), secs)
	if it.Status == results.StatusWarn {
		msg += "; " + g.cleanCounters()
		if bandwidth != "" {
			msg += "; " + bandwidth
		}
		msg += ": to monitor"
	}
	it.Message = msg
	it.Details = append(it.Details, window, g.sustained(during), g.trend(s), g.diag(c, s), g.lifetime())
	if d := g.linksDetail(c); d != "" {
		it.Details = append(it.Details, d)
	}
	return it, true
}

// whereLinks says over which of the GPU's links counter c rose.
func (g *gpuLinks) whereLinks(c results.LinkCounter) string {
	rs := g.perLink[c]
	switch {
	case len(rs) == 0:
		return fmt.Sprintf("over its %d NVLinks", g.links)
	case len(rs) <= 4:
		var ls []string
		for _, r := range rs {
			ls = append(ls, fmt.Sprintf("%d (+%d)", r.link, r.n))
		}
		return fmt.Sprintf("on NVLink %s", strings.Join(ls, ", "))
	}
	return fmt.Sprintf("on %d of its %d NVLinks", len(rs), g.links)
}

// cleanCounters says that no replay or recovery error came with the CRC
// errors, where none did.
func (g *gpuLinks) cleanCounters() string {
	var bad []string
	for _, c := range []results.LinkCounter{results.LinkReplay, results.LinkRecovery} {
		if s, ok := g.judged[c]; ok && s.ok() && s.rise() > 0 {
			bad = append(bad, counterName[c])
		}
	}
	if len(bad) > 0 {
		return strings.Join(bad, " and ") + " errors too (see those lines)"
	}
	return "no replay or recovery error"
}

// windowDetail says what p2pbench read of DCGM's minute.
func (g *gpuLinks) windowDetail(s series, unseen float64) string {
	n := len(s.points)
	read := "readings before and after the run only"
	if n > 2 {
		read = fmt.Sprintf("%d readings", n)
	}
	if unseen <= 0.5 {
		return fmt.Sprintf("DCGM's minute: the last %.0f s up to the run's last reading, all within the run (%s)", dcgmWindow.Seconds(), read)
	}
	return fmt.Sprintf("DCGM's minute: p2pbench's %s cover its last %.1f s; the %.1f s before the run it did not read, and errors then would add to DCGM's count",
		read, dcgmWindow.Seconds()-unseen, unseen)
}

// sustained says what the rate during the run's traffic would mean over a
// whole minute.
func (g *gpuLinks) sustained(rate float64) string {
	outcome := "WARN (any CRC error in its minute)"
	if rate >= dcgmCRCPerSecond {
		outcome = fmt.Sprintf("FAIL (%.0f a second or more)", dcgmCRCPerSecond)
	}
	return fmt.Sprintf("Held for a minute (a job that keeps the links as busy as the run did), %s a second would make %s %s", fmtRate(rate), dcgmPolicy, outcome)
}

// trend says the counter's rate round by round, where the run read it.
func (g *gpuLinks) trend(s series) string {
	rs := s.byRound()
	if rs == nil {
		return "By round: not read within the run (only before and after it), so no trend"
	}
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmtRate(r))
	}
	first, last := rs[0], rs[len(rs)-1]
	way := "steady"
	switch {
	case last < 0.8*first:
		way = "falling"
	case last > 1.25*first && last > 1:
		way = "rising"
	}
	return fmt.Sprintf("By round of the tests in one process: %s a second (%s)", strings.Join(parts, ", "), way)
}

// diag says what dcgmi diag's per-sample rule would say of counter c.
func (g *gpuLinks) diag(c results.LinkCounter, s series) string {
	rule := fmt.Sprintf("dcgmi diag fails a GPU whose %s total rises by %.0f or more between two of its samples, a second apart", counterName[c], dcgmDiagPerSample)
	if s.rise() < uint64(dcgmDiagPerSample) {
		return fmt.Sprintf("%s: the whole run rose by %d, so no second of it could: it would pass", rule, s.rise())
	}
	rate, over, _ := s.fastest()
	verdict := "it would likely pass"
	if rate >= dcgmDiagPerSample {
		verdict = "it would likely fail"
	}
	if len(s.points) == 2 {
		return fmt.Sprintf("%s: the run's readings, %.1f s apart, averaged %s a second; %s, but a one-second burst cannot be told from two readings",
			rule, over, fmtRate(rate), verdict)
	}
	return fmt.Sprintf("%s: the fastest rise between p2pbench's readings was %s a second, over %.1f s: %s", rule, fmtRate(rate), over, verdict)
}

// lifetime says what DCGM 4.5.3's check of the data-link totals would say.
func (g *gpuLinks) lifetime() string {
	rule := "DCGM 4.5.3 and later also fail a GPU before Blackwell whose data-link CRC, recovery or replay total (NVML_FI_DEV_NVLINK_ERROR_DL_*) is above 0 (MonitorNVLinkErrorFields)"
	if major(g.cc) >= 10 {
		return rule + ": this GPU is Blackwell or later, so it does not apply"
	}
	switch {
	case g.dl != nil:
		var above []string
		for _, c := range results.LinkDLCounters {
			if g.dl[c] > 0 {
				above = append(above, fmt.Sprintf("%s %d", c, g.dl[c]))
			}
		}
		if len(above) == 0 {
			return rule + ": they read 0 after the run: it would pass"
		}
		return rule + ": " + strings.Join(above, ", ") + " after the run: it would fail (a large cloud's node monitoring made that check a warning after it failed healthy H100 nodes)"
	case g.dlNA != "":
		return rule + ": this driver answers them N/A (" + g.dlNA + "): it would see nothing"
	}
	return fmt.Sprintf("%s: not read in this file (written before p2pbench read them); the links' CRC-data counters since the driver loaded sum to %d", rule, g.sinceLoad[results.LinkCRCData])
}

// linksDetail names the link of counter c that rose most.
func (g *gpuLinks) linksDetail(c results.LinkCounter) string {
	rs := g.perLink[c]
	if len(rs) == 0 {
		return ""
	}
	return fmt.Sprintf("Per link: %d of %d rose, the most NVLink %d (+%d); the NVLink health table lists every counter of every link (p2pbench show, p2pbench report)",
		len(rs), g.links, rs[0].link, rs[0].n)
}

// major is the major version of a compute capability ("9.0" → 9), 0 when
// unknown.
func major(cc string) int {
	var m int
	fmt.Sscanf(cc, "%d", &m)
	return m
}

// fmtRate writes a rate a second to a tenth, or to three figures below 10.
func fmtRate(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2g", r)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// orderedGPUs returns gs by device.
func orderedGPUs(gs []*gpuLinks) []*gpuLinks {
	byDev := map[int]*gpuLinks{}
	for _, g := range gs {
		byDev[g.dev] = g
	}
	var out []*gpuLinks
	for _, d := range slices.Sorted(maps.Keys(byDev)) {
		out = append(out, byDev[d])
	}
	return out
}
