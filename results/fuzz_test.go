package results_test

import (
	"bytes"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// FuzzDecode checks that Decode never panics, and that whatever it accepts
// encodes and decodes again. The seed corpus is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "figures": []}`))
	f.Add([]byte(`{"schema": 1, "environment": {"devices": [{"index": 0}, {"index": 1}]}, "figures": [{"test": "ce_read", "unit": "GB/s", "src": 0, "dst": 1, "samples": [1, 2], "stats": {"n": 2, "median": 1.5, "mean": 1.5, "min": 1, "max": 2, "p5": 1.05, "p95": 1.95}}]}`))
	f.Add([]byte(`{"schema": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := results.Decode(bytes.NewReader(data))
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
		if _, err := results.Decode(&buf); err != nil {
			t.Fatalf("a decoded run, encoded, does not decode: %v", err)
		}
	})
}
