package compare_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite testdata/verdicts-repeat.txt from this build's comparison")

func reference(name string) string {
	return filepath.Join("..", "testdata", "reference", "h200x2", name)
}

// referenceRuns reads the committed reference runs once for every test.
var referenceRuns = sync.OnceValues(func() ([]compare.Input, error) {
	return readInputs([]string{reference("all.json"), reference("all-repeat.json")})
})

// baseRun returns the reference run all.json, to be changed only through
// variant.
func baseRun(t *testing.T) *results.Run {
	t.Helper()
	in, err := referenceRuns()
	if err != nil {
		t.Fatal(err)
	}
	return in[0].Runs[0]
}

// variant returns a copy of run whose figures for which change returns true
// have their samples (and stats) scaled by factor.
func variant(run *results.Run, factor float64, change func(f *results.Figure) bool) *results.Run {
	v := *run
	v.Figures = slices.Clone(run.Figures)
	for i := range v.Figures {
		f := &v.Figures[i]
		if len(f.Samples) == 0 || !change(f) {
			continue
		}
		s := make([]float64, len(f.Samples))
		for j, x := range f.Samples {
			s[j] = x * factor
		}
		f.Samples, f.Stats = s, figstats.ComputeRoundStats(s, f.Rounds)
	}
	return &v
}

func pair(src, dst int) func(f *results.Figure) bool {
	return func(f *results.Figure) bool { return f.Src == src && f.Dst == dst && f.Unit == results.UnitGBps }
}

