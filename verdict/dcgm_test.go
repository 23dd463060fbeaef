package verdict_test

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// dcgmAnswer is what DCGM's health watch, polled at the end of a run,
// answers of one GPU's NVLink error counters, computed here from the
// run's readings alone (NVIDIA/DCGM modules/health/DcgmHealthWatch.cpp,
// MonitorNVLink4Fields): per counter, the first and the last sample within
// the minute before the poll, their difference; replay or recovery above
// 0 fails (DCGM_LIMIT_MAX_NVLINK_ERROR), CRC flit or data at 100 a second
// or more over the minute fails (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR), any
// rise below warns. A sample is the GPU's total where the run read it
// before and after, else the sum of its links' counters (which the run
// reads before and after only). It returns the status and the CRC-data
// rate over the minute.
func dcgmAnswer(run *results.Run, dev int) (results.Status, float64) {
	var before, after *results.Health
	for i := range run.Environment.HealthBefore {
		if h := &run.Environment.HealthBefore[i]; h.Device == dev {
			before = h
		}
	}
	for i := range run.Environment.HealthAfter {
		if h := &run.Environment.HealthAfter[i]; h.Device == dev {
			after = h
		}
	}
	type sample struct {
		t time.Time
		v uint64
	}
	value := func(h *results.Health, c results.LinkCounter, total bool) uint64 {
		if total {
			return h.LinkTotals[c]
		}
		var n uint64
		for _, l := range h.Links {
			n += l.Errors[c]
		}
		return n
	}
	from, to, _ := run.HealthWindow(dev)
	status, crcRate := results.StatusPass, 0.0
	for _, c := range []results.LinkCounter{results.LinkReplay, results.LinkRecovery, results.LinkCRCFlit, results.LinkCRCData} {
		_, tb := before.LinkTotals[c]
		_, ta := after.LinkTotals[c]
		total := tb && ta
		samples := []sample{{from, value(before, c, total)}}
		if total {
			for _, w := range run.Environment.DuringRun {
				for _, r := range w.LinkErrors {
					if v, ok := r.Totals[c]; ok && w.Device == dev {
						samples = append(samples, sample{r.Time, v})
					}
				}
			}
		}
		samples = append(samples, sample{to, value(after, c, total)})
		start := to.Add(-time.Minute)
		first := samples[len(samples)-1]
		for _, s := range samples {
			if !s.t.Before(start) {
				first = s
				break
			}
		}
		rise := samples[len(samples)-1].v - first.v
		rate := float64(rise) / 60
		switch {
		case (c == results.LinkReplay || c == results.LinkRecovery) && rise > 0, rate >= 100:
			status = results.StatusFail
		case rise > 0 && status == results.StatusPass:
			status = results.StatusWarn
		}
		if c == results.LinkCRCData {
			crcRate = rate
		}
	}
	return status, crcRate
}

// minuteRate finds the CRC-data rate over DCGM's minute in a link check's
// warning.
var minuteRate = regexp.MustCompile(`in DCGM's minute at the run's end, ([0-9.]+) a second, under the 100 a second`)

// TestRealRunsAsDCGMJudges re-judges every real run of two GPUs or more
// in testdata/reference and the hold-out (testdata/): each GPU's link
// check gives the answer DCGM's health watch gives on the same readings
// (dcgmAnswer, computed apart from the verdict's code), so that no run
// fails on CRC errors that stay under 100 a second over DCGM's minute,
// and each such GPU warns, with its rate, the policy and no replay or
// recovery error; a run without readings has its links not judged, never
// PASS. docs/findings.md tabulates the same runs' verdicts before and after.
func TestRealRunsAsDCGMJudges(t *testing.T) {
	// Parallel: it runs once the tests that read committed runs for the
	// binary (resultstest.ReadShared) have, and takes theirs.
	t.Parallel()
	var files []string
	for _, root := range []string{"../testdata/reference", "testdata"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz")) {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	runs, gpus, warned, fromOthers := 0, 0, 0, 0
	for _, p := range files {
		// A run another test read is that test's (resultstest.Shared), judged
		// as a shallow copy; the others are read here and let go.
		run, err := resultstest.Shared(p), error(nil)
		if run == nil {
			run, err = results.Read(p)
		} else {
			c := *run
			run = &c
			fromOthers++
		}
		if err != nil || run.Imported != nil || run.Simulated || len(run.Environment.Devices) < 2 {
			continue // another tool's output, an import, or one GPU
		}
		runs++
		v := judge(t, run, verdict.Model(run))
		links := check(v, "links")
		if len(run.Environment.HealthAfter) == 0 {
			if links.Status != results.StatusNotJudged {
				t.Errorf("%s: links without readings: %s", p, links.Status)
			}
			continue
		}
		for _, d := range run.Environment.Devices {
			want, rate := dcgmAnswer(run, d.Index)
			got := results.StatusPass
			var it *results.CheckItem
			for i, x := range links.Items {
				if x.Subject == fmt.Sprintf("GPU %d NVLinks", d.Index) && (x.Status == results.StatusWarn || x.Status == results.StatusFail) {
					got, it = x.Status, &links.Items[i]
				}
			}
			gpus++
			if got != want {
				t.Errorf("%s GPU %d: the link check says %s, DCGM's health watch %s (CRC-data %.1f a second over its minute)", p, d.Index, got, want, rate)
				continue
			}
			if got == results.StatusWarn && rate > 0 {
				warned++
				m := minuteRate.FindStringSubmatch(it.Message)
				if m == nil {
					t.Errorf("%s GPU %d: %q gives no rate over DCGM's minute", p, d.Index, it.Message)
				} else if said, _ := strconv.ParseFloat(m[1], 64); math.Abs(said-rate) > 0.01*rate+0.05 { // said in 3 figures
					t.Errorf("%s GPU %d: the link check says %s a second over DCGM's minute, the readings give %.3f", p, d.Index, m[1], rate)
				}
				for _, w := range []string{"DCGM_FR_NVLINK_ERROR_THRESHOLD", "no replay or recovery error", "to monitor"} {
					if !strings.Contains(it.Message, w) {
						t.Errorf("%s GPU %d: %q lacks %q", p, d.Index, it.Message, w)
					}
				}
			}
		}
	}
	t.Logf("%d real runs of two GPUs or more, %d GPUs with readings, %d warned on CRC-data; %d of %d files read by other tests", runs, gpus, warned, fromOthers, len(files))
	if runs < 100 {
		t.Errorf("only %d real runs of two GPUs found", runs)
	}
}
