package sim

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// work copies within device 0 for about 0.1 s of virtual time.
func (r *rig) work() {
	r.t.Helper()
	const size = 1 << 30
	a := r.alloc(0, 2*size)
	for range 200 {
		r.must(r.ctx[0].MemcpyAsync(a+size, a, size, 0))
	}
	r.must(r.ctx[0].Synchronize())
}

func (r *rig) health(dev int) results.Health {
	r.t.Helper()
	h, err := r.d.Monitor().Health(dev, "")
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

func TestHealthyMachine(t *testing.T) {
	d, err := New("h200x2")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	mon := d.Monitor()
	if ps, err := mon.Processes(0, ""); ps != nil || err != nil {
		t.Errorf("processes before any context: %+v, %v", ps, err)
	}
	r := newRig(t, "h200x2")
	h := r.health(1)
	if len(h.Links) != 18 || h.RemappedRows == nil || *h.RemappedRows != (results.RemappedRows{}) || len(h.ECC) != 4 ||
		!slices.Equal(h.ThrottleReasons, []results.ThrottleReason{results.ThrottleIdle}) || h.Unavailable != nil {
		t.Errorf("health of device 1: %+v", h)
	}
	var crc uint64
	for _, l := range h.Links {
		if !l.Active || l.SpeedGBps != 25 || len(l.Errors) != 5 || l.Errors[results.LinkReplay] != 0 {
			t.Errorf("link %+v", l)
		}
		crc += l.Errors[results.LinkCRCData]
	}
	// The GPU totals are the links' sums; the data-link totals 0.
	if h.LinkTotals[results.LinkCRCData] != crc || len(h.LinkTotals) != 5 || h.LinkTotals[results.LinkReplay] != 0 ||
		len(h.LinkDL) != 3 || h.LinkDL[results.LinkCRC] != 0 || h.Time.IsZero() {
		t.Errorf("totals %v (links' CRC-data %d), data-link %v, at %v", h.LinkTotals, crc, h.LinkDL, h.Time)
	}
	for c, n := range h.ECC {
		if n != 0 {
			t.Errorf("ECC %s = %d", c, n)
		}
	}
	ps, err := r.d.Monitor().Processes(0, "")
	if err != nil || len(ps) != 1 || ps[0].PID != os.Getpid() || ps[0].Device != 0 || ps[0].UsedBytes < h200.reservedBytes {
		t.Errorf("processes with a context: %+v, %v; want this one", ps, err)
	}
	if _, err := r.d.Monitor().Health(2, ""); err == nil {
		t.Error("Health of device 2 of 2 succeeded")
	}
}

func TestSwitchLinks(t *testing.T) {
	r := newRig(t, "dgx-h100")
	links, err := r.d.Monitor().Links(3, "")
	if err != nil || len(links) != 18 {
		t.Fatalf("Links = %d, %v; want 18 links to the switches", len(links), err)
	}
	for _, l := range links {
		if !strings.HasPrefix(l.RemoteBus, "ffff:ff:") || !l.Active || l.SpeedGBps != 25 || l.Version != 4 {
			t.Errorf("link %+v: want an active NVLink 4 link to a switch", l)
		}
	}
}

func TestPCIeLinks(t *testing.T) {
	for machine, want := range map[string]results.PCIeLink{
		"h200x2":    {Gen: 5, Width: 16, MaxGen: 5, MaxWidth: 16},
		"pcie-4gpu": {Gen: 4, Width: 16, MaxGen: 4, MaxWidth: 16},
	} {
		d, err := New(machine)
		if err != nil {
			t.Fatal(err)
		}
		if l, err := d.Monitor().PCIe(1, ""); l != want || err != nil {
			t.Errorf("%s: PCIe(1) = %+v, %v; want %+v", machine, l, err, want)
		}
		if _, err := d.Monitor().PCIe(9, ""); err == nil {
			t.Errorf("%s: PCIe of device 9 succeeded", machine)
		}
		d.Close()
	}
}

func TestInjectedHealth(t *testing.T) {
	r := newRig(t, "h200x2",
		WithLinkErrors(LinkErrors{Device: 0, Link: 3, Counter: results.LinkCRCFlit, PerSecond: 1000}),
		WithLinkDown(1, 5, 0), WithLinkDown(0, 7, time.Millisecond),
		WithProcess(Process{Device: 1, PID: 4242, Name: "python", UsedBytes: 1 << 30}),
		WithProcess(Process{Device: 0, PID: 4343, Name: "late", At: time.Millisecond}))
	before0, before1 := r.health(0), r.health(1)
	if n := before0.Links[3].Errors[results.LinkCRCFlit]; n != 0 {
		t.Errorf("CRC flit errors before any work: %d", n)
	}
	if !before0.Links[7].Active || before1.Links[5].Active {
		t.Errorf("before the run: link 0/7 active %v (want true), link 1/5 active %v (want false)", before0.Links[7].Active, before1.Links[5].Active)
	}
	if l, _ := r.d.Monitor().Links(1, ""); l[5].Active || l[4].Active != true {
		t.Errorf("Links of device 1: link 5 %+v, link 4 %+v", l[5], l[4])
	}
	pids := func(dev int) []int {
		ps, err := r.d.Monitor().Processes(dev, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, p := range ps {
			out = append(out, p.PID)
		}
		return out
	}
	if got := pids(0); !slices.Equal(got, []int{os.Getpid()}) {
		t.Errorf("device 0 before the late process starts: %v", got)
	}
	if got := pids(1); !slices.Equal(got, []int{os.Getpid(), 4242}) {
		t.Errorf("device 1: %v", got)
	}
	r.work()
	after0 := r.health(0)
	if n := after0.Links[3].Errors[results.LinkCRCFlit]; n < 50 {
		t.Errorf("CRC flit errors after about 0.1 s of work: %d, want about 100", n)
	}
	if after0.Links[2].Errors[results.LinkCRCFlit] != 0 || after0.Links[3].Errors[results.LinkReplay] != 0 {
		t.Error("errors on another link or counter")
	}
	if after0.Links[7].Active {
		t.Error("link 0/7 still active after its time")
	}
	if got := pids(0); !slices.Equal(got, []int{os.Getpid(), 4343}) {
		t.Errorf("device 0 after the late process started: %v", got)
	}
	// The GPU total follows the links, and the clock of the readings
	// the virtual time.
	if d := after0.LinkTotals[results.LinkCRCFlit] - before0.LinkTotals[results.LinkCRCFlit]; d != after0.Links[3].Errors[results.LinkCRCFlit] {
		t.Errorf("CRC-flit total rose by %d, the link by %d", d, after0.Links[3].Errors[results.LinkCRCFlit])
	}
	if el := after0.Time.Sub(before0.Time); el < 50*time.Millisecond || el > time.Second {
		t.Errorf("readings %v apart over about 0.1 s of virtual work", el)
	}
}

// TestInjectedBurstAndTotals: a burst of errors counts once its time has
// come; a GPU total injected unavailable is named so and absent, the
// links still counting.
func TestInjectedBurstAndTotals(t *testing.T) {
	r := newRig(t, "h200x2",
		WithLinkErrors(LinkErrors{Device: 1, Link: 4, Counter: results.LinkReplay, Burst: 1, At: time.Millisecond}),
		WithLinkTotalUnavailable(0, results.LinkCRCData, false))
	if n := r.health(1).LinkTotals[results.LinkReplay]; n != 0 {
		t.Errorf("replays before their time: %d", n)
	}
	r.work()
	h1 := r.health(1)
	if h1.Links[4].Errors[results.LinkReplay] != 1 || h1.LinkTotals[results.LinkReplay] != 1 {
		t.Errorf("after the burst: link 4 %v, total %v; want 1 replay", h1.Links[4].Errors, h1.LinkTotals)
	}
	h0 := r.health(0)
	why, ok := h0.LinkTotalUnavailable(results.LinkCRCData, false)
	if _, has := h0.LinkTotals[results.LinkCRCData]; has || !ok || why != "simulated: Not Supported" || h0.Links[0].Errors[results.LinkCRCData] == 0 {
		t.Errorf("device 0's CRC-data total %v, %q %v; links %v", h0.LinkTotals, why, ok, h0.Links[0].Errors)
	}
	lt, err := r.d.Monitor().LinkErrorTotals(0, "")
	if err != nil || len(lt.Totals) != 4 || len(lt.Unavailable) != 1 {
		t.Errorf("LinkErrorTotals(0) = %+v, %v", lt, err)
	}
	p := newRig(t, "pcie-4gpu")
	if _, err := p.d.Monitor().LinkErrorTotals(0, ""); err == nil {
		t.Error("NVLink totals of a PCIe GPU read")
	}
}

func TestParseHealth(t *testing.T) {
	for _, spec := range []string{
		"link-errors:0:3:crc_flit", "link-errors:1:17:replay:5.5",
		"link-down:0:2", "link-down:1:0:3ms",
		"process:1", "process:0:999", "process:0:999:trainer",
		"slow-link:0:1", "slow-link:1:0:0.25",
		"link-error-burst:0:1:replay", "link-error-burst:1:2:recovery:3:2ms",
		"link-total-na:0", "link-total-na:1:ecc_data",
	} {
		opt, err := ParseHealth(spec)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		d, err := New("h200x2", opt)
		if err != nil {
			t.Errorf("%s: New: %v", spec, err)
			continue
		}
		d.Close()
	}
	for spec, want := range map[string]string{
		"":                                "not understood",
		"link-errors:0:3":                 "not understood",
		"link-errors:0:3:crc":             `unknown NVLink error counter "crc"`,
		"link-errors:0:3:replay:0":        "must be above 0",
		"link-errors:0:3:replay:x":        `"x" is not a number`,
		"link-down:0":                     "not understood",
		"link-down:0:1:soon":              `"soon" is not a duration`,
		"link-down:0:1:-1s":               `"-1s" is not a duration`,
		"process:":                        "not understood",
		"process:a":                       "not understood",
		"process:0:0":                     "pid 0",
		"process:0:1:x:y":                 "not understood",
		"fire:0":                          "not understood",
		"slow-link:0":                     "not understood",
		"slow-link:0:1:1":                 `scale "1" is not a number above 0 and below 1`,
		"link-error-burst:0:1":            "not understood",
		"link-error-burst:0:1:replay:0":   `errors "0" is not a whole number above 0`,
		"link-error-burst:0:1:replay:2:x": `"x" is not a duration`,
		"link-total-na:":                  "not understood",
	} {
		_, err := ParseHealth(spec)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseHealth(%q) = %v, want one line with %q", spec, err, want)
		}
	}
	// What the machine decides is checked when it is built.
	for spec, want := range map[string]string{
		"link-errors:2:0:replay": "device 2; the machine has 2",
		"link-down:0:18":         "link 18 of device 0; it has 18 NVLinks",
		"process:5":              "process on device 5",
		"slow-link:0:2":          "names device 2; the machine has 2",
		"link-total-na:0:crc":    `unknown NVLink total "crc"`,
		"link-total-na:3":        "device 3; the machine has 2",
	} {
		opt, err := ParseHealth(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if _, err := New("h200x2", opt); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New with %s: %v, want %q", spec, err, want)
		}
	}
	if _, err := New("pcie-4gpu", WithLinkDown(0, 0, 0)); err == nil || !strings.Contains(err.Error(), "it has 0 NVLinks") {
		t.Errorf("a link down on a PCIe machine: %v", err)
	}
}

// TestTemperatureFollowsWorkOverMinutes: a GPU warms towards its loaded
// temperature over minutes, not seconds: a few seconds of copies warm it
// by a degree or two, as the real H200s and H100s warmed over a run.
func TestTemperatureFollowsWorkOverMinutes(t *testing.T) {
	r := newRig(t, "h200x2")
	before, _ := r.d.Monitor().State(0, "")
	for range 20 {
		r.work() // about 0.1 s of copies each
	}
	after, _ := r.d.Monitor().State(0, "")
	if rise := after.TempC - before.TempC; rise < 0 || rise > 2 || after.PowerW <= before.PowerW {
		t.Errorf("2 s of copies: %d → %d °C, %.0f → %.0f W; want a rise of 0-2 °C and more power", before.TempC, after.TempC, before.PowerW, after.PowerW)
	}
}

// TestTrafficCounters: the NVLink counters count a copy between devices,
// payload and raw bytes each way, raw over payload as the engine's wire
// cost (the copy engine's 1.06, as the real counters read); a PCIe machine
// has none; machines sharing a file count into it together, as the
// processes of an IPC run count on one machine's counters.
func TestTrafficCounters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nvlink")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	r := newRig(t, "h200x2", WithSharedTraffic(open()))
	other := newRig(t, "h200x2", WithSharedTraffic(open()))
	const size = 256 << 20
	for _, x := range []*rig{r, other} {
		x.must(x.ctx[1].EnablePeerAccess(x.ctx[0], 0))
		src, dst := x.alloc(0, size), x.alloc(1, size)
		x.must(x.ctx[1].MemcpyPeerAsync(dst, x.ctx[1], src, x.ctx[0], size, 0)) // a pull by device 1
		x.must(x.ctx[1].Synchronize())
	}
	c0, err := r.d.Monitor().Traffic(0, "")
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := r.d.Monitor().Traffic(1, "")
	if c0.TxData != 2*size || c1.RxData != 2*size || c0.RxData != 0 {
		t.Errorf("two pulls of %d bytes 0→1, one per machine: device 0 %+v, device 1 %+v", size, c0, c1)
	}
	if w := float64(c0.TxRaw) / float64(c0.TxData); w < 1.05 || w > 1.08 || c0.RxRaw == 0 || c1.TxRaw != c0.RxRaw {
		t.Errorf("wire bytes per payload byte %.3f, requests back %d and %d", w, c0.RxRaw, c1.TxRaw)
	}
	p := newRig(t, "pcie-4gpu")
	if _, err := p.d.Monitor().Traffic(0, ""); !errors.Is(err, gpu.ErrNoCounters) {
		t.Errorf("a PCIe machine's NVLink counters: %v", err)
	}
}

