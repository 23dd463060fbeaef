package verdict_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// healthy is a synthetic 2× H200 run with a healthy machine's health
// readings, lasting d.
func healthy(d time.Duration) *results.Run {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Health: true, Tests: []results.Test{results.CERead, results.CEWrite, results.H2D, results.LocalCopy}})
	// The readings keep their places in the run, now of d.
	span := run.End.Sub(run.Start)
	run.End = run.Start.Add(d)
	for i := range run.Environment.HealthAfter {
		run.Environment.HealthAfter[i].Time = run.End
	}
	for i := range run.Environment.DuringRun {
		for j := range run.Environment.DuringRun[i].LinkErrors {
			r := &run.Environment.DuringRun[i].LinkErrors[j]
			r.Time = run.Start.Add(time.Duration(float64(d) * r.Time.Sub(run.Start).Seconds() / span.Seconds()))
		}
	}
	return run
}

// rise adds n errors of counter c to GPU dev's NVLink link after the run,
// and to the GPU's total after it.
func rise(t *testing.T, run *results.Run, dev, link int, c results.LinkCounter, n uint64) {
	t.Helper()
	for i := range run.Environment.HealthAfter {
		h := &run.Environment.HealthAfter[i]
		for j := range h.Links {
			if h.Device == dev && h.Links[j].Link == link {
				h.Links[j].Errors[c] += n
				if _, ok := h.LinkTotals[c]; ok {
					h.LinkTotals[c] += n
				}
				return
			}
		}
	}
	t.Fatalf("no GPU %d NVLink %d", dev, link)
}

func check(v *results.Verdict, name string) results.Check {
	for _, c := range v.Checks {
		if c.Name == name {
			return c
		}
	}
	return results.Check{}
}

// TestCRCRatesAgainstDCGM holds CRC errors to DCGM's health watch polled
// at the end of the run: a GPU's links together at 100 a second or more
// over its minute fail, fewer warn, naming the GPU, with the rate over
// the minute and during the run, and the policy.
func TestCRCRatesAgainstDCGM(t *testing.T) {
	for _, tc := range []struct {
		counter results.LinkCounter
		perLink []uint64 // errors on links 0, 1, 2 of GPU 1 over 20 s
		want    results.Status
		rates   []string
	}{
		{results.LinkCRCData, []uint64{4000, 1500, 500}, results.StatusFail, []string{"6000 in DCGM's minute at the run's end, 100.0 a second", "300.0 a second during the run's 20.0 s"}},
		{results.LinkCRCData, []uint64{1000, 600, 400}, results.StatusWarn, []string{"2000 in DCGM's minute at the run's end, 33.3 a second", "100.0 a second during the run's 20.0 s"}},
		{results.LinkCRCFlit, []uint64{7500, 0, 0}, results.StatusFail, []string{"125.0 a second", "DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD"}},
		{results.LinkCRCFlit, []uint64{1, 0, 0}, results.StatusWarn, []string{"0.017 a second", "DCGM_FR_NVLINK_ERROR_THRESHOLD"}},
	} {
		run := healthy(20 * time.Second)
		for l, n := range tc.perLink {
			if n > 0 {
				rise(t, run, 1, l, tc.counter, n)
			}
		}
		v := judge(t, run, verdict.Model(run))
		it := item(v, "links", tc.want, "GPU 1 NVLinks")
		if v.Status != tc.want || it == nil || !strings.Contains(it.Message, "DCGM") || !strings.Contains(it.Message, fieldOf(tc.counter)) {
			t.Errorf("%s %v: %s\n%s", tc.counter, tc.perLink, v.Status, worst(v))
			continue
		}
		for _, r := range tc.rates {
			if !strings.Contains(it.Message, r) {
				t.Errorf("%s %v: %q lacks %q", tc.counter, tc.perLink, it.Message, r)
			}
		}
	}
}

// fieldOf names the GPU-total field of a counter.
func fieldOf(c results.LinkCounter) string {
	return map[results.LinkCounter]string{results.LinkCRCData: "NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
		results.LinkCRCFlit: "NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", results.LinkReplay: "NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
		results.LinkRecovery: "NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"}[c]
}

