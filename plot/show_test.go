package plot_test

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/plot"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

var svgText = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)

// shown returns the texts a chart shows (titles, axis labels, ticks,
// legend entries, value labels), read from its SVG.
func shown(t *testing.T, figs []plot.Chart, name string) []string {
	t.Helper()
	i := slices.IndexFunc(figs, func(f plot.Chart) bool { return f.Name == name })
	if i < 0 {
		t.Fatalf("no chart %s", name)
	}
	var b bytes.Buffer
	if err := figs[i].WriteTo(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range svgText.FindAllStringSubmatch(b.String(), -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

func lacks(shown []string, want ...string) []string {
	var missing []string
	for _, w := range want {
		if !slices.Contains(shown, w) {
			missing = append(missing, w)
		}
	}
	return missing
}

// TestChartsShowTheRun reads what the charts of a run show: each heatmap
// cell is its pair's median, the size curves have a series per engine and
// pair, the latency and atomics charts a box or bar per pair and operation,
// and every chart of a simulated run says so.
func TestChartsShowTheRun(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2})
	figs := plot.Charts(run)

	// Heatmap: title, axes, and every cell the median of its figure.
	heat := shown(t, figs, "heatmap_ce_read")
	want := []string{"Copy engine read (pull), GB/s", "source GPU", "destination GPU", "0", "1", "GB/s"}
	cells := 0
	for _, f := range run.Figures {
		if f.Test == results.CERead && f.Size == 512<<20 && f.Stats != nil {
			want = append(want, fmt.Sprintf("%.0f", f.Stats.Median))
			cells++
		}
	}
	if cells != 2 {
		t.Fatalf("%d ce_read figures at 512 MiB, want 2", cells)
	}
	if m := lacks(heat, want...); len(m) > 0 {
		t.Errorf("heatmap_ce_read does not show %q; it shows %q", m, heat)
	}

	// Size curves, read and write side by side: one series per engine and
	// ordered pair in each, a log size axis, and the link's limit marked.
	size := shown(t, figs, "size")
	var series []string
	for _, s := range size {
		if strings.Contains(s, ", n½ = ") {
			series = append(series, s)
		}
	}
	for _, label := range []string{"copy engine 0→1", "copy engine 1→0"} {
		if !slices.ContainsFunc(series, func(s string) bool { return strings.HasPrefix(s, label+",") }) {
			t.Errorf("size has no series %s among %q", label, series)
		}
	}
	if m := lacks(size, "read (pull)", "write (push)"); len(m) > 0 {
		t.Errorf("size lacks its panels' titles %q", m)
	}
	if len(series)%2 != 0 || len(series) < 4 {
		t.Errorf("size: series %q, want each engine's both ways", series)
	}
	if m := lacks(size, "transfer size (bytes, log scale)", "4 B", "1 KiB", "GB/s"); len(m) > 0 {
		t.Errorf("size lacks %q", m)
	}
	if !slices.ContainsFunc(size, func(s string) bool { return strings.HasPrefix(s, "link limit ") }) {
		t.Errorf("size does not mark the link's limit: %q", size)
	}

	// Latency: a box per pair, for both sizes of the chase.
	if m := lacks(shown(t, figs, "latency_chase"), "0→1", "1→0", "0 (local)", "1 (local)", "1 MiB (in L2)", "256 MiB (beyond L2)", "ns per dependent load"); len(m) > 0 {
		t.Errorf("latency_chase lacks %q", m)
	}
	if m := lacks(shown(t, figs, "latency_pingpong"), "0→1", "1→0", "round trip", "one way (half a round trip)"); len(m) > 0 {
		t.Errorf("latency_pingpong lacks %q", m)
	}

	// Atomics: a bar per operation the run measured, local and peer.
	var ops []string
	for _, f := range run.Figures {
		if f.Test == results.AtomicTput {
			if op := f.Params["op"]; op != "" && !slices.Contains(ops, op) {
				ops = append(ops, op)
			}
		}
	}
	if len(ops) == 0 {
		t.Fatal("the run has no atomic throughput figures with an op")
	}
	if m := lacks(shown(t, figs, "atomic_throughput"), append([]string{"local", "peer", "Gop/s"}, ops...)...); len(m) > 0 {
		t.Errorf("atomic_throughput lacks %q", m)
	}

	for _, f := range figs {
		if s := shown(t, figs, f.Name); !slices.Contains(s, "SIMULATED") {
			t.Errorf("%s of a simulated run does not say SIMULATED", f.Name)
		}
	}
}

// TestHeatmapOfEightGPUs: a row and a column per device.
func TestHeatmapOfEightGPUs(t *testing.T) {
	heat := shown(t, plot.Charts(resultstest.New(resultstest.Options{GPUs: 8, NoSweep: true})), "heatmap_ce_read")
	for d := range 8 {
		if n := strings.Count("\x00"+strings.Join(heat, "\x00")+"\x00", fmt.Sprintf("\x00%d\x00", d)); n < 2 {
			t.Errorf("device %d labels %d of the axes, want both", d, n)
		}
	}
}
