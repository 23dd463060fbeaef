package compare

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/p2pbench/p2pbench/results"
)

// The noise model: a change is flagged (a regression or an improvement)
// only when it is at least its noise floor, and significant on independent
// units where the sides have them.
//
// The samples of one run are never taken as independent: what a process
// keeps for its life (its context, where its buffers and the other
// processes' landed, the mode a small transfer settles in) moves all of them
// together. The units are the medians of the rounds a figure was measured
// in (results.Figure.Rounds), or of whole runs where each side is three runs
// or more (ReadGroups). The U test runs on them where both sides have
// MinUnits; with fewer, a change is not tested, and is flagged on its floor
// alone.
//
// The floor depends on whether the units carry what differs between
// processes:
//
//   - Runs whose rounds do (results.RunHasProcessReplicates), or sides of
//     separate runs tested on the runs' medians: NoiseMultiple × the
//     units' CV, pooled over both sides and the figure's class (the figures
//     of the same test, engine, direction, part, params and method on every
//     pair, at sizes within a factor of four: sizeBand). Nothing else: no
//     floor is looked up by the figure's test.
//   - Rounds taken within one process (every run before the marker): the
//     same data floor plus the fallback of the figure's family, size and
//     method, what separate processes on real machines moved beyond such a
//     floor (family.go, FALLBACK.md).
//   - Rounds that took something by their number, the same in every process
//     (results.RoundsByNumber): no units; the change is of rounds paired by
//     number (byNumber), its floor what separate processes of the method
//     moved.
//   - No units to test (runs without rounds): the larger spread of the two
//     runs' samples plus the fallback.
//
// Either floor is at least the threshold (Options.Threshold).
//
// A tested change is not flagged either where one side's median lies within
// the range of the other side's units: a median that the other run's own
// rounds reached is no sign of a change. Figures whose rounds fall in two
// modes (a small copy's device time of 12 or 20 µs) change their median by
// the modes' distance whenever the majority of their rounds moves, while
// their pooled CV, over sizes that do not, is smaller.

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

// Units of a change (Change.TestedOn).
const (
	onRounds = "rounds"
	onRuns   = "runs"
)

// Where a floor came from (Change.FloorFrom).
const (
	fromRounds    = "rounds"    // the rounds, which carry what differs between processes
	fromRuns      = "runs"      // the units of three runs a side or more
	fromMeasured  = "measured"  // the rounds or samples of the runs, plus the fallback
	fromThreshold = "threshold" // Options.Threshold, above the others
	fromMachines  = "machines"  // the runs' own data, plus what machines of one kind showed beyond it
	fromProcesses = "processes" // what separate processes of the method moved, where the rounds are no units
)

// rowNoise is what a row knows of its noise before judge: per side, the
// spread of its units of each kind and of its samples within its runs.
type rowNoise struct {
	rounds, runs []unitSpread
	// roundRange and runRange are each side's least and greatest unit.
	roundRange, runRange [][2]float64
	within               []float64
	// processFrom says, per change, what carries the differences between
	// processes (unitsOf), "" for nothing.
	processFrom []string
	// method is the baseline's method of the figure
	// (results.MethodLabel, "unknown"); fallback what the table gives it.
	method   string
	fallback floorLookup
}

// withinRunSpread is half the p5–p95 range of a figure's samples, relative
// to its median: how much it moved within its run.
func withinRunSpread(f *results.Figure) float64 {
	if s := f.Stats; s != nil && s.Median > 0 {
		return (s.P95 - s.P5) / 2 / s.Median
	}
	return 0
}

// unitsOf picks the units two sides are tested on, and says what carries
// the differences between processes (fromRounds, fromRuns; "" for nothing):
//
//   - every run of both sides has process replicates: the rounds;
//   - both sides are MinUnits runs or more (separate processes): the rounds
//     of all of them, whose spread about the side's mean holds the runs'
//     differences, or the runs' medians where the runs have no rounds;
//   - else the rounds, within one process;
//
// and "" where the sides lack MinUnits units.
func unitsOf(a, b side) (on, process string) {
	enough := func(s *benchmath.Sample) bool { return s != nil && len(s.Values) >= MinUnits }
	more := func(s side) bool {
		return s.rounds != nil && s.runs != nil && len(s.rounds.Values) > len(s.runs.Values)
	}
	switch {
	case a.process && b.process && enough(a.rounds) && enough(b.rounds):
		return onRounds, fromRounds
	case enough(a.runs) && enough(b.runs) && more(a) && more(b):
		return onRounds, fromRuns
	case enough(a.runs) && enough(b.runs):
		return onRuns, fromRuns
	case enough(a.rounds) && enough(b.rounds):
		return onRounds, ""
	}
	return "", ""
}

