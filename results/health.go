package results

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// The machine's health and hygiene around a run, as NVML reports it: each
// GPU's NVLink states, speeds and error counters, ECC counts and row
// remapping before the first test and after the last (Health), the throttle
// reasons and SM clocks read between tests (DeviceWatch), and the compute
// processes of other programs seen on the selected GPUs (Process), which
// also mark the figures measured while they were there
// (Figure.OtherProcesses). (*Run).HealthFindings lists what changed;
// package verdict judges it.

// LinkCounter names an NVLink data-link error counter.
type LinkCounter string

// The NVLink error counters (NVML's nvmlNvLinkErrorCounter_t).
const (
	LinkReplay   LinkCounter = "replay"   // transmissions replayed
	LinkRecovery LinkCounter = "recovery" // link retrainings
	LinkCRCFlit  LinkCounter = "crc_flit" // flow-control units received with a CRC error
	LinkCRCData  LinkCounter = "crc_data" // data received with a CRC error
	LinkECCData  LinkCounter = "ecc_data" // data received with an ECC error (NVLink 4 and later)
	// LinkCRC is NVML's data-link CRC counter of the whole GPU
	// (NVML_FI_DEV_NVLINK_ERROR_DL_CRC): a total only (Health.LinkDL),
	// which DCGM 4.5.3 and later fail when it is above 0 on a GPU before
	// Blackwell.
	LinkCRC LinkCounter = "crc"
)

// LinkErrorCounters are the NVLink error counters of a link and of a GPU's
// totals (Health.LinkTotals), in NVML's order.
var LinkErrorCounters = []LinkCounter{LinkReplay, LinkRecovery, LinkCRCFlit, LinkCRCData, LinkECCData}

// LinkDLCounters are the data-link counters of a GPU's totals
// (Health.LinkDL), in NVML's order of their fields.
var LinkDLCounters = []LinkCounter{LinkReplay, LinkRecovery, LinkCRC}

// ECCCounter names one of a GPU's ECC error counts.
type ECCCounter string

// The ECC error counts: corrected (single-bit) and uncorrected (double-bit)
// errors, since the driver loaded (volatile) and over the device's life
// (aggregate).
const (
	ECCVolatileCorrected    ECCCounter = "volatile_corrected"
	ECCVolatileUncorrected  ECCCounter = "volatile_uncorrected"
	ECCAggregateCorrected   ECCCounter = "aggregate_corrected"
	ECCAggregateUncorrected ECCCounter = "aggregate_uncorrected"
)

// ThrottleReason names why a GPU's clocks are below their maximum (NVML's
// clocks event reasons).
type ThrottleReason string

// The throttle reasons, by their bit in NVML's mask (nvml.h's
// nvmlClocksEventReason* and nvmlClocksThrottleReason* values).
const (
	ThrottleIdle         ThrottleReason = "gpu_idle"                    // 0x1: nothing runs
	ThrottleAppClocks    ThrottleReason = "applications_clocks_setting" // 0x2: clocks set to application values
	ThrottleSWPowerCap   ThrottleReason = "sw_power_cap"                // 0x4: held under the power limit
	ThrottleHWSlowdown   ThrottleReason = "hw_slowdown"                 // 0x8: halved or more: heat, power brake, power draw
	ThrottleSyncBoost    ThrottleReason = "sync_boost"                  // 0x10: held to a sync boost group's clocks
	ThrottleSWThermal    ThrottleReason = "sw_thermal_slowdown"         // 0x20: held under the temperature limits
	ThrottleHWThermal    ThrottleReason = "hw_thermal_slowdown"         // 0x40: halved or more for heat
	ThrottleHWPowerBrake ThrottleReason = "hw_power_brake_slowdown"     // 0x80: halved or more by an external power brake
	ThrottleDisplayClock ThrottleReason = "display_clock_setting"       // 0x100: held by the display clock setting
)

// throttleBits are the reasons in bit order: bit i is throttleBits[i].
var throttleBits = []ThrottleReason{ThrottleIdle, ThrottleAppClocks, ThrottleSWPowerCap, ThrottleHWSlowdown,
	ThrottleSyncBoost, ThrottleSWThermal, ThrottleHWThermal, ThrottleHWPowerBrake, ThrottleDisplayClock}

