package results_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// TestDecodeByLines: a file as Encode writes it decodes its figures line
// by line, to the run that decoding it whole gives; laid out otherwise, or
// crafted so that its lines mislead, it decodes whole, to the same run or
// the same error as encoding/json's reading of it.
func TestDecodeByLines(t *testing.T) {
	// Parallel: it measures no allocation, which the bomb tests (never
	// parallel) do.
	t.Parallel()
	encode := func(o resultstest.Options) (*results.Run, []byte) {
		run := resultstest.New(o)
		run.Verdict = &results.Verdict{Status: results.StatusPass, Figures: []results.FigureVerdict{{Key: run.Figures[0].Key(), Status: results.StatusPass, Value: 1, Bound: 1, Reason: "test"}}}
		var enc bytes.Buffer
		if err := run.Encode(&enc); err != nil {
			t.Fatal(err)
		}
		if !results.ByLines(enc.Bytes()) {
			t.Fatal("a file as Encode writes it is not decoded line by line")
		}
		return run, enc.Bytes()
	}
	// A 4-GPU run with its sweeps (2,013 figures) as written; the layouts
	// below change a file's first line, its first figures or its end, each
	// decoded three ways: they are a 2-GPU run's without sweeps (295
	// figures of the same kinds).
	o := resultstest.Options{GPUs: 4, Faults: true, Samples: 6, Rounds: 3, Health: true}
	run, data := encode(o)
	o.GPUs, o.NoSweep = 2, true
	_, lean := encode(o)
	same := func(name string, data []byte) (got, want *results.Run, err error) {
		t.Helper()
		got, err = results.Decode(bytes.NewReader(data))
		want, werr := results.DecodeWhole(data)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("%s: error %v, decoded whole %v", name, err, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the run differs from the one decoded whole", name)
		}
		return got, want, err
	}
	got, want, err := same("as written", data)
	if err != nil || len(got.Figures) != len(run.Figures) || got.Verdict == nil || len(got.Verdict.Figures) != 1 {
		t.Fatalf("decoded %v: want %d figures and the verdict", err, len(run.Figures))
	}
	// A figure's lists are its own: appending to one writes nowhere else.
	got.Figures[0].Samples = append(got.Figures[0].Samples, -1)
	got.Figures[0].Rounds = append(got.Figures[0].Rounds, -1)
	for i := 1; i < len(got.Figures); i++ {
		if g, w := got.Figures[i], want.Figures[i]; !slices.Equal(g.Samples, w.Samples) || !slices.Equal(g.Rounds, w.Rounds) {
			t.Fatalf("appending to the first figure's samples and rounds changed figures[%d]'s: %v %v, want %v %v", i, g.Samples, g.Rounds, w.Samples, w.Rounds)
		}
	}
	if _, err := results.Decode(strings.NewReader(string(data[:len(data)/2]))); err == nil {
		t.Error("a file cut short decodes")
	}
	data = lean
	var indented bytes.Buffer
	if err := json.Indent(&indented, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	nl := bytes.IndexByte(data, '\n')
	for _, c := range []struct {
		name  string
		data  []byte
		lines bool
	}{
		{"indented", indented.Bytes(), false},
		// "figures" again at the end: the last counts.
		{"figures twice", append(bytes.Clone(data[:len(data)-2]), []byte(`,"figures":[]}`+"\n")...), false},
		// The second line's key inside an object of the first line.
		{"nested key", slices.Concat(data[:nl-1], []byte(`,"x":{"a":1,`), data[nl:len(data)-2], []byte("}}\n")), false},
		// The same, the run's own figures being the stand-in decodeLines
		// puts in place of the lines: only the first line's check tells.
		{"nested key, stand-in", slices.Concat(data[:nl-1], []byte(`,"x":{"a":1,`),
			data[nl:len(data)-2], []byte(`},"figures":[{"test":"\u0000figures on their own lines"}]}`+"\n")), false},
		{"figure broken", bytes.Replace(data, []byte(`{"test":"ce_read"`), []byte(`{"test":ce_read"`), 1), false},
		{"comma missing", bytes.Replace(data, []byte("},\n{"), []byte("}\n{"), 1), false},
		{"cut short", data[:len(data)/2], false},
		// Figures in the first line as well: the lines' are decoded into them.
		{"figures in the first line", slices.Concat(data[:nl-1], []byte(`,"figures":[{"src":0,"error":"first"}],`), data[nl:]), false},
		// What follows the figures, decoded apart from the first line.
		{"a field after the verdict", append(bytes.Clone(data[:len(data)-2]), []byte(`,"notes":["after"]}`+"\n")...), true},
		{"a comma before the end", append(bytes.Clone(data[:len(data)-2]), []byte(",}\n")...), false},
		{"the first line's field again", append(bytes.Clone(data[:len(data)-2]), []byte(`,"host":"again"}`+"\n")...), true},
		{"more after the end", append(bytes.Clone(data), []byte("{}\n")...), false},
		{"the figures' end alone", append(bytes.Clone(data[:bytes.Index(data, []byte("\n]"))]), []byte("\n]}\n")...), true},
		{"the figures' end, spaced", append(bytes.Clone(data[:bytes.Index(data, []byte("\n]"))]), []byte("\n] \n}\n")...), true},
		{"nothing after the figures", append(bytes.Clone(data[:bytes.Index(data, []byte("\n]"))]), []byte("\n]\n")...), false},
		// Lists decoded into the room lent for them (slabs): empty, null
		// or shorter before the list that counts, and an empty one that counts.
		{"samples twice", bytes.Replace(bytes.Replace(bytes.Replace(data, []byte(`"samples":[`), []byte(`"samples":[],"samples":[`), 1),
			[]byte(`"samples":[`), []byte(`"samples":null,"samples":[`), 3), []byte(`"rounds":[`), []byte(`"rounds":[7,8],"rounds":[`), 5), true},
		{"samples empty", bytes.Replace(data, []byte(`"rounds":[`), []byte(`"samples":[],"rounds":[`), 1), true},
	} {
		if results.ByLines(c.data) != c.lines {
			t.Errorf("%s: decoded line by line: %v, want %v", c.name, !c.lines, c.lines)
		}
		same(c.name, c.data)
	}
}
