package compare_test

import (
	"fmt"
	"log"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// Compare two runs of one machine, then the same baseline with a copy of
// the second run whose copy-engine pushes at the matrices' size lost 3%:
// the regression gate flags that and nothing else.
func ExampleCompare() {
	read := func(path string) *results.Run {
		run, err := results.Read(path)
		if err != nil {
			log.Fatal(err)
		}
		return run
	}
	const set = "../testdata/reference/h200x2/2026-11-26-ag/"
	base, next := read(set+"all1.json.gz"), read(set+"all2.json.gz")
	res, err := compare.Compare([]compare.Input{{Name: "all1", Runs: []*results.Run{base}}, {Name: "all2", Runs: []*results.Run{next}}}, compare.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d figures compared, %d regressions\n", len(res.Rows), len(res.Regressions()))

	slower := read(set + "all2.json.gz")
	for i := range slower.Figures {
		f := &slower.Figures[i]
		if f.Test == results.CEWrite && f.Size == slower.MatrixSize() {
			for j := range f.Samples {
				f.Samples[j] *= 0.97
			}
			f.Stats = figstats.ComputeRoundStats(f.Samples, f.Rounds)
		}
	}
	res, err = compare.Compare([]compare.Input{{Name: "all1", Runs: []*results.Run{base}}, {Name: "slower", Runs: []*results.Run{slower}}}, compare.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, row := range res.Regressions() {
		c := row.Changes[0]
		fmt.Printf("regression: %s %d→%d %s, %+.1f%%\n", row.Test, row.Src, row.Dst, results.FormatBytes(row.Size), c.Pct)
	}
	// Output:
	// 454 figures compared, 0 regressions
	// regression: ce_write 0→1 512 MiB, -3.0%
	// regression: ce_write 1→0 512 MiB, -3.0%
}