// TestReplayAndRecoveryFail: DCGM fails any replay or recovery error,
// whatever the rate.
func TestReplayAndRecoveryFail(t *testing.T) {
	for _, c := range []results.LinkCounter{results.LinkReplay, results.LinkRecovery} {
		run := healthy(time.Hour)
		rise(t, run, 0, 5, c, 1)
		v := judge(t, run, verdict.Model(run))
		if it := item(v, "links", results.StatusFail, "GPU 0 NVLinks"); it == nil || !strings.Contains(it.Message, "DCGM_FR_NVLINK_ERROR_CRITICAL") ||
			!strings.Contains(it.Message, "NVLink 5 (+1)") {
			t.Errorf("one %s error: %s\n%s", c, v.Status, worst(v))
		}
	}
}

// TestCorrectedErrorsAreANote: errors the links corrected (ECC-data), at
// the rates the 2× H100 showed, are one note, and the links pass.
func TestCorrectedErrorsAreANote(t *testing.T) {
	run := healthy(23 * time.Second)
	for l := 0; l < 18; l++ {
		rise(t, run, 0, l, results.LinkECCData, 300)
		rise(t, run, 1, l, results.LinkECCData, 1000)
	}
	v := judge(t, run, verdict.Model(run))
	c := check(v, "links")
	if c.Status != results.StatusPass || len(c.Items) != 1 || c.Items[0].Status != results.StatusNote ||
		!strings.Contains(c.Items[0].Message, "on 36 links") || !strings.Contains(c.Items[0].Message, "at most 43.5 a second") {
		t.Errorf("corrected errors: %+v", c)
	}
	if v.Status != results.StatusPass {
		t.Errorf("%s\n%s", v.Status, worst(v))
	}
}

// TestCRCErrorsOfUnknownRate warn: without the run's duration no rate can
// be held to DCGM's limit.
func TestCRCErrorsOfUnknownRate(t *testing.T) {
	run := healthy(time.Second)
	run.Start, run.End = time.Time{}, time.Time{}
	for _, hs := range [][]results.Health{run.Environment.HealthBefore, run.Environment.HealthAfter} {
		for i := range hs {
			hs[i].Time = time.Time{}
		}
	}
	rise(t, run, 1, 2, results.LinkCRCData, 5000)
	v := judge(t, run, verdict.Model(run))
	if it := item(v, "links", results.StatusWarn, "GPU 1 NVLinks"); it == nil || !strings.Contains(it.Message, "unknown duration") {
		t.Errorf("%s\n%s", v.Status, worst(v))
	}
}

// watched is a synthetic run of d with GPU 0's CRC-data total read every
// second (as the watch reads it between tests), rising by perSecond(t)
// errors in second t of the run; its first link counts the same.
func watched(t *testing.T, d time.Duration, perSecond func(sec int) uint64) *results.Run {
	run := healthy(d)
	w := &run.Environment.DuringRun[0]
	base := run.Environment.HealthBefore[0].LinkTotals[results.LinkCRCData]
	w.LinkErrors = nil
	var n uint64
	secs := int(d / time.Second)
	for s := 1; s < secs; s++ {
		n += perSecond(s - 1)
		w.LinkErrors = append(w.LinkErrors, results.LinkErrorReading{Time: run.Start.Add(time.Duration(s) * time.Second),
			Round: 1 + 5*s/secs, Totals: map[results.LinkCounter]uint64{results.LinkCRCData: base + n}})
	}
	n += perSecond(secs - 1)
	rise(t, run, 0, 0, results.LinkCRCData, n)
	return run
}