// ThrottleReasons names the bits of an NVML clocks event reasons mask, in
// bit order; a bit this build does not know is named "bit_N". A mask of 0
// (nothing holds the clocks down) has no reasons.
func ThrottleReasons(mask uint64) []ThrottleReason {
	var out []ThrottleReason
	for mask != 0 {
		i := bits.TrailingZeros64(mask)
		mask &^= 1 << i
		if i < len(throttleBits) {
			out = append(out, throttleBits[i])
		} else {
			out = append(out, ThrottleReason(fmt.Sprintf("bit_%d", i)))
		}
	}
	return out
}

// Health is one GPU's health at one moment, as NVML reports it. What NVML
// could not read is absent and named in Unavailable.
type Health struct {
	Device int `json:"device"`
	// Time is when the reading began; zero in files written before it
	// was recorded.
	Time time.Time `json:"time,omitzero"`
	// Links are the GPU's NVLinks with their state, speed and error counters.
	Links []LinkHealth `json:"links,omitempty"`
	// LinkTotals are the GPU's NVLink error counters summed over its
	// links by the driver: the GPU-total fields of nvmlDeviceGetFieldValues
	// (NVML_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL), which DCGM's health watch
	// reads, by LinkErrorCounters' names; LinkDL are the data-link
	// totals (NVML_FI_DEV_NVLINK_ERROR_DL_*) by LinkDLCounters' names.
	// A counter the driver did not give is absent and named in
	// Unavailable (LinkTotalUnavailable says why).
	LinkTotals map[LinkCounter]uint64 `json:"link_totals,omitempty"`
	LinkDL     map[LinkCounter]uint64 `json:"link_dl,omitempty"`
	// ECC holds the ECC error counts NVML gave (none without ECC).
	ECC map[ECCCounter]uint64 `json:"ecc,omitempty"`
	// RemappedRows is the memory row remapping state (Ampere and later).
	RemappedRows *RemappedRows `json:"remapped_rows,omitempty"`
	// ThrottleReasons say why the clocks were below their maximum then.
	ThrottleReasons []ThrottleReason `json:"throttle_reasons,omitempty"`
	// Unavailable names each reading NVML did not give, and why.
	Unavailable []string `json:"unavailable,omitempty"`
}

// LinkHealth is one NVLink's state and error counters.
type LinkHealth struct {
	Link   int  `json:"link"`
	Active bool `json:"active"`
	// SpeedGBps is NVML's speed of the link, one direction, decimal GB/s.
	SpeedGBps float64 `json:"speed_gbps,omitempty"`
	// Errors holds the counters NVML gave, since the driver loaded.
	Errors map[LinkCounter]uint64 `json:"errors,omitempty"`
}

// LinkTotals is one reading of a GPU's NVLink error totals
// (Health.LinkTotals and LinkDL, what NVML did not give named in
// Unavailable, each in the words of LinkTotalMissing).
type LinkTotals struct {
	// Time is when the reading was taken.
	Time        time.Time
	Totals      map[LinkCounter]uint64
	DL          map[LinkCounter]uint64
	Unavailable []string
}

// LinkTotalMissing is the Unavailable entry of a GPU total NVML did not
// give: "link total crc_data: <why>" (dl: "link dl total crc: <why>").
func LinkTotalMissing(c LinkCounter, dl bool, why string) string {
	return linkTotalPrefix(c, dl) + why
}

func linkTotalPrefix(c LinkCounter, dl bool) string {
	if dl {
		return "link dl total " + string(c) + ": "
	}
	return "link total " + string(c) + ": "
}

// LinkTotalUnavailable says why the reading has no GPU total of counter c
// (dl: of the data-link totals): NVML's answer, and ok true, where it
// named the counter unavailable; ok false where the reading has the
// total, or says nothing of it (a file written before the totals were
// read).
func (h Health) LinkTotalUnavailable(c LinkCounter, dl bool) (why string, ok bool) {
	p := linkTotalPrefix(c, dl)
	for _, u := range h.Unavailable {
		if strings.HasPrefix(u, p) {
			return strings.TrimPrefix(u, p), true
		}
	}
	return "", false
}

// LinkErrorReading is one reading of a GPU's NVLink error totals between
// tests (DeviceWatch.LinkErrors): when, in which round, and the totals
// the driver gave (Health.LinkTotals' counters and names).
type LinkErrorReading struct {
	Time time.Time `json:"time"`
	// Round is the round of the tests in one process the reading began
	// (from 1); 0 before the rounds and after them (the tests across
	// processes).
	Round  int                    `json:"round,omitempty"`
	Totals map[LinkCounter]uint64 `json:"totals,omitempty"`
}

