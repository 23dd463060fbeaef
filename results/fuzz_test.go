package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecode checks that Decode never panics; that the fast decoder, when
// it accepts an input, decodes it as encoding/json does, and with read
// options accepts the same inputs and leaves out only stats; and that
// whatever Decode accepts encodes (identically with the fast encoder and
// with encoding/json) and decodes again. The seed corpus is in
// testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "figures": []}`))
	f.Add([]byte(`{"schema": 1, "environment": {"devices": [{"index": 0}, {"index": 1}]}, "figures": [{"test": "ce_read", "unit": "GB/s", "src": 0, "dst": 1, "samples": [1, 2], "stats": {"n": 2, "median": 1.5, "mean": 1.5, "min": 1, "max": 2, "p5": 1.05, "p95": 1.95}}]}`))
	f.Add([]byte(`{"schema": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if fast, ok := decodeFast(data, ReadOptions{}); ok {
			var slow Run
			if err := json.Unmarshal(data, &slow); err != nil {
				t.Fatalf("the fast decoder accepted what encoding/json rejects: %v", err)
			}
			if !reflect.DeepEqual(*fast, slow) {
				t.Fatalf("fast and encoding/json decodings differ")
			}
			checkOptions(t, "input", data, fast)
		} else {
			checkOptions(t, "input", data, nil)
		}
		run, err := Decode(bytes.NewReader(data))
		if err != nil {
			if run != nil {
				t.Fatal("Decode returned a run and an error")
			}
			return
		}
		var buf bytes.Buffer
		if err := run.Encode(&buf); err != nil {
			t.Fatalf("a decoded run does not encode: %v", err)
		}
		legacy, err := json.MarshalIndent(run, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), append(compactNumberArrays(legacy), '\n')) {
			t.Fatal("the fast encoder differs from encoding/json")
		}
		if _, err := Decode(&buf); err != nil {
			t.Fatalf("a decoded run, encoded, does not decode: %v", err)
		}
	})
}