// TestSustainedCRCOverDCGMsMinute: a GPU whose CRC-data total rises at 120
// a second through a run of 70 s fails (DCGM's minute holds 7200); at 50 a
// second it warns; at 600 a second in the run's first 10 s only, which
// DCGM's minute at the end of the run does not hold, it warns, never
// fails, though the run's own rate is above the limit.
func TestSustainedCRCOverDCGMsMinute(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rate  func(int) uint64
		want  results.Status
		words []string
	}{
		{"120 a second", func(int) uint64 { return 120 }, results.StatusFail, []string{"7200 in DCGM's minute at the run's end, 120.0 a second", "at or above the 100 a second"}},
		{"50 a second", func(int) uint64 { return 50 }, results.StatusWarn, []string{"3000 in DCGM's minute at the run's end, 50.0 a second", "under the 100 a second", "no replay or recovery error", "; its copies between GPUs at 100% of expected (4 figures): to monitor"}},
		{"600 a second, first 10 s", func(s int) uint64 {
			if s < 10 {
				return 600
			}
			return 0
		}, results.StatusWarn, []string{"0 in DCGM's minute at the run's end", "85.7 a second during the run's 70.0 s"}},
	} {
		run := watched(t, 70*time.Second, tc.rate)
		v := judge(t, run, verdict.Model(run))
		it := item(v, "links", tc.want, "GPU 0 NVLinks")
		if v.Status != tc.want || it == nil {
			t.Errorf("%s: %s\n%s", tc.name, v.Status, worst(v))
			continue
		}
		for _, w := range tc.words {
			if !strings.Contains(it.Message, w) {
				t.Errorf("%s: %q lacks %q", tc.name, it.Message, w)
			}
		}
		details := strings.Join(it.Details, "\n")
		for _, w := range []string{"all within the run (71 readings)", "Held for a minute", "By round of the tests in one process:", "dcgmi diag", "DCGM 4.5.3"} {
			if !strings.Contains(details, w) {
				t.Errorf("%s: details lack %q:\n%s", tc.name, w, details)
			}
		}
	}
	// The trend: falling round by round.
	run := watched(t, 70*time.Second, func(s int) uint64 { return uint64(100 - s) })
	it := item(judge(t, run, verdict.Model(run)), "links", results.StatusWarn, "GPU 0 NVLinks")
	if it == nil || !strings.Contains(strings.Join(it.Details, "\n"), "(falling)") {
		t.Errorf("a falling rate: %+v", it)
	}
}

// TestTotalUnavailableIsSaid: where the driver answers the GPU's CRC-data
// total N/A, the link check says DCGM would see nothing, and judges the
// links' own counters.
func TestTotalUnavailableIsSaid(t *testing.T) {
	run := healthy(20 * time.Second)
	for _, hs := range [][]results.Health{run.Environment.HealthBefore, run.Environment.HealthAfter} {
		delete(hs[1].LinkTotals, results.LinkCRCData)
		hs[1].Unavailable = append(hs[1].Unavailable, results.LinkTotalMissing(results.LinkCRCData, false, "NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL: Not Supported"))
	}
	rise(t, run, 1, 4, results.LinkCRCData, 1200)
	v := judge(t, run, verdict.Model(run))
	it := item(v, "links", results.StatusWarn, "GPU 1 NVLinks")
	if it == nil || !strings.Contains(it.Message, "which this driver answers N/A") || !strings.Contains(it.Message, "it would see nothing") ||
		!strings.Contains(it.Message, "nvmlDeviceGetNvLinkErrorCounter") {
		t.Errorf("%s\n%s", v.Status, worst(v))
	}
	// Clean links with the total N/A: the summary says so.
	run = healthy(20 * time.Second)
	delete(run.Environment.HealthAfter[0].LinkTotals, results.LinkCRCData)
	run.Environment.HealthAfter[0].Unavailable = []string{results.LinkTotalMissing(results.LinkCRCData, false, "Not Supported")}
	if c := check(judge(t, run, verdict.Model(run)), "links"); c.Status != results.StatusPass || !strings.Contains(c.Summary, "GPU 0's CRC-data total, N/A on this driver") {
		t.Errorf("clean links, total N/A: %+v", c)
	}
}

