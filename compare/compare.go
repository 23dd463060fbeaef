// Package compare compares p2pbench results runs figure by figure, the way
// benchstat compares benchmark runs. For every figure that a baseline shares
// with another side — the same measurement: test, engine kind, direction,
// part, pair, size and the params that say what was measured, whatever the
// kernel variant or grid that measured it (match.go) — it gives each side's
// median with its interval, the change against the baseline, whether the
// change is significant, and whether it is a regression or an improvement:
// at least the figure's noise floor, and significant where it could be
// tested. A side is one run or several runs of the same configuration. The
// statistics are golang.org/x/perf/benchmath's non-parametric ones —
// medians, intervals and the Mann–Whitney U test — over independent units
// only: the medians of the rounds each figure was measured in, or of the
// runs of a side; never a run's samples (noise.go says the model). Write
// renders a comparison as text, Markdown, CSV or JSON, what was flagged
// first.
//
// compare reads results only: it imports results and the statistics
// library, never the packages that measure (cuda, gpu, bench, ipc).
package compare

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/perf/benchmath"

	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// Input is one side of a comparison, with the name to show for it (a file
// name): one run, or several runs of the same configuration (results files
// of separate processes, `compare base*.json -- new*.json`), whose figures
// are compared as one.
type Input struct {
	Name string
	Runs []*results.Run
}

// Options tune the comparison.
type Options struct {
	// Alpha is the significance level of the U test (default 0.05).
	Alpha float64
	// Threshold is the smallest relative change, as a fraction (0.01 for
	// 1%), that counts as a regression or an improvement: the least the
	// noise floor (Change.Floor) can be.
	Threshold float64
	// Confidence is the level of the medians' confidence intervals where
	// they come from the samples (default 0.95; intervals from rounds or
	// runs have their own, Cell.Confidence).
	Confidence float64
	// AcrossMethods gates the changes of figures that the sides measured
	// by different methods too (method.go); without it they are shown,
	// with what changed, and not flagged.
	AcrossMethods bool
	// AcrossMachines gates the changes between two machines of one kind,
	// each figure held to the spread between such machines (machines.go);
	// without it they are shown and not flagged.
	AcrossMachines bool
}

// Result is a whole comparison.
type Result struct {
	// Names of the sides; the first is the baseline.
	Names []string `json:"runs"`
	// Runs counts the runs of each side.
	Runs []int `json:"run_counts"`
	// Differences lists what differs between the sides' machines and
	// software (driver, CUDA, host, GPUs, p2pbench version, simulated), as
	// each side's first run has them.
	Differences []Difference `json:"differences,omitempty"`
	// Caveats say what a reader must know before any row: a simulated run
	// set beside a real one, a run cut short (caveats).
	Caveats []string `json:"caveats,omitempty"`
	Rows    []Row    `json:"rows"`
	// OnlyInBase[i] counts figures of the baseline that side i+1 lacks;
	// OnlyInOther[i] figures of side i+1 that the baseline lacks.
	OnlyInBase  []int `json:"only_in_base"`
	OnlyInOther []int `json:"only_in_other"`
	// NotMeasured are the baseline's figures with a value that a side's
	// plan left out (lost.go): named, not gated.
	NotMeasured []NotMeasured `json:"not_measured,omitempty"`
	Alpha       float64       `json:"alpha"`
	Threshold   float64       `json:"threshold"`
	Confidence  float64       `json:"confidence"`
	// FloorMultiple is NoiseMultiple: how many run-to-run CVs make a
	// figure's noise floor.
	FloorMultiple float64 `json:"floor_multiple"`
	// FallbackMargin is FallbackMargin: how many times what separate
	// processes showed beyond their data a figure's fallback is.
	FallbackMargin float64 `json:"fallback_margin"`
	// Replicates says, per side, what its units carry: ReplicatesProcess
	// where every run's rounds carry what differs between processes,
	// ReplicatesRuns where the side is MinUnits separate runs or more,
	// ReplicatesWithin where its rounds were taken within one process,
	// ReplicatesNone where it has one or two runs without rounds. The last
	// two have no run-to-run estimate of their own, nor has a comparison of
	// any side with one of them: its floors add the fallback.
	Replicates []string `json:"replicates"`
	// Machines says, per side after the baseline, whether it measured the
	// baseline's machine (machines.go).
	Machines []MachineMatch `json:"machines"`
	// AcrossMethods and AcrossMachines are the options'.
	AcrossMethods  bool `json:"across_methods,omitempty"`
	AcrossMachines bool `json:"across_machines,omitempty"`
	// UnknownMethods names, per side, the build whose methods the history
	// does not hold ("" for none): its rows are gated as if nothing changed.
	UnknownMethods []string `json:"unknown_methods,omitempty"`
	// WideFloors are the families whose floors at their largest size the
	// fallback keeps at WideFloorAt or more (wide.go): a smaller change of
	// them is not flagged.
	WideFloors []WideFloor `json:"wide_floors,omitempty"`
	// Warnings are benchmath's remarks (too few samples, ...) and what
	// differs between the runs of one side, once each.
	Warnings []string `json:"warnings,omitempty"`
}

