package results_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

func TestRoundTrip(t *testing.T) {
	for _, o := range []resultstest.Options{
		{GPUs: 2},
		{GPUs: 4, Faults: true, Samples: 5},
		{GPUs: 3, NoSweep: true, Layout: resultstest.NVSwitch},
	} {
		run := resultstest.New(o)
		path := filepath.Join(t.TempDir(), "run.json")
		if err := outfile.Write(path, run.EncodeFor(path)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		got, err := results.Read(path)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if !reflect.DeepEqual(got, run) {
			t.Errorf("%+v: the run read back differs from the one written", o)
		}
	}
}

// TestGzip writes a run to a .gz name, checks that the file is gzip of what
// Encode writes, and reads it back with Read and Decode; a file with gzip's
// magic number that does not decompress is an error naming the file.
func TestGzip(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Rounds: 2})
	path := filepath.Join(t.TempDir(), "run.json.gz")
	if err := outfile.Write(path, run.EncodeFor(path)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the file is not gzip: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := run.Encode(&want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, want.Bytes()) {
		t.Error("the compressed file holds other JSON than Encode writes")
	}
	got, err := results.Read(path)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !reflect.DeepEqual(got, run) {
		t.Error("the run read back from gzip differs from the one written")
	}
	if got, err = results.Decode(bytes.NewReader(data)); err != nil || !reflect.DeepEqual(got, run) {
		t.Errorf("Decode of gzip: %v, or the run differs", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json.gz")
	if err := os.WriteFile(bad, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Read(bad); err == nil || !strings.Contains(err.Error(), "results file "+bad+" is gzip-compressed but does not decompress") {
		t.Errorf("Read of truncated gzip: %v", err)
	}
}

func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	good := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true})
	if err := outfile.Write(path, good.EncodeFor(path)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	// A run that cannot be encoded must leave the old file intact.
	bad := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true})
	bad.Figures[0].Samples[0] = nanValue()
	if err := outfile.Write(path, bad.EncodeFor(path)); err == nil {
		t.Fatal("Write of a NaN sample succeeded")
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a failed Write changed the existing file")
	}
	// Overwrite works, and neither success nor failure leaves temp files.
	if err := outfile.Write(path, good.EncodeFor(path)); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "run.json" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only run.json", names)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

func TestEncodeWritesOneFigurePerLine(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 3, NoSweep: true, Samples: 3, Faults: true})
	var buf bytes.Buffer
	if err := run.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !json.Valid(buf.Bytes()) {
		t.Fatal("Encode wrote invalid JSON")
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var figures int
	for _, l := range lines {
		if strings.HasPrefix(l, `{"test":`) {
			figures++
			var f results.Figure
			if err := json.Unmarshal([]byte(strings.TrimSuffix(l, ",")), &f); err != nil {
				t.Fatalf("a figure's line is not one figure: %v\n%s", err, l)
			}
		}
	}
	if figures != len(run.Figures) {
		t.Errorf("%d lines hold a figure; the run has %d figures", figures, len(run.Figures))
	}
	// Each test's conventions are named once, in the catalogue, by
	// reference: the words are in none of the file's lines.
	if n := strings.Count(out, `"conventions":`); n != len(run.Tests()) {
		t.Errorf("%d lists of conventions for %d tests", n, len(run.Tests()))
	}
	if n := strings.Count(out, `"convention":`); n != 0 {
		t.Errorf("%d conventions in words in a file of this build", n)
	}
	for _, test := range run.Tests() {
		if c := run.Convention(test); c == "" || strings.Contains(out, c) {
			t.Errorf("%s: its convention is empty or written out in the file: %q", test, c)
		}
	}
}

func TestEncodeStatesEveryKnownTestsConvention(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Samples: 3})
	run.Catalogue = nil // as a producer that leaves it to Encode
	run.Figures = append(run.Figures, run.Figures[0])
	run.Figures[len(run.Figures)-1].Test = "other_tool_test"
	var buf bytes.Buffer
	if err := run.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if run.Catalogue != nil {
		t.Error("Encode changed the run")
	}
	got, err := results.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, test := range run.Tests() {
		info, known := results.Lookup(test)
		entry, ok := got.Catalogue[test]
		switch {
		case known && (!ok || !reflect.DeepEqual(entry, info)):
			t.Errorf("%s: the file's catalogue entry is %+v, want this build's", test, entry)
		case !known && ok:
			t.Errorf("%s: an unknown test got a catalogue entry %+v", test, entry)
		}
	}
}