// TestIPCChildLinkAwake: the first pull over an idle link pays for waking
// it (0.21 ms on the simulated H200, as on the real one), but not on an
// IPC child's machine, whose clock between its windows stands for its
// waits on the parent rather than for an idle link.
func TestIPCChildLinkAwake(t *testing.T) {
	first := func(opts ...Option) float64 {
		r := newRig(t, "h200x2", opts...)
		r.enable(1, 0)
		src, dst := r.alloc(0, 1<<20), r.alloc(1, 1<<20)
		s := r.stream(1)
		a, err := r.ctx[1].EventCreate()
		r.must(err)
		b, err := r.ctx[1].EventCreate()
		r.must(err)
		r.must(r.ctx[1].EventRecord(a, s))
		r.must(r.ctx[1].MemcpyPeerAsync(dst, r.ctx[1], src, r.ctx[0], 1<<20, s))
		r.must(r.ctx[1].EventRecord(b, s))
		r.must(r.ctx[1].EventSynchronize(b))
		ms, err := r.ctx[1].EventElapsed(a, b)
		r.must(err)
		return float64(ms)
	}
	woke, child := first(), first(AsIPCChild())
	if woke < 0.2 || child > 0.05 {
		t.Errorf("a first 1 MiB pull: %.3f ms, on an IPC child's machine %.3f; want 0.2 or more and 0.05 or less", woke, child)
	}
}
