package results_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// TestReadCutShort: a file mapped into memory and cut short by another
// program before it is decoded is an error that says so, never a crash
// (reading beyond its new end faults), whether the cut falls in its
// figures' lines (decoded on every CPU) or in its first line; the same
// file left whole reads.
func TestReadCutShort(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 4, Samples: 6, Rounds: 3})
	path := filepath.Join(t.TempDir(), "run.json")
	write := func() {
		t.Helper()
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Encode(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := int64(bytes.IndexByte(data, '\n'))
	for _, cut := range []int64{0, first / 2, int64(len(data)) / 2} {
		write()
		got, mapped, err := results.ReadCut(path, cut)
		if runtime.GOOS == "linux" && !mapped {
			t.Fatalf("cut to %d: the file was not mapped", cut)
		}
		if err == nil || got != nil || !strings.Contains(err.Error(), "was cut short while it was read") {
			t.Errorf("cut to %d: %v, %v; want an error that the file was cut short", cut, got != nil, err)
		}
	}
	write()
	if _, err := results.Read(path); err != nil {
		t.Fatal(err)
	}
}
