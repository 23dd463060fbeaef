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
// measures one (bench's sampled plan): the copy engine's one-way matrices
// and the aggregates on every pair, in five rounds; the other matrices,
// sweeps, latency, atomics and IPC on 146 detail pairs (two representatives
// and each device's next two peers).
func nvl72(seed uint64) synth.Options {
	return synth.Options{GPUs: 72, Rounds: 5, Representatives: 2, PeersPerDevice: 2, Seed: seed, Host: fmt.Sprintf("nvl72-%d", seed)}
}

// writeNVL72 writes n such runs (seeds 0 … n−1) into dir, then the first
// again gzip-compressed, and returns their paths in that order, logging
// each file's size; the runs are let go, so that only what a command reads
// back is in memory, as in the command.
func writeNVL72(b *testing.B, dir string, n int) []string {
	var paths []string
	write := func(name string, run *results.Run) {
		p := filepath.Join(dir, name)
		if err := results.Write(p, run); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d figures, %.1f MB", name, len(run.Figures), float64(fi.Size())/1e6)
		paths = append(paths, p)
	}
	first := synth.New(nvl72(0))
	write("nvl72-0.json", first)
	for seed := 1; seed < n; seed++ {
		write(fmt.Sprintf("nvl72-%d.json", seed), synth.New(nvl72(uint64(seed))))
	}
	write("nvl72-0.json.gz", first)
	return paths
}

// BenchmarkNVL72 runs the commands that read results, in process, on
// plan-shaped 72-GPU runs written once outside the timer: show, check, the
// Markdown and PDF reports (with their plots), compare of two runs, the
// fleet view of three, and show of the first run gzip-compressed. The
// issue's bar is 2 s for report and compare on a 2-core machine.
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
		{"show-gz", []string{"show", paths[3]}},
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
