package report_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

// write72 writes a synthetic 72-GPU run with every pair in detail, as
// --all-pairs measures one (a size sweep of four tests on each of the
// 72×71 pairs), and lets it go, so that only what a benchmark reads back is
// in memory, as in the command; cmd/p2pbench's BenchmarkReaders reads the
// default plan's.
func write72(b *testing.B, dir string) string {
	path := filepath.Join(dir, "72.json")
	run := resultstest.New(resultstest.Options{GPUs: 72})
	if err := outfile.Write(path, run.EncodeFor(path)); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d figures", len(run.Figures))
	return path
}

// BenchmarkReport72 measures `p2pbench report` of a 72-GPU run: file
// (reading the results file, the checks, the figures and the PDF, as the
// command does), in-memory (all but reading), findings (the checks alone).
func BenchmarkReport72(b *testing.B) {
	path := write72(b, b.TempDir())
	b.Run("file", func(b *testing.B) {
		for b.Loop() {
			r, err := results.Read(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := report.Report(r).WritePDF(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	run, err := results.Read(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("in-memory", func(b *testing.B) {
		for b.Loop() {
			if err := report.Report(run).WritePDF(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("judge", func(b *testing.B) {
		for b.Loop() {
			if _, err := verdict.Judge(run, verdict.Model(run)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