// Difference is one property that is not the same in every run.
type Difference struct {
	What   string   `json:"what"`
	Values []string `json:"values"` // one per side
}

// Row is one figure across the sides.
type Row struct {
	Key       string            `json:"key"`
	Test      results.Test      `json:"test"`
	Engine    results.Engine    `json:"engine"`
	Direction results.Direction `json:"direction,omitempty"`
	Part      results.Part      `json:"part,omitempty"`
	Src       int               `json:"src"`
	Dst       int               `json:"dst"`
	Size      uint64            `json:"size_bytes"`
	// Key is the baseline figure's results.Figure.Key. Engine is the
	// engine's kind (copy_engine, staged, sm: the SM kernel's variant is
	// part of Methods); Params are the params that say what was measured
	// (results.Figure.IdentityParams less those of Methods).
	Params string       `json:"params,omitempty"`
	Unit   results.Unit `json:"unit"`
	// LowerIsBetter: for times a rise is a regression, for rates a drop.
	LowerIsBetter bool `json:"lower_is_better"`
	// Family is the figure's family of the fallback table (FALLBACK.md).
	Family string `json:"family"`
	// Methods says, per side, how its figure was measured: the SM kernel's
	// variant and grid, the copy call, the queue ("" for none, or where the
	// side lacks the figure); MethodChanged is true where a side measured
	// the figure by another method than the baseline (its params, or the
	// history of how p2pbench measures: Change.MethodChange says what).
	Methods       []string `json:"methods"`
	MethodChanged bool     `json:"method_changed,omitempty"`
	// Cells has one entry per side; Changes one per side after the baseline.
	Cells   []Cell   `json:"cells"`
	Changes []Change `json:"changes"`
}