func TestDecodeCompletesTheCatalogue(t *testing.T) {
	data := []byte(`{"schema":2,"catalogue":{"ce_read":{"unit":"GB/s","convention":"as the file says"},"x":{"unit":"ns","title":"X"}},
"figures":[
{"test":"ce_read","engine":"copy_engine","src":0,"dst":1,"size_bytes":4,"unit":"GB/s","samples":[1],"verify":"passed"},
{"test":"ce_write","engine":"copy_engine","src":0,"dst":1,"size_bytes":4,"unit":"GB/s","samples":[1],"verify":"passed"},
{"test":"x","engine":"sm","src":0,"dst":1,"size_bytes":4,"unit":"ns","samples":[1],"verify":"n/a"},
{"test":"y","engine":"sm","src":0,"dst":1,"size_bytes":4,"unit":"ns","samples":[1],"verify":"n/a"}
]}`)
	run, err := results.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	read := results.CERead.Info()
	read.Convention, read.Conventions, read.Method = "as the file says", nil, 0 // a file that records no method
	if got := run.Info(results.CERead); !reflect.DeepEqual(got, read) {
		t.Errorf("ce_read: %+v, want this build's entry with the file's convention", got)
	}
	if got := run.Info(results.CEWrite); !reflect.DeepEqual(got, results.CEWrite.Info()) {
		t.Errorf("ce_write, which the file does not describe: %+v, want this build's entry", got)
	}
	if got := run.Info("x"); got.Unit != results.UnitNs || got.Title != "X" || got.Name != "x" {
		t.Errorf("x, which only the file knows: %+v", got)
	}
	if _, ok := run.Catalogue["y"]; ok || run.Convention("y") != "" {
		t.Error("y, which nobody describes, got a catalogue entry")
	}
}