// MaxLinkErrorReadings bounds the readings of one GPU's NVLink error
// totals a run keeps (DeviceWatch.LinkErrors): the watch thins them to
// stay under it (a reading a second or fewer).
const MaxLinkErrorReadings = 1024

// RemappedRows is a GPU's memory row remapping: rows remapped because of
// correctable and of uncorrectable errors, whether a remapping waits for a
// GPU reset, and whether one ever failed.
type RemappedRows struct {
	Correctable   int  `json:"correctable"`
	Uncorrectable int  `json:"uncorrectable"`
	Pending       bool `json:"pending"`
	Failed        bool `json:"failed"`
}

// DeviceWatch is what the readings of one GPU between tests saw: how many
// readings there were, how many showed each throttle reason, and the range
// of the SM clock.
type DeviceWatch struct {
	Device   int                    `json:"device"`
	Readings int                    `json:"readings"`
	Throttle map[ThrottleReason]int `json:"throttle_reasons,omitempty"`
	// SMClockMinMHz and SMClockMaxMHz are 0 when no clock was read.
	SMClockMinMHz int `json:"sm_clock_min_mhz,omitempty"`
	SMClockMaxMHz int `json:"sm_clock_max_mhz,omitempty"`
	// LinkErrors are readings of the GPU's NVLink error totals between
	// tests, in time order: a second apart or more, and one at the start
	// of each round; at most MaxLinkErrorReadings. Empty without the
	// totals (no NVLink, a driver without the fields) and in files
	// written before they were read.
	LinkErrors []LinkErrorReading `json:"link_errors,omitempty"`
}

