package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// machine is a synthetic run of n GPUs shaped as p2pbench all measures one
// with its defaults (resultstest.Default: on 72 GPUs bench's sampled plan, the
// latency sizes and SM copy kernels the engine writes, five rounds).
func machine(n int, seed uint64) resultstest.Options {
	o := resultstest.Default(n)
	o.Seed, o.Host = seed, fmt.Sprintf("gpus%d-%d", n, seed)
	return o
}

// writeRuns writes k runs of n GPUs (seeds 0 … k−1) into dir, then the
// first again gzip-compressed, and returns their paths in that order,
// logging each file's size; the runs are let go, so that only what a
// command reads back is in memory, as in the command.
func writeRuns(b *testing.B, dir string, n, k int) []string {
	var paths []string
	write := func(name string, run *results.Run) {
		p := filepath.Join(dir, name)
		if err := outfile.Write(p, run.EncodeFor(p)); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d figures, %.1f MB", name, len(run.Figures), float64(fi.Size())/1e6)
		paths = append(paths, p)
	}
	first := resultstest.New(machine(n, 0))
	write(fmt.Sprintf("gpus%d-0.json", n), first)
	for seed := 1; seed < k; seed++ {
		write(fmt.Sprintf("gpus%d-%d.json", n, seed), resultstest.New(machine(n, uint64(seed))))
	}
	write(fmt.Sprintf("gpus%d-0.json.gz", n), first)
	return paths
}

// BenchmarkReaders runs the commands that read results, in process, on
// default-shaped runs of 8 and 72 GPUs written once outside the timer:
// show, check, compare of two runs, the Markdown and PDF reports (with
// their plots), plot, the fleet view of three runs, and show of the first
// run gzip-compressed. The bar (issue 27) is 1 s and 300 MB for each on a
// 2-core machine at 72 GPUs; docs/performance.md has the figures, and
// scripts/readers-rss.sh measures the commands' peak memory on the same
// inputs, which $P2PBENCH_READERS_DIR, when set, keeps.
func BenchmarkReaders(b *testing.B) {
	keep := os.Getenv("P2PBENCH_READERS_DIR")
	for _, n := range []int{8, 72} {
		dir := b.TempDir()
		if keep != "" {
			dir = keep
		}
		paths := writeRuns(b, dir, n, 3)
		out := filepath.Join(dir, "out")
		for _, c := range []struct {
			name string
			args []string
		}{
			{"show", []string{"show", paths[0]}},
			{"check", []string{"check", paths[0]}},
			{"compare", []string{"compare", paths[0], paths[1]}},
			{"report-md", []string{"report", "-o", out + ".md", paths[0]}},
			{"report-pdf", []string{"report", "-o", out + ".pdf", paths[0]}},
			{"plot", []string{"plot", "-o", out + ".png", paths[0]}},
			{"fleet", []string{"fleet", paths[0], paths[1], paths[2]}},
			{"show-gz", []string{"show", paths[3]}},
		} {
			b.Run(fmt.Sprintf("gpus=%d/%s", n, c.name), func(b *testing.B) {
				for b.Loop() {
					// The readers that judge may find something (exit 4 or 5).
					judges := c.name == "check" || c.name == "compare" || c.name == "fleet"
					if code := run(append([]string{"p2pbench"}, c.args...), io.Discard, io.Discard); code != 0 && !(judges && (code == 4 || code == 5)) {
						b.Fatalf("p2pbench %v: exit status %d", c.args, code)
					}
				}
			})
		}
	}
}