// TestNotReadIsNotJudged: a run without health readings has its links,
// memory and processes not judged (never PASS); a run that judges nothing
// of the machine is NOT JUDGED.
func TestNotReadIsNotJudged(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Tests: []results.Test{results.CERead}})
	v := judge(t, run, verdict.Model(run))
	for _, name := range []string{"links", "memory", "processes"} {
		if c := check(v, name); c.Status != results.StatusNotJudged {
			t.Errorf("%s without readings: %+v", name, c)
		}
	}
	if c := check(v, "links"); !strings.Contains(c.Summary, "not read") {
		t.Errorf("links: %q", c.Summary)
	}
	// One GPU of two read: the links are not judged.
	half := healthy(time.Minute)
	half.Environment.HealthAfter = half.Environment.HealthAfter[:1]
	if c := check(judge(t, half, verdict.Model(half)), "links"); c.Status != results.StatusNotJudged || !strings.Contains(c.Summary, "the counters of GPU 1 not read") {
		t.Errorf("half read: %+v", c)
	}
	if v.Status != results.StatusPass || check(v, "bandwidth").Status != results.StatusPass {
		t.Errorf("its bandwidth judged: %s", v.Status)
	}
	// No figure the table covers (small transfers only) and no readings.
	small := resultstest.New(resultstest.Options{GPUs: 2, Tests: []results.Test{results.CEWrite}, SweepTests: []results.Test{results.CEWrite}})
	small.Figures = slicesDelete(small.Figures, func(f results.Figure) bool { return f.Size >= verdict.ModelMinSize })
	v = judge(t, small, verdict.Model(small))
	if v.Status != results.StatusNotJudged || verdict.Failing(v, true) {
		t.Errorf("nothing of the machine judged: %s", v.Status)
	}
}

func slicesDelete(fs []results.Figure, del func(results.Figure) bool) []results.Figure {
	var out []results.Figure
	for _, f := range fs {
		if !del(f) {
			out = append(out, f)
		}
	}
	return out
}

// TestPlantedFaults: the faults synth plants are each named by their
// check.
func TestPlantedFaults(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8, Faults: true, Health: true})
	v := judge(t, run, verdict.Model(run))
	for _, tc := range []struct {
		check   string
		st      results.Status
		subject string
	}{
		{"measurements", results.StatusFail, "sm_read"},
		{"measurements", results.StatusFail, "ce_write"},
		{"pairs", results.StatusFail, "7→0"},
		{"pairs", results.StatusFail, "0→7"},
		{"ipc", results.StatusWarn, "ipc_ce_read"},
		{"clocks", results.StatusWarn, "GPU 0"},
		{"noise", results.StatusWarn, "GPU 0→1"},
		{"driver", results.StatusNote, "enable_self"},
	} {
		if item(v, tc.check, tc.st, tc.subject) == nil {
			t.Errorf("no %s %s naming %q:\n%s", tc.check, tc.st, tc.subject, worst(v))
		}
	}
	// Healthy pairs are not named.
	for _, it := range check(v, "pairs").Items {
		if !strings.Contains(it.Subject, "7→0") && !strings.Contains(it.Subject, "0→7") {
			t.Errorf("a healthy pair named: %+v", it)
		}
	}
	// The noisy figure's GPU 0 had its clock fall: that is its cause.
	if it := item(v, "noise", results.StatusWarn, "GPU 0→1"); it != nil && !strings.Contains(it.Message, "GPU 0's clocks") {
		t.Errorf("noise blamed on %q", it.Message)
	}
}

func TestStateAndIncomplete(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true})
	run.Environment.StateEnd[1].TempC = run.Environment.StateStart[1].TempC + 20
	run.Environment.StateEnd[0].SMClockMHz = run.Environment.StateStart[0].SMClockMHz * 104 / 100 // within 5%
	run.Complete, run.Stopped = false, "interrupted"
	v := judge(t, run, verdict.Model(run))
	if c := check(v, "clocks"); c.Status != results.StatusWarn || len(c.Items) != 1 || c.Items[0].Subject != "GPU 1" || !strings.Contains(c.Items[0].Message, "+20 °C") {
		t.Errorf("clocks: %+v", c)
	}
	if item(v, "measurements", results.StatusFail, "run") == nil {
		t.Errorf("an incomplete run:\n%s", worst(v))
	}
}

// setModes puts the rounds of every figure of test in two groups.
func setModes(t *testing.T, run *results.Run, test results.Test, low, high float64) {
	t.Helper()
	if resultstest.SetModes(run, test, low, high) == 0 {
		t.Fatalf("no %s figure in rounds", test)
	}
}