func run(t *testing.T, opt compare.Options, runs ...*results.Run) *compare.Result {
	t.Helper()
	var in []compare.Input
	for i, r := range runs {
		in = append(in, compare.Input{Name: fmt.Sprintf("dir/run%c.json", 'a'+i), Runs: []*results.Run{r}})
	}
	res, err := compare.Compare(in, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// verdicts renders what a comparison decided, a row a line: the figure's
// key, then for each other run the verdict, the change and the p-value to
// the precision the tables print.
func verdicts(res *compare.Result) string {
	var b strings.Builder
	for _, row := range res.Rows {
		b.WriteString(row.Key)
		for _, c := range row.Changes {
			verdict := "~"
			switch {
			case !c.Valid:
				verdict = "invalid"
			case c.Regression:
				verdict = "REGRESSION"
			case c.Improvement:
				verdict = "better"
			case !c.Tested:
				verdict = "untested"
			case c.Significant:
				verdict = "significant"
			}
			fmt.Fprintf(&b, "\t%s %+.2f%% p=%.3f floor %.2f%%", verdict, c.Pct, c.P, 100*c.Floor)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestReferenceVerdicts holds the comparison of the 2× H200 reference run
// with its repeat (testdata/verdicts-repeat.txt: each row's change and
// floor). The runs have no rounds: no change is tested (the 20 samples of a
// run are not independent; the build before issue 25 counted 238
// "significant changes" here on them), and each floor is the runs' spread
// of samples plus the fallback. Nothing is flagged between these two runs of
// an unchanged machine (two builds before flagged 33 regressions and 11
// improvements). The fallback was measured on these runs among others, so
// this is no test of it: the 2× H100 evidence is (evidence_test.go).
func TestReferenceVerdicts(t *testing.T) {
	in, err := referenceRuns()
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Compare(in, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	got := verdicts(res)
	golden := filepath.Join("testdata", "verdicts-repeat.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("verdicts differ from %s at line %d:\n got %s\nwant %s", golden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines of verdicts, %s has %d", len(gl), golden, len(wl))
	}
	if len(res.Differences) != 0 || res.OnlyInBase[0] != 0 || res.OnlyInOther[0] != 0 {
		t.Errorf("differences %v, only in base %v, only in other %v; want none", res.Differences, res.OnlyInBase, res.OnlyInOther)
	}
	for _, row := range res.Rows {
		if c := row.Changes[0]; c.Regression || c.Improvement || c.Tested || c.Significant || c.Valid && c.FloorFrom != "measured" && c.FloorFrom != "threshold" {
			t.Errorf("%s between two runs without rounds: %+v; want untested, not flagged, the floor measured or the threshold", row.Key, c)
		}
	}
	var text bytes.Buffer
	if err := compare.WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Flagged: nothing.", "475 figures compared: 0 significant changes, 0 regressions and 0 improvements",
		"No run-to-run estimate of its own: all.json, all-repeat.json (no rounds)."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q", want)
		}
	}
}

// TestSelfComparisonIsQuiet compares the reference run with itself: no
// figure changed, and none tested (one run without rounds a side is one
// unit a side).
func TestSelfComparisonIsQuiet(t *testing.T) {
	base := baseRun(t)
	res := run(t, compare.Options{Threshold: 0.05}, base, base)
	if len(res.Rows) != len(base.Figures) {
		t.Errorf("%d rows for %d figures", len(res.Rows), len(base.Figures))
	}
	for _, row := range res.Rows {
		if c := row.Changes[0]; c.Tested || c.Pct != 0 || c.Significant || c.Regression || c.Improvement {
			t.Fatalf("a run compared with itself changed: %s %+v", row.Key, c)
		}
	}
	if len(res.Differences) != 0 || len(res.Regressions()) != 0 {
		t.Errorf("differences %v, %d regressions between a run and itself", res.Differences, len(res.Regressions()))
	}
}

func TestScaledPairIsARegression(t *testing.T) {
	base := baseRun(t)
	slow := variant(base, 0.9, pair(0, 1))
	slow.Environment.DriverRelease = "590.10.01"
	res := run(t, compare.Options{Threshold: 0.05}, base, slow)
	regs := res.Regressions()
	if len(regs) == 0 {
		t.Fatal("no regression found")
	}
	tests := map[results.Test]bool{}
	for _, row := range regs {
		c := row.Changes[0]
		if row.Src != 0 || row.Dst != 1 || math.Abs(c.Pct+10) > 1e-6 || c.Tested || c.Floor > 0.1 {
			t.Errorf("%s: change %+.2f%%, tested %v, floor %.2f%%; want only 0→1, -10%%, untested (no rounds), below the change", row.Key, c.Pct, c.Tested, 100*c.Floor)
		}
		tests[row.Test] = true
	}
	if !tests[results.CERead] || !tests[results.SMWrite] {
		t.Errorf("regressions in %v, want %s and %s among them", tests, results.CERead, results.SMWrite)
	}
	if len(res.Differences) != 1 || res.Differences[0].What != "driver" {
		t.Errorf("differences %v, want the driver", res.Differences)
	}
	// Below the threshold, the same change is significant but not flagged.
	res = run(t, compare.Options{Threshold: 0.2}, base, slow)
	if len(res.Regressions()) != 0 {
		t.Error("a 10% change flagged with a 20% threshold")
	}
}

func TestLatencyRegressionIsARise(t *testing.T) {
	base := baseRun(t)
	pingpong := func(f *results.Figure) bool { return f.Test == results.LatPingPong }
	slow := variant(base, 1.2, pingpong)
	res := run(t, compare.Options{Threshold: 0.05}, base, slow)
	regs := res.Regressions()
	if len(regs) == 0 {
		t.Fatal("a 20% latency rise is not a regression")
	}
	for _, r := range regs {
		if r.Test != results.LatPingPong {
			t.Errorf("unexpected regression %s", r.Key)
		}
	}
	fast := variant(base, 1/1.2, pingpong)
	res = run(t, compare.Options{Threshold: 0.05}, base, fast)
	if len(res.Regressions()) != 0 {
		t.Error("a latency drop is a regression")
	}
	for _, row := range res.Rows {
		if c := row.Changes[0]; row.Test == results.LatPingPong && !c.Improvement {
			t.Errorf("%s: a 17%% drop in latency is not an improvement: %+v", row.Key, c)
		}
	}
}

// TestMachinesDiffer compares runs that do not share every figure, of
// different GPUs.
func TestMachinesDiffer(t *testing.T) {
	base := baseRun(t)
	other := *base
	other.Environment.Devices = slices.Clone(base.Environment.Devices)
	other.Environment.Devices[1].Name = "NVIDIA H100 80GB HBM3"
	// The other run lacks the ping-pong figures and has the atomics twice,
	// under another engine.
	other.Figures = nil
	for _, f := range base.Figures {
		switch f.Test {
		case results.LatPingPong:
			continue
		case results.AtomicTput:
			g := f
			g.Engine = results.SMCopyEngine("other")
			other.Figures = append(other.Figures, g)
		}
		other.Figures = append(other.Figures, f)
	}
	res := run(t, compare.Options{}, base, &other)
	var pingpong, atomics int
	for _, f := range base.Figures {
		pingpong += b2i(f.Test == results.LatPingPong)
		atomics += b2i(f.Test == results.AtomicTput)
	}
	if res.OnlyInBase[0] != pingpong || res.OnlyInOther[0] != atomics || len(res.Rows) != len(base.Figures)-pingpong {
		t.Errorf("only in base %d, only in other %d, %d rows; want %d, %d, %d",
			res.OnlyInBase[0], res.OnlyInOther[0], len(res.Rows), pingpong, atomics, len(base.Figures)-pingpong)
	}
	var text bytes.Buffer
	if err := compare.WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("The runs share %d figures; %d only in runa.json (0 missing from runb.json, %d its plan left out), %d only in runb.json.",
		len(res.Rows), pingpong, pingpong, atomics)
	for _, want := range []string{head, "GPUs:", "H100"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("header lacks %q:\n%.800s", want, text.String())
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMoreThanTwoRuns compares a run with itself and with a copy 20%
// slower on one pair: the copy's rows of that pair are flagged wherever
// their floor is below 20% (not the copies across processes through legacy
// handles, whose fallback is 30%), and nothing else.
func TestMoreThanTwoRuns(t *testing.T) {
	base := baseRun(t)
	slow := variant(base, 0.8, pair(1, 0))
	res := run(t, compare.Options{Threshold: 0.05}, base, base, slow)
	flagged := 0
	for _, row := range res.Rows {
		if len(row.Cells) != 3 || len(row.Changes) != 2 {
			t.Fatalf("row %s has %d cells and %d changes", row.Key, len(row.Cells), len(row.Changes))
		}
		scaled := row.Src == 1 && row.Dst == 0 && row.Unit == results.UnitGBps
		c := row.Changes[1]
		if row.Changes[0].Regression || c.Regression != (scaled && c.Floor <= 0.2) {
			t.Errorf("%s: changes %+v", row.Key, row.Changes)
		}
		flagged += b2i(c.Regression)
	}
	if flagged < 100 {
		t.Errorf("%d rows of 1→0 flagged at 20%% slower; want most", flagged)
	}
}

// TestFailedFigures: a figure without a value shows why, and is not
// compared.
func TestFailedFigures(t *testing.T) {
	base := baseRun(t)
	other := *base
	other.Figures = slices.Clone(base.Figures)
	want := map[string]string{} // key → the cell
	for i, label := range []string{"ERR PEER_ACCESS_UNSUPPORTED", "ERR", "BAD DATA", "untested"} {
		f := &other.Figures[i]
		switch i {
		case 0:
			f.Error, f.ErrorName, f.Samples, f.Stats = "peer access is not supported", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", nil, nil
		case 1:
			f.Error, f.Samples, f.Stats = "it broke", nil, nil
		case 2:
			f.Verify = results.VerifyFailed
		case 3:
			f.Samples = nil
		}
		want[f.Key()] = label
	}
	res := run(t, compare.Options{}, base, &other)
	for _, row := range res.Rows {
		label, ok := want[row.Key]
		if !ok {
			continue
		}
		c, ch := row.Cells[1], row.Changes[0]
		if label == "untested" {
			if c.Failed != "" || c.Spread != "?" || !ch.Valid || ch.Tested || ch.Significant {
				t.Errorf("%s without samples: cell %+v, change %+v; want the median, untested", row.Key, c, ch)
			}
			continue
		}
		if c.Failed != label || ch.Valid {
			t.Errorf("%s: cell %+v, change %+v; want %q and no change", row.Key, c, ch, label)
		}
	}
	var text bytes.Buffer
	compare.WriteText(&text, res)
	for _, s := range []string{"ERR PEER_ACCESS_UNSUPPORTED", "BAD DATA", "(untested)"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q", s)
		}
	}
}

func TestFormats(t *testing.T) {
	base := baseRun(t)
	res := run(t, compare.Options{Threshold: 0.05}, base, variant(base, 0.9, pair(0, 1)))
	tests := []struct {
		format string
		check  func(t *testing.T, out string)
	}{
		{"text", func(t *testing.T, out string) {
			for _, want := range []string{
				"dir/runa.json (base)\n",
				"\nFlagged: 120 regressions and 0 improvements among the 475 figures compared:\n" +
					"  REGRESSION  ce_read copy_engine read 0→1 512 MiB            -10.00%  untested (too few units), floor 5% (the threshold)\n",
				"\nCopy engine read (pull) · copy_engine · read  [ce_read, GB/s, higher is better]\n" +
					"pair  size     runa.json        runb.json        vs runa.json\n" +
					"0→1   512 MiB  393.1 ±0.0%      353.8 ±0.0%      -10.00% REGRESSION  untested floor 5%\n" +
					"0→1   4 B      0.0003082 ±0.3%  0.0002774 ±0.3%  -10.00% (untested)  floor 12%\n",
				"*→0   512 MiB  55.49 ±0.1%  55.49 ±0.1%  +0.00% (untested)  floor 5%\n",
				"\n475 figures compared: 0 significant changes, 120 regressions and 0 improvements beyond their noise floor (at least 5%). " +
					"475 changes untested (a side without 3 independent units): flagged on their floor alone.\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("text lacks %q", want)
				}
			}
			if strings.Contains(out, " \n") {
				t.Error("text has trailing spaces")
			}
		}},
		{"markdown", func(t *testing.T, out string) {
			for _, want := range []string{"| pair | size | runa.json | runb.json | vs runa.json | p |", "| **-10.00% REGRESSION** |",
				"## Flagged\n\nFlagged: 120 regressions", "| REGRESSION | ce\\_read copy\\_engine read 0→1 512 MiB | -10.00% |"} {
				if !strings.Contains(out, want) {
					t.Errorf("markdown lacks %q:\n%.600s", want, out)
				}
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
			if !reflect.DeepEqual(&back, res) {
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

func TestBadInput(t *testing.T) {
	base := baseRun(t)
	for _, o := range []compare.Options{{Alpha: 1.5}, {Alpha: -1}, {Alpha: math.NaN()}, {Threshold: -0.1}, {Confidence: 2}} {
		if _, err := compare.Compare([]compare.Input{{"a", []*results.Run{base}}, {"b", []*results.Run{base}}}, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := compare.Compare([]compare.Input{{"a", []*results.Run{base}}}, compare.Options{}); err == nil {
		t.Error("one run accepted")
	}
	if _, err := compare.Compare([]compare.Input{{"a", []*results.Run{base}}, {"b", []*results.Run{nil}}}, compare.Options{}); err == nil {
		t.Error("a missing run accepted")
	}
	nan := variant(base, math.NaN(), pair(0, 1))
	if _, err := compare.Compare([]compare.Input{{"a", []*results.Run{base}}, {"b.json", []*results.Run{nan}}}, compare.Options{}); err == nil || !strings.Contains(err.Error(), "b.json") {
		t.Errorf("a run with NaN samples: error %v, want one naming it", err)
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

// readInputs reads one side per path, as the compare command does for
// runs given without grouping.
func readInputs(paths []string) ([]compare.Input, error) {
	groups := make([][]string, len(paths))
	for i, p := range paths {
		groups[i] = []string{p}
	}
	return compare.ReadGroups(groups)
}

func TestReadGroups(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema": 2,,}`), 0o644); err != nil {
		t.Fatal(err)
	}
	good := reference("topo-check.json")
	for _, paths := range [][]string{{good, bad}, {bad, filepath.Join(dir, "missing.json")}} {
		if _, err := readInputs(paths); err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("ReadGroups(%q): error %v, want one naming bad.json", paths, err)
		}
	}
	if _, err := readInputs([]string{good, filepath.Join(dir, "missing.json")}); err == nil {
		t.Error("a missing file was read")
	}
	in, err := readInputs([]string{good, good})
	if err != nil || len(in) != 2 || in[0].Name != good || in[1].Runs[0] == nil {
		t.Errorf("ReadGroups = %v, %v", in, err)
	}
}

// TestChangeBeyondAPercentage is issue 19's "compare --format json fails on
// +Inf": a median so small that the other run's is more than the largest
// float times it gives no change, and every format writes.
func TestChangeBeyondAPercentage(t *testing.T) {
	// 1e-309: the ratio overflows; 1e-307 (normal floats, which validation
	// accepts): the ratio is finite, its percentage not (issue 28, item 11).
	for _, factor := range []float64{1e-309, 1e-307} {
		changeBeyondAPercentage(t, factor)
	}
}

func changeBeyondAPercentage(t *testing.T, factor float64) {
	base := baseRun(t)
	tiny := variant(base, factor, pair(0, 1))
	res := run(t, compare.Options{}, tiny, base)
	seen := false
	for _, row := range res.Rows {
		if row.Src == 0 && row.Dst == 1 && row.Unit == results.UnitGBps && row.Cells[0].Failed == "" {
			seen = true
			if ch := row.Changes[0]; ch.Valid || math.IsInf(ch.Pct, 0) {
				t.Fatalf("%s: change %+v from %v to %v", row.Key, ch, row.Cells[0].Center, row.Cells[1].Center)
			}
		}
	}
	if !seen {
		t.Fatal("no figure of 0→1 compared")
	}
	for _, format := range compare.Formats() {
		if err := compare.Write(io.Discard, res, format); err != nil {
			t.Errorf("%s: %v", format, err)
		}
	}
}

// TestRoundsGate compares synthetic runs whose rounds carry what differs
// between processes, each round of a figure off its median by its own draw
// of 2%: runs of the unchanged machine flag nothing, one against one or
// grouped, and a figure 10% slower at small sizes is flagged (its floor,
// from the rounds alone, is about 3 × 2%; the fallback of such a figure in
// runs without process replicates is more than 10%).
func TestRoundsGate(t *testing.T) {
	mk := func(seed uint64) *results.Run {
		r := resultstest.New(resultstest.Options{GPUs: 2, Seed: seed, Rounds: 5, RoundSpread: 0.02, SweepTests: []results.Test{results.CERead}})
		r.Replicates = results.ReplicatesProcess
		return r
	}
	a, b, c := mk(1), mk(2), mk(3)
	for _, in := range [][]compare.Input{
		{{Name: "a", Runs: []*results.Run{a}}, {Name: "b", Runs: []*results.Run{b}}},
		{{Name: "a", Runs: []*results.Run{a}}, {Name: "b+c", Runs: []*results.Run{b, c}}},
	} {
		res, err := compare.Compare(in, compare.Options{Threshold: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range res.Rows {
			ch := row.Changes[0]
			if ch.Regression || ch.Improvement {
				t.Errorf("%s vs %s: %s flagged: %+v", in[0].Name, in[1].Name, row.Key, ch)
			}
			if ch.Valid && (ch.TestedOn != "rounds" || !ch.ProcessUnits || ch.Fallback != 0) {
				t.Errorf("%s: %+v; want tested on rounds that carry process differences, no fallback", row.Key, ch)
			}
		}
	}
	// Without the marker the same runs take the fallback: still quiet.
	for _, r := range []*results.Run{a, b} {
		r.Replicates = ""
	}
	for _, row := range run(t, compare.Options{Threshold: 0.01}, a, b).Rows {
		if ch := row.Changes[0]; ch.Regression || ch.Improvement || ch.Valid && ch.FloorFrom != "measured" && ch.FloorFrom != "threshold" {
			t.Errorf("without process replicates: %s: %+v", row.Key, ch)
		}
	}
	a.Replicates, b.Replicates = results.ReplicatesProcess, results.ReplicatesProcess
	small := func(f *results.Figure) bool { return f.Test == results.CERead && f.Size <= 64<<10 }
	res, err := compare.Compare([]compare.Input{{Name: "a", Runs: []*results.Run{a}}, {Name: "slow", Runs: []*results.Run{variant(b, 0.9, small)}}},
		compare.Options{Threshold: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, row := range res.Rows {
		f := results.Figure{Test: row.Test, Size: row.Size}
		if ch := row.Changes[0]; ch.Regression {
			flagged++
			if !small(&f) {
				t.Errorf("%s flagged, not scaled", row.Key)
			}
		}
	}
	if flagged == 0 {
		t.Error("a 10% drop at small sizes is not flagged")
	}
}

// TestSameGPULegacyModes: copy-engine copies between two processes on one
// GPU through legacy handles kept a mode for a whole process (2060 or
// 1700–1820 GB/s on a 1× H200) when measured as its builds of the first
// sessions did (method 907a905); the 2× H200 VMs' runs of later methods
// moved by under 1% between processes. Where the rounds carry what differs
// between processes, their floor comes from the rounds, and a 21.7% drop is
// flagged. Where they do not, the floor is the fallback of their family and
// method: a file of such a build takes the modes' 20% and more and the drop
// is not flagged; a file of this build takes its own method's, and it is.
func TestSameGPULegacyModes(t *testing.T) {
	mk := func(seed uint64, replicates, build string) *results.Run {
		r := resultstest.New(resultstest.Options{GPUs: 2, Seed: seed, Rounds: 5, NoSweep: true})
		r.Replicates = replicates
		if build != "" {
			// A file of that build records no method: its build places it.
			r.Tool.Version = build
			for test, info := range r.Catalogue {
				info.Method = 0
				r.Catalogue[test] = info
			}
		}
		// The same-GPU figures, which synth does not make: those between
		// GPUs again, as if between two processes on device 0.
		for _, f := range r.Figures {
			if f.Test == results.IPCCERead || f.Test == results.IPCCEWrite {
				f.Src, f.Dst = 0, 0
				params := maps.Clone(f.Params)
				if params == nil {
					params = map[string]string{}
				}
				params["same_gpu"] = "true"
				f.Params = params
				r.Figures = append(r.Figures, f)
			}
		}
		return r
	}
	sameGPU := func(f *results.Figure) bool {
		return (f.Test == results.IPCCERead || f.Test == results.IPCCEWrite) && f.Params["same_gpu"] == "true"
	}
	const family = "ipc_ce (legacy, same GPU) ≥ 64 MiB"
	for _, c := range []struct{ replicates, build string }{{results.ReplicatesProcess, ""}, {"", "84420a7"}, {"", ""}} {
		res := run(t, compare.Options{Threshold: 0.01}, mk(1, c.replicates, c.build), variant(mk(2, c.replicates, c.build), 1-0.217, sameGPU))
		seen := 0
		for _, row := range res.Rows {
			if !strings.Contains(row.Params, "same_gpu=true") || !strings.HasPrefix(string(row.Test), "ipc_ce_") {
				continue
			}
			seen++
			ch := row.Changes[0]
			switch {
			case c.replicates == results.ReplicatesProcess:
				if !ch.Regression || ch.FloorFrom != "rounds" && ch.FloorFrom != "threshold" || ch.Fallback != 0 {
					t.Errorf("%s, process replicates: a 21.7%% drop: %+v; want flagged, the floor from the rounds", row.Key, ch)
				}
			case c.build != "":
				if ch.Regression || ch.FloorFrom != "measured" || !strings.HasPrefix(ch.FallbackFrom, family) || ch.Fallback < 0.2 {
					t.Errorf("%s, rounds within a process, build %s: %+v; want the fallback of %s of its method, the modes' 20%% and more", row.Key, c.build, ch, family)
				}
			default:
				if !ch.Regression || !strings.HasPrefix(ch.FallbackFrom, family) || ch.Fallback > 0.05 {
					t.Errorf("%s, rounds within a process, this build: %+v; want flagged, the fallback of %s of this build's method", row.Key, ch, family)
				}
			}
		}
		if seen == 0 {
			t.Fatal("no same-GPU IPC copy-engine rows")
		}
	}
}

// TestNoFloorByTestName: in runs whose rounds carry what differs between
// processes, a figure's floor comes from its units alone. Runs with the
// same rounds for a figure of every test in the catalogue (and of every
// kind that once had a floor of its own: same-GPU copies across processes
// through legacy handles, the chase beyond L2, small copies' device time)
// give every row the same floor, NoiseMultiple × the rounds' CV worked out
// here, never a fallback; without the marker the same rows take the
// fallbacks of their families, which differ.
func TestNoFloorByTestName(t *testing.T) {
	rounds := []float64{100, 101, 99, 100.5, 99.5}
	mk := func(scale float64, replicates string) *results.Run {
		r := &results.Run{Schema: results.SchemaVersion, Replicates: replicates}
		add := func(test results.Test, params map[string]string, size uint64) {
			var samples []float64
			for _, m := range rounds {
				samples = append(samples, m*scale, m*scale, m*scale)
			}
			unit := test.Info().Unit
			if unit == "" {
				unit = results.UnitGBps
			}
			r.Figures = append(r.Figures, results.Figure{Test: test, Engine: results.EngineSM, Src: 0, Dst: 1, Size: size, Unit: unit,
				Params: params, Samples: samples, Rounds: []int{3, 3, 3, 3, 3}, Verify: results.VerifyNA})
		}
		for i, info := range results.Catalogue() {
			// Each test at its own size, so that no two rows share a class.
			add(info.Name, nil, 1<<uint(i%40))
		}
		add(results.IPCCERead, map[string]string{"same_gpu": "true", "processes": "2"}, 512<<20)
		add(results.LatChase, map[string]string{"cache": "beyond_l2", "working_set": "256 MiB"}, 256<<20)
		add(results.LatCopyDevice, nil, 4)
		return r
	}
	// The floor the rounds give: the pooled relative variance of both sides'
	// round medians (ten, each side's about its mean), times NoiseMultiple.
	var ss float64
	for _, scale := range []float64{1, 1.04} {
		mean := 0.0
		for _, m := range rounds {
			mean += m * scale
		}
		mean /= float64(len(rounds))
		for _, m := range rounds {
			ss += (m*scale/mean - 1) * (m*scale/mean - 1)
		}
	}
	want := compare.NoiseMultiple * math.Sqrt(ss/8)
	res := run(t, compare.Options{}, mk(1, results.ReplicatesProcess), mk(1.04, results.ReplicatesProcess))
	if len(res.Rows) != len(results.Catalogue())+3 {
		t.Fatalf("%d rows, want %d", len(res.Rows), len(results.Catalogue())+3)
	}
	for _, row := range res.Rows {
		c := row.Changes[0]
		if c.FloorFrom != "rounds" || c.Fallback != 0 || c.FallbackFrom != "" || math.Abs(c.Floor-want) > 1e-12 || !c.ProcessUnits {
			t.Errorf("%s (family %s): floor %.4f%% from %q, fallback %v %q; want %.4f%% from the rounds", row.Key, row.Family, 100*c.Floor, c.FloorFrom, c.Fallback, c.FallbackFrom, 100*want)
		}
		if flagged := c.Regression || c.Improvement; flagged != (math.Abs(c.Pct) >= 100*want) {
			t.Errorf("%s: %+.2f%% flagged %v with floor %.2f%%", row.Key, c.Pct, flagged, 100*want)
		}
	}
	// Without the marker, the same data takes each family's fallback: the
	// floors differ by test.
	res = run(t, compare.Options{}, mk(1, ""), mk(1.04, ""))
	floors := map[float64]bool{}
	for _, row := range res.Rows {
		floors[row.Changes[0].Floor] = true
		if c := row.Changes[0]; c.FloorFrom != "measured" || c.FallbackFrom == "" {
			t.Errorf("%s without process replicates: floor from %q, fallback %q", row.Key, c.FloorFrom, c.FallbackFrom)
		}
	}
	if len(floors) < 5 {
		t.Errorf("without process replicates, %d distinct floors; want the families' fallbacks", len(floors))
	}
}

// TestMatchByWhatIsMeasured: figures measured by another SM kernel (its
// variant in the engine and the params, another grid) are the same rows,
// each showing its methods, and a loss among them is flagged.
func TestMatchByWhatIsMeasured(t *testing.T) {
	base := baseRun(t)
	other := variant(base, 0.9, func(f *results.Figure) bool { return f.Test == results.SMWrite && f.Size >= 64<<20 })
	changed := 0
	for i := range other.Figures {
		f := &other.Figures[i]
		if f.Engine.IsSM() && f.Params["variant"] != "" {
			f.Engine = results.SMCopyEngine("v4_u4")
			f.Params = maps.Clone(f.Params)
			f.Params["variant"], f.Params["blocks_per_sm"] = "v4_u4", "8"
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no SM copy figure")
	}
	res := run(t, compare.Options{Threshold: 0.05}, base, other)
	if res.OnlyInBase[0] != 0 || res.OnlyInOther[0] != 0 || len(res.Rows) != len(base.Figures) {
		t.Fatalf("only in base %d, only in other %d, %d rows; want every figure matched", res.OnlyInBase[0], res.OnlyInOther[0], len(res.Rows))
	}
	methods, flagged, ungated := 0, 0, 0
	for _, row := range res.Rows {
		if !row.MethodChanged {
			continue
		}
		methods++
		if row.Engine != results.EngineSM || !strings.Contains(row.Methods[0], "variant=bulk") || !strings.Contains(row.Methods[1], "variant=v4_u4") {
			t.Errorf("%s: engine %s, methods %q", row.Key, row.Engine, row.Methods)
		}
		if row.Test == results.SMWrite && row.Size >= 64<<20 {
			flagged += b2i(row.Changes[0].Regression)
			ungated += b2i(row.Changes[0].Ungated == "method changed")
		}
	}
	// Another method's change is shown, not gated, unless asked.
	if methods != changed || flagged != 0 || ungated == 0 {
		t.Errorf("%d rows with another method (want %d), %d of the slower ones flagged (want none), %d not gated", methods, changed, flagged, ungated)
	}
	asked := run(t, compare.Options{Threshold: 0.05, AcrossMethods: true}, base, other)
	flagged = 0
	for _, row := range asked.Rows {
		if row.Test == results.SMWrite && row.Size >= 64<<20 {
			flagged += b2i(row.Changes[0].Regression)
		}
	}
	if flagged == 0 {
		t.Error("across methods: none of the slower ones flagged")
	}
	var text bytes.Buffer
	if err := compare.WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf("%d figures were measured by another method", changed),
		"block_size=32,blocks_per_sm=4,variant=bulk → block_size=32,blocks_per_sm=8,variant=v4_u4", "(method changed: not gated)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q", want)
		}
	}
}

// TestOutputLeadsWithFlagged: the text says what was flagged and why before
// its first table, at most 50 lines of it, and the tables follow in full.
func TestOutputLeadsWithFlagged(t *testing.T) {
	base := baseRun(t)
	res := run(t, compare.Options{Threshold: 0.05}, base, variant(base, 0.7, func(f *results.Figure) bool { return f.Unit == results.UnitGBps }))
	var b bytes.Buffer
	if err := compare.WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	lead, table := strings.Index(text, "Flagged: "), strings.Index(text, "\nHost to device · copy_engine")
	if lead < 0 || table < 0 || lead > table {
		t.Fatalf("the flagged changes (at %d) do not come before the tables (at %d)", lead, table)
	}
	regs := len(res.Regressions())
	if regs <= 50 {
		t.Fatalf("%d regressions; the test wants more than 50", regs)
	}
	listed := strings.Count(text[lead:table], "\n  REGRESSION  ")
	if listed != 50 || !strings.Contains(text[lead:table], fmt.Sprintf("… and %d more, marked in the tables below.", regs-50)) {
		t.Errorf("the lead lists %d regressions of %d; want 50 and the count of the rest", listed, regs)
	}
	if got := strings.Count(text[table:], " REGRESSION "); got != regs {
		t.Errorf("the tables mark %d regressions, want %d", got, regs)
	}
}

// TestInKernelRepsIsAMethod: SM copy figures timed in one launch per window
// (in_kernel_reps) match the same figures of a file from before, a launch
// per copy, row by row, and the rows say their methods differ.
func TestInKernelRepsIsAMethod(t *testing.T) {
	base := baseRun(t)
	large := func(f *results.Figure) bool { return f.Engine.IsSM() && f.Size >= 64<<20 }
	other := variant(base, 1.007, large)
	changed := 0
	for i := range other.Figures {
		if f := &other.Figures[i]; large(f) {
			f.Params = maps.Clone(f.Params)
			f.Params[results.ParamInKernelReps] = "true"
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no SM copy figure of 64 MiB or more")
	}
	res := run(t, compare.Options{}, base, other)
	if res.OnlyInBase[0] != 0 || res.OnlyInOther[0] != 0 || len(res.Rows) != len(base.Figures) {
		t.Fatalf("only in base %d, only in other %d, %d rows; want every figure matched", res.OnlyInBase[0], res.OnlyInOther[0], len(res.Rows))
	}
	methods := 0
	for _, row := range res.Rows {
		if !row.MethodChanged {
			continue
		}
		methods++
		if strings.Contains(row.Methods[0], results.ParamInKernelReps) || !strings.Contains(row.Methods[1], results.ParamInKernelReps+"=true") {
			t.Errorf("%s: methods %q", row.Key, row.Methods)
		}
	}
	if methods != changed {
		t.Errorf("%d rows with another method, want %d", methods, changed)
	}
}
