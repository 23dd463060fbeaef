package plot_test

import (
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
)

// The size chart gives n½ only to a curve that reaches below half its
// peak: on the 2× H200 the bulk SM kernel's curve starts at 64 MiB near its
// peak and has none, the copy engine's has one (issue 39).
func TestSizeChartHalfPeak(t *testing.T) {
	run, err := results.Read("../testdata/reference/h200x2/2026-11-26-ag/all1.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	var bulk, ce int
	for _, s := range shown(t, plot.Charts(run), "size") {
		switch {
		case strings.HasPrefix(s, "SM kernel bulk"):
			bulk++
			if strings.Contains(s, "n½") {
				t.Errorf("the bulk kernel's curve has an n½: %q", s)
			}
		case strings.HasPrefix(s, "copy engine "):
			ce++
			if !strings.Contains(s, "n½ = ") {
				t.Errorf("the copy engine's curve has no n½: %q", s)
			}
		}
	}
	if bulk != 4 || ce != 4 {
		t.Errorf("%d bulk and %d copy engine curves, want 4 each (2 pairs, read and write)", bulk, ce)
	}
}
