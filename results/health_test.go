package results_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

func TestThrottleReasons(t *testing.T) {
	for _, tc := range []struct {
		mask uint64
		want []results.ThrottleReason
	}{
		{0, nil},
		{0x1, []results.ThrottleReason{results.ThrottleIdle}},
		{0x24, []results.ThrottleReason{results.ThrottleSWPowerCap, results.ThrottleSWThermal}},
		{0x100 | 1<<40, []results.ThrottleReason{results.ThrottleDisplayClock, "bit_40"}},
	} {
		if got := results.ThrottleReasons(tc.mask); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ThrottleReasons(%#x) = %v, want %v", tc.mask, got, tc.want)
		}
	}
}

// healthyLinks are a GPU's links with the given counters on each.
func healthyLinks(n int, errs map[results.LinkCounter]uint64) []results.LinkHealth {
	var out []results.LinkHealth
	for i := range n {
		e := map[results.LinkCounter]uint64{}
		for k, v := range errs {
			e[k] = v
		}
		out = append(out, results.LinkHealth{Link: i, Active: true, SpeedGBps: 26.562, Errors: e})
	}
	return out
}

// sickRun is a two-GPU run whose health readings hold one of everything
// HealthFindings looks for, and one figure measured beside another process.
func sickRun() *results.Run {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true})
	base := map[results.LinkCounter]uint64{results.LinkReplay: 4, results.LinkCRCFlit: 10}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e := &run.Environment
	e.HealthBefore = []results.Health{
		{Device: 0, Links: healthyLinks(4, base),
			ECC:          map[results.ECCCounter]uint64{results.ECCVolatileUncorrected: 0, results.ECCAggregateUncorrected: 2, results.ECCVolatileCorrected: 5},
			RemappedRows: &results.RemappedRows{Correctable: 1}},
		{Device: 1, Links: healthyLinks(4, base), Unavailable: []string{"ecc: not supported"}},
	}
	e.HealthAfter = []results.Health{
		{Device: 0, Links: healthyLinks(4, base),
			ECC:          map[results.ECCCounter]uint64{results.ECCVolatileUncorrected: 1, results.ECCAggregateUncorrected: 3, results.ECCVolatileCorrected: 9},
			RemappedRows: &results.RemappedRows{Correctable: 1, Uncorrectable: 1, Pending: true}},
		{Device: 1, Links: healthyLinks(4, base)},
	}
	after := e.HealthAfter[1].Links
	after[2].Errors[results.LinkCRCFlit] = 38
	after[3].Active = false
	after[1].SpeedGBps = 20
	e.DuringRun = []results.DeviceWatch{
		{Device: 0, Readings: 10, Throttle: map[results.ThrottleReason]int{results.ThrottleIdle: 10}, SMClockMinMHz: 1980, SMClockMaxMHz: 1980},
		{Device: 1, Readings: 10, Throttle: map[results.ThrottleReason]int{results.ThrottleSWPowerCap: 3}, SMClockMinMHz: 1650, SMClockMaxMHz: 1980},
	}
	e.OtherProcesses = []results.Process{{Device: 1, PID: 4242, Name: "python", UsedBytes: 2 << 30, FirstSeen: at, LastSeen: at.Add(time.Minute)}}
	run.Figures[0].OtherProcesses = []int{4242}
	return run
}

func TestHealthFindings(t *testing.T) {
	got := sickRun().HealthFindings()
	type key struct {
		check         results.HealthCheck
		dev, link     int
		what          string
		before, after uint64
	}
	var keys []key
	for _, f := range got {
		keys = append(keys, key{f.Check, f.Device, f.Link, f.What, f.Before, f.After})
		if f.Message == "" || strings.Contains(f.Message, "\n") {
			t.Errorf("%+v: want a one-line message", f)
		}
	}
	want := []key{
		{results.HealthECC, 0, -1, "volatile_uncorrected", 0, 1},
		{results.HealthECC, 0, -1, "aggregate_uncorrected", 2, 3},
		{results.HealthRowRemap, 0, -1, "uncorrectable", 0, 1},
		{results.HealthRowRemap, 0, -1, "pending", 0, 1},
		{results.HealthLinkSlower, 1, 1, "speed_gbps", 26562, 20000},
		{results.HealthLinkErrors, 1, 2, "crc_flit", 10, 38},
		{results.HealthLinkDown, 1, 3, "active", 1, 0},
		{results.HealthThrottle, 1, -1, "sw_power_cap", 3, 10},
		{results.HealthOtherProcess, 1, -1, "4242", 0, 1},
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("findings\n%+v\nwant\n%+v", keys, want)
	}
	for _, f := range got {
		if f.Check == results.HealthLinkErrors && f.String() != "GPU 1 NVLink 2: crc_flit errors rose during the run, 10 → 38 (+28)" {
			t.Errorf("link error finding %q", f)
		}
	}
	if f := resultstest.New(resultstest.Options{GPUs: 2}).HealthFindings(); f != nil {
		t.Errorf("a run without health readings: %+v", f)
	}
}

