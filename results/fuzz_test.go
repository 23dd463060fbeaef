package results

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecode checks that Decode never panics, that its errors are one line
// in the file's terms (no Go type names), and that whatever it accepts
// encodes and decodes again to an equal run. Equal means reflect.DeepEqual
// once empty slices and maps are taken for absent ones: JSON's [] and {}
// decode to empty values that omitempty then leaves out. The seed corpus is
// in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "figures": []}`))
	f.Add([]byte(`{"schema": 1, "environment": {"devices": [{"index": 0}, {"index": 1}]}, "figures": [{"test": "ce_read", "unit": "GB/s", "convention": "c", "src": 0, "dst": 1, "samples": [1, 2], "stats": {"n": 2, "median": 1.5, "mean": 1.5, "min": 1, "max": 2, "p5": 1.05, "p95": 1.95}}]}`))
	f.Add([]byte(`{"schema": 2, "catalogue": {"x": {"unit": "ns", "convention": "c"}}, "figures": [{"test": "x", "unit": "ns", "src": 0, "dst": 0, "samples": [1]}]}`))
	f.Add([]byte(`[1]`))
	f.Add([]byte(`{"schema": 2, "start": 5, "figures": {}}`))
	f.Add([]byte(`{"schema": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := Decode(bytes.NewReader(data))
		if err != nil {
			if run != nil {
				t.Fatal("Decode returned a run and an error")
			}
			for _, internal := range []string{"results.", "map[", "struct {", "Go value", "Go struct", "json.", "UnmarshalJSON", "\n"} {
				if strings.Contains(err.Error(), internal) {
					t.Fatalf("the error %q shows %q", err, internal)
				}
			}
			return
		}
		var buf bytes.Buffer
		if err := run.Encode(&buf); err != nil {
			t.Fatalf("a decoded run does not encode: %v", err)
		}
		again, err := Decode(&buf)
		if err != nil {
			t.Fatalf("a decoded run, encoded, does not decode: %v\n%s", err, buf.Bytes())
		}
		equateEmpty(reflect.ValueOf(run))
		equateEmpty(reflect.ValueOf(again))
		if !reflect.DeepEqual(run, again) {
			t.Fatalf("the run differs after encoding and decoding:\n%+v\n%+v", run, again)
		}
	})
}

// equateEmpty sets every empty slice and map reachable from v through
// exported fields, pointers and slice elements to nil.
func equateEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			equateEmpty(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				equateEmpty(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 && v.CanSet() {
			v.SetZero()
			return
		}
		if v.Kind() == reflect.Slice {
			for i := range v.Len() {
				equateEmpty(v.Index(i))
			}
		}
	}
}
