package compare_test

import (
	"io"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/synth"
)

// BenchmarkCompare72 measures `p2pbench compare` of two 72-GPU runs with a
// size sweep on every pair (72×71 pairs × 28 sizes × 2 engines): files
// (reading both files, comparing every figure, the text table, as the
// command does, from a fresh heap) and in-memory (all but reading).
func BenchmarkCompare72(b *testing.B) {
	dir := b.TempDir()
	var paths []string
	for seed := range uint64(2) {
		p := filepath.Join(dir, "run"+string(rune('a'+seed))+".json")
		run := synth.New(synth.Options{GPUs: 72, Seed: seed})
		if err := results.Write(p, run); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d figures", filepath.Base(p), len(run.Figures))
		paths = append(paths, p)
	}
	b.Run("files", func(b *testing.B) {
		for b.Loop() {
			// Each run starts as the command does: with no heap to reuse
			// (the memory of the run before returned to the system) and
			// the collector tuned.
			b.StopTimer()
			debug.FreeOSMemory()
			b.StartTimer()
			restore := compare.TuneGC(paths)
			in, err := compare.ReadInputs(paths)
			if err != nil {
				b.Fatal(err)
			}
			res, err := compare.Compare(in, compare.Options{Threshold: 0.05})
			if err != nil {
				b.Fatal(err)
			}
			if err := compare.WriteText(io.Discard, res); err != nil {
				b.Fatal(err)
			}
			restore()
		}
	})
	in, err := compare.ReadInputs(paths)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("in-memory", func(b *testing.B) {
		for b.Loop() {
			res, err := compare.Compare(in, compare.Options{Threshold: 0.05})
			if err != nil {
				b.Fatal(err)
			}
			if err := compare.WriteText(io.Discard, res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
