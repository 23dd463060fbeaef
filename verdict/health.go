package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// Link health as NVIDIA's own tools judge it (links.go: DCGM's health
// watch and its other rules). NVML's NVLink error counters count, per link
// since the driver loaded (nvmlDeviceGetNvLinkErrorCounter), and summed
// over a GPU's links by the driver (nvmlDeviceGetFieldValues' GPU-total
// fields, which DCGM reads):
//
//   - replay (counter 0): transmissions the link had to send again;
//   - recovery (1): times the link retrained;
//   - crc_flit (2): flow-control units received with a CRC error;
//   - crc_data (3): data received with a CRC error;
//   - ecc_data (4, NVLink 4 and later): data errors the link's ECC
//     corrected in flight, which DCGM does not watch: a note here.

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
// of every NVLink counter, each GPU's NVLink error readings, which GPUs
// were read, the run's window.
type health struct {
	run     *results.Run
	seconds float64 // the run's duration, 0 when unknown
	rises   []linkRise
	gpus    []*gpuLinks
	facts   []results.HealthFinding
	read    map[int]bool // GPUs read before and after
	links   int          // links whose counters were read before and after
	// bandwidth says how a GPU's judged bandwidth figures stood against
	// expected, for the link check's warnings ("" when none was judged).
	bandwidth func(dev int) string
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
		if _, ok := before[a.Device]; ok {
			h.read[a.Device] = true
		}
	}
	h.gpus = orderedGPUs(readGPULinks(run))
	for _, g := range h.gpus {
		h.links += g.links
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

// linkItems judges the NVLinks: each GPU's counters as DCGM's health
// watch would (links.go), links that went down or slowed, and (from the
// topology) GPUs of a known model with fewer links up than they have,
// PCIe links on fewer lanes than they allow. judged is false when no error
// counter was read.
func (h *health) linkItems() (items []results.CheckItem, judged bool) {
	said := map[string]bool{} // a detail of the run, not of one GPU, is said once
	for _, g := range h.gpus {
		bw := ""
		if h.bandwidth != nil {
			bw = h.bandwidth(g.dev)
		}
		for _, c := range []results.LinkCounter{results.LinkReplay, results.LinkRecovery, results.LinkCRCFlit, results.LinkCRCData} {
			if it, ok := g.counterItem(c, bw); ok {
				kept := it.Details[:0]
				for _, d := range it.Details {
					if !said[d] {
						said[d] = true
						kept = append(kept, d)
					}
				}
				it.Details = kept
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
		Message: fmt.Sprintf("the links corrected %d data errors in flight (ECC-data, nvmlDeviceGetNvLinkErrorCounter counter 4) on %d links during the run%s: errors corrected by the link, which %s does not watch",
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
		parts = append(parts, fmt.Sprintf("%d NVLinks read before and after the run (%s): no replay, recovery or CRC error, none went down or slowed", h.links, h.readWhat()))
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

// readWhat names what the link check read: each link's counters, and the
// GPU totals DCGM reads where the file has them (and which the driver did
// not give).
func (h *health) readWhat() string {
	what := "each link's counters, nvmlDeviceGetNvLinkErrorCounter"
	var na []string
	totals := 0
	for _, g := range h.gpus {
		if !g.noTotals {
			totals++
		}
		if _, ok := g.fieldNA[results.LinkCRCData]; ok {
			na = append(na, fmt.Sprint(g.dev))
		}
	}
	switch {
	case totals == 0:
		return what + "; this file has no reading of the GPU totals DCGM reads"
	case len(na) > 0:
		return what + fmt.Sprintf(", and the GPU totals DCGM reads, nvmlDeviceGetFieldValues, but GPU %s's CRC-data total, N/A on this driver: %s would see nothing there",
			strings.Join(na, ", "), dcgmPolicy)
	}
	return what + ", and the GPU totals DCGM's health watch reads, nvmlDeviceGetFieldValues"
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

// linksAdvice is what to do about a link check that failed or warned:
// where only CRC errors under DCGM's failing rate warned, watch them
// (nothing is to be replaced); where DCGM would fail the links, what it
// would fail on, and how to confirm it with DCGM before anyone acts.
func linksAdvice(c results.Check) string {
	crcOnly := true
	failed := false
	for _, it := range c.Items {
		switch it.Status {
		case results.StatusFail:
			failed = true
		case results.StatusWarn:
			crcOnly = crcOnly && strings.Contains(it.Message, "CRC-")
		}
	}
	if failed {
		return "NVLinks that DCGM would fail (the link check says on what: replay or recovery errors, CRC errors at 100 a second or more over its minute, a link down or slowed): rerun to see whether it stays, and confirm with DCGM itself (dcgmi health -s n, then dcgmi health -c after a minute of load; dcgmi diag -r 2); if it does, have the vendor look at the GPU and link the check names."
	}
	if crcOnly {
		return "NVLink CRC errors under the rate at which DCGM fails (100 a second over its minute): errors the links detected and got past, with no replay or recovery error; nothing measured is wrong and nothing needs replacing. Monitor them: the link check gives the rate over DCGM's minute, the rate during the run and round by round, and the bandwidth against expected; rerun later (or keep DCGM watching, dcgmi health -s n): a rate that falls needs nothing, one that climbs towards 100 a second is what DCGM fails."
	}
	return "A PCIe link on fewer lanes than it allows, or another link warning: see the link check; reseat the GPU or check the slot for a narrow PCIe link, then rerun."
}
