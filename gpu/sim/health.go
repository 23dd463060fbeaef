package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// The health the Monitor reports. A simulated machine is healthy: every
// NVLink up at its speed with error counters at zero, ECC on and clean, no
// row remapped, nothing but idling holding the clocks down, and no compute
// process on a GPU but this one (on each GPU where it holds a context).
// Options inject what a sick or shared machine shows: an NVLink error
// counter that rises as the GPUs work or jumps once (WithLinkErrors), a
// link that is down or goes down (WithLinkDown), a driver that does not
// give a GPU-total NVLink field (WithLinkTotalUnavailable), another
// program's process on a GPU (WithProcess). They change what the Monitor reads, not the timing model:
// a downed link or a busy GPU copies as fast as a healthy one.
//
// Time here is the simulator's virtual time since the machine was built,
// which runs only while the GPUs work.

// LinkErrors makes one NVLink error counter rise during the run: by Burst
// at once when At of virtual time has passed, and by PerSecond every
// second of virtual time from then on.
type LinkErrors struct {
	Device, Link int
	Counter      results.LinkCounter
	// PerSecond is how many errors the counter gains per second of virtual
	// time.
	PerSecond float64
	Burst     uint64
	At        time.Duration
}

// count is how many errors e has added by virtual time t.
func (e LinkErrors) count(t time.Duration) uint64 {
	if t < e.At {
		return 0
	}
	return e.Burst + uint64(e.PerSecond*(t-e.At).Seconds())
}

// WithLinkErrors makes an NVLink error counter rise (see LinkErrors).
func WithLinkErrors(e LinkErrors) Option {
	return func(d *Driver) error {
		if err := e.validate(); err != nil {
			return err
		}
		if err := d.checkLink(e.Device, e.Link); err != nil {
			return err
		}
		d.health.errors = append(d.health.errors, e)
		return nil
	}
}

// validate checks what does not depend on the machine.
func (e LinkErrors) validate() error {
	if !slices.Contains(linkCounters, e.Counter) {
		return fmt.Errorf("sim: unknown NVLink error counter %s (have %s)", results.QuoteShort(string(e.Counter)), joinNames(linkCounters))
	}
	if !(e.PerSecond >= 0 && e.PerSecond <= 1e12) || e.PerSecond == 0 && e.Burst == 0 {
		return fmt.Errorf("sim: NVLink errors per second must be above 0 and at most 1e12 (got %v)", e.PerSecond)
	}
	if e.At < 0 || e.Burst > 1e12 {
		return fmt.Errorf("sim: NVLink errors from %v, %d at once: want a time from the start and at most 1e12", e.At, e.Burst)
	}
	return nil
}

// WithLinkTotalUnavailable makes the driver answer a GPU-total NVLink
// field of device dev as not supported (counter c, or with dl its
// data-link total), as some drivers do on H100s whose links count
// (NVIDIA/DCGM issue 173): the per-link counters still read.
func WithLinkTotalUnavailable(dev int, c results.LinkCounter, dl bool) Option {
	return func(d *Driver) error {
		names := linkCounters
		if dl {
			names = results.LinkDLCounters
		}
		if !slices.Contains(names, c) {
			return fmt.Errorf("sim: unknown NVLink total %q (have %s)", c, joinNames(names))
		}
		if dev < 0 || dev >= d.m.n {
			return fmt.Errorf("sim: device %d; the machine has %d", dev, d.m.n)
		}
		d.health.noTotal = append(d.health.noTotal, totalMissing{dev, c, dl})
		return nil
	}
}

// WithLinkDown takes one NVLink of a device down once at of virtual time
// has passed (0: down from the start).
func WithLinkDown(dev, link int, at time.Duration) Option {
	return func(d *Driver) error {
		if at < 0 {
			return fmt.Errorf("sim: link down at %v: before the start", at)
		}
		if err := d.checkLink(dev, link); err != nil {
			return err
		}
		d.health.down = append(d.health.down, linkDown{dev, link, at})
		return nil
	}
}