func TestHealthRoundTripAndValidation(t *testing.T) {
	run := sickRun()
	var b bytes.Buffer
	if err := run.Encode(&b); err != nil {
		t.Fatal(err)
	}
	got, err := results.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Environment, run.Environment) || !reflect.DeepEqual(got.Figures[0].OtherProcesses, []int{4242}) {
		t.Errorf("health read back differs:\n%+v\nwant\n%+v", got.Environment, run.Environment)
	}
	// The mark is not part of the figure's identity.
	if got.Figures[0].Key() != resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true}).Figures[0].Key() {
		t.Error("other_processes changed the figure key")
	}
	run.Environment.HealthAfter[0].Device = 7
	run.Environment.OtherProcesses[0].Device = -1
	err = run.Validate()
	if err == nil || !strings.Contains(err.Error(), "health_after[0]: device 7 is not one of the run's devices") ||
		!strings.Contains(err.Error(), "other_processes[0]: device -1 is not a device index") {
		t.Errorf("Validate = %v", err)
	}
}

func TestProcessString(t *testing.T) {
	for p, want := range map[results.Process]string{
		{Device: 1, PID: 4242, Name: "python", UsedBytes: 2 << 30}: "pid 4242 (python, 2 GiB) on GPU 1",
		{Device: 0, PID: 7}: "pid 7 (name unknown) on GPU 0",
	} {
		if got := p.String(); got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

func TestFigureGPUs(t *testing.T) {
	all := []int{0, 1, 2}
	for _, tc := range []struct {
		f    results.Figure
		want []int
	}{
		{results.Figure{Test: results.CERead, Src: 2, Dst: 0}, []int{0, 2}},
		{results.Figure{Test: results.H2D, Src: results.HostDevice, Dst: 1}, []int{1}},
		{results.Figure{Test: results.LocalCopy, Src: 1, Dst: 1}, []int{1}},
		{results.Figure{Test: results.AllToOne, Src: results.HostDevice, Dst: 2}, []int{0, 1, 2}},
	} {
		if got := tc.f.GPUs(all); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %d→%d: %v, want %v", tc.f.Test, tc.f.Src, tc.f.Dst, got, tc.want)
		}
	}
}

// TestLinkTotalsRoundTrip: a reading's time, GPU totals, data-link totals
// and the readings between tests read back as written; a total NVML did
// not give is found in the reading's unavailable list; readings out of
// time order, or of a negative round, are refused.
func TestLinkTotalsRoundTrip(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Health: true})
	at := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	h := &run.Environment.HealthAfter[0]
	h.Time = at
	h.LinkTotals = map[results.LinkCounter]uint64{results.LinkCRCFlit: 3}
	h.LinkDL = map[results.LinkCounter]uint64{results.LinkCRC: 4}
	h.Unavailable = append(h.Unavailable, results.LinkTotalMissing(results.LinkCRCData, false, "NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL: Not Supported"))
	w := &run.Environment.DuringRun[0]
	w.LinkErrors = []results.LinkErrorReading{
		{Time: at, Round: 1, Totals: map[results.LinkCounter]uint64{results.LinkCRCData: 5}},
		{Time: at.Add(time.Second), Totals: map[results.LinkCounter]uint64{results.LinkCRCData: 9}},
	}
	var b bytes.Buffer
	if err := run.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(`"time":"0001`)) {
		t.Error("a reading without a time wrote the zero time")
	}
	got, err := results.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Environment.HealthAfter, run.Environment.HealthAfter) || !reflect.DeepEqual(got.Environment.DuringRun, run.Environment.DuringRun) {
		t.Errorf("read back %+v\n%+v", got.Environment.HealthAfter[0], got.Environment.DuringRun[0])
	}
	if why, ok := got.Environment.HealthAfter[0].LinkTotalUnavailable(results.LinkCRCData, false); !ok || !strings.Contains(why, "Not Supported") {
		t.Errorf("CRC-data total unavailable: %q, %v", why, ok)
	}
	for _, c := range []results.LinkCounter{results.LinkCRCFlit, results.LinkCRC} {
		if _, ok := got.Environment.HealthAfter[0].LinkTotalUnavailable(c, c == results.LinkCRC); ok {
			t.Errorf("%s named unavailable", c)
		}
	}
	w.LinkErrors[1].Time = at.Add(-time.Second)
	w.LinkErrors[0].Round = -1
	err = run.Validate()
	if err == nil || !strings.Contains(err.Error(), "during_run[0].link_errors[1]: read before the reading above it") ||
		!strings.Contains(err.Error(), "link_errors[0]: round -1 is negative") {
		t.Errorf("Validate = %v", err)
	}
}
