package verdict_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// The hold-out (testdata/README.md): real runs on machines the table's
// sources never measured.

func evidence(t *testing.T, machine string, i int) *results.Verdict {
	t.Helper()
	run := shared(t, fmt.Sprintf("testdata/%s-2026-11-25/all%d.json.gz", machine, i))
	return judge(t, run, verdict.Model(run))
}

// TestEvidence2xH100 checks what the verdict says of the five 2× H100
// runs: the links as DCGM's health watch, polled at each run's end, would
// judge their counters (run 1's CRC-data, 196 and 208 a second per GPU
// during its 23.6 s, 77 and 82 a second over DCGM's minute, warn, as do
// run 2's; runs 3–5, where only corrected ECC-data counts rose, pass with
// a note);
// no bandwidth figure fails against the table; the copies across processes
// that fall short of one process warn, naming the arrangement, and fail
// nothing.
func TestEvidence2xH100(t *testing.T) {
	for i := 1; i <= 5; i++ {
		v := evidence(t, "h100x2", i)
		links := check(v, "links")
		switch i {
		case 1:
			it0, it1 := item(v, "links", results.StatusWarn, "GPU 0 NVLinks"), item(v, "links", results.StatusWarn, "GPU 1 NVLinks")
			if links.Status != results.StatusWarn || it0 == nil || it1 == nil ||
				!strings.Contains(it0.Message, "CRC-data rose by 4617 on 18 of its 18 NVLinks") ||
				!strings.Contains(it0.Message, "4617 in DCGM's minute at the run's end, 77.0 a second") || !strings.Contains(it0.Message, "195.6 a second during the run's 23.6 s") ||
				!strings.Contains(it1.Message, "81.8 a second") || !strings.Contains(it0.Message, "DCGM_FR_NVLINK_ERROR_THRESHOLD") ||
				!strings.Contains(it0.Message, "no replay or recovery error") || !strings.Contains(strings.Join(it0.Details, " "), "would make DCGM's health watch FAIL") {
				t.Errorf("run 1 links: %+v", links)
			}
		case 2:
			it := item(v, "links", results.StatusWarn, "GPU 0 NVLinks")
			if links.Status != results.StatusWarn || it == nil || !strings.Contains(it.Message, "93.5 a second during the run") || !strings.Contains(it.Message, "DCGM_FR_NVLINK_ERROR_THRESHOLD") {
				t.Errorf("run 2 links: %+v", links)
			}
		default:
			if links.Status != results.StatusPass || len(links.Items) != 1 || links.Items[0].Status != results.StatusNote ||
				!strings.Contains(links.Items[0].Message, "ECC-data") || !strings.Contains(links.Summary, "36 NVLinks read") {
				t.Errorf("run %d links: %+v", i, links)
			}
		}
		if c := check(v, "bandwidth"); c.Status != results.StatusPass || !strings.Contains(c.Summary, "72 figures judged: 72 PASS") {
			t.Errorf("run %d bandwidth: %+v", i, c)
		}
		ipc := check(v, "ipc")
		if ipc.Status != results.StatusWarn {
			t.Errorf("run %d ipc: %+v", i, ipc)
		}
		for _, it := range ipc.Items {
			if it.Status == results.StatusFail || !strings.Contains(it.Message, "IPC handles") || !strings.Contains(it.Message, "opened in the issuing process's") {
				t.Errorf("run %d ipc item: %+v", i, it)
			}
		}
		// The legacy-handle copies both ways pushing, a quarter short: the
		// counters say fewer bytes reached the links.
		if it := item(v, "ipc", results.StatusWarn, "ipc_ce_bidir write own context, legacy handles"); it == nil ||
			!strings.Contains(it.Message, "fewer bytes reached the links") {
			t.Errorf("run %d: no warning of the pushing arrangement:\n%s", i, worst(v))
		}
		for _, c := range v.Checks {
			if c.Status == results.StatusFail && c.Name != "links" && c.Name != "measurements" {
				t.Errorf("run %d: %s fails: %s", i, c.Name, c.Summary)
			}
		}
		// The six ce_read figures that could not be measured fail the run's
		// measurements, not the machine.
		if c := check(v, "measurements"); c.Status != results.StatusFail || !strings.Contains(c.Summary, "6 figures could not be measured") {
			t.Errorf("run %d measurements: %+v", i, c)
		}
	}
}

// TestEvidence1xH100 passes the three 1× H100 runs: their host copies vary,
// and nothing in their readings names a cause, so that is a note.
func TestEvidence1xH100(t *testing.T) {
	for i := 1; i <= 3; i++ {
		v := evidence(t, "h100x1", i)
		if v.Status != results.StatusPass || worst(v) != "" {
			t.Errorf("run %d: %s\n%s", i, v.Status, worst(v))
		}
		if it := item(v, "noise", results.StatusNote, "host→GPU 0"); it == nil || !strings.Contains(it.Message, "name no cause") {
			t.Errorf("run %d: no note of the host paths' noise: %+v", i, check(v, "noise"))
		}
		if c := check(v, "bandwidth"); c.Status != results.StatusPass || !strings.Contains(c.Summary, "3 figures judged: 3 PASS") {
			t.Errorf("run %d bandwidth: %+v", i, c)
		}
	}
}

// TestIPCHeldToOneProcess: a copy across processes short of the same copy
// in one process warns, naming the arrangement; where the copy in one
// process fails the table too, it fails; within the noise it passes.
func TestIPCHeldToOneProcess(t *testing.T) {
	mk := func(ipcScale, ceScale float64) *results.Verdict {
		run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Health: true, Tests: []results.Test{results.CERead, results.IPCCERead}})
		for i := range run.Figures {
			f := &run.Figures[i]
			scale := map[results.Test]float64{results.IPCCERead: ipcScale, results.CERead: ceScale}[f.Test]
			if f.Src == 0 && f.Dst == 1 && scale != 0 {
				for j := range f.Samples {
					f.Samples[j] *= scale
				}
				f.Stats = figstats.ComputeStats(f.Samples)
			}
		}
		return judge(t, run, verdict.Model(run))
	}
	v := mk(1, 1)
	if c := check(v, "ipc"); c.Status != results.StatusPass || len(c.Items) != 0 {
		t.Errorf("copies across processes like those in one process: %+v", c)
	}
	v = mk(0.8, 1)
	it := item(v, "ipc", results.StatusWarn, "ipc_ce_read read own context, legacy handles")
	// 20% less, as the medians of the scaled and unscaled draws have it.
	worse := regexp.MustCompile(`(\d+\.\d)% worse`)
	if v.Status != results.StatusWarn || it == nil || !nearPct(worse.FindStringSubmatch(it.Message), 20, 1) || check(v, "bandwidth").Status != results.StatusPass {
		t.Errorf("20%% short across processes: %s\n%s", v.Status, worst(v))
	}
	v = mk(0.24, 0.3)
	if item(v, "ipc", results.StatusFail, "ipc_ce_read") == nil || item(v, "bandwidth", results.StatusFail, "ce_read read 0→1") == nil {
		t.Errorf("short in one process too: %s\n%s", v.Status, worst(v))
	}
}

// nearPct says whether m (a match whose first group is a percentage) holds
// a figure within tol of want.
func nearPct(m []string, want, tol float64) bool {
	if len(m) < 2 {
		return false
	}
	got, err := strconv.ParseFloat(m[1], 64)
	return err == nil && math.Abs(got-want) <= tol
}
