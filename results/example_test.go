package results_test

import (
	"fmt"
	"log"

	"github.com/p2pbench/p2pbench/results"
)

// Read a results file (plain or gzip-compressed), say what ran, and take
// one figure: the copy engine's pull from GPU 0 to GPU 1 at the matrices'
// size, its median and the interval where another run's median falls.
func ExampleRead() {
	run, err := results.Read("../testdata/reference/h200x2/2026-11-26-ag/all1.json.gz")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.GPUSummary(), "simulated:", run.Simulated)
	size := run.MatrixSize()
	for _, f := range run.FiguresOf(results.CERead) {
		if f.Src == 0 && f.Dst == 1 && f.Size == size && !f.Failed() {
			r := f.Stats.Rounds
			fmt.Printf("%s %d→%d, %s: median %.1f %s over %d rounds, another run's within %.1f–%.1f\n",
				f.Test.Title(), f.Src, f.Dst, results.FormatBytes(f.Size), f.Stats.Median, f.Unit, r.N, r.MedianLo, r.MedianHi)
		}
	}
	// Output:
	// 2× NVIDIA H200 simulated: false
	// Copy engine read (pull) 0→1, 512 MiB: median 393.9 GB/s over 5 rounds, another run's within 392.9–394.9
}
