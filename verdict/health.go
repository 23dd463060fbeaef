package verdict

import (
	"fmt"
	"github.com/p2pbench/p2pbench/internal/units"
	"maps"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// Link health as NVIDIA's own tools judge it. NVML's NVLink error counters
// (nvmlDeviceGetNvLinkErrorCounter, read before the first test and after
// the last) count, per link since the driver loaded:
//
//   - replay (counter 0): transmissions the link had to send again;
//   - recovery (1): times the link retrained;
//   - crc_flit (2): flow-control units received with a CRC error;
//   - crc_data (3): data received with a CRC error;
//   - ecc_data (4, NVLink 4 and later): data errors the link's ECC
//     corrected in flight.
//
// DCGM's health watch (NVIDIA/DCGM, modules/health/DcgmHealthWatch.cpp,
// MonitorNVLink; limits in common/DcgmGPUHardwareLimits.h) judges a GPU's
// totals over its links (DCGM_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL) over the
// window it watches: any replay or recovery error fails
// (DCGM_FR_NVLINK_ERROR_CRITICAL); CRC errors, flit or data, fail at 100
// a second or more (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR, "RM has informed us
// that CRC errors only matter at rates of 100+ per second";
// DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD) and warn below that
// (DCGM_FR_NVLINK_ERROR_THRESHOLD, any count of 1 or more,
// DCGM_LIMIT_MAX_NVLINK_ERROR); a link down fails (DCGM_FR_NVLINK_DOWN).
// The health watch does not watch the ECC-data counter: errors corrected
// in flight are a note here, with their rate. nvidia-smi nvlink -e shows
// replay, recovery and CRC counts; on the 2× H100 of 2026-11-25 its CRC
// column read 0 while crc_data counted hundreds, so it shows the flit
// counter, not the data counter.
//
// The window is the run's: the readings are taken within it, so a rate
// over the run's duration is at most the true rate over the readings'
// window, never above it.
const (
	dcgmCRCPerSecond = 100.0
	dcgmPolicy       = "DCGM's health watch"
)

// counterName names an NVLink counter in a message.
var counterName = map[results.LinkCounter]string{
	results.LinkReplay:   "replay",
	results.LinkRecovery: "recovery",
	results.LinkCRCFlit:  "CRC-flit",
	results.LinkCRCData:  "CRC-data",
	results.LinkECCData:  "ECC-data (corrected)",
}

// linkRise is how much one counter of one link rose during the run.
type linkRise struct {
	dev, link int
	counter   results.LinkCounter
	n         uint64
}

// health is what a run's health readings say, gathered once: the rises
// of every NVLink counter, which GPUs were read, the run's window.
type health struct {
	run     *results.Run
	seconds float64 // the run's duration, 0 when unknown
	rises   []linkRise
	facts   []results.HealthFinding
	read    map[int]bool // GPUs read before and after
	links   int          // links read before and after
	// erring are the GPUs whose NVLinks counted replay or recovery
	// errors: a cause noisy figures can be blamed on. CRC errors are not:
	// each costs the replay of one packet, so even DCGM's 100 a second
	// takes far less than a percent of a link's time, below the noise
	// that makes a figure noisy.
	erring map[int]bool
}

func readHealth(run *results.Run) *health {
	h := &health{run: run, read: map[int]bool{}, erring: map[int]bool{}}
	if d := run.End.Sub(run.Start).Seconds(); d > 0 && !run.Start.IsZero() {
		h.seconds = d
	}
	before := map[int]results.Health{}
	for _, b := range run.Environment.HealthBefore {
		before[b.Device] = b
	}
	for _, a := range run.Environment.HealthAfter {
		b, ok := before[a.Device]
		if !ok {
			continue
		}
		h.read[a.Device] = true
		was := map[int]bool{}
		for _, l := range b.Links {
			was[l.Link] = true
		}
		for _, l := range a.Links {
			if was[l.Link] {
				h.links++
			}
		}
	}
	// The counters' rises are the readings' facts (results.HealthFindings).
	h.facts = run.HealthFindings()
	for _, f := range h.facts {
		if f.Check != results.HealthLinkErrors {
			continue
		}
		c := results.LinkCounter(f.What)
		h.rises = append(h.rises, linkRise{f.Device, f.Link, c, f.After - f.Before})
		if c == results.LinkReplay || c == results.LinkRecovery {
			h.erring[f.Device] = true
		}
	}
	return h
}

// rate is n errors a second over the run, 0 when its duration is unknown.
func (h *health) rate(n uint64) float64 {
	if h.seconds <= 0 {
		return 0
	}
	return float64(n) / h.seconds
}

// linkItems judges the NVLinks: counters against DCGM's policy, links that
// went down or slowed, and (from the topology) GPUs of a known model with
// fewer links up than they have, PCIe links on fewer lanes than they
// allow. judged is false when no error counter was read.
func (h *health) linkItems() (items []results.CheckItem, judged bool) {
	for _, dev := range slices.Sorted(maps.Keys(h.read)) {
		for _, c := range []results.LinkCounter{results.LinkReplay, results.LinkRecovery, results.LinkCRCFlit, results.LinkCRCData} {
			if it, ok := h.counterItem(dev, c); ok {
				items = append(items, it)
			}
		}
	}
	if it, ok := h.correctedItem(); ok {
		items = append(items, it)
	}
	for _, f := range h.facts {
		switch f.Check {
		case results.HealthLinkDown:
			items = append(items, results.CheckItem{Status: results.StatusFail, Subject: f.Subject(),
				Message: f.Message + ": a link down fails (DCGM_FR_NVLINK_DOWN)"})
		case results.HealthLinkSlower:
			items = append(items, results.CheckItem{Status: results.StatusFail, Subject: f.Subject(), Message: f.Message})
		}
	}
	return append(items, topologyLinkItems(h.run)...), h.links > 0
}

// counterItem judges counter c of GPU dev's links as DCGM's health watch
// does: replay and recovery fail at 1; CRC counts fail at 100 a second
// over the GPU's links and warn below.
func (h *health) counterItem(dev int, c results.LinkCounter) (results.CheckItem, bool) {
	var total uint64
	var worst linkRise
	var links []string
	for _, r := range h.rises {
		if r.dev != dev || r.counter != c {
			continue
		}
		total += r.n
		links = append(links, fmt.Sprintf("%d (+%d)", r.link, r.n))
		if r.n > worst.n {
			worst = r
		}
	}
	if total == 0 {
		return results.CheckItem{}, false
	}
	subject := fmt.Sprintf("GPU %d NVLink %d", dev, worst.link)
	where := fmt.Sprintf("on %d of GPU %d's NVLinks", len(links), dev)
	if len(links) <= 4 {
		where = fmt.Sprintf("on GPU %d's NVLink %s", dev, strings.Join(links, ", "))
	}
	name := counterName[c]
	if c == results.LinkReplay || c == results.LinkRecovery {
		return results.CheckItem{Status: results.StatusFail, Subject: subject,
			Message: fmt.Sprintf("%d %s errors %s during the run: %s fails any replay or recovery error (DCGM_FR_NVLINK_ERROR_CRITICAL); nvidia-smi nvlink -e shows them",
				total, name, where, dcgmPolicy)}, true
	}
	window := fmt.Sprintf("in %.3g s", h.seconds)
	if h.seconds <= 0 {
		return results.CheckItem{Status: results.StatusWarn, Subject: subject,
			Message: fmt.Sprintf("%d %s errors %s during a run of unknown duration: %s warns of any and fails at %.0f a second, which cannot be told here",
				total, name, where, dcgmPolicy, dcgmCRCPerSecond)}, true
	}
	perSec := h.rate(total)
	msg := fmt.Sprintf("%d %s errors %s %s: %.1f a second for the GPU (the most on NVLink %d, %.1f a second)",
		total, name, where, window, perSec, worst.link, h.rate(worst.n))
	if perSec >= dcgmCRCPerSecond {
		return results.CheckItem{Status: results.StatusFail, Subject: subject,
			Message: msg + fmt.Sprintf(", at or above the %.0f a second at which %s fails a GPU's NVLink CRC errors (DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD; DCGM sums a GPU's links)",
				dcgmCRCPerSecond, dcgmPolicy) + crcSeenBy(c)}, true
	}
	return results.CheckItem{Status: results.StatusWarn, Subject: subject,
		Message: msg + fmt.Sprintf(", below the %.0f a second at which %s fails, where it warns of any (DCGM_FR_NVLINK_ERROR_THRESHOLD): rerun, and watch the counter",
			dcgmCRCPerSecond, dcgmPolicy) + crcSeenBy(c)}, true
}

// crcSeenBy says where an administrator sees the counter.
func crcSeenBy(c results.LinkCounter) string {
	if c == results.LinkCRCData {
		return "; nvidia-smi nvlink -e's CRC column does not show this counter (nvmlDeviceGetNvLinkErrorCounter, counter 3, does)"
	}
	return "; nvidia-smi nvlink -e shows it as CRC"
}

// correctedItem notes the errors the links corrected (ECC-data), in one
// line for the run: no policy of NVIDIA's judges them.
func (h *health) correctedItem() (results.CheckItem, bool) {
	var worst linkRise
	var total uint64
	links, gpus := 0, map[int]bool{}
	for _, r := range h.rises {
		if r.counter != results.LinkECCData {
			continue
		}
		links++
		total += r.n
		gpus[r.dev] = true
		if r.n > worst.n {
			worst = r
		}
	}
	if links == 0 {
		return results.CheckItem{}, false
	}
	rate := ""
	if h.seconds > 0 {
		rate = fmt.Sprintf(", at most %.1f a second (GPU %d NVLink %d)", h.rate(worst.n), worst.dev, worst.link)
	}
	var devs []string
	for _, d := range slices.Sorted(maps.Keys(gpus)) {
		devs = append(devs, fmt.Sprint(d))
	}
	return results.CheckItem{Status: results.StatusNote, Subject: "GPU " + strings.Join(devs, ", ") + " NVLinks",
		Message: fmt.Sprintf("the links corrected %d data errors in flight (ECC-data) on %d links during the run%s: errors corrected by the link, which %s does not count against it and nvidia-smi nvlink -e does not show",
			total, links, rate, dcgmPolicy)}, true
}

// linksSummary says what a clean link check saw, and whether it judged
// anything: NVLink counters read before and after the run, or (on GPUs
// without NVLinks) the health readings and the PCIe links' widths.
func (h *health) linksSummary() (string, bool) {
	var parts []string
	judged := true
	nvlinks := 0
	var unread []string // GPUs with NVLinks whose counters were not read
	if t := h.run.Topology; t != nil {
		for _, dl := range t.Links {
			nvlinks += len(dl.Links)
			if len(dl.Links) > 0 && !h.read[dl.Device] {
				unread = append(unread, fmt.Sprint(dl.Device))
			}
		}
	}
	switch {
	case h.links > 0:
		parts = append(parts, fmt.Sprintf("%d NVLinks read before and after the run: no replay, recovery or CRC error (the counters nvidia-smi nvlink -e shows, as %s judges them), none went down or slowed", h.links, dcgmPolicy))
	case len(h.read) > 0 && nvlinks == 0:
		parts = append(parts, "no NVLink on these GPUs (NVML lists none)")
	case nvlinks > 0:
		parts, judged = append(parts, "NVLink error counters not read (the run has no health readings), every NVLink up before the run"), false
	default:
		parts, judged = append(parts, "NVLinks and their counters not read (the run has no health readings)"), false
	}
	if len(unread) > 0 && h.links > 0 {
		// Some GPUs read, some not: what was not read is not judged.
		parts, judged = append(parts, fmt.Sprintf("the counters of GPU %s not read, so the links are not judged", strings.Join(unread, ", "))), false
	}
	pcie := 0
	for _, d := range h.run.Environment.Devices {
		if d.PCIe != nil && d.PCIe.Width > 0 && d.PCIe.MaxWidth > 0 {
			pcie++
		}
	}
	if pcie > 0 {
		parts = append(parts, fmt.Sprintf("the PCIe links of %d GPU%s at their full width", pcie, units.Plural(pcie, "", "s")))
		judged = judged || len(h.read) > 0 && len(unread) == 0
	}
	return strings.Join(parts, "; "), judged
}

// linksShort says in a few words what a clean link check saw, or why it
// judged nothing.
func (h *health) linksShort() string {
	nvlinks := 0
	if t := h.run.Topology; t != nil {
		for _, dl := range t.Links {
			nvlinks += len(dl.Links)
		}
	}
	switch {
	case h.links > 0:
		return fmt.Sprintf("%d NVLinks: nothing DCGM would flag", h.links)
	case len(h.read) > 0 && nvlinks == 0:
		return "no NVLink; PCIe links read"
	case nvlinks > 0:
		return "NVLink counters not read"
	}
	return "no health readings (NVML)"
}

// topologyLinkItems are what the run's link facts say beside the health
// readings: a GPU of a model the model knows with fewer NVLinks up than it
// has (FAIL), a PCIe link on fewer lanes than it allows (WARN).
func topologyLinkItems(run *results.Run) []results.CheckItem {
	var out []results.CheckItem
	down := map[int][]int{}
	counted := map[int]int{}
	if run.Topology != nil {
		for _, dl := range run.Topology.Links {
			for _, l := range dl.Links {
				counted[dl.Device]++
				if !l.Active {
					down[dl.Device] = append(down[dl.Device], l.Link)
				}
			}
		}
	}
	for _, d := range run.Environment.Devices {
		subject := fmt.Sprintf("GPU %d", d.Index)
		if g, ok := gpuModels[d.Name]; ok && g.nvlinks > 0 && counted[d.Index] > 0 {
			if up := counted[d.Index] - len(down[d.Index]); up < g.nvlinks {
				out = append(out, results.CheckItem{Status: results.StatusFail, Subject: subject,
					Message: fmt.Sprintf("%d of the %s's %d NVLinks are up (down: %v) before the run: a link down fails (DCGM_FR_NVLINK_DOWN)", up, d.Name, g.nvlinks, down[d.Index])})
			}
		}
		if l := d.PCIe; l != nil && l.Width > 0 && l.MaxWidth > 0 && l.Width < l.MaxWidth {
			out = append(out, results.CheckItem{Status: results.StatusWarn, Subject: subject,
				Message: fmt.Sprintf("its PCIe link runs on %d of its %d lanes (%s): reseat the GPU or check the slot", l.Width, l.MaxWidth, l)})
		}
	}
	return out
}

// memoryItems judges the GPUs' memory: uncorrected ECC errors that rose
// (DCGM fails any volatile double-bit error, DCGM_FR_VOLATILE_DBE_DETECTED)
// and rows remapped for uncorrectable errors or a remapping that failed
// fail; a remapping waiting for a reset warns. judged is false without
// ECC or remapping readings.
func (h *health) memoryItems() (items []results.CheckItem, judged bool) {
	for _, f := range h.facts {
		switch {
		case f.Check == results.HealthECC, f.Check == results.HealthRowRemap && f.What != "pending":
			items = append(items, results.CheckItem{Status: results.StatusFail, Subject: f.Subject(), Message: f.Message})
		case f.Check == results.HealthRowRemap:
			items = append(items, results.CheckItem{Status: results.StatusWarn, Subject: f.Subject(), Message: f.Message + ": reset the GPU to apply it"})
		}
	}
	for _, a := range h.run.Environment.HealthAfter {
		judged = judged || h.read[a.Device] && (len(a.ECC) > 0 || a.RemappedRows != nil)
	}
	return items, judged
}

// processItems warns of other programs' processes on the GPUs (a run
// refuses to start beside them unless --allow-busy); judged is false
// without the readings before the run.
func (h *health) processItems() (items []results.CheckItem, judged bool) {
	for _, f := range h.facts {
		if f.Check == results.HealthOtherProcess {
			items = append(items, results.CheckItem{Status: results.StatusWarn, Subject: f.Subject(),
				Message: f.Message + ": its work may have taken from the figures measured beside it"})
		}
	}
	return items, len(h.run.Environment.HealthBefore) > 0
}