// Process is another program's compute process on a simulated GPU.
type Process struct {
	Device int
	PID    int
	Name   string
	// UsedBytes is the device memory it uses.
	UsedBytes uint64
	// At is the virtual time it starts at (0: there from the start).
	At time.Duration
}

// WithProcess puts another program's process on a GPU (see Process).
func WithProcess(p Process) Option {
	return func(d *Driver) error {
		if err := p.validate(); err != nil {
			return err
		}
		if p.Device < 0 || p.Device >= d.m.n {
			return fmt.Errorf("sim: process on device %d; the machine has %d", p.Device, d.m.n)
		}
		d.health.procs = append(d.health.procs, p)
		return nil
	}
}

// validate checks what does not depend on the machine.
func (p Process) validate() error {
	if p.PID <= 0 || p.PID == os.Getpid() {
		return fmt.Errorf("sim: process pid %d: want another program's, above 0", p.PID)
	}
	if p.At < 0 {
		return fmt.Errorf("sim: process starting at %v: before the start", p.At)
	}
	if len(p.Name) > results.MaxNameBytes {
		// The results file could not be read back (a name is at most
		// MaxNameBytes there): refused before anything is measured.
		return fmt.Errorf("sim: process name of %d bytes: at most %d", len(p.Name), results.MaxNameBytes)
	}
	return nil
}

// HealthSpecs are the forms of the health conditions ParseHealth reads, in
// the words --simulate-health's help and docs/commands.md show (tested).
var HealthSpecs = []string{
	"link-errors:DEV:LINK:COUNTER[:PER_SECOND]",
	"link-error-burst:DEV:LINK:COUNTER[:N[:AT]]",
	"link-total-na:DEV[:COUNTER]",
	"link-down:DEV:LINK[:AT]",
	"process:DEV[:PID[:NAME]]",
	"slow-link:A:B[:SCALE]",
}

// ParseHealth reads an injected health condition (one of HealthSpecs) as
// the command line names it, for --simulate runs:
//
//	link-errors:DEV:LINK:COUNTER[:PER_SECOND]   (default 1000 per second)
//	link-error-burst:DEV:LINK:COUNTER[:N[:AT]]  (N at once at virtual time AT; default 1 at 1ms)
//	link-total-na:DEV[:COUNTER]                 (the GPU total not supported; default crc_data)
//	link-down:DEV:LINK[:AT]                     (AT: virtual time, like 5ms; default 0)
//	process:DEV[:PID[:NAME]]                    (default pid 424242, "other-job", 2 GiB)
//	slow-link:A:B[:SCALE]                       (both ways at SCALE of the rate, default 0.5)
//
// COUNTER is one of replay, recovery, crc_flit, crc_data, ecc_data.
func ParseHealth(spec string) (Option, error) {
	kind, rest, _ := strings.Cut(spec, ":")
	f := strings.Split(rest, ":")
	fail := func(why string) (Option, error) {
		return nil, fmt.Errorf("health condition %s: %s", results.QuoteShort(spec), strings.TrimPrefix(why, "sim: "))
	}
	var nums []int // the leading fields, as numbers
	for _, x := range f {
		n, err := strconv.Atoi(x)
		if err != nil {
			break
		}
		nums = append(nums, n)
	}
	var o Option
	var err error
	switch {
	case kind == "link-errors" && len(f) >= 3 && len(f) <= 4 && len(nums) >= 2:
		o, err = parseLinkErrors(f, nums)
	case kind == "link-error-burst" && len(f) >= 3 && len(f) <= 5 && len(nums) >= 2:
		o, err = parseLinkErrorBurst(f, nums)
	case kind == "link-total-na" && rest != "" && len(f) <= 2 && len(nums) >= 1:
		c := results.LinkCRCData
		if len(f) == 2 {
			c = results.LinkCounter(f[1])
		}
		return WithLinkTotalUnavailable(nums[0], c, false), nil
	case kind == "link-down" && len(f) >= 2 && len(f) <= 3 && len(nums) >= 2:
		var at time.Duration
		if len(f) == 3 {
			if at, err = time.ParseDuration(f[2]); err != nil || at < 0 {
				return fail(fmt.Sprintf("%s is not a duration from the start", results.QuoteShort(f[2])))
			}
		}
		return WithLinkDown(nums[0], nums[1], at), nil
	case kind == "process" && rest != "" && len(f) <= 3 && len(nums) >= min(len(f), 2):
		p := Process{Device: nums[0], PID: 424242, Name: "other-job", UsedBytes: 2 << 30}
		if len(f) >= 2 {
			p.PID = nums[1]
		}
		if len(f) == 3 {
			p.Name = f[2]
		}
		if err := p.validate(); err != nil {
			return fail(err.Error())
		}
		return WithProcess(p), nil
	case kind == "slow-link" && len(f) >= 2 && len(f) <= 3 && len(nums) >= 2:
		o, err = parseSlowLink(f, nums)
	default:
		return fail("not understood; want " + strings.Join(HealthSpecs[:len(HealthSpecs)-1], ", ") + " or " + HealthSpecs[len(HealthSpecs)-1])
	}
	if err != nil {
		return fail(err.Error())
	}
	return o, nil
}

