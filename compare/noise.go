package compare

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/p2pbench/p2pbench/results"
)

// The noise model: a change is flagged (a regression or an improvement)
// only when it is significant on independent units and larger than the
// noise the runs themselves show.
//
// The samples of one run are not independent of each other: what a process
// keeps for its life (where its buffers landed, its streams) moves all of
// them together, by 2–6% at small sizes on the 2× H200 while each run's own
// interval is ±0.1%. A run takes each figure's samples in rounds that renew
// that state (results.Figure.Rounds), so the rounds' medians are the units
// that vary as runs do; several runs of one side (ReadGroups) are units too,
// through their rounds. Where both sides have MinUnits units, the U test
// runs on their medians, and the noise floor is NoiseMultiple times the
// run-to-run CV: the relative standard deviation of the units about their
// side's mean, pooled over both sides and over the figure's class (the
// figures of the same test, engine, direction, part and params on every
// pair, at sizes within a factor of 16: sizeBand), since five rounds a side
// alone estimate it too loosely.
//
// Runs without rounds (written before rounds, or with --rounds below
// MinUnits) have no units to test: the U test runs on their samples, as it
// did, and the floor is what was measured between processes for such a
// figure (measuredNoise) or the baseline's own spread, whichever is larger.
// Either floor is at least the threshold (Options.Threshold).

// MinUnits is the fewest units each side needs to be tested on them. With
// three against three the U test cannot reach p < 0.05 (its least p is
// 0.1), so nothing is flagged; four against four can (0.029), and five
// rounds, the default, against five (0.008).
const MinUnits = 3

// NoiseMultiple is how many run-to-run CVs make the noise floor. A run's
// median moves by about 0.75 of a round's CV between two runs of five
// rounds each, so a floor of three CVs is about four standard deviations of
// an unchanged figure's change. Simulated (rounds of four samples whose
// medians vary with a CV σ, five a side, the U test on them): an unchanged
// figure is flagged once in 20000 comparisons when its class has eight
// figures, once in 600 alone (its CV then rests on its own ten rounds); a
// change of 5σ is flagged 99% of the time, of 3σ half of it. So a 10%
// change of a figure whose rounds spread by 2% is flagged, while a
// comparison of 600 figures of an unchanged machine flags one about once in
// 30 comparisons.
const NoiseMultiple = 3.0

// unitSpread is what one side's units say of the noise: the sum of their
// squared relative deviations from their mean, and its degrees of freedom.
type unitSpread struct {
	ss float64
	df int
}

func (u unitSpread) add(v unitSpread) unitSpread { return unitSpread{u.ss + v.ss, u.df + v.df} }

// variance is the pooled relative variance (0 without degrees of freedom).
func (u unitSpread) variance() float64 {
	if u.df == 0 {
		return 0
	}
	return u.ss / float64(u.df)
}

// spreadOf is the spread of a side's units (none for fewer than two).
func spreadOf(units *benchmath.Sample) unitSpread {
	if units == nil || len(units.Values) < 2 {
		return unitSpread{}
	}
	mean := 0.0
	for _, x := range units.Values {
		mean += x
	}
	mean /= float64(len(units.Values))
	if mean == 0 {
		return unitSpread{}
	}
	var ss float64
	for _, x := range units.Values {
		d := x/mean - 1
		ss += d * d
	}
	return unitSpread{ss: ss, df: len(units.Values) - 1}
}

// rowNoise is what a row knows of its noise before judge: the spread of
// each side's units, and the baseline's spread within its run.
type rowNoise struct {
	sides      []unitSpread
	baseSpread float64
}

// onUnits says whether two sides are tested on their units.
func onUnits(a, b side) bool {
	return a.units != nil && b.units != nil && len(a.units.Values) >= MinUnits && len(b.units.Values) >= MinUnits
}

// withinRunSpread is half the p5–p95 range of a figure's samples, relative
// to its median: how much it moved within its run.
func withinRunSpread(f *results.Figure) float64 {
	if s := f.Stats; s != nil && s.Median > 0 {
		return (s.P95 - s.P5) / 2 / s.Median
	}
	return 0
}