// TestRoundsDisagree: rounds that only scatter say nothing; a test known
// to keep modes is a note; rounds in two groups without a cause in the
// readings are a note naming the paths; with a cause (another program on
// the figures' GPUs) they warn, one line for the cause.
func TestRoundsDisagree(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Rounds: 5, Health: true})
	v := judge(t, run, verdict.Model(run))
	if c := check(v, "noise"); c.Status != results.StatusPass || len(c.Items) != 0 {
		t.Errorf("rounds that scatter by 1%%: %+v", c)
	}
	setModes(t, run, results.LatCopyDevice, 12100, 20300)
	setModes(t, run, results.LatPingPong, 900, 1200)
	v = judge(t, run, verdict.Model(run))
	c := check(v, "noise")
	known, plain := item(v, "noise", results.StatusNote, "lat_copy_device"), item(v, "noise", results.StatusNote, "GPU 0→1")
	if c.Status != results.StatusPass || known == nil || !strings.Contains(known.Message, "12100, 20300, 12100, 20300, 12100") ||
		plain == nil || !strings.Contains(plain.Message, "lat_pingpong") || !strings.Contains(plain.Message, "name no cause") {
		t.Errorf("noise: %+v", c)
	}
	// Another program's process beside the ping-pong figures: a cause.
	run.Environment.OtherProcesses = []results.Process{{Device: 1, PID: 4242, Name: "python"}}
	for i := range run.Figures {
		if f := &run.Figures[i]; f.Test == results.LatPingPong {
			f.OtherProcesses = []int{4242}
		}
	}
	v = judge(t, run, verdict.Model(run))
	if it := item(v, "noise", results.StatusNote, "GPU"); it == nil || !strings.Contains(it.Message, "pids [4242]") || !strings.Contains(it.Message, "none of them is judged") {
		t.Errorf("a cause for figures nothing judges is a note:\n%+v", check(v, "noise"))
	}
	if item(v, "processes", results.StatusWarn, "GPU 1") == nil {
		t.Errorf("the process is not named:\n%s", worst(v))
	}
}

// TestNoisyJudgedFigureWithACauseWarns: a judged large figure that varied
// while its GPU's clocks were held down warns, once for the cause.
func TestNoisyJudgedFigureWithACauseWarns(t *testing.T) {
	run := healthy(time.Minute)
	run.Environment.DuringRun[0].Throttle[results.ThrottleHWSlowdown] = 3
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Test == results.CERead || f.Test == results.CEWrite {
			for j := range f.Samples {
				f.Samples[j] *= 1 + 0.05*float64(j%3-1)
			}
			f.Stats = figstats.ComputeStats(f.Samples)
		}
	}
	v := judge(t, run, verdict.Model(run))
	c := check(v, "noise")
	if c.Status != results.StatusWarn || len(c.Items) != 1 || !strings.Contains(c.Items[0].Message, "hw_slowdown") {
		t.Errorf("noise: %+v", c)
	}
}

// slower is a copy of run with the samples of every figure of tests
// multiplied by factor (their stats recomputed).
func slower(run *results.Run, factor float64, tests ...results.Test) *results.Run {
	out := *run
	out.Figures = append([]results.Figure(nil), run.Figures...)
	for i := range out.Figures {
		f := &out.Figures[i]
		if !slices.Contains(tests, f.Test) || len(f.Samples) == 0 {
			continue
		}
		f.Samples = slices.Clone(f.Samples)
		for j := range f.Samples {
			f.Samples[j] *= factor
		}
		f.Stats = figstats.ComputeRoundStats(f.Samples, f.Rounds)
	}
	return &out
}

// TestLatencyHeldOut holds the latency table to runs it was not built
// from: the last 2× H200 set and the last two 1× H200 sets (testdata/reference,
// left out of the table's sources) and the 2× H100 evidence (testdata/)
// pass their latency and atomics; a copy
// of each with the chase, the ping-pong (in one process and across) or the
// atomic latency 10% slower warns at least, naming the figure.
func TestLatencyHeldOut(t *testing.T) {
	for _, tc := range []struct {
		file  string
		tests [][]results.Test
	}{
		{reference + "2026-11-26-ag/all1.json.gz", [][]results.Test{{results.LatChase}, {results.IPCLatChase}, {results.LatPingPong},
			{results.IPCLatPingPong}, {results.AtomicLatency}}},
		{"../testdata/reference/h200x1/2026-11-26/refactor/all1.json.gz", [][]results.Test{{results.LatChase}, {results.IPCLatChase}}},
		// A later 1× H200: its local atomics no two other machines measured
		// alone as its build did: not judged.
		{"../testdata/reference/h200x1/2026-11-29/all1.json.gz", [][]results.Test{{results.LatChase}, {results.IPCLatChase}}},
		// Its ping-pong and atomics no two other machines measured as its
		// build did: not judged.
		{"testdata/h100x2-2026-11-25/all3.json.gz", [][]results.Test{{results.LatChase}, {results.IPCLatChase}}},
	} {
		run := shared(t, tc.file)
		v := judge(t, run, verdict.Model(run))
		lat := check(v, "latency")
		if lat.Status != results.StatusPass {
			t.Errorf("%s: latency %s: %s\n%s", tc.file, lat.Status, lat.Summary, worst(v))
		}
		for _, tests := range tc.tests {
			v := judge(t, slower(run, 1.10, tests...), verdict.Model(run))
			c := check(v, "latency")
			named := false
			for _, it := range c.Items {
				named = named || strings.HasPrefix(it.Subject, string(tests[0])+" ") && (it.Status == results.StatusWarn || it.Status == results.StatusFail)
			}
			if !named {
				t.Errorf("%s with %s 10%% slower: latency %s (%s), no warning naming it", tc.file, tests[0], c.Status, c.Summary)
			}
		}
	}
}

