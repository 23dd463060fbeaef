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