// measuredNoise is how much worse than its baseline a figure of its kind
// and size came out from one run to the next on the healthy 2× H200, as a
// fraction (hardware.md; testdata/reference/h200x2/all.json against
// all-repeat.json, back to back): bandwidth at 64 MiB and more by 0.1%
// across processes, from 1 MiB by up to 3.6% (16 MiB), below 1 MiB by up
// to 7.4% (8 KiB) between two runs and 2–6% across five processes. A small
// copy's device time is 12.1 or 20.3 µs depending on the process (68%), its
// host time spreads by 22%; the pointer chase beyond L2 lands on either of
// two modes 16% apart. Other latencies and atomics have no measurement of
// their own and take the small copies' 10%.
func measuredNoise(row *Row) float64 {
	switch {
	case row.Test == results.LatCopyDevice || row.Test == results.LatCopyHost:
		return 0.70
	case row.Test == results.LatChase || row.Test == results.IPCLatChase:
		return 0.20
	case row.Unit != results.UnitGBps:
		return 0.10
	case row.Size >= 64<<20:
		return 0.02
	case row.Size >= 1<<20:
		return 0.05
	}
	return 0.10
}

// processModes is the floor of the figures known to settle, for a whole
// process, in one of modes that its rounds cannot renew (0 for any other):
// the copy engine's copies between two processes on one GPU through legacy
// IPC handles (the importer's mapping is made once, as the exporter's
// buffers stay put for the run) came out at about 2060 or 1700–1820 GB/s
// by process on an H200 (six processes, testdata/reference/h200x1), while
// each process's rounds agreed within 0.2%; the same copies through VMM
// handles did not (2072–2097). Between the lowest mode seen and the VMM
// figures: 23%.
func processModes(row *Row) float64 {
	if (row.Test == results.IPCCERead || row.Test == results.IPCCEWrite) &&
		strings.Contains(","+row.Params+",", ",same_gpu=true,") && !strings.Contains(row.Params, results.ParamIPCHandle+"=") {
		return 0.25
	}
	return 0
}

// classOf names a row's class: its key but for the pair, with its size's
// band.
func classOf(row *Row) string {
	return strings.Join([]string{string(row.Test), string(row.Engine), string(row.Direction), string(row.Part),
		string(row.Unit), row.Params, strconv.Itoa(sizeBand(row.Size))}, "|")
}

// sizeBand groups sizes by factors of 16 (4 B–32 B, 64 B–512 B, 1 KiB–8 KiB,
// …): the run-to-run noise changes slowly with the size (at small sizes it
// is the copies' fixed cost, at large ones the link's), so neighbouring
// sizes of a sweep share their rounds' evidence.
func sizeBand(n uint64) int { return bits.Len64(n) / 4 }

// judge sets every change's noise floor and its flags: significant, worse
// or better, and at least the floor.
func judge(rows []Row, noise []rowNoise, threshold float64) {
	if len(rows) == 0 {
		return
	}
	for i := range rows[0].Changes {
		class := map[string]unitSpread{}
		for r := range rows {
			if unitsTest(rows[r].Changes[i]) {
				k := classOf(&rows[r])
				class[k] = class[k].add(noise[r].sides[0]).add(noise[r].sides[i+1])
			}
		}
		for r := range rows {
			row, ch := &rows[r], &rows[r].Changes[i]
			if !ch.Valid {
				continue
			}
			if unitsTest(*ch) {
				ch.Floor, ch.FloorFrom = NoiseMultiple*math.Sqrt(class[classOf(row)].variance()), ch.TestedOn
				if m := processModes(row); m > ch.Floor {
					ch.Floor, ch.FloorFrom = m, "modes"
				}
			} else {
				ch.Floor, ch.FloorFrom = math.Max(measuredNoise(row), noise[r].baseSpread), "measured"
			}
			if threshold >= ch.Floor {
				ch.Floor, ch.FloorFrom = threshold, "threshold"
			}
			worse := ch.Pct < 0
			if row.LowerIsBetter {
				worse = ch.Pct > 0
			}
			big := math.Abs(ch.Pct) >= 100*ch.Floor && ch.Pct != 0
			ch.Regression = ch.Significant && worse && big
			ch.Improvement = ch.Significant && !worse && big
		}
	}
}

// unitsTest says whether a change was tested on units.
func unitsTest(ch Change) bool { return ch.TestedOn == "rounds" || ch.TestedOn == "runs" }
