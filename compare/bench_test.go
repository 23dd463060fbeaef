package compare_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// BenchmarkReference measures the steps of `p2pbench compare` on the
// committed reference runs: reading both files, comparing the run with its
// repeat and with itself, and the text table.
func BenchmarkReference(b *testing.B) {
	paths := []string{reference("all.json"), reference("all-repeat.json")}
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, err := readInputs(paths); err != nil {
				b.Fatal(err)
			}
		}
	})
	in, err := readInputs(paths)
	if err != nil {
		b.Fatal(err)
	}
	var res *compare.Result
	for _, c := range []struct {
		name   string
		inputs []compare.Input
	}{{"compare-self", []compare.Input{in[0], in[0]}}, {"compare-repeat", in}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if res, err = compare.Compare(c.inputs, compare.Options{Threshold: 0.05}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("text", func(b *testing.B) {
		for b.Loop() {
			if err := compare.WriteText(io.Discard, res); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCompare72 measures `p2pbench compare` of two 72-GPU runs with
// every pair in detail, as --all-pairs measures one (a size sweep of four
// tests on each of the 72×71 pairs, and more):
// files (reading both files, comparing every figure and writing the text
// table, as the command does) and the steps alone.
func BenchmarkCompare72(b *testing.B) {
	dir := b.TempDir()
	var paths []string
	for seed := range uint64(2) {
		p := filepath.Join(dir, "run"+string(rune('a'+seed))+".json")
		run := resultstest.New(resultstest.Options{GPUs: 72, Seed: seed})
		if err := outfile.Write(p, run.EncodeFor(p)); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d figures", filepath.Base(p), len(run.Figures))
		paths = append(paths, p)
	}
	b.Run("files", func(b *testing.B) {
		for b.Loop() {
			in, err := readInputs(paths)
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
		}
	})
	in, err := readInputs(paths)
	if err != nil {
		b.Fatal(err)
	}
	var res *compare.Result
	b.Run("compare", func(b *testing.B) {
		for b.Loop() {
			if res, err = compare.Compare(in, compare.Options{Threshold: 0.05}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("text", func(b *testing.B) {
		for b.Loop() {
			if err := compare.WriteText(io.Discard, res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