// parseLinkErrors reads link-errors:DEV:LINK:COUNTER[:PER_SECOND], its
// fields f and their leading numbers nums.
func parseLinkErrors(f []string, nums []int) (Option, error) {
	e := LinkErrors{Device: nums[0], Link: nums[1], Counter: results.LinkCounter(f[2]), PerSecond: 1000}
	if len(f) == 4 {
		v, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			return nil, fmt.Errorf("errors per second %s is not a number", results.QuoteShort(f[3]))
		}
		e.PerSecond = v
	}
	if err := e.validate(); err != nil {
		return nil, err
	}
	return WithLinkErrors(e), nil
}

// parseLinkErrorBurst reads link-error-burst:DEV:LINK:COUNTER[:N[:AT]].
func parseLinkErrorBurst(f []string, nums []int) (Option, error) {
	e := LinkErrors{Device: nums[0], Link: nums[1], Counter: results.LinkCounter(f[2]), Burst: 1, At: time.Millisecond}
	if len(f) >= 4 {
		n, err := strconv.ParseUint(f[3], 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("errors %q is not a whole number above 0", f[3])
		}
		e.Burst = n
	}
	if len(f) == 5 {
		at, err := time.ParseDuration(f[4])
		if err != nil || at < 0 {
			return nil, fmt.Errorf("%q is not a duration from the start", f[4])
		}
		e.At = at
	}
	if err := e.validate(); err != nil {
		return nil, err
	}
	return WithLinkErrors(e), nil
}

