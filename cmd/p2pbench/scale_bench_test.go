package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/synth"
)

// nvl72 is a synthetic 72-GPU NVLink domain shaped as the default plan
// measures one: the matrices and aggregates on every pair, in five rounds;
// sweeps, latency, atomics and IPC on four representative pairs.
func nvl72(seed uint64) synth.Options {
	return synth.Options{GPUs: 72, Rounds: 5, Representatives: 4, Seed: seed, Host: fmt.Sprintf("nvl72-%d", seed)}
}

// writeNVL72 writes n such runs (seeds 0 … n−1) into dir and reports the
// first file's size; the runs are let go, so that only what a command
// reads back is in memory, as in the command.
func writeNVL72(b *testing.B, dir string, n int) []string {
	var paths []string
	for seed := range uint64(n) {
		p := filepath.Join(dir, fmt.Sprintf("nvl72-%d.json", seed))
		if err := results.Write(p, synth.New(nvl72(seed))); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	fi, err := os.Stat(paths[0])
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %.1f MB", filepath.Base(paths[0]), float64(fi.Size())/1e6)
	return paths
}

// BenchmarkNVL72 runs the commands that read results, in process, on
// plan-shaped 72-GPU runs written once outside the timer: show, check, the
// Markdown and PDF reports (with their plots), compare of two runs and the
// fleet view of three. The bar is 2 s for report and compare on a
// 2-core machine.
func BenchmarkNVL72(b *testing.B) {
	dir := b.TempDir()
	paths := writeNVL72(b, dir, 3)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"show", []string{"show", paths[0]}},
		{"check", []string{"check", paths[0]}},
		{"report-md", []string{"report", "-o", out + ".md", paths[0]}},
		{"report-pdf", []string{"report", "-o", out + ".pdf", paths[0]}},
		{"compare", []string{"compare", paths[0], paths[1]}},
		{"fleet", []string{"fleet", paths[0], paths[1], paths[2]}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if code := run(append([]string{"p2pbench"}, c.args...), io.Discard, io.Discard); code != 0 && c.name != "check" {
					b.Fatalf("p2pbench %v: exit status %d", c.args, code)
				}
			}
		})
	}
}