// TestSmallCopyModes: small copies move between modes of their
// measurement (queued behind others, a pull waits): a real 2× H100 run
// whose back-to-back 4-byte pull read 13.3 µs in three of five rounds
// (1.8× the typical, where its other rounds read 7–9) is a note naming
// it, and its latency passes; the same figures 2.5 times slower, beyond
// any mode healthy machines showed, warn, and never fail.
func TestSmallCopyModes(t *testing.T) {
	run := shared(t, "../testdata/reference/h100x2/2026-11-25-d/all5.json.gz")
	v := judge(t, run, verdict.Model(run))
	if c := check(v, "latency"); c.Status != results.StatusPass || item(v, "latency", results.StatusNote, "lat_copy_b2b read 0→1 4 B") == nil {
		t.Errorf("the slower mode: latency %s (%s)\n%s", c.Status, c.Summary, worst(v))
	}
	it := item(v, "latency", results.StatusNote, "lat_copy_b2b read 0→1 4 B")
	if it != nil && !strings.Contains(it.Message, "a slower mode of the measurement") {
		t.Errorf("the note: %q", it.Message)
	}
	v = judge(t, slower(run, 2.5, results.LatCopyB2B, results.LatCopyDevice), verdict.Model(run))
	c := check(v, "latency")
	if c.Status != results.StatusWarn || item(v, "latency", results.StatusWarn, "lat_copy_b2b read 0→1 4 B") == nil ||
		item(v, "latency", results.StatusWarn, "lat_copy_device") == nil {
		t.Errorf("small copies 2.5× slower: latency %s (%s)", c.Status, c.Summary)
	}
	for _, it := range c.Items {
		if it.Status == results.StatusFail {
			t.Errorf("a small copy failed: %s: %s", it.Subject, it.Message)
		}
	}
}

// A run that records no topology (an import: nvbandwidth prints none) has
// its figures between GPUs left unjudged by the table, which places a pair
// by its links; the bandwidth check says how many, beside a PASS of the
// host figures or in place of one (issue 39: "6 figures judged: 6 PASS"
// said nothing of the 32 between the GPUs).
func TestBandwidthSaysWhatNoTopologyLeftOut(t *testing.T) {
	for _, tc := range []struct {
		tests      []results.Test
		noTopology bool
		status     results.Status
		says       bool
	}{
		{[]results.Test{results.CERead, results.H2D}, true, results.StatusPass, true},
		{[]results.Test{results.CERead}, true, results.StatusNotJudged, true},
		{[]results.Test{results.CERead, results.H2D}, false, results.StatusPass, false},
	} {
		run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Tests: tc.tests})
		if tc.noTopology {
			run.Topology = nil
		}
		v, err := verdict.Judge(run, verdict.Model(run))
		if err != nil {
			t.Fatal(err)
		}
		c := check(v, "bandwidth")
		if c.Status != tc.status || strings.Contains(c.Summary, "2 figures between GPUs not judged") != tc.says ||
			tc.says && len([]rune(c.Short)) > verdict.MaxShort {
			t.Errorf("%v, no topology %v: %s %q (%q)", tc.tests, tc.noTopology, c.Status, c.Summary, c.Short)
		}
	}
}
