package report_test

import (
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// The data-link totals of GPUs that read alike are one note, naming them:
// eight GPUs' zeros are one line, not eight of the same words (issue 39);
// a GPU that reads otherwise has its own.
func TestDataLinkTotalsSaidOnce(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8, Layout: resultstest.NVSwitch, NoSweep: true, Health: true})
	const words = " data-link totals after the run (NVML_FI_DEV_NVLINK_ERROR_DL_*, which DCGM 4.5.3 and later fail above 0 before Blackwell): "
	notes := func() []string {
		txt, _ := formats(t, report.LinkHealth(run), false)
		var out []string
		for _, l := range strings.Split(txt, "\n") {
			if strings.Contains(l, words) {
				out = append(out, strings.TrimSpace(l))
			}
		}
		return out
	}
	if got, want := notes(), []string{"GPUs 0–7'" + words + "replay 0, recovery 0, crc 0"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("eight GPUs' zeros: notes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	run.Environment.HealthAfter[3].LinkDL[results.LinkCRC] = 2
	want := []string{"GPUs 0–2 and 4–7'" + words + "replay 0, recovery 0, crc 0", "GPU 3's" + words + "replay 0, recovery 0, crc 2"}
	if got := notes(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("GPU 3 apart: notes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The buyer's report lists the GPU totals of the GPUs where a total other
// than ECC-data rose, or differs from its links' sum, and counts the rest
// (72 GPUs' five totals were 360 rows, 8 of an NVL72's 28 pages); the full
// report and show list every GPU's.
func TestGPUTotalsListedWhereTheyTell(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8, Layout: resultstest.NVSwitch, NoSweep: true, Health: true})
	const title = "GPU totals (nvmlDeviceGetFieldValues), beside the links' own counters summed"
	txt, _ := formats(t, report.Report(run), false)
	if want := title + ": 8 GPUs where no total rose: p2pbench show and report --full list them; GPUs 0–7' data-link totals"; !strings.Contains(txt, want) {
		t.Errorf("a healthy machine's report lacks %q", want)
	}
	full, _ := formats(t, report.LinkHealth(run), false)
	if n := strings.Count(full, "CRC-data "); n < 8 {
		t.Errorf("show's NVLink health gives %d GPUs' CRC-data totals, want 8:\n%s", n, full)
	}
	// GPU 3's CRC-data total rises by 7 where its links' counters do not.
	for i := range run.Environment.HealthAfter[3].LinkTotals {
		if i == results.LinkCRCData {
			run.Environment.HealthAfter[3].LinkTotals[i] += 7
		}
	}
	txt, _ = formats(t, report.Report(run), false)
	words := strings.Join(strings.Fields(txt), " ")
	for _, want := range []string{"3 CRC-data", "0 (differs)", "7 more GPUs where no total rose"} {
		if !strings.Contains(words, want) {
			t.Errorf("GPU 3's risen total: the report lacks %q", want)
		}
	}
	for _, bad := range []string{"2 CRC-data", "4 CRC-data"} {
		if strings.Contains(words, bad) {
			t.Errorf("GPU 3's risen total: the report lists another GPU's (%q)", bad)
		}
	}
	if t.Failed() {
		t.Log(txt)
	}
}
