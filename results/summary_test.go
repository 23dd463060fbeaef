package results_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// summaryRun is a run with everything a figure can carry: failures,
// rounds, method checks, link traffic, other processes, a verdict; of 4
// GPUs with the size sweeps (2,013 figures), or lean: of 2 GPUs without
// them (295 figures, of the same kinds).
func summaryRun(t testing.TB, lean bool) []byte {
	t.Helper()
	o := resultstest.Options{GPUs: 4, Faults: true, Samples: 6, Rounds: 3, Health: true}
	if lean {
		o.GPUs, o.NoSweep = 2, true
	}
	run := resultstest.New(o)
	run.Figures[1].Traffic = &results.LinkTraffic{Src: results.LinkCounts{TxData: 1 << 30, TxRaw: 1 << 31}}
	run.Figures[1].OtherProcesses = []int{4242, 17}
	run.Figures[2].Check = &results.MethodCheck{RepsPerSample: 3, Samples: []float64{1, 2}, Median: 1.5, MethodMedian: 1.5}
	run.Figures[3].Error, run.Figures[3].ErrorName = "it broke: \"quoted\" → here", "CUDA_ERROR_X"
	run.Figures[3].Samples, run.Figures[3].Rounds, run.Figures[3].Stats = nil, nil, nil
	run.Verdict = &results.Verdict{Status: results.StatusWarn, Checks: []results.Check{{Name: "links", Title: "Links", Status: results.StatusPass, Summary: "fine"}},
		Figures: []results.FigureVerdict{{Key: run.Figures[0].Key(), Status: results.StatusPass, Value: 1, Bound: 1, Reason: "test"}}}
	var enc bytes.Buffer
	if err := run.Encode(&enc); err != nil {
		t.Fatal(err)
	}
	return enc.Bytes()
}

// TestSummary: a run's summary is the run read whole without what a
// summary drops, read by the fast path where the file is as Encode writes
// it, and by encoding/json (the same run, or the same error) where a line
// or the file is anything else.
func TestSummary(t *testing.T) {
	// Parallel: it measures no allocation, which the bomb tests (never
	// parallel) do.
	t.Parallel()
	data := summaryRun(t, false)
	if !results.SummaryFast(data) {
		t.Fatal("a file as Encode writes it is not summarised line by line")
	}
	same := func(name string, data []byte) {
		t.Helper()
		got, gerr := results.DecodeSummary(data)
		want, werr := results.DecodeWhole(data)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("%s: error %v, decoded whole %v", name, gerr, werr)
		}
		if gerr != nil {
			return
		}
		want.Summarize()
		if !reflect.DeepEqual(got, want) {
			for i := range got.Figures {
				if !reflect.DeepEqual(got.Figures[i], want.Figures[i]) {
					t.Errorf("figure %d: %+v\nwant %+v", i, got.Figures[i], want.Figures[i])
					break
				}
			}
			t.Fatalf("%s: the summary differs from the run read whole and summarised", name)
		}
	}
	same("as written", data)
	got, _ := results.DecodeSummary(data)
	if got.Verdict == nil || got.Verdict.Status != results.StatusWarn || len(got.Verdict.Checks) != 1 || got.Verdict.Figures != nil {
		t.Errorf("the summary's verdict: %+v", got.Verdict)
	}
	for _, f := range got.Figures {
		if f.Samples != nil || f.Rounds != nil || f.Traffic != nil || f.Check != nil {
			t.Fatalf("a summarised figure keeps what a summary drops: %+v", f)
		}
	}
	// The layouts below change a file's first figure or its end, each read
	// three ways: they are the lean run's.
	data = summaryRun(t, true)
	if !results.SummaryFast(data) {
		t.Fatal("a lean file as Encode writes it is not summarised line by line")
	}
	first := bytes.Index(data, []byte("\n{\"test\":")) + 1
	for _, c := range []struct {
		name, old, new string
		whole          bool // the file is read whole
	}{
		// Lines the fast path leaves to encoding/json: the run is the same.
		{"a key in other case", `{"test":`, `{"Test":`, false},
		{"an unknown key", `{"test":`, `{"later_field":[1,2],"test":`, false},
		{"a key twice", `{"test":`, `{"src":0,"test":`, false},
		{"a number in another form", `"median":`, `"median":-0.0e0,"x":`, false},
		{"an escaped text", `"verify":"`, `"verify":"\u0070`, false},
		// Lines that do not decode: the file's error, as Read gives it.
		{"a string for a number", `"src":`, `"src":"0",`, true},
		{"a number as JSON does not write it", `"src":`, `"src":0`, true},
		{"a whole number with an exponent", `"src":`, `"src":1e0,"x":`, true},
		{"NaN", `"median":`, `"median":NaN,"x":`, true},
	} {
		i := bytes.Index(data[first:], []byte(c.old))
		if i < 0 {
			t.Fatalf("%s: no %q in the file", c.name, c.old)
		}
		changed := slices.Concat(data[:first+i], []byte(c.new), data[first+i+len(c.old):])
		if results.SummaryFast(changed) == c.whole {
			t.Errorf("%s: read whole %v, want %v", c.name, !c.whole, c.whole)
		}
		same(c.name, changed)
	}
	same("cut short", data[:len(data)/2])
	// What follows the figures: the verdict, its figures left out, and
	// whatever else the run's object holds there.
	end := data[:len(data)-2]
	for _, c := range []struct {
		name string
		data []byte
		fast bool
	}{
		{"a field after the verdict", slices.Concat(end, []byte(`,"notes":["after"]}`+"\n")), true},
		{"the verdict's figures and more", slices.Concat(end[:len(end)-1], []byte(`,"next_steps":["x"]}}`+"\n")), true},
		{"a comma before the end", slices.Concat(end, []byte(",}\n")), false},
		{"more after the end", slices.Concat(data, []byte("[]\n")), false},
	} {
		if results.SummaryFast(c.data) != c.fast {
			t.Errorf("%s: read line by line %v, want %v", c.name, !c.fast, c.fast)
		}
		same(c.name, c.data)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	if results.SummaryFast(indented.Bytes()) {
		t.Error("an indented file is summarised line by line")
	}
	same("indented", indented.Bytes())
}

// TestSummaryKeys: the fast path knows every field of a figure, its stats
// and their rounds (a field added to them and not to it would be read by
// encoding/json, line after line).
func TestSummaryKeys(t *testing.T) {
	for _, c := range []struct {
		typ   reflect.Type
		keys  []string
		index func(string) int
	}{{reflect.TypeFor[results.Figure](), results.SummaryKeys, results.FigureKey},
		{reflect.TypeFor[figstats.Stats](), results.SummaryStatsKeys, results.StatsKey},
		{reflect.TypeFor[figstats.RoundStats](), results.SummaryRoundsKeys, results.RoundsKey}} {
		var fields []string
		for f := range c.typ.Fields() {
			fields = append(fields, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		if !slices.Equal(fields, c.keys) {
			t.Errorf("%v: fields %v, the summary reads %v", c.typ, fields, c.keys)
		}
		for i, k := range c.keys {
			if c.index(k) != i {
				t.Errorf("%v: key %q has index %d, want %d", c.typ, k, c.index(k), i)
			}
		}
		for _, k := range []string{"", "Median", "x"} {
			if c.index(k) != -1 {
				t.Errorf("%v: key %q has index %d, want none", c.typ, k, c.index(k))
			}
		}
	}
}