// parseSlowLink reads slow-link:A:B[:SCALE].
func parseSlowLink(f []string, nums []int) (Option, error) {
	if nums[0] == nums[1] {
		return nil, fmt.Errorf("a link joins two devices: %d and %d are one", nums[0], nums[1])
	}
	scale := 0.5
	if len(f) == 3 {
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil || !(v > 0 && v < 1) {
			return nil, fmt.Errorf("scale %s is not a number above 0 and below 1", results.QuoteShort(f[2]))
		}
		scale = v
	}
	return func(d *Driver) error {
		for _, p := range [][2]int{{nums[0], nums[1]}, {nums[1], nums[0]}} {
			if err := WithFault(Fault{Kind: FaultSlowLink, Src: p[0], Dst: p[1], Scale: scale})(d); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// linkCounters are the counters a simulated link has.
var linkCounters = []results.LinkCounter{results.LinkReplay, results.LinkRecovery, results.LinkCRCFlit, results.LinkCRCData, results.LinkECCData}

func joinNames[T ~string](names []T) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// health holds the conditions injected into a machine's health.
type health struct {
	errors  []LinkErrors
	down    []linkDown
	procs   []Process
	noTotal []totalMissing
}

// totalMissing is a GPU total the driver does not give.
type totalMissing struct {
	dev     int
	counter results.LinkCounter
	dl      bool
}

type linkDown struct {
	dev, link int
	at        time.Duration
}

// checkLink checks that dev has a link numbered link.
func (d *Driver) checkLink(dev, link int) error {
	if dev < 0 || dev >= d.m.n {
		return fmt.Errorf("sim: device %d; the machine has %d", dev, d.m.n)
	}
	if n := d.m.linkCount(); link < 0 || link >= n {
		return fmt.Errorf("sim: link %d of device %d; it has %d NVLinks", link, dev, n)
	}
	return nil
}

// HostClock is the virtual host clock: what the calls made so far cost a
// CPU thread, and the waits for the work they queued (see timing.go).
func (d *Driver) HostClock() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Duration(d.sched.host - simStart)
}

// Elapsed is the duration the simulator modelled since the machine was
// built: the later of the GPUs' and the host's virtual clocks, what the
// calls so far would have taken on the machine (not the real time spent).
func (d *Driver) Elapsed() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.elapsed()
}

// elapsed is Elapsed with the driver locked.
func (d *Driver) elapsed() time.Duration {
	return time.Duration(math.Max(d.sched.now, d.sched.host) - simStart)
}

// linkUp reports whether a link of dev is up now.
func (d *Driver) linkUp(dev, link int) bool {
	for _, l := range d.health.down {
		if l.dev == dev && l.link == link && d.elapsed() >= l.at {
			return false
		}
	}
	return true
}

// Health reads a device's links with their error counters and their GPU
// totals, clean ECC counts, no remapped row, and its throttle reasons, at
// the machine's clock (Now).
func (m monitor) Health(dev int, busID string) (results.Health, error) {
	return query(m.d, "nvmlDeviceGetHandleByPciBusId", []int{dev}, func() (results.Health, error) {
		d := m.d
		h := results.Health{Device: dev, Time: d.now(), ECC: map[results.ECCCounter]uint64{
			results.ECCVolatileCorrected: 0, results.ECCVolatileUncorrected: 0,
			results.ECCAggregateCorrected: 0, results.ECCAggregateUncorrected: 0,
		}, RemappedRows: &results.RemappedRows{}, ThrottleReasons: d.throttle(dev)}
		h.Links = d.linkHealth(dev)
		if len(h.Links) > 0 {
			t := d.linkTotals(dev, h.Links)
			h.LinkTotals, h.LinkDL, h.Unavailable = t.Totals, t.DL, t.Unavailable
		}
		return h, nil
	})
}

// LinkErrorTotals reads a device's GPU-total NVLink error fields: the sums
// of its links' counters, and data-link totals of 0 (the simulated
// machine's links never replayed or retrained before the run); a total
// injected unavailable is named so. A device without NVLinks has none.
func (m monitor) LinkErrorTotals(dev int, busID string) (results.LinkTotals, error) {
	return query(m.d, "nvmlDeviceGetFieldValues", []int{dev}, func() (results.LinkTotals, error) {
		d := m.d
		links := d.linkHealth(dev)
		if len(links) == 0 {
			return results.LinkTotals{}, fmt.Errorf("simulated machine: device %d: %w", dev, gpu.ErrNoCounters)
		}
		return d.linkTotals(dev, links), nil
	})
}

// linkTotals sums links' counters into the GPU totals of dev.
func (d *Driver) linkTotals(dev int, links []results.LinkHealth) results.LinkTotals {
	t := results.LinkTotals{Time: d.now(), Totals: map[results.LinkCounter]uint64{}, DL: map[results.LinkCounter]uint64{}}
	missing := func(c results.LinkCounter, dl bool) bool {
		return slices.Contains(d.health.noTotal, totalMissing{dev, c, dl})
	}
	for _, c := range linkCounters {
		if missing(c, false) {
			t.Unavailable = append(t.Unavailable, results.LinkTotalMissing(c, false, "simulated: Not Supported"))
			continue
		}
		for _, l := range links {
			t.Totals[c] += l.Errors[c]
		}
	}
	for _, c := range results.LinkDLCounters {
		if missing(c, true) {
			t.Unavailable = append(t.Unavailable, results.LinkTotalMissing(c, true, "simulated: Not Supported"))
			continue
		}
		t.DL[c] = 0
	}
	return t
}

// linkHealth is each NVLink of dev with its error counters now: 0, but
// for the injected errors and, on machines that model them, the corrected
// errors a healthy link counts.
func (d *Driver) linkHealth(dev int) []results.LinkHealth {
	var out []results.LinkHealth
	for _, l := range d.links(dev) {
		lh := results.LinkHealth{Link: l.Link, Active: l.Active, SpeedGBps: l.SpeedGBps, Errors: map[results.LinkCounter]uint64{}}
		for _, c := range linkCounters {
			lh.Errors[c] = 0
		}
		for _, e := range d.health.errors {
			if e.Device == dev && e.Link == l.Link {
				lh.Errors[e.Counter] += e.count(d.elapsed())
			}
		}
		if r := d.m.m.eccPerSecond; r[1] > 0 && l.Active {
			// Corrected errors, as a healthy NVLink 4 link counts them
			// (docs/findings.md, "Behind the code"): a base of hundreds to
			// a few thousand, rising while the device works, at a rate of
			// its own per link; CRC-data a base that stays.
			u := d.unit(noiseHealth, uint64(dev), uint64(l.Link))
			lh.Errors[results.LinkECCData] += uint64(300+3000*u) + uint64((r[0]+(r[1]-r[0])*u)*d.busyNs[dev]/1e9)
			lh.Errors[results.LinkCRCData] += uint64(150 + 400*u)
		}
		out = append(out, lh)
	}
	return out
}

// now is the machine's clock: the wall-clock time it was built plus the
// virtual time since, so that its readings' times and its counters, which
// rise with virtual time, agree.
func (d *Driver) now() time.Time {
	return d.born.Add(d.elapsed())
}

// Throttle is gpu_idle while the device runs nothing, and nothing while it
// works: simulated clocks are never held down.
func (m monitor) Throttle(dev int, busID string) ([]results.ThrottleReason, error) {
	return query(m.d, "nvmlDeviceGetHandleByPciBusId", []int{dev}, func() ([]results.ThrottleReason, error) {
		return m.d.throttle(dev), nil
	})
}

func (d *Driver) throttle(dev int) []results.ThrottleReason {
	if d.sched.busy[dev] > 0 {
		return nil
	}
	return []results.ThrottleReason{results.ThrottleIdle}
}

// Processes lists this process on a device where it holds a context (with
// the memory its context and allocations take), and the injected processes
// started by now.
func (m monitor) Processes(dev int, busID string) ([]results.Process, error) {
	return query(m.d, "nvmlDeviceGetHandleByPciBusId", []int{dev}, func() ([]results.Process, error) {
		d := m.d
		var out []results.Process
		if c := d.ctxs[dev]; c != nil {
			out = append(out, results.Process{Device: dev, PID: os.Getpid(), Name: filepath.Base(os.Args[0]),
				UsedBytes: c.reserved + d.mem.used[dev]})
		}
		for _, p := range d.health.procs {
			if p.Device == dev && d.elapsed() >= p.At {
				out = append(out, results.Process{Device: dev, PID: p.PID, Name: p.Name, UsedBytes: p.UsedBytes})
			}
		}
		return out, nil
	})
}