// Process is a compute process on a GPU.
type Process struct {
	Device int `json:"device"`
	// PID is the process id NVML gives: the host's, which differs from the
	// one seen inside a container.
	PID int `json:"pid"`
	// Name is its command name (/proc/PID/comm); empty when it cannot be
	// read (gone, or in another pid namespace).
	Name string `json:"name,omitempty"`
	// UsedBytes is the device memory it used (when last seen); 0 when
	// NVML does not say.
	UsedBytes uint64 `json:"used_bytes,omitempty"`
	// FirstSeen and LastSeen are the first and the last check that saw it
	// (zero in a listing that is no record of a run).
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// String names the process for people: "pid 4242 (python, 2.0 GiB) on GPU 1".
func (p Process) String() string {
	about := p.Name
	if about == "" {
		about = "name unknown"
	}
	if p.UsedBytes > 0 {
		about += ", " + FormatBytes(p.UsedBytes)
	}
	return fmt.Sprintf("pid %d (%s) on GPU %d", p.PID, about, p.Device)
}

// health checks the health records of the environment.
func (v *validator) health(e *Environment) {
	for _, hs := range []struct {
		name string
		h    []Health
	}{{"health_before", e.HealthBefore}, {"health_after", e.HealthAfter}} {
		where := &place{of: "environment." + hs.name}
		links := &place{where: where, of: "links"}
		for i, h := range hs.h {
			where.i = i
			v.device(where, "device", h.Device, false)
			for j, l := range h.Links {
				links.i = j
				v.finite(links, "speed_gbps", l.SpeedGBps)
			}
			for _, m := range []map[LinkCounter]uint64{h.LinkTotals, h.LinkDL} {
				for c := range m {
					v.name(where, "a link total's counter", string(c))
				}
			}
			for _, u := range h.Unavailable {
				v.text(where, "unavailable", u)
			}
		}
	}
	where := &place{of: "environment.during_run"}
	for i, w := range e.DuringRun {
		where.i = i
		v.device(where, "device", w.Device, false)
		if len(w.LinkErrors) > MaxLinkErrorReadings {
			v.limit("%s: %d link_errors readings, over the %d a results file allows", where, len(w.LinkErrors), MaxLinkErrorReadings)
		}
		for j, r := range w.LinkErrors {
			switch {
			case r.Round < 0:
				v.add("%s.link_errors[%d]: round %d is negative", where, j, r.Round)
			case j > 0 && r.Time.Before(w.LinkErrors[j-1].Time):
				v.add("%s.link_errors[%d]: read before the reading above it", where, j)
			}
			for c := range r.Totals {
				if len(c) > MaxNameBytes { // the place's name only for a problem
					v.name(fmt.Sprintf("%s.link_errors[%d].totals", where, j), "counter", string(c))
				}
			}
		}
	}
	for i, p := range e.OtherProcesses {
		where := fmt.Sprintf("environment.other_processes[%d]", i)
		v.device(where, "device", p.Device, false)
		v.name(where, "name", p.Name)
	}
}

// HealthCheck names what a health finding is about.
type HealthCheck string

// The health checks.
const (
	// HealthLinkErrors: an NVLink error counter rose during the run.
	HealthLinkErrors HealthCheck = "link_errors"
	// HealthLinkDown: a link active before the run was down after it.
	HealthLinkDown HealthCheck = "link_down"
	// HealthLinkSlower: a link's speed fell during the run.
	HealthLinkSlower HealthCheck = "link_slower"
	// HealthECC: uncorrected ECC errors rose during the run.
	HealthECC HealthCheck = "ecc_uncorrected"
	// HealthRowRemap: rows were remapped for uncorrectable errors during
	// the run, or after it a remapping waits for a reset or one has failed.
	HealthRowRemap HealthCheck = "row_remap"
	// HealthThrottle: readings between tests found the clocks held down
	// for a reason other than idling.
	HealthThrottle HealthCheck = "throttle"
	// HealthOtherProcess: another program's compute process was on a
	// selected GPU before or during the run.
	HealthOtherProcess HealthCheck = "other_process"
)

// HealthFinding is one thing the health readings of a run say: which
// check, about which GPU and link, which counter or reason moved and from
// what to what, in a sentence.
type HealthFinding struct {
	Check  HealthCheck
	Device int
	// Link is the NVLink's index; -1 when the finding is not about a link.
	Link int
	// What is the counter, ECC count, throttle reason or pid concerned.
	What string
	// Before and After are the values it went between (for throttle, the
	// readings that showed the reason and all readings).
	Before, After uint64
	// Message says it in a sentence, after Subject.
	Message string
}

// Subject names what the finding is about: "GPU 1 NVLink 3", "GPU 0".
func (f HealthFinding) Subject() string {
	if f.Link >= 0 {
		return fmt.Sprintf("GPU %d NVLink %d", f.Device, f.Link)
	}
	return fmt.Sprintf("GPU %d", f.Device)
}

func (f HealthFinding) String() string { return f.Subject() + ": " + f.Message }

// HealthFindings lists what changed in the run's health readings, as
// facts: every NVLink error counter that rose and every link that went
// down or slowed between the readings before and after the run (naming
// device, link and counter, with both values), uncorrected ECC errors that
// rose, rows remapped for uncorrectable errors, a remapping pending or
// failed, throttle reasons other than idling seen between tests, and other
// programs' processes on the selected GPUs. It returns them in that order,
// by device; nothing for a run without health readings. It judges nothing:
// package verdict holds these facts to NVIDIA's policies (an NVLink
// counter that rose is not by itself a fault: the ECC-data counter counts
// errors the link corrected).
func (r *Run) HealthFindings() []HealthFinding {
	e := &r.Environment
	var out []HealthFinding
	before := map[int]Health{}
	for _, h := range e.HealthBefore {
		before[h.Device] = h
	}
	for _, after := range e.HealthAfter {
		if b, ok := before[after.Device]; ok {
			out = append(out, linkFindings(b, after)...)
			out = append(out, memoryFindings(b, after)...)
		}
	}
	out = append(out, throttleFindings(e.DuringRun)...)
	return append(out, r.processFindings()...)
}

// linkFindings compares one GPU's links before and after the run.
func linkFindings(before, after Health) []HealthFinding {
	var out []HealthFinding
	dev := after.Device
	was := map[int]LinkHealth{}
	for _, l := range before.Links {
		was[l.Link] = l
	}
	for _, l := range after.Links {
		b, ok := was[l.Link]
		if !ok {
			continue
		}
		if b.Active && !l.Active {
			out = append(out, HealthFinding{Check: HealthLinkDown, Device: dev, Link: l.Link, What: "active", Before: 1, After: 0,
				Message: "went down during the run (active before it, inactive after)"})
		}
		if b.Active && l.Active && l.SpeedGBps < b.SpeedGBps*0.99 {
			out = append(out, HealthFinding{Check: HealthLinkSlower, Device: dev, Link: l.Link, What: "speed_gbps",
				Before: uint64(b.SpeedGBps * 1000), After: uint64(l.SpeedGBps * 1000),
				Message: fmt.Sprintf("slowed during the run, %.3f → %.3f GB/s", b.SpeedGBps, l.SpeedGBps)})
		}
		for _, c := range slices.Sorted(maps.Keys(l.Errors)) {
			x, y := b.Errors[c], l.Errors[c]
			if _, had := b.Errors[c]; had && y > x {
				out = append(out, HealthFinding{Check: HealthLinkErrors, Device: dev, Link: l.Link, What: string(c), Before: x, After: y,
					Message: fmt.Sprintf("%s errors rose during the run, %d → %d (+%d)", c, x, y, y-x)})
			}
		}
	}
	return out
}

// memoryFindings compares one GPU's ECC counts and row remapping before and
// after the run.
func memoryFindings(before, after Health) []HealthFinding {
	var out []HealthFinding
	dev := after.Device
	for _, c := range []ECCCounter{ECCVolatileUncorrected, ECCAggregateUncorrected} {
		x, had := before.ECC[c]
		y, has := after.ECC[c]
		if had && has && y > x {
			out = append(out, HealthFinding{Check: HealthECC, Device: dev, Link: -1, What: string(c), Before: x, After: y,
				Message: fmt.Sprintf("%s ECC errors rose during the run, %d → %d", c, x, y)})
		}
	}
	b, a := before.RemappedRows, after.RemappedRows
	if a == nil {
		return out
	}
	if b != nil && a.Uncorrectable > b.Uncorrectable {
		out = append(out, HealthFinding{Check: HealthRowRemap, Device: dev, Link: -1, What: "uncorrectable",
			Before: uint64(b.Uncorrectable), After: uint64(a.Uncorrectable),
			Message: fmt.Sprintf("rows remapped for uncorrectable memory errors rose during the run, %d → %d", b.Uncorrectable, a.Uncorrectable)})
	}
	if a.Pending {
		out = append(out, HealthFinding{Check: HealthRowRemap, Device: dev, Link: -1, What: "pending", After: 1,
			Message: "a memory row remapping waits for a GPU reset"})
	}
	if a.Failed {
		out = append(out, HealthFinding{Check: HealthRowRemap, Device: dev, Link: -1, What: "failed", After: 1,
			Message: "a memory row remapping has failed (the GPU needs service)"})
	}
	return out
}

// throttleFindings names the reasons other than idling that readings
// between tests saw.
func throttleFindings(watch []DeviceWatch) []HealthFinding {
	var out []HealthFinding
	for _, w := range watch {
		for _, reason := range slices.Sorted(maps.Keys(w.Throttle)) {
			n := w.Throttle[reason]
			if reason == ThrottleIdle || n == 0 {
				continue
			}
			out = append(out, HealthFinding{Check: HealthThrottle, Device: w.Device, Link: -1, What: string(reason),
				Before: uint64(n), After: uint64(w.Readings),
				Message: fmt.Sprintf("clocks held down by %s in %d of %d readings between tests (SM clock %d–%d MHz)",
					reason, n, w.Readings, w.SMClockMinMHz, w.SMClockMaxMHz)})
		}
	}
	return out
}

// processFindings names each other program's process and the figures
// measured while it was there.
func (r *Run) processFindings() []HealthFinding {
	var out []HealthFinding
	for _, p := range r.Environment.OtherProcesses {
		marked := 0
		for i := range r.Figures {
			if slices.Contains(r.Figures[i].OtherProcesses, p.PID) {
				marked++
			}
		}
		out = append(out, HealthFinding{Check: HealthOtherProcess, Device: p.Device, Link: -1, What: fmt.Sprint(p.PID),
			After:   uint64(marked),
			Message: fmt.Sprintf("another program's compute process, %s, was there during the run; %d figures were measured beside it", p, marked)})
	}
	return out
}

// GPUs returns the devices a figure's measurement used, of the run's
// selected devices all: its source and destination, and for an end that
// stands for every device (HostDevice in a test between devices: an
// aggregate) all of them. The host end of a host copy adds none.
func (f *Figure) GPUs(all []int) []int {
	var out []int
	for _, d := range []int{f.Src, f.Dst} {
		switch {
		case d >= 0:
			out = append(out, d)
		case f.Test.Info().NeedsPair:
			out = append(out, all...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
