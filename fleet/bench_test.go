package fleet_test

import (
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/results"
)

// BenchmarkLoad500 is the fleet check at scale: 500 synthetic nodes of two
// machine types, with weak links and a slow node planted, written as
// results files; each iteration reads and analyses them all and must name
// exactly what was planted. cmd/p2pbench's BenchmarkFleet holds the bar
// of issue 40 (1,000 nodes of the engine's 8-GPU runs).
func BenchmarkLoad500(b *testing.B) {
	p := plantedFleet(500, results.CERead, results.CEWrite, results.SMWrite, results.H2D)
	dir := b.TempDir()
	start := time.Now()
	for _, f := range p.fleets {
		for i := range f.Nodes {
			writeRun(b, dir, f.Host(i), f.Run(i))
		}
	}
	b.Logf("generating and writing 500 nodes took %v", time.Since(start))
	for b.Loop() {
		f, err := fleet.Load([]string{dir}, fleet.Options{})
		if err != nil {
			b.Fatal(err)
		}
		p.check(b, f)
	}
}
