package resultstest

import (
	"maps"
	"math"
	"strconv"

	"github.com/p2pbench/p2pbench/results"
)

// hostMemGBps bounds the host aggregates: what host memory serves to every
// device at once.
const hostMemGBps = 250

// host adds the tests between host memory and the devices: SM copies each
// way, both ways at once on one device, every device at once (each way and
// both), and the pointer chase through host memory. Copies to and from the
// host are PCIe-bound; the SM figures run a few percent under the copy
// engine's, as on the 2× H200 (55.4 against 51.2 and 52.6 GB/s).
func (g *gen) host() {
	n := g.o.GPUs
	size := uint64(MatrixSize)
	pcie := g.m.pcieGBps
	lat := func(e results.Engine) float64 {
		if e == results.EngineCopy {
			return ceLatency
		}
		return smLatency
	}
	smEngine, smParams := g.smHost()
	fig := func(test results.Test, e results.Engine, part results.Part, s, d int, gbps float64) results.Figure {
		var params map[string]string
		if e != results.EngineCopy {
			params = smParams
		}
		return g.bwFigure(test, e, "", part, s, d, size, gbps, lat(e), params)
	}
	for d := 0; d < n; d++ {
		g.add(fig(results.SMH2D, smEngine, results.PartNone, -1, d, 0.925*pcie))
		g.add(fig(results.SMD2H, smEngine, results.PartNone, d, -1, 0.95*pcie))
		for _, b := range []struct {
			test results.Test
			e    results.Engine
			each float64
		}{{results.HostBidir, results.EngineCopy, 0.92 * pcie}, {results.SMHostBidir, smEngine, 0.88 * pcie}} {
			g.bothWays(fig(b.test, b.e, results.PartForward, -1, d, b.each), fig(b.test, b.e, results.PartReverse, -1, d, 0.99*b.each))
		}
		g.add(results.Figure{Test: results.LatHostChase, Engine: results.EngineSM, Src: -1, Dst: d, Size: 2 << 20,
			Samples: g.latSamples(1190, chaseSamples), Verify: results.VerifyNA,
			Params: map[string]string{"working_set": "2 MiB", "stride": "128", "hops_per_sample": "512", "memory": "host"}})
	}
	if g.planned() {
		return // a sampled plan has no host copies of every device at once
	}
	total := func(test results.Test, e results.Engine, gbps float64) {
		f := fig(test, e, results.PartTotal, -1, -1, gbps)
		f.Params = maps.Clone(f.Params)
		if f.Params == nil {
			f.Params = map[string]string{}
		}
		f.Params["devices"] = strconv.Itoa(n)
		g.add(f)
	}
	for _, a := range []struct {
		toAll, toHost, both results.Test
		e                   results.Engine
		speed               float64
	}{
		{results.HostToAll, results.AllToHost, results.HostAllBidir, results.EngineCopy, 1},
		{results.SMHostToAll, results.SMAllToHost, results.SMHostAllBidir, smEngine, 0.93},
	} {
		each := a.speed * math.Min(pcie, hostMemGBps/float64(n))
		for _, t := range []results.Test{a.toAll, a.toHost} {
			for d := 0; d < n; d++ {
				s, dst := -1, d
				if t == a.toHost {
					s, dst = d, -1
				}
				g.add(fig(t, a.e, results.PartPair, s, dst, each))
			}
			total(t, a.e, 0.99*each*float64(n))
		}
		bidir := 0.92 * a.speed * math.Min(pcie, hostMemGBps/float64(2*n))
		for d := 0; d < n; d++ {
			g.add(fig(a.both, a.e, results.PartForward, -1, d, bidir))
			g.add(fig(a.both, a.e, results.PartReverse, -1, d, 0.99*bidir))
		}
		total(a.both, a.e, 0.98*bidir*float64(2*n))
	}
}

// bothWays adds the forward and reverse figures of a copy both ways at once
// and their total: both directions' bytes over the longer time.
func (g *gen) bothWays(fwd, rev results.Figure) {
	tot := fwd
	tot.Part = results.PartTotal
	tot.Samples = make([]float64, len(fwd.Samples))
	for i := range tot.Samples {
		tot.Samples[i] = 2 * math.Min(fwd.Samples[i], rev.Samples[i])
	}
	g.add(fwd)
	g.add(rev)
	g.add(tot)
}
