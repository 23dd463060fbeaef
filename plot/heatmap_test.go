package plot

import (
	"image/color"
	"math"
	"regexp"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// The matrices across processes are listed only for the tests the run has,
// titled as the catalogue titles them.
func TestIPCHeatmapSpecs(t *testing.T) {
	run := &results.Run{Figures: []results.Figure{{Test: results.IPCCERead, Src: 0, Dst: 1}}}
	got := map[results.Test]string{}
	for _, s := range heatmapSpecs(newIndex(run)) {
		got[s.test] = s.title
	}
	if got[results.IPCCERead] != results.IPCCERead.Title() {
		t.Errorf("%s titled %q", results.IPCCERead, got[results.IPCCERead])
	}
	if _, ok := got[results.IPCSMWrite]; ok {
		t.Errorf("a matrix of %s, which the run does not have", results.IPCSMWrite)
	}
}

// A pair 5% below its link class stands out in a heatmap's colour, judged
// (the scale from the pass-at figure to the link limit) or not (from 85%
// of the median), while the others, within their noise, look alike
// (issue 39: the scale ran 210–390 where every cell read 392–394).
func TestHeatmapShowsAWeakPair(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8, Layout: resultstest.NVSwitch, NoSweep: true, Health: true,
		SlowPairs: []resultstest.SlowPair{{A: 2, B: 5, Percent: 5}}})
	dist := func(a, b color.RGBA) float64 {
		return math.Sqrt(sq(float64(a.R)-float64(b.R)) + sq(float64(a.G)-float64(b.G)) + sq(float64(a.B)-float64(b.B)))
	}
	for _, judged := range []bool{false, true} {
		if judged {
			v, err := verdict.Judge(run, verdict.Model(run))
			if err != nil {
				t.Fatal(err)
			}
			run.Verdict = v
		}
		ix := newIndex(run)
		var m *heatmap
		for _, h := range heatmaps(ix) {
			if h.name == "heatmap_ce_read" {
				m = h
			}
		}
		if m == nil {
			t.Fatal("no heatmap of ce_read")
		}
		if judged != (m.scaleNote != "") {
			t.Errorf("judged %v: scale note %q", judged, m.scaleNote)
		}
		if judged && !scaleNoteRE.MatchString(m.scaleNote) {
			t.Errorf("scale note %q: want its ends rounded as the cells are", m.scaleNote)
		}
		slow := m.color(m.cells[2][5].value)
		nearest, widest := math.Inf(1), 0.0
		for r, row := range m.cells {
			for c, cl := range row {
				if cl.kind != cellValue || r == 2 && c == 5 || r == 5 && c == 2 {
					continue
				}
				nearest = min(nearest, dist(slow, m.color(cl.value)))
				widest = max(widest, dist(m.color(m.cells[0][1].value), m.color(cl.value)))
			}
		}
		if nearest < 40 || widest > 20 {
			t.Errorf("judged %v: the weak pair's colour %v is %.0f from the nearest other cell's, the others %.0f apart (scale %.0f–%.0f)",
				judged, slow, nearest, widest, m.lo, m.hi)
		}
	}
}

// scaleNoteRE: a judged heatmap's scale note with its ends as a cell shows
// them (393, 37.9), never a product's float tail (354.1050000000001).
var scaleNoteRE = regexp.MustCompile(`^colour from \d+(\.\d{1,2})? GB/s \(the least to pass\) to \d+(\.\d{1,2})? GB/s \((expected|the best pair)\)$`)

func sq(x float64) float64 { return x * x }
