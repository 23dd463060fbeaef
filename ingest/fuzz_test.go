package ingest_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/ingest"
	"github.com/p2pbench/p2pbench/results"
)

// fuzzFormat checks that a format's decoder never panics, that it fails
// with a one-line *ingest.Error naming the file, and that whatever it
// accepts is a valid run that reads back from its file. The fixtures and
// seeds are the seed corpus.
func fuzzFormat(f *testing.F, format ingest.Format, fixtures []string, seeds ...string) {
	for _, path := range fixtures {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := ingest.Decode("fuzz.in", data, ingest.Options{Format: format})
		if err != nil {
			var ie *ingest.Error
			msg := err.Error()
			if run != nil || !errors.As(err, &ie) || !strings.HasPrefix(msg, "fuzz.in") || strings.Contains(msg, "\n") || strings.Contains(msg, "a bug of the importer") {
				t.Fatalf("error %q (%T), run %v", msg, err, run != nil)
			}
			return
		}
		var buf bytes.Buffer
		if err := run.Encode(&buf); err != nil {
			t.Fatalf("an imported run does not encode: %v", err)
		}
		if _, err := results.Decode(&buf); err != nil {
			t.Fatalf("an imported run does not read back: %v", err)
		}
	})
}

func FuzzNVBandwidthJSON(f *testing.F) {
	fuzzFormat(f, ingest.NVBandwidthJSON, []string{nvbJSONFixture},
		`{"nvbandwidth": {"version": "v0.5", "testcases": [{"name": "device_to_device_bidirectional_memcpy_read_sm", "status": "Passed", "bandwidth_matrix": [["N/A", "1"], ["2", "N/A"]]}]}}`,
		`{"nvbandwidth": {"GPU Device list": ["0: A (0:1:2): (h)"], "testcases": [{"name": "all_to_one_write_ce", "status": "Passed", "bandwidth_matrix": [["3"]]}, {"name": "x", "status": "Running"}]}}`)
}

func FuzzNVBandwidthText(f *testing.F) {
	fuzzFormat(f, ingest.NVBandwidthText, []string{nvbTextFixture},
		"nvbandwidth Version: v0.4\nDevice 0: A\nDevice 1: B\nRunning device_to_device_memcpy_write_sm.\nx (GB/s)\n 0 1\n0 0.00 1.5\n1 2.5 0.00\n\nSUM k 4\nRunning device_local_copy.\nWaived: \n")
}

func FuzzNCCLTests(f *testing.F) {
	fuzzFormat(f, ingest.NCCLTestsText, []string{sendrecvFixture, allReduceFixture},
		"# Collective test starting: hypercube_perf\n"+ncclColumns+"1024 256 float -1 9.8 0.1 0.1 0 9.75 0.1 0.1 N/A\n# Avg bus bandwidth : 1\n")
}
