package verdict_test

import (
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// healthy is a synthetic 2× H200 run with a healthy machine's health
// readings, lasting d.
func healthy(d time.Duration) *results.Run {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Health: true, Tests: []results.Test{results.CERead, results.CEWrite, results.H2D, results.LocalCopy}})
	run.End = run.Start.Add(d)
	return run
}

// rise adds n errors of counter c to GPU dev's NVLink link after the run.
func rise(t *testing.T, run *results.Run, dev, link int, c results.LinkCounter, n uint64) {
	t.Helper()
	for i := range run.Environment.HealthAfter {
		h := &run.Environment.HealthAfter[i]
		for j := range h.Links {
			if h.Device == dev && h.Links[j].Link == link {
				h.Links[j].Errors[c] += n
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

// TestCRCRatesAgainstDCGM holds CRC errors to DCGM's health watch: a GPU's
// links together at 100 a second or more fail, fewer warn, naming the GPU
// and its link with the most, with the rate and the policy.
func TestCRCRatesAgainstDCGM(t *testing.T) {
	for _, tc := range []struct {
		counter results.LinkCounter
		perLink []uint64 // errors on links 0, 1, 2 of GPU 1 over 20 s
		want    results.Status
		rate    string
	}{
		{results.LinkCRCData, []uint64{1000, 600, 400}, results.StatusFail, "100.0 a second for the GPU"},
		{results.LinkCRCData, []uint64{300, 60, 40}, results.StatusWarn, "20.0 a second for the GPU"},
		{results.LinkCRCFlit, []uint64{2500, 0, 0}, results.StatusFail, "125.0 a second"},
		{results.LinkCRCFlit, []uint64{1, 0, 0}, results.StatusWarn, "0.1 a second"},
	} {
		run := healthy(20 * time.Second)
		for l, n := range tc.perLink {
			if n > 0 {
				rise(t, run, 1, l, tc.counter, n)
			}
		}
		v := judge(t, run, verdict.Model(run))
		it := item(v, "links", tc.want, "GPU 1 NVLink 0")
		if v.Status != tc.want || it == nil || !strings.Contains(it.Message, tc.rate) || !strings.Contains(it.Message, "DCGM") {
			t.Errorf("%s %v: %s\n%s", tc.counter, tc.perLink, v.Status, worst(v))
		}
	}
}

// TestReplayAndRecoveryFail: DCGM fails any replay or recovery error,
// whatever the rate.
func TestReplayAndRecoveryFail(t *testing.T) {
	for _, c := range []results.LinkCounter{results.LinkReplay, results.LinkRecovery} {
		run := healthy(time.Hour)
		rise(t, run, 0, 5, c, 1)
		v := judge(t, run, verdict.Model(run))
		if it := item(v, "links", results.StatusFail, "GPU 0 NVLink 5"); it == nil || !strings.Contains(it.Message, "DCGM_FR_NVLINK_ERROR_CRITICAL") {
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
	rise(t, run, 1, 2, results.LinkCRCData, 5000)
	v := judge(t, run, verdict.Model(run))
	if it := item(v, "links", results.StatusWarn, "GPU 1 NVLink 2"); it == nil || !strings.Contains(it.Message, "unknown duration") {
		t.Errorf("%s\n%s", v.Status, worst(v))
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
			f.Stats = results.ComputeStats(f.Samples)
		}
	}
	v := judge(t, run, verdict.Model(run))
	c := check(v, "noise")
	if c.Status != results.StatusWarn || len(c.Items) != 1 || !strings.Contains(c.Items[0].Message, "hw_slowdown") {
		t.Errorf("noise: %+v", c)
	}
}