// classOf names a row's class: its key but for the pair, with the
// baseline's method params (a queue, a kernel), its size's band, whether the
// pair is one device's own memory, and the units its change was tested on. A device's own memory and a peer's are not alike:
// on a 2× H100 the chase through 256 MiB of a GPU's own memory reads
// 293-345 ns from round to round (where the fresh memory of each round
// lands), the same chase over NVLink 1006-1008 ns; pooled, every pair's
// floor would be the local chase's 10% (compare/FALLBACK.md).
func classOf(row *Row, on string) string {
	where := "peer"
	if row.Src == row.Dst {
		where = "own"
	}
	return strings.Join([]string{string(row.Test), string(row.Engine), string(row.Direction), string(row.Part),
		string(row.Unit), row.Params, row.Methods[0], strconv.Itoa(sizeBand(row.Size)), where, on}, "|")
}

// sizeBand groups sizes by factors of 4 (4 B–8 B, 16 B–32 B, …, 16 MiB–32
// MiB, 64 MiB–128 MiB): each size of the default sweep (powers of four) is
// a class of its own, pooled over the pairs. Sizes a factor of 16 apart
// share no evidence: on a 2× H200 pulls of 16 MiB took one of
// three rates a round (303, 321 or 341 GB/s) while those of 64 MiB agreed
// within 0.2%; pooled, the 64 MiB pulls' floor was 7%.
func sizeBand(n uint64) int { return bits.Len64(n) / 2 }

// dataFloors are the floors the runs' own data give each change:
// NoiseMultiple × the CV of its units pooled over its class, or, untested,
// the larger spread of the two sides' samples within their runs.
func dataFloors(rows []Row, noise []rowNoise) [][]float64 {
	out := make([][]float64, len(rows))
	for r := range out {
		out[r] = make([]float64, len(rows[r].Changes))
	}
	if len(rows) == 0 {
		return out
	}
	spreadOn := func(n *rowNoise, side int, on string) unitSpread {
		if on == onRuns {
			return n.runs[side]
		}
		return n.rounds[side]
	}
	for i := range rows[0].Changes {
		class := map[string]unitSpread{}
		for r := range rows {
			if on := rows[r].Changes[i].TestedOn; on != "" {
				k := classOf(&rows[r], on)
				class[k] = class[k].add(spreadOn(&noise[r], 0, on)).add(spreadOn(&noise[r], i+1, on))
			}
		}
		for r := range rows {
			ch := rows[r].Changes[i]
			if ch.TestedOn != "" {
				out[r][i] = NoiseMultiple * math.Sqrt(class[classOf(&rows[r], ch.TestedOn)].variance())
			} else {
				out[r][i] = math.Max(noise[r].within[0], noise[r].within[i+1])
			}
		}
	}
	return out
}