// Cell is one side's summary of a figure.
type Cell struct {
	Present bool `json:"present"`
	// Failed says why a present figure has no value: its
	// results.Figure.FailureLabel (that of the first run where it failed),
	// or "no data".
	Failed string `json:"failed,omitempty"`
	// N counts the samples; Units the independent units among them: the
	// rounds of every run of the side (a run without rounds is one).
	N     int `json:"n"`
	Units int `json:"units"`
	// Center is the median of every sample of the side; Lo and Hi its
	// interval, of confidence Confidence: where there are two units or
	// more, where the median of another run of as many units would fall
	// (figstats.RoundIntervalWithin), else the median's confidence interval from
	// the samples (benchmath, at Options.Confidence; equal to Center when
	// there are too few samples for one: Spread is then "∞").
	Center     float64 `json:"center"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	// Spread is the interval's half-width relative to the center, as
	// benchstat prints it ("±1%"), with a decimal below 10% ("0.3%"); "?"
	// for a figure with statistics but no samples.
	Spread string `json:"spread"`
}

// Change compares one side's cell with the baseline's.
type Change struct {
	// Valid is false when either side has no value, or the change is too
	// large for a percentage (a ratio beyond the largest float).
	Valid bool `json:"valid"`
	// Pct is the change of the median in percent (new/base − 1).
	Pct float64 `json:"pct"`
	// P is the U test's p-value. Tested is true where both sides have at
	// least MinUnits independent units, and TestedOn says which: "rounds"
	// (the medians of every run's rounds) or "runs" (the runs' medians, each
	// side three runs or more). A run's samples are never the units.
	P        float64 `json:"p"`
	Tested   bool    `json:"tested"`
	TestedOn string  `json:"tested_on,omitempty"`
	// ProcessUnits: the units carry what differs between processes (rounds
	// of runs with process replicates, or separate runs).
	ProcessUnits bool `json:"process_units,omitempty"`
	// Significant: tested, and P < Alpha.
	Significant bool `json:"significant"`
	// Floor is the noise floor, as a fraction: the least change that can
	// be flagged (noise.go). FloorFrom says what set it: "rounds" or "runs"
	// (NoiseMultiple × the CV of units that carry what differs between
	// processes), "measured" (the runs' own data, NoiseMultiple × their
	// rounds' CV or their samples' spread, plus Fallback), or "threshold".
	Floor     float64 `json:"floor"`
	FloorFrom string  `json:"floor_from,omitempty"`
	// Fallback is the part of a "measured" floor that stands for what
	// separate processes differ by, which the runs cannot show
	// (FALLBACK.md); FallbackFrom names its family and size.
	Fallback     float64 `json:"fallback,omitempty"`
	FallbackFrom string  `json:"fallback_from,omitempty"`
	// Covered: tested, and one side's median lies within the range of the
	// other side's units (noise.go): not flagged, whatever its size.
	Covered bool `json:"covered,omitempty"`
	// Lost says how this side lost a figure the baseline measured: "failed
	// (ERR …)", "missing", "missing: the run was cut short (…)": a
	// regression whatever the noise (lost.go). NotMeasured says, for a
	// figure the side lacks, how its plan differs: not gated.
	Lost        string `json:"lost,omitempty"`
	NotMeasured string `json:"not_measured,omitempty"`
	// MethodChange says what changed from the baseline's method of the
	// figure to this side's (method.go): "" for nothing known.
	MethodChange string `json:"method_change,omitempty"`
	// RoundsByNumber says why a side's rounds are no replicates (they took
	// something by the round's number, the same in every process:
	// results.RoundsByNumber): the change is untested, and its floor is
	// what separate processes of that method moved (FloorFrom
	// "processes").
	RoundsByNumber string `json:"rounds_by_number,omitempty"`
	// Paired: Pct is the median of the ratios of the sides' rounds paired
	// by their number (a change of RoundsByNumber), not of their medians;
	// Consistent: every pair moved the same way, the one such change that
	// can be flagged.
	Paired     bool `json:"paired,omitempty"`
	Consistent bool `json:"consistent,omitempty"`
	// Ungated says why a change beyond its floor is not flagged: "method
	// changed" (Options.AcrossMethods).
	Ungated string `json:"ungated,omitempty"`
	// Regression (Improvement): worse (better), at least the floor in size,
	// and, where tested, significant and not covered. An untested change (a
	// side without MinUnits units) is flagged on its floor alone. A lost
	// figure is a regression.
	Regression  bool `json:"regression"`
	Improvement bool `json:"improvement"`
}

// What a side's units carry (Result.Replicates).
const (
	ReplicatesProcess = results.ReplicatesProcess
	ReplicatesRuns    = "separate_runs"
	ReplicatesWithin  = "within_process"
	ReplicatesNone    = "none"
)

// Compare compares every side with the first on the figures they share. A
// NaN sample is an error: the U test has no answer for it (results.Read
// refuses such files).
func Compare(inputs []Input, opt Options) (*Result, error) { return compareWith(inputs, opt, true) }

// compareWith is Compare, with the fallback left out of the floors where
// withFallback is false (what the fallback is measured against).
func compareWith(inputs []Input, opt Options, withFallback bool) (*Result, error) {
	return compareMemo(inputs, opt, withFallback, nil)
}

// compareMemo is compareWith, its sides of one run kept in memo (nil: none
// kept).
func compareMemo(inputs []Input, opt Options, withFallback bool, memo *sideMemo) (*Result, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := prepareMemo(inputs, opt, memo)
	if err != nil {
		return nil, err
	}
	return p.judged(opt, withFallback), nil
}

// withDefaults is opt with its alpha and confidence set where they are 0,
// or an error that says which option is out of range.
func (opt Options) withDefaults() (Options, error) {
	if opt.Alpha == 0 {
		opt.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	switch {
	case !(opt.Alpha > 0 && opt.Alpha < 1):
		return opt, fmt.Errorf("compare: alpha %v is not between 0 and 1", opt.Alpha)
	case !(opt.Confidence > 0 && opt.Confidence < 1):
		return opt, fmt.Errorf("compare: confidence %v is not between 0 and 1", opt.Confidence)
	case !(opt.Threshold >= 0):
		return opt, fmt.Errorf("compare: threshold %v is negative", opt.Threshold)
	}
	return opt, nil
}

// prepared is a comparison with its rows made and not yet judged: what
// the options but alpha and confidence (the threshold, across machines or
// methods) and the fallback leave as they are, so that one comparison can
// be judged several ways.
type prepared struct {
	res *Result
	// noise is what each row's units say of the noise (judge's).
	noise []rowNoise
	// floors are dataFloors of the rows, made by the first judging: what
	// the rows were tested on and their noise, which judging does not
	// change (a comparison judged with and without the fallback, or
	// gated across machines or not, makes them once).
	floors     [][]float64
	floorsOnce sync.Once
	// spread are the warnings of the sides' spread (differences), before
	// the rows' own.
	spread []string
}

// prepareMemo makes the rows of a comparison of inputs at opt's alpha and
// confidence (withDefaults' opt), its sides of one run kept in memo (nil:
// none kept).
func prepareMemo(inputs []Input, opt Options, memo *sideMemo) (*prepared, error) {
	if len(inputs) < 2 {
		return nil, fmt.Errorf("compare: need at least two runs, got %d", len(inputs))
	}
	res := &Result{Alpha: opt.Alpha, Confidence: opt.Confidence, FloorMultiple: NoiseMultiple, FallbackMargin: FallbackMargin}
	for _, in := range inputs {
		if len(in.Runs) == 0 || slices.Contains(in.Runs, nil) {
			return nil, fmt.Errorf("compare: %s has no run", in.Name)
		}
		for _, r := range in.Runs {
			for _, f := range r.Figures {
				if slices.ContainsFunc(f.Samples, math.IsNaN) {
					return nil, fmt.Errorf("compare: %s: figure %s has a NaN sample", in.Name, f.Key())
				}
			}
		}
		res.Names = append(res.Names, in.Name)
		res.Runs = append(res.Runs, len(in.Runs))
		res.Replicates = append(res.Replicates, replicatesOf(in))
	}
	p := &prepared{res: res}
	res.Differences, p.spread = differences(inputs)
	res.Caveats = caveats(inputs)
	res.UnknownMethods = unknownMethods(inputs)
	res.Machines = matchMachines(inputs)
	th := &benchmath.Thresholds{CompareAlpha: opt.Alpha}
	sides := make([]*sideData, len(inputs))
	for i, in := range inputs {
		sides[i] = memo.side(in, th, opt.Confidence)
	}
	var all []twins
	all, res.OnlyInBase, res.OnlyInOther = match(sides)
	var shared []twins
	shared, res.NotMeasured = keep(sides, all)
	res.Rows, p.noise, res.Warnings = compareRows(sides, shared)
	return p, nil
}

// judged is p judged with opt (whose alpha and confidence are p's) and
// the fallback or not: a Result of its own, p left as it was.
func (p *prepared) judged(opt Options, withFallback bool) *Result {
	res := *p.res
	res.Threshold, res.AcrossMethods, res.AcrossMachines = opt.Threshold, opt.AcrossMethods, opt.AcrossMachines
	opt.Alpha, opt.Confidence = res.Alpha, res.Confidence
	res.Rows = slices.Clone(p.res.Rows)
	for i := range res.Rows {
		res.Rows[i].Changes = slices.Clone(res.Rows[i].Changes)
	}
	p.floorsOnce.Do(func() { p.floors = dataFloors(p.res.Rows, p.noise) })
	judge(res.Rows, p.noise, p.floors, opt, res.Machines, withFallback)
	res.WideFloors = wideFloors(res.Rows)
	res.Warnings = append(slices.Clone(p.spread), p.res.Warnings...)
	return &res
}

// keep picks the figures that make rows: those another side has, and those
// of the baseline with a value that a side lost (lost.go); the baseline's
// figures that a side's plan (plans[i]: planOf) left out are listed, not
// rows.
func keep(sides []*sideData, all []twins) ([]twins, []NotMeasured) {
	var rows []twins
	var omitted []NotMeasured
	for _, tw := range all {
		row := false
		valued := hasValue(tw.figs[0])
		for i := 1; i < len(sides); i++ {
			if tw.figs[i] != nil {
				row = true
				continue
			}
			if !valued {
				continue
			}
			f := tw.figs[0][0]
			if why := sides[i].plan.omits(sides[0].plan, f); why != "" {
				if tw.omitted == nil {
					tw.omitted = make([]string, len(sides))
				}
				tw.omitted[i] = why
				omitted = append(omitted, NotMeasured{Side: i, Key: f.Key(), Test: f.Test, Why: why})
				continue
			}
			row = true
		}
		if row {
			rows = append(rows, tw)
		}
	}
	return rows, omitted
}

// compareRows makes the rows of the shared figures on every processor: the
// U test of a row takes from microseconds to milliseconds (samples with
// ties), and rows are independent. It returns the rows, what each row's
// units say of the noise (for judge), and benchmath's warnings, sorted.
func compareRows(sides []*sideData, shared []twins) ([]Row, []rowNoise, []string) {
	rows := make([]Row, len(shared))
	noise := make([]rowNoise, len(shared))
	// The rows' slices are cut from one array of each kind: a row's dozen
	// small slices were most of a compare's allocations.
	k, n := len(sides), len(shared)
	slab := rowSlab{methods: make([]string, n*k), cells: make([]Cell, n*k), changes: make([]Change, n*(k-1)),
		spreads: make([]unitSpread, 2*n*k), ranges: make([][2]float64, 2*n*k), within: make([]float64, n*k),
		processFrom: make([]string, n*(k-1))}
	var next atomic.Int64
	var mu sync.Mutex
	warnings := map[string]bool{}
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			m := rowMaker{sides: sides, test: uTests, warnings: map[string]bool{},
				sd: make([]side, k), methods: make([]sideMethod, k)}
			for r := int(next.Add(1) - 1); r < len(rows); r = int(next.Add(1) - 1) {
				rows[r], noise[r] = m.row(shared[r], slab.row(r, k))
			}
			mu.Lock()
			maps.Copy(warnings, m.warnings)
			mu.Unlock()
		})
	}
	wg.Wait()
	return rows, noise, slices.Sorted(maps.Keys(warnings))
}

// rowMaker makes rows; each worker has its own, and all share the memo of
// U tests and the sides' summaries.
type rowMaker struct {
	sides    []*sideData
	test     *uTest
	warnings map[string]bool
	// sd and methods are a row's sides and their methods, made anew for
	// each row.
	sd      []side
	methods []sideMethod
}

// rowSlab holds the slices of a comparison's rows, each row's at its
// index times the sides (times the changes for changes and processFrom).
type rowSlab struct {
	methods     []string
	cells       []Cell
	changes     []Change
	spreads     []unitSpread
	ranges      [][2]float64
	within      []float64
	processFrom []string
}

// rowSlices are one row's slices of a rowSlab, each as long as the row
// has sides (changes and processFrom one less), of full capacity.
type rowSlices rowSlab

// row cuts row r's slices of s, for k sides.
func (s *rowSlab) row(r, k int) rowSlices {
	cut := func(i, n int) (int, int) { return i * n, (i + 1) * n }
	a, b := cut(r, k)
	c, d := cut(r, k-1)
	e := 2 * r * k
	return rowSlices{methods: s.methods[a:b:b], cells: s.cells[a:b:b], changes: s.changes[c:d:d],
		spreads: s.spreads[e : e+2*k : e+2*k], ranges: s.ranges[e : e+2*k : e+2*k], within: s.within[a:b:b],
		processFrom: s.processFrom[c:d:d]}
}

// replicatesOf says what a side's units carry (Result.Replicates).
func replicatesOf(in Input) string {
	process, rounds := true, false
	for _, r := range in.Runs {
		process = process && results.RunHasProcessReplicates(r)
		for i := range r.Figures {
			if len(r.Figures[i].Rounds) > 1 {
				rounds = true
				break
			}
		}
	}
	switch {
	case process:
		return ReplicatesProcess
	case len(in.Runs) >= MinUnits:
		return ReplicatesRuns
	case rounds:
		return ReplicatesWithin
	}
	return ReplicatesNone
}

// side is what a row needs of one side's figures: every sample (for the
// cell), the median of every round of every run, and each run's median.
type side struct {
	samples, rounds, runs *benchmath.Sample
	// process: every run of the side has process replicates.
	process bool
	// within is the largest spread of the side's figures within their runs
	// (withinRunSpread).
	within float64
	// byRound is the median of each round in the order they were taken,
	// over the side's runs (the median of their k-th rounds).
	byRound []float64
}

// row makes the row of a baseline figure and its twins, with the changes'
// tests but not their flags (judge sets those).
func (m *rowMaker) row(tw twins, sl rowSlices) (Row, rowNoise) {
	bf := tw.figs[0][0]
	head := tw.at[0].rowHead(m.sides[0])
	k := len(tw.figs)
	row := Row{Key: head.key, Test: bf.Test, Engine: engineKind(bf.Engine), Direction: bf.Direction, Part: bf.Part,
		Src: bf.Src, Dst: bf.Dst, Size: bf.Size, Params: head.params, Unit: bf.Unit, Family: head.family,
		LowerIsBetter: bf.LowerIsBetter(), Methods: sl.methods, Cells: sl.cells, Changes: sl.changes}
	sides, methods := m.sd, m.methods
	clear(sides)
	clear(methods)
	noise := rowNoise{rounds: sl.spreads[:k:k], runs: sl.spreads[k:], within: sl.within,
		roundRange: sl.ranges[:k:k], runRange: sl.ranges[k:], processFrom: sl.processFrom}
	for i, figs := range tw.figs {
		if len(figs) == 0 {
			continue
		}
		sum := tw.at[i].summary(m.sides[i])
		methods[i] = sum.method
		row.Methods[i] = methods[i].params
		row.Cells[i], sides[i] = sum.cell, sum.side
		m.note(sum.warns)
		noise.rounds[i], noise.runs[i], noise.within[i] = sum.rounds, sum.runs, sides[i].within
		noise.roundRange[i], noise.runRange[i] = sum.roundRange, sum.runRange
	}
	// The floors of a figure come from runs that measured it as the
	// baseline did (an unknown method takes the largest of the known).
	noise.method = "unknown"
	if methods[0].known {
		noise.method = results.MethodLabel(methods[0].changes)
	}
	noise.fallback = fallback(row.Family, bandOf(row.Size), row.Unit, noise.method)
	for i := 1; i < len(tw.figs); i++ {
		var warns []error
		row.Changes[i-1], warns = change(&row, i, sides[0], sides[i], m.test, &noise.processFrom[i-1])
		m.note(warns)
		// Rounds that took something by their number, the same in every
		// process, are no units to test on: their spread is that
		// something's (results.RoundsByNumber).
		for _, k := range []int{0, i} {
			if why := results.RoundsByNumber(methods[k].changes); methods[k].known && why != "" && row.Changes[i-1].Valid {
				byNumber(&row.Changes[i-1], why, sides[0].byRound, sides[i].byRound)
				noise.processFrom[i-1] = ""
			}
		}
		if len(tw.figs[i]) > 0 {
			row.Changes[i-1].MethodChange = methodChange(methods[0], methods[i], tw.figs[i][0])
			row.MethodChanged = row.MethodChanged || row.Changes[i-1].MethodChange != ""
		}
		if b, o := row.Cells[0], row.Cells[i]; b.Present && b.Failed == "" && b.N > 0 && (!o.Present || o.Failed != "") {
			switch {
			case !o.Present && tw.omitted != nil && tw.omitted[i] != "":
				row.Changes[i-1].NotMeasured = tw.omitted[i]
			default:
				row.Changes[i-1].Lost = m.sides[i].plan.lostText(o.Failed)
			}
		}
	}
	return row, noise
}

func (m *rowMaker) note(warns []error) {
	for _, w := range warns {
		m.warnings[w.Error()] = true
	}
}

// summarize makes a side's cell of a figure from its figures in the side's
// runs, and its samples and units for the U test (nil without raw samples).
// process says whether the side's runs have process replicates.
func summarize(figs []*results.Figure, process bool, th *benchmath.Thresholds, confidence float64) (Cell, side, []error) {
	sd := side{process: process}
	n := 0
	for _, f := range figs {
		if label := f.FailureLabel(); label != "" {
			return Cell{Present: true, Failed: label}, side{}, nil
		}
		n += len(f.Samples)
	}
	// One allocation for the samples (benchmath sorts them: a copy), the
	// runs' medians and their rounds', which are most of a compare's
	// allocations.
	all, units, runs := make([]float64, 0, n), []float64(nil), make([]float64, 0, len(figs))
	roundErr := 0.0
	// starts[i] is where figure i's round medians begin in units.
	starts := make([]int, 0, len(figs)+1)
	rounds := 0
	for _, f := range figs {
		all = append(all, f.Samples...)
		starts = append(starts, len(units))
		medians := figstats.RoundMedians(f.Samples, f.Rounds)
		units = append(units, medians...)
		rounds = max(rounds, len(medians))
		if len(f.Samples) > 0 && len(figs) > 1 {
			runs = append(runs, figstats.Median(f.Samples))
		}
		sd.within = math.Max(sd.within, withinRunSpread(f))
		roundErr = math.Max(roundErr, figstats.RoundMedianError(f.Samples, f.Rounds))
	}
	starts = append(starts, len(units))
	if len(all) == 0 {
		// A summary without raw samples: its median, but nothing to test.
		f := figs[0]
		if f.Stats == nil {
			return Cell{Present: true, Failed: "no data"}, side{}, nil
		}
		m := f.Stats.Median
		return Cell{Present: true, N: f.Stats.N, Center: m, Lo: m, Hi: m, Spread: "?"}, side{}, nil
	}
	// The median of the k-th rounds of the runs that have one.
	sd.byRound = make([]float64, 0, rounds)
	kth := make([]float64, 0, len(figs))
	for k := range rounds {
		kth = kth[:0]
		for i := range figs {
			if starts[i]+k < starts[i+1] {
				kth = append(kth, units[starts[i]+k])
			}
		}
		sd.byRound = append(sd.byRound, figstats.Median(kth))
	}
	// benchmath sorts the values it is given: all is the side's copy of
	// its runs' samples.
	sd.samples = benchmath.NewSample(all, th)
	if len(figs) == 1 {
		// One run: its median is its samples', sorted now.
		runs = append(runs, sortedMedian(sd.samples.Values))
	}
	sd.rounds = benchmath.NewSample(units, th)
	sd.runs = benchmath.NewSample(runs, th)
	sum := benchmath.AssumeNothing.Summary(sd.samples, confidence)
	c := Cell{Present: true, N: len(all), Units: len(units), Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: confidence}
	warns := sum.Warnings
	if len(units) >= 2 {
		lo, hi := figstats.RoundIntervalWithin(c.Center, units, roundErr)
		c.Lo, c.Hi, c.Confidence, warns = math.Max(lo, 0), hi, figstats.IntervalConfidence, nil
	}
	c.Spread = figstats.SpreadText(c.Center, c.Lo, c.Hi)
	if math.IsInf(c.Lo, 0) || math.IsInf(c.Hi, 0) {
		// Too few samples for an interval (Spread says ∞); JSON has no
		// infinities, so the bounds collapse to the center.
		c.Lo, c.Hi = c.Center, c.Center
	}
	return c, sd, warns
}

// sortedMedian is the median of sorted values, as figstats.Median has it.
func sortedMedian(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// byNumber makes ch, a change of a figure whose rounds took something by
// their number (why), a change of rounds paired by number: the k-th round
// of every process sat at the same place, so the median of the ratios of
// the sides' k-th rounds is the change, untested (no units: a floor alone
// judges it). Sides with fewer rounds in common than MinUnits keep the
// medians' change.
func byNumber(ch *Change, why string, base, other []float64) {
	ch.Tested, ch.TestedOn, ch.P, ch.Significant, ch.ProcessUnits = false, "", 0, false, false
	ch.RoundsByNumber = why
	n := min(len(base), len(other))
	if n < MinUnits {
		return
	}
	ratios := make([]float64, 0, n)
	for k := range n {
		if base[k] > 0 {
			ratios = append(ratios, other[k]/base[k])
		}
	}
	if len(ratios) == n {
		ch.Pct = 100 * (figstats.Median(ratios) - 1)
		ch.Paired = true
		// A change moves every pair of rounds one way; a process that took
		// another pattern of places (on a 2× H200, one of two by process)
		// moves some up and some down.
		ch.Consistent = slices.Min(ratios) > 1 || slices.Max(ratios) < 1
	}
}

// change compares side i's cell of a row with the baseline's, testing on
// their units where both have MinUnits of them (unitsOf).
// processFrom is set to what carries the differences between processes.
func change(row *Row, i int, base, other side, test *uTest, processFrom *string) (Change, []error) {
	b, o := row.Cells[0], row.Cells[i]
	if !b.Present || !o.Present || b.Failed != "" || o.Failed != "" || b.Center == 0 {
		return Change{}, nil
	}
	ratio := o.Center / b.Center
	pct := 100 * (ratio - 1)
	if math.IsInf(ratio, 0) || math.IsInf(pct, 0) {
		// Beyond any percentage (a center near the smallest float; the
		// ratio may be finite and its percentage not): the cells show
		// both medians, and no change is claimed.
		return Change{}, nil
	}
	ch := Change{Valid: true, Pct: pct}
	on, process := unitsOf(base, other)
	*processFrom = process
	if on == "" {
		return ch, nil
	}
	x, y := base.rounds, other.rounds
	if on == onRuns {
		x, y = base.runs, other.runs
	}
	cmp := test.compare(x, y)
	ch.Tested, ch.TestedOn, ch.ProcessUnits, ch.P, ch.Significant = true, on, process != "", cmp.P, cmp.P < cmp.Alpha
	return ch, cmp.Warnings
}

// differences lists the properties that differ between the sides (as their
// first runs have them), and says where the runs of one side differ.
func differences(inputs []Input) ([]Difference, []string) {
	props := []struct {
		what string
		get  func(r *results.Run) string
	}{
		{"host", func(r *results.Run) string { return r.Host }},
		{"GPUs", func(r *results.Run) string { return r.GPUSummary() }},
		{"driver", func(r *results.Run) string {
			e := r.Environment
			switch {
			case e.DriverRelease != "" && e.DriverVersion != 0:
				return fmt.Sprintf("%s (%d)", e.DriverRelease, e.DriverVersion)
			case e.DriverRelease != "":
				return e.DriverRelease
			case e.DriverVersion != 0:
				return fmt.Sprint(e.DriverVersion)
			}
			return notRecorded
		}},
		{"CUDA", func(r *results.Run) string { return cmp.Or(r.Environment.CUDAVersion, notRecorded) }},
		{"tool", toolText},
		{"simulated", func(r *results.Run) string {
			switch {
			case !r.Simulated:
				return "no"
			case r.SimMachine != "":
				return "yes (" + r.SimMachine + ")"
			}
			return "yes"
		}},
		{"topology", topologySummary},
		{"complete", func(r *results.Run) string {
			if r.Complete {
				return "yes"
			}
			return "no: " + r.Stopped
		}},
	}
	var out []Difference
	var within []string
	for _, p := range props {
		vals := make([]string, len(inputs))
		same := true
		for i, in := range inputs {
			first := p.get(in.Runs[0])
			seen := []string{first}
			for _, r := range in.Runs[1:] {
				if v := p.get(r); !slices.Contains(seen, v) {
					if len(seen) == 1 {
						within = append(within, fmt.Sprintf("the runs of %s differ in %s: %s, %s", in.Name, p.what, first, v))
					}
					seen = append(seen, v)
				}
			}
			// A side whose runs differ shows every value it pooled: the
			// property is not the same, whatever the first runs say.
			vals[i] = strings.Join(seen, " + ")
			same = same && len(seen) == 1 && vals[i] == vals[0]
		}
		if !same {
			out = append(out, Difference{What: p.what, Values: vals})
		}
	}
	return out, within
}

// caveats say, in words, which sides are simulated where another is not,
// and which were cut short: what the baseline is matters to every row, and
// a difference buried in the table of properties is easy to miss.
func caveats(inputs []Input) []string {
	var out []string
	real := 0
	for _, in := range inputs {
		for _, r := range in.Runs {
			real += b2i(!r.Simulated)
		}
	}
	role := func(i int) string {
		if i == 0 {
			return "The baseline " + in(inputs[0].Name)
		}
		return "The new run " + in(inputs[i].Name)
	}
	for i, in := range inputs {
		for _, r := range in.Runs {
			if r.Simulated && real > 0 {
				machine := cmp.Or(r.SimMachine, "a simulated machine")
				out = append(out, fmt.Sprintf("%s is SIMULATED (%s): its figures are the simulator's model, not a machine's; changes between it and the real runs here say nothing of either machine.", role(i), machine))
				break
			}
		}
		for _, r := range in.Runs {
			if !r.Complete {
				what := "what it did not reach is not compared"
				if i > 0 {
					what = "every figure of the baseline it lacks is lost (a regression)"
				}
				out = append(out, fmt.Sprintf("%s was CUT SHORT (%s): %s.", role(i), cmp.Or(r.Stopped, "no reason recorded"), what))
				break
			}
		}
	}
	return out
}

// in names a side in a caveat: "(NAME)".
func in(name string) string { return "(" + name + ")" }

// notRecorded stands for a property a run does not record (an import's
// driver, say).
const notRecorded = "(not recorded)"

// toolText names the program that made a run and its version: "p2pbench
// 546366b", "nvbandwidth v0.8".
func toolText(r *results.Run) string {
	return strings.TrimSpace(cmp.Or(r.Tool.Name, "p2pbench") + " " + cmp.Or(r.Tool.Version, "(version not recorded)"))
}

// topologySummary describes the links in a few words: "56 pairs: 8 at 300
// GB/s, 48 of unknown speed; perf ranks 0–2".
func topologySummary(r *results.Run) string {
	t := r.Topology
	if t == nil {
		return "none"
	}
	links := map[float64]int{}
	ranks := map[int]bool{}
	for _, p := range t.Pairs {
		links[p.LinkGBps]++
		if v, ok := p.PerformanceRank(); ok {
			ranks[v] = true
		}
	}
	var parts []string
	for _, s := range sortedKeys(links) {
		if s == 0 {
			parts = append(parts, fmt.Sprintf("%d of unknown speed", links[s]))
		} else {
			parts = append(parts, fmt.Sprintf("%d at %g GB/s", links[s], s))
		}
	}
	rank := ""
	switch rs := sortedKeys(ranks); {
	case len(rs) == 1:
		rank = fmt.Sprintf("; perf rank %d", rs[0])
	case len(rs) > 1:
		rank = fmt.Sprintf("; perf ranks %d–%d", rs[0], rs[len(rs)-1])
	}
	return fmt.Sprintf("%d pairs: %s%s", len(t.Pairs), strings.Join(parts, ", "), rank)
}

func sortedKeys[K int | float64, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Regressions returns the rows with a regression in any run.
func (r *Result) Regressions() []Row {
	var out []Row
	for _, row := range r.Rows {
		if slices.ContainsFunc(row.Changes, func(c Change) bool { return c.Regression }) {
			out = append(out, row)
		}
	}
	return out
}

// ReadGroups reads results files for Compare, one side per group of paths
// (several runs of the same configuration), named by its paths joined with
// " + ". The files are read at once; the error is that of the first file,
// in argument order, that could not be read.
func ReadGroups(groups [][]string) ([]Input, error) {
	inputs := make([]Input, len(groups))
	errs := make([][]error, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		inputs[i] = Input{Name: strings.Join(g, " + "), Runs: make([]*results.Run, len(g))}
		errs[i] = make([]error, len(g))
		for j, p := range g {
			wg.Go(func() { inputs[i].Runs[j], errs[i][j] = results.Read(p) })
		}
	}
	wg.Wait()
	for _, es := range errs {
		for _, err := range es {
			if err != nil {
				return nil, err
			}
		}
	}
	return inputs, nil
}

// Sides are the sides of a comparison from the groups of files a command
// line gives ("--" between them): without "--" (one group) every file is a
// side of its own; a group may not be empty, and there must be a baseline
// and one side more. files are every side's files, in order.
func Sides(groups [][]string) (sides [][]string, files []string, err error) {
	sides = groups
	if len(groups) == 1 {
		sides = nil
		for _, f := range groups[0] {
			sides = append(sides, []string{f})
		}
	}
	for i, g := range sides {
		if len(g) == 0 {
			return nil, nil, fmt.Errorf("compare: group %d of the files (between \"--\") is empty", i+1)
		}
		files = append(files, g...)
	}
	if len(sides) < 2 {
		return nil, nil, fmt.Errorf("compare needs a baseline and at least one other results file, got %d", len(files))
	}
	return sides, files, nil
}

// Validate checks options as a command line gives them: an Alpha between
// 0 and 1 (its messages name compare's --alpha).
func (o Options) Validate() error {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("--alpha %v is not between 0 and 1", o.Alpha)
	}
	return nil
}

// ParseThreshold reads a threshold given in percent, with or without the
// sign: "5%", "5" and "0.5%" are 0.05, 0.05 and 0.005.
func ParseThreshold(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v >= 1000 {
		return 0, fmt.Errorf("threshold %q is not a percentage like 5%% or 2.5", s)
	}
	return v / 100, nil
}
