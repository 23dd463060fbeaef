package results_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/synth"
)

func TestRoundTrip(t *testing.T) {
	for _, o := range []synth.Options{
		{GPUs: 2},
		{GPUs: 4, Faults: true, Samples: 5},
		{GPUs: 3, NoSweep: true, Layout: synth.NVSwitch},
	} {
		run := synth.New(o)
		path := filepath.Join(t.TempDir(), "run.json")
		if err := results.Write(path, run); err != nil {
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

func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	good := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	if err := results.Write(path, good); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	// A run that cannot be encoded must leave the old file intact.
	bad := synth.New(synth.Options{GPUs: 2, NoSweep: true})
	bad.Figures[0].Samples[0] = nanValue()
	if err := results.Write(path, bad); err == nil {
		t.Fatal("Write of a NaN sample succeeded")
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a failed Write changed the existing file")
	}
	// Overwrite works, and neither success nor failure leaves temp files.
	if err := results.Write(path, good); err != nil {
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

func TestWriteToMissingDirectory(t *testing.T) {
	err := results.Write(filepath.Join(t.TempDir(), "no", "such", "run.json"), synth.New(synth.Options{GPUs: 2, NoSweep: true}))
	if err == nil {
		t.Fatal("Write into a missing directory succeeded")
	}
}

func TestEncodeKeepsSamplesOnOneLine(t *testing.T) {
	run := synth.New(synth.Options{GPUs: 2, NoSweep: true, Samples: 3})
	var buf bytes.Buffer
	if err := run.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"samples": [`) || strings.Contains(buf.String(), "\"samples\": [\n") {
		t.Error("samples are not written on one line")
	}
	if !json.Valid(buf.Bytes()) {
		t.Error("Encode wrote invalid JSON")
	}
}

// validJSON is a small valid results file.
func validJSON(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.New(synth.Options{GPUs: 2, NoSweep: true, Samples: 3}).Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadRejects(t *testing.T) {
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
		{"not an object", []byte("[1, 2]"), "malformed at line 1", new(*results.SyntaxError)},
		{"wrong type", bytes.Replace(good, []byte(`"size_bytes": 536870912`), []byte(`"size_bytes": "big"`), 1), "size_bytes", new(*results.SyntaxError)},
		{"no schema", []byte(`{"host": "x"}`), "no schema version", nil},
		{"schema not a number", []byte(`{"schema": "1"}`), "not an integer", nil},
		{"schema 2", edit(func(m map[string]any) { m["schema"] = 2 }), "has schema version 2; this p2pbench reads version 1", new(*results.VersionError)},
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
		{"huge number", bytes.Replace(good, []byte(`"power_w": `), []byte(`"power_w": 1e999, "x": `), 1), "malformed", new(*results.SyntaxError)},
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
	data := bytes.Replace(validJSON(t), []byte(`"schema": 1,`), []byte(`"schema": 1, "added_later": {"x": [1, 2]},`), 1)
	if _, err := results.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("a field added within version 1 was rejected: %v", err)
	}
}
