package verdict_test

import (
	"fmt"
	"log"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// Judge a results file against p2pbench's model of its machine (the
// expectation table), as p2pbench check does: the overall status, then
// each check's.
func ExampleJudge() {
	run, err := results.Read("../testdata/reference/h200x2/2026-11-26-ag/all1.json.gz")
	if err != nil {
		log.Fatal(err)
	}
	v, err := verdict.Judge(run, verdict.Model(run))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verdict:", v.Status, "failing:", verdict.Failing(v, false))
	for _, c := range v.Checks {
		fmt.Printf("%-10s %s\n", c.Status, c.Title)
	}
	// Output:
	// verdict: warn failing: false
	// pass       Bandwidth
	// pass       Latency and atomics
	// warn       NVLink and PCIe links
	// pass       GPU memory
	// pass       Other programs on the GPUs
	// pass       Clocks and temperature
	// pass       Every figure measured
	// not_judged Pairs alike within their link class
	// pass       Figures steady
	// pass       Across processes, against one process
}
