package results_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// BenchmarkRead72 and BenchmarkWrite72 read and write a 72-GPU run with a
// size sweep on every pair (several hundred thousand figures); both report
// the file's size.
func BenchmarkRead72(b *testing.B) {
	path := filepath.Join(b.TempDir(), "72.json")
	if err := outfile.Write(path, resultstest.New(resultstest.Options{GPUs: 72}).EncodeFor(path)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := results.Read(path); err != nil {
			b.Fatal(err)
		}
	}
	reportSize(b, path)
}

func BenchmarkWrite72(b *testing.B) {
	path := filepath.Join(b.TempDir(), "72.json")
	run := resultstest.New(resultstest.Options{GPUs: 72})
	for b.Loop() {
		if err := outfile.Write(path, run.EncodeFor(path)); err != nil {
			b.Fatal(err)
		}
	}
	reportSize(b, path)
}

func reportSize(b *testing.B, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/1e6, "MB/file")
}