// validJSON is a small valid results file.
func validJSON(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Samples: 3}).Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadRejects(t *testing.T) {
	// Parallel: it measures no allocation, which the bomb tests (never
	// parallel) do.
	t.Parallel()
	good := validJSON(t)
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	figure := func(m map[string]any, i int) map[string]any {
		return m["figures"].([]any)[i].(map[string]any)
	}
	tests := []struct {
		name string
		data []byte
		want string // in the message
		is   any    // the error type wanted, via errors.As
	}{
		{"empty", []byte(""), "is empty", new(*results.SyntaxError)},
		{"blank", []byte(" \n"), "is empty", new(*results.SyntaxError)},
		{"truncated", good[:len(good)/2], "is truncated", new(*results.SyntaxError)},
		{"truncated at end", good[:len(good)-3], "is truncated", new(*results.SyntaxError)},
		{"malformed", []byte("{\n  \"schema\": 1,\n  \"host\": x\n}"), "malformed at line 3, column 11", new(*results.SyntaxError)},
		{"trailing garbage", append(append([]byte{}, good...), "}"...), "malformed", new(*results.SyntaxError)},
		{"not an object", []byte("[1, 2]"), "malformed at line 1, column 2 (byte offset 1): the input is an array, not a JSON object", new(*results.SyntaxError)},
		{"a string", []byte(`"x"`), "the input is a string, not a JSON object", new(*results.SyntaxError)},
		{"figures not an array", edit(func(m map[string]any) { m["figures"] = map[string]any{} }), "figures is an object, want an array", new(*results.SyntaxError)},
		{"wrong type", bytes.Replace(good, []byte(`"size_bytes":536870912`), []byte(`"size_bytes":"big"`), 1), "size_bytes", new(*results.SyntaxError)},
		{"no schema", []byte(`{"host": "x"}`), "no schema version", nil},
		{"schema not a number", []byte(`{"schema": "1"}`), "not an integer", nil},
		{"schema 3", edit(func(m map[string]any) { m["schema"] = 3 }), "has schema version 3; this p2pbench reads version 2", new(*results.VersionError)},
		{"schema 0", edit(func(m map[string]any) { m["schema"] = 0 }), "has schema version 0", new(*results.VersionError)},
		{"empty test", edit(func(m map[string]any) { figure(m, 0)["test"] = "" }), "test is empty", new(*results.InvalidError)},
		{"empty unit", edit(func(m map[string]any) { figure(m, 1)["unit"] = "" }), "unit is empty", new(*results.InvalidError)},
		{"stats n", edit(func(m map[string]any) { figure(m, 0)["stats"].(map[string]any)["n"] = 4 }), "stats.n is 4 but there are 3 samples", new(*results.InvalidError)},
		{"stats min", edit(func(m map[string]any) { figure(m, 0)["stats"].(map[string]any)["min"] = 1.0 }), "differ from the samples", new(*results.InvalidError)},
		{"stats order", edit(func(m map[string]any) { figure(m, 0)["stats"].(map[string]any)["median"] = 1e6 }), "is below stats.median", new(*results.InvalidError)},
		{"negative sample", edit(func(m map[string]any) { figure(m, 0)["samples"].([]any)[0] = -1.0 }), "samples[0] is -1", new(*results.InvalidError)},
		{"src out of range", edit(func(m map[string]any) { figure(m, 0)["src"] = 7 }), "src 7 is not one of the run's devices", new(*results.InvalidError)},
		{"dst negative", edit(func(m map[string]any) { figure(m, 0)["dst"] = -2 }), "dst -2 is not a device index", new(*results.InvalidError)},
		{"pair out of range", edit(func(m map[string]any) {
			m["topology"].(map[string]any)["pairs"].([]any)[0].(map[string]any)["dst"] = 5.0
		}), "topology.pairs[0]: dst 5", new(*results.InvalidError)},
		{"verify state", edit(func(m map[string]any) { figure(m, 0)["verify"] = "maybe" }), `verify "maybe"`, new(*results.InvalidError)},
		{"nothing measured", edit(func(m map[string]any) {
			delete(figure(m, 0), "samples")
			delete(figure(m, 0), "stats")
		}), "neither samples nor an error", new(*results.InvalidError)},
		{"end before start", edit(func(m map[string]any) { m["end"] = "2001-01-01T00:00:00Z" }), "is before start", new(*results.InvalidError)},
		{"unit against the catalogue", edit(func(m map[string]any) { figure(m, 0)["unit"] = "MB/s" }), "unit is MB/s, but the catalogue gives GB/s for ce_read", new(*results.InvalidError)},
		{"a known test's unit in the file's catalogue", edit(func(m map[string]any) {
			m["catalogue"].(map[string]any)["ce_read"].(map[string]any)["unit"] = "MB/s"
		}), "catalogue entry ce_read: unit is MB/s, but ce_read is measured in GB/s", new(*results.InvalidError)},
		{"no verify", edit(func(m map[string]any) { delete(figure(m, 0), "verify") }), "verify is missing", new(*results.InvalidError)},
		{"bandwidth of 0 bytes", edit(func(m map[string]any) { figure(m, 0)["size_bytes"] = 0 }), "size_bytes is 0, but a bandwidth figure moves bytes", new(*results.InvalidError)},
		{"schema null", edit(func(m map[string]any) { m["schema"] = nil }), "has schema null, not a version number", nil},
		{"duplicate figure", edit(func(m map[string]any) {
			figs := m["figures"].([]any)
			m["figures"] = append(figs, figs[2])
		}), "figures[2] (sm_read 0->1 512 MiB) and figures[", new(*results.InvalidError)},
		{"long host", edit(func(m map[string]any) { m["host"] = strings.Repeat("h", 1<<20) }),
			"run: host is 1048576 bytes long, over the 256 bytes a results file allows for a name", new(*results.InvalidError)},
		{"long note", edit(func(m map[string]any) { m["notes"] = []any{"ok", strings.Repeat("n", 5000)} }),
			"run: notes[1] is 5000 bytes long, over the 4096", new(*results.InvalidError)},
		{"long param", edit(func(m map[string]any) { figure(m, 0)["params"] = map[string]any{"variant": strings.Repeat("v", 300)} }),
			`params["variant"] is 300 bytes long`, new(*results.InvalidError)},
		{"a time that is no string", edit(func(m map[string]any) { m["start"] = 5 }), "start is 5, want a time", new(*results.SyntaxError)},
		{"huge number", bytes.Replace(good, []byte(`"power_w":`), []byte(`"power_w":1e999,"x":`), 1), "malformed", new(*results.SyntaxError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.json")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := results.Read(path)
			if err == nil {
				t.Fatal("Read accepted it")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
			if tt.is != nil && !errors.As(err, tt.is) {
				t.Errorf("error %q is a %T, want %T", err, err, tt.is)
			}
			// Decode agrees, without a file name.
			if _, err := results.Decode(bytes.NewReader(tt.data)); err == nil {
				t.Error("Decode accepted it")
			}
		})
	}
}

func TestReadMissingFile(t *testing.T) {
	_, err := results.Read(filepath.Join(t.TempDir(), "none.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want an os.ErrNotExist", err)
	}
}

func TestDecodeIgnoresUnknownFields(t *testing.T) {
	data := bytes.Replace(validJSON(t), []byte(`"schema":2,`), []byte(`"schema":2,"added_later":{"x":[1,2]},`), 1)
	if !bytes.Contains(data, []byte("added_later")) {
		t.Fatal("no field was added")
	}
	if _, err := results.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("a field added within version 2 was rejected: %v", err)
	}
}
