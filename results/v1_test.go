package results_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// v1Files are the committed reference results, written with schema version 1.
func v1Files(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../testdata/reference/h200x2/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no reference results (%v)", err)
	}
	return files
}

// TestReadV1Reference reads every reference file and checks that the run
// holds exactly what the version-1 JSON says, but for the conventions, which
// move to the catalogue: each test's is its first figure's.
func TestReadV1Reference(t *testing.T) {
	for _, path := range v1Files(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var v1 map[string]any
			if err := json.Unmarshal(data, &v1); err != nil {
				t.Fatal(err)
			}
			if v1["schema"] != 1.0 {
				t.Fatalf("schema %v, want a version-1 file", v1["schema"])
			}
			run, err := results.Read(path)
			if err != nil {
				t.Fatal(err)
			}

			// The catalogue: each test's unit and convention as its
			// figures gave them.
			v1Figures, _ := v1["figures"].([]any)
			described := map[results.Test]bool{}
			for i, x := range v1Figures {
				f := x.(map[string]any)
				test := results.Test(f["test"].(string))
				conv, _ := f["convention"].(string)
				delete(f, "convention")
				if !described[test] {
					described[test] = true
					if got := run.Convention(test); got != conv {
						t.Errorf("%s: convention %q, want the file's %q", test, got, conv)
					}
					if got := run.Catalogue[test].Unit; string(got) != f["unit"] {
						t.Errorf("%s: catalogue unit %q, want the file's %q", test, got, f["unit"])
					}
				}
				if run.Figures[i].Test != test {
					t.Fatalf("figure %d is %s, want %s", i, run.Figures[i].Test, test)
				}
			}

			// Everything else, figures included (values, samples, stats,
			// params, errors, link traffic), is what the file holds.
			v1["schema"] = float64(results.SchemaVersion)
			got := asJSON(t, run)
			if _, ok := got["catalogue"]; !ok && len(run.Figures) > 0 {
				t.Error("the run has no catalogue")
			}
			delete(got, "catalogue")
			if !reflect.DeepEqual(got, v1) {
				for k := range v1 {
					if !reflect.DeepEqual(got[k], v1[k]) {
						t.Errorf("%s differs from the file's", k)
					}
				}
				for k := range got {
					if _, ok := v1[k]; !ok {
						t.Errorf("%s is not in the file", k)
					}
				}
			}
		})
	}
}

// TestV1ReferenceRoundTrip writes each converted reference file as version
// 2 and reads it back.
func TestV1ReferenceRoundTrip(t *testing.T) {
	for _, path := range v1Files(t) {
		run, err := results.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := run.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		again, err := results.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, run) {
			t.Errorf("%s: the run differs after writing version 2 and reading it back", path)
		}
	}
}

// asJSON is v as encoding/json's generic values.
func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
