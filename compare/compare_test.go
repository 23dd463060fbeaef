package compare_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/synth"
)

// scalePair multiplies the samples of every bandwidth figure of one pair,
// keeping the stats consistent.
func scalePair(run *results.Run, src, dst int, factor float64) {
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Src == src && f.Dst == dst && f.Unit == results.UnitGBps && len(f.Samples) > 0 {
			s := make([]float64, len(f.Samples))
			for j, v := range f.Samples {
				s[j] = v * factor
			}
			f.Samples, f.Stats = s, results.ComputeStats(s)
		}
	}
}

func TestSelfComparisonIsQuiet(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 2})
	res, err := compare.Compare([]compare.Input{{"a.json", run}, {"b.json", run}}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != len(run.Figures) {
		t.Errorf("%d rows for %d figures", len(res.Rows), len(run.Figures))
	}
	for _, row := range res.Rows {
		if c := row.Changes[0]; c.Significant || c.Regression {
			t.Fatalf("a run compared with itself changed: %s %+v", row.Key, c)
		}
	}
	if len(res.Differences) != 0 {
		t.Errorf("differences between a run and itself: %v", res.Differences)
	}
	if len(res.Regressions()) != 0 {
		t.Error("regressions in a self comparison")
	}
}

func TestScaledPairIsARegression(t *testing.T) {
	base := synth.New(synth.Options{GPUs: 4, NoSweep: true})
	slow := synth.New(synth.Options{GPUs: 4, NoSweep: true})
	slow.Environment.DriverRelease = "590.10.01"
	scalePair(slow, 0, 1, 0.9)
	res, err := compare.Compare([]compare.Input{{"base.json", base}, {"new.json", slow}}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	regs := res.Regressions()
	if len(regs) == 0 {
		t.Fatal("no regression found")
	}
	for _, row := range regs {
		if row.Src != 0 || row.Dst != 1 {
			t.Errorf("pair %d→%d flagged: %s", row.Src, row.Dst, row.Key)
		}
		c := row.Changes[0]
		if c.Pct > -9.5 || c.Pct < -10.5 || c.P >= 0.05 {
			t.Errorf("%s: change %+.2f%% p=%.3f, want about -10%%, significant", row.Key, c.Pct, c.P)
		}
	}
	found := false
	for _, row := range regs {
		if row.Test == "ce_read" {
			found = true
		}
	}
	if !found {
		t.Error("ce_read 0→1 is not among the regressions")
	}
	if len(res.Differences) != 1 || res.Differences[0].What != "driver" {
		t.Errorf("differences %v, want the driver", res.Differences)
	}
	// Below the threshold, the same change is significant but not flagged.
	res, _ = compare.Compare([]compare.Input{{"base.json", base}, {"new.json", slow}}, compare.Options{Threshold: 0.2})
	if len(res.Regressions()) != 0 {
		t.Error("a 10% change flagged with a 20% threshold")
	}
}

func TestLatencyRegressionIsARise(t *testing.T) {
	base := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	slow := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	for i := range slow.Figures {
		f := &slow.Figures[i]
		if f.Test == "lat_pingpong" {
			for j := range f.Samples {
				f.Samples[j] *= 1.2
			}
			f.Stats = results.ComputeStats(f.Samples)
		}
	}
	res, _ := compare.Compare([]compare.Input{{"a", base}, {"b", slow}}, compare.Options{Threshold: 0.05})
	regs := res.Regressions()
	if len(regs) == 0 {
		t.Fatal("a 20% latency rise is not a regression")
	}
	for _, r := range regs {
		if r.Test != "lat_pingpong" {
			t.Errorf("unexpected regression %s", r.Key)
		}
	}
}

func TestDifferentMachines(t *testing.T) {
	two := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	four := synth.New(synth.Options{GPUs: 4, NoSweep: true, Layout: synth.NVLinkPair})
	res, err := compare.Compare([]compare.Input{{"two.json", two}, {"four.json", four}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The pairs both machines have are compared; the aggregates (all_pairs
	// and the like) differ in size and group and are not.
	if res.OnlyInOther[0] <= res.OnlyInBase[0] || len(res.Rows) < 150 {
		t.Errorf("only in base %d, only in other %d, %d rows", res.OnlyInBase[0], res.OnlyInOther[0], len(res.Rows))
	}
	for _, row := range res.Rows {
		if row.Src > 1 || row.Dst > 1 {
			t.Fatalf("row of a pair the base lacks: %s", row.Key)
		}
	}
	var text bytes.Buffer
	compare.WriteText(&text, res)
	if !strings.Contains(text.String(), "only in four.json") || !strings.Contains(text.String(), "GPUs:") {
		t.Errorf("header does not explain the machines differ:\n%s", text.String()[:600])
	}
}

func TestMoreThanTwoRuns(t *testing.T) {
	a := synth.New(synth.Options{GPUs: 2, NoSweep: true, Seed: 1})
	b := synth.New(synth.Options{GPUs: 2, NoSweep: true, Seed: 2})
	c := synth.New(synth.Options{GPUs: 2, NoSweep: true, Seed: 3})
	scalePair(c, 1, 0, 0.8)
	res, err := compare.Compare([]compare.Input{{"a", a}, {"b", b}, {"c", c}}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		if len(row.Cells) != 3 || len(row.Changes) != 2 {
			t.Fatalf("row %s has %d cells and %d changes", row.Key, len(row.Cells), len(row.Changes))
		}
		if row.Changes[0].Regression {
			t.Errorf("b regressed on %s", row.Key)
		}
	}
	if len(res.Regressions()) == 0 {
		t.Error("c's 20% drop not found")
	}
}

func TestFormats(t *testing.T) {
	base := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	slow := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	scalePair(slow, 0, 1, 0.9)
	res, _ := compare.Compare([]compare.Input{{"dir/base.json", base}, {"new.json", slow}}, compare.Options{Threshold: 0.05})
	tests := []struct {
		format string
		check  func(t *testing.T, out string)
	}{
		{"text", func(t *testing.T, out string) {
			for _, want := range []string{"ce_read · copy_engine · read  [GB/s, higher is better]", "REGRESSION", "~", "p=0.000 n=20", "base.json"} {
				if !strings.Contains(out, want) {
					t.Errorf("text lacks %q", want)
				}
			}
		}},
		{"markdown", func(t *testing.T, out string) {
			if !strings.Contains(out, "| pair | size |") || !strings.Contains(out, "**-10") {
				t.Errorf("markdown table or flag missing:\n%.400s", out)
			}
		}},
		{"csv", func(t *testing.T, out string) {
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1+2*len(res.Rows) {
				t.Errorf("%d CSV records, want %d", len(recs), 1+2*len(res.Rows))
			}
		}},
		{"json", func(t *testing.T, out string) {
			var back compare.Result
			if err := json.Unmarshal([]byte(out), &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Names, res.Names) || len(back.Rows) != len(res.Rows) {
				t.Error("JSON does not round-trip")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := compare.Write(&buf, res, tt.format); err != nil {
				t.Fatal(err)
			}
			tt.check(t, buf.String())
		})
	}
	if err := compare.Write(&bytes.Buffer{}, res, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestBadOptions(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	for _, o := range []compare.Options{{Alpha: 1.5}, {Alpha: -1}, {Threshold: -0.1}} {
		if _, err := compare.Compare([]compare.Input{{"a", run}, {"b", run}}, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := compare.Compare([]compare.Input{{"a", run}}, compare.Options{}); err == nil {
		t.Error("one run accepted")
	}
}

// TestCacheAgreesWithBenchmath checks the memoised U test against benchmath
// called directly, on samples with and without ties.
func TestCacheAgreesWithBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := synth.New(synth.Options{GPUs: 2, NoSweep: true, Samples: 12})
	other := synth.New(synth.Options{GPUs: 2, NoSweep: true, Samples: 12, Seed: 9})
	for i := range other.Figures {
		f := &other.Figures[i]
		for j := range f.Samples {
			switch rng.IntN(3) {
			case 0: // a tie with the base
				if j < len(base.Figures[i].Samples) {
					f.Samples[j] = base.Figures[i].Samples[j]
				}
			case 1:
				f.Samples[j] *= 0.97 + 0.06*rng.Float64()
			}
		}
		f.Stats = results.ComputeStats(f.Samples)
	}
	res, err := compare.Compare([]compare.Input{{"a", base}, {"b", other}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := &benchmath.Thresholds{CompareAlpha: 0.05}
	byKey := map[string]*results.Figure{}
	for i := range other.Figures {
		byKey[other.Figures[i].Key()] = &other.Figures[i]
	}
	checked := 0
	for i := range base.Figures {
		bf := &base.Figures[i]
		of := byKey[bf.Key()]
		if of == nil || len(bf.Samples) == 0 || len(of.Samples) == 0 || bf.Failed() || of.Failed() {
			continue
		}
		want := benchmath.AssumeNothing.Compare(
			benchmath.NewSample(append([]float64(nil), bf.Samples...), th),
			benchmath.NewSample(append([]float64(nil), of.Samples...), th))
		for _, row := range res.Rows {
			if row.Key == bf.Key() {
				if got := row.Changes[0].P; got != want.P {
					t.Errorf("%s: p %v, benchmath says %v", row.Key, got, want.P)
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d figures checked", checked)
	}
}

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"5%", 0.05, true}, {"5", 0.05, true}, {" 2.5 % ", 0.025, true}, {"0", 0, true},
		{"", 0, false}, {"-1%", 0, false}, {"five", 0, false}, {"NaN", 0, false}, {"5%%", 0, false},
	}
	for _, tt := range tests {
		got, err := compare.ParseThreshold(tt.in)
		if (err == nil) != tt.ok || tt.ok && math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("ParseThreshold(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestReadInputs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := results.Write(good, synth.New(synth.Options{GPUs: 2, NoSweep: true})); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	bad := map[string][]byte{
		"truncated.json": data[:len(data)/2],
		"malformed.json": []byte("{\"schema\": 1,,}"),
		"v2.json":        bytes.Replace(data, []byte(`"schema": 1`), []byte(`"schema": 2`), 1),
	}
	wants := map[string]string{"truncated.json": "is truncated", "malformed.json": "malformed at line 1", "v2.json": "schema version 2; this p2pbench reads version 1"}
	for name, b := range bad {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		_, err := compare.ReadInputs([]string{good, p})
		if err == nil || !strings.Contains(err.Error(), wants[name]) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", name, err, wants[name])
		}
	}
	if _, err := compare.ReadInputs([]string{good, filepath.Join(dir, "missing.json")}); err == nil {
		t.Error("a missing file was read")
	}
	in, err := compare.ReadInputs([]string{good, good})
	if err != nil || len(in) != 2 || in[0].Name != good {
		t.Errorf("ReadInputs = %v, %v", in, err)
	}
}

func TestTuneGC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	if err := results.Write(path, synth.New(synth.Options{GPUs: 2, NoSweep: true})); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetGCPercent(percent)
	defer debug.SetMemoryLimit(limit)

	restore := compare.TuneGC([]string{path, path})
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GC percent %d while tuned, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 2*2*fi.Size()+512<<20 {
		t.Errorf("memory limit %d while tuned, want %d", l, 2*2*fi.Size()+512<<20)
	}
	restore()
	if p, l := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); p != 100 || l != math.MaxInt64 {
		t.Errorf("restored to GC percent %d, memory limit %d; want 100 and no limit", p, l)
	}
	debug.SetGCPercent(100)

	// What the environment sets is left alone.
	t.Setenv("GOGC", "50")
	compare.TuneGC([]string{path})()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC set: TuneGC changed the GC percent to %d", p)
	}
}