// judge sets every change's noise floor and its flags: worse or better, at
// least the floor, and significant where it was tested. withFallback false
// leaves the fallback out (what the fallback table is measured against);
// data are the rows' dataFloors.
func judge(rows []Row, noise []rowNoise, data [][]float64, opt Options, machines []MachineMatch, withFallback bool) {
	threshold := opt.Threshold
	// Changes between machines of one kind, gated across them, take what
	// machines of one kind showed beyond their runs' data (it holds what
	// separate processes show too).
	across := make([]bool, len(machines))
	for i, m := range machines {
		across[i] = m.Same != MachineSame && m.Kind && opt.AcrossMachines
	}
	for r := range rows {
		row := &rows[r]
		for i := range row.Changes {
			ch := &row.Changes[i]
			if ch.Lost != "" {
				ch.Regression = true
				continue
			}
			if !ch.Valid {
				continue
			}
			fb := noise[r].fallback
			if across[i] {
				if m := machineFallback(row.Family, bandOf(row.Size), row.Unit, noise[r].method); ch.ProcessUnits || m.floor >= fb.floor {
					fb.floor, fb.from = m.floor, m.from
				}
				fb.largest = max(fb.largest, machineFallback(row.Family, bandOf(row.Size), row.Unit, noise[r].method).largest)
			}
			switch {
			case ch.RoundsByNumber != "" && withFallback:
				// No units: the spread between processes (or machines) of
				// the method is the floor.
				ch.Floor, ch.FloorFrom, ch.Fallback, ch.FallbackFrom = fb.largest, fromProcesses, fb.largest, fb.from
			case across[i] && withFallback:
				ch.Floor, ch.FloorFrom = data[r][i], fromMachines
				ch.Fallback, ch.FallbackFrom = fb.floor, fb.from
				ch.Floor += ch.Fallback
			case ch.ProcessUnits:
				// The units carry what differs between processes: their
				// spread is the floor, whatever the test.
				ch.Floor, ch.FloorFrom = data[r][i], noise[r].processFrom[i]
			default:
				ch.Floor, ch.FloorFrom = data[r][i], fromMeasured
				if withFallback {
					ch.Fallback, ch.FallbackFrom = fb.floor, fb.from
					ch.Floor += ch.Fallback
				}
			}
			if threshold >= ch.Floor {
				ch.Floor, ch.FloorFrom = threshold, fromThreshold
			}
			if ch.Tested {
				ch.Covered = covered(row, i, &noise[r], ch.TestedOn)
			}
			worse := ch.Pct < 0
			if row.LowerIsBetter {
				worse = ch.Pct > 0
			}
			big := math.Abs(ch.Pct) >= 100*ch.Floor && ch.Pct != 0
			// Untested (no units), a change beyond its floor is flagged on
			// the floor alone; tested, it must be significant too.
			ok := big && (ch.Significant && !ch.Covered || !ch.Tested)
			if ch.Paired {
				// Rounds paired by number: every pair moved the same way.
				ok = big && ch.Consistent
			}
			ch.Ungated = ungated(row, i, opt, machines)
			ch.Regression = ok && worse && ch.Ungated == ""
			ch.Improvement = ok && !worse && ch.Ungated == ""
		}
	}
}

// ungated says why change i of row is not gated ("" where it is): the
// sides' machines (machines.go), another method of measuring (method.go),
// a single value on either side (an import's: no samples to tell noise
// from a change, and no other tool here states its own run-to-run spread).
func ungated(row *Row, i int, opt Options, machines []MachineMatch) string {
	if i < len(machines) {
		if why := machineUngated(machines[i], opt); why != "" {
			return why
		}
	}
	single := func(c Cell) bool { return c.N <= 1 || c.Units == 0 }
	switch {
	case row.Changes[i].MethodChange != "" && !opt.AcrossMethods:
		return ungatedMethod
	case single(row.Cells[0]) || single(row.Cells[i+1]):
		return ungatedSingle
	}
	return ""
}

// unitRange is the least and greatest of a side's units (zeros for none).
func unitRange(units *benchmath.Sample) [2]float64 {
	if units == nil || len(units.Values) == 0 {
		return [2]float64{}
	}
	return [2]float64{slices.Min(units.Values), slices.Max(units.Values)}
}

// covered says whether side i+1's median lies within the range of the
// baseline's units of kind on, or the baseline's within side i+1's; or,
// on rounds, within the other side's interval of where another run's
// median would fall (Cell.Lo, Cell.Hi: figstats.RoundIntervalWithin). A figure
// whose rounds take two modes has a wide interval, which holds the other
// side's median where the modes explain the change
// (TestTwoModesWithinTheInterval: back-to-back 4-byte pulls of 13.3-13.9 µs
// in three rounds of a 2× H100's run and 7-10 µs in its other two).
func covered(row *Row, i int, n *rowNoise, on string) bool {
	ranges := n.roundRange
	if on == onRuns {
		ranges = n.runRange
	}
	in := func(v float64, r [2]float64) bool { return r[0] <= v && v <= r[1] }
	if in(row.Cells[i+1].Center, ranges[0]) || in(row.Cells[0].Center, ranges[i+1]) {
		return true
	}
	if on != onRounds {
		return false
	}
	interval := func(c Cell) [2]float64 { return [2]float64{c.Lo, c.Hi} }
	a, b := row.Cells[0], row.Cells[i+1]
	return (a.Units >= MinUnits && a.Lo < a.Hi && in(b.Center, interval(a))) || (b.Units >= MinUnits && b.Lo < b.Hi && in(a.Center, interval(b)))
}
