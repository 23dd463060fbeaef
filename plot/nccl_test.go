package plot_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/ingest"
	"github.com/p2pbench/p2pbench/plot"
)

// An nccl-tests chart draws a line per curve it shows: on 2 ranks busbw =
// algbw, so a line each for out of place and in place, whose legend names
// both bandwidths (issue 39: four entries, two lines drawn over each
// other).
func TestNCCLChartHasNoDuplicateSeries(t *testing.T) {
	for file, want := range map[string][]string{
		"nccl-tests-2.19-sendrecv-h200x2.txt":        {"busbw = algbw, out of place", "busbw = algbw, in place"},
		"nccl-tests-all_reduce_perf-2023-h200x2.txt": {"busbw = algbw, out of place", "busbw = algbw, in place"},
	} {
		run, err := ingest.Import("../ingest/testdata/"+file, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		figs := plot.Charts(run)
		i := slices.IndexFunc(figs, func(c plot.Chart) bool { return strings.HasPrefix(c.Name, "nccl_") })
		if i < 0 {
			t.Fatalf("%s: no nccl chart", file)
		}
		var legend []string
		for _, s := range shown(t, figs, figs[i].Name) {
			if strings.Contains(s, "busbw") || strings.Contains(s, "algbw") {
				legend = append(legend, s)
			}
		}
		if !slices.Equal(legend[1:], want) { // the first is the subtitle
			t.Errorf("%s: legend %q, want %q", file, legend, want)
		}
		// nccl-tests prints one value per size, its mean over the timed
		// iterations: no median of runs.
		if sub := legend[0]; strings.Contains(sub, "median") || !strings.Contains(sub, "mean over nccl-tests' timed iterations") {
			t.Errorf("%s: subtitle %q", file, sub)
		}
	}
}

// ParseFormats reads a list of image formats, and refuses an unknown one
// or none.
func TestParseFormats(t *testing.T) {
	if got, err := plot.ParseFormats(" PNG,,svg "); err != nil || strings.Join(got, ",") != "png,svg" {
		t.Errorf("got %q, %v", got, err)
	}
	for _, bad := range []string{"gif", ", "} {
		if _, err := plot.ParseFormats(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
