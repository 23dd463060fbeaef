// Package compare compares p2pbench results runs figure by figure, the way
// benchstat compares benchmark runs: for every figure that the baseline and
// another run share, each run's median with its confidence interval, the
// change against the baseline, and whether the change is statistically
// significant. The statistics are golang.org/x/perf/benchmath's
// non-parametric ones (medians, order-statistic confidence intervals, the
// Mann–Whitney U test) over the raw samples.
//
// The package reads results only; it knows nothing of CUDA or the engine.
package compare

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/perf/benchmath"

	"github.com/p2pbench/p2pbench/results"
)

// Input is one run to compare, with the name to show for it (a file name).
type Input struct {
	Name string
	Run  *results.Run
}

// Options tune the comparison.
type Options struct {
	// Alpha is the significance level of the U test (default 0.05).
	Alpha float64
	// Threshold is the smallest relative change, as a fraction (0.05 for
	// 5%), that counts as a regression or an improvement; smaller
	// significant changes are reported but not flagged.
	Threshold float64
	// Confidence is the level of the medians' confidence intervals
	// (default 0.95).
	Confidence float64
}

// Result is a whole comparison.
type Result struct {
	// Names of the runs; the first is the baseline.
	Names []string `json:"runs"`
	// Differences lists what differs between the runs' machines and
	// software (driver, CUDA, host, GPUs, p2pbench version, simulated).
	Differences []Difference `json:"differences,omitempty"`
	Rows        []Row        `json:"rows"`
	// OnlyInBase[i] counts figures of the baseline that run i+1 lacks;
	// OnlyInOther[i] figures of run i+1 that the baseline lacks.
	OnlyInBase  []int   `json:"only_in_base"`
	OnlyInOther []int   `json:"only_in_other"`
	Alpha       float64 `json:"alpha"`
	Threshold   float64 `json:"threshold"`
	Confidence  float64 `json:"confidence"`
	// Warnings are benchmath's remarks (too few samples, ...), once each.
	Warnings []string `json:"warnings,omitempty"`
}

// Difference is one property that is not the same in every run.
type Difference struct {
	What   string   `json:"what"`
	Values []string `json:"values"` // one per run
}

// Row is one figure across the runs.
type Row struct {
	Key       string `json:"key"`
	Test      string `json:"test"`
	Engine    string `json:"engine"`
	Direction string `json:"direction,omitempty"`
	Part      string `json:"part,omitempty"`
	Src       int    `json:"src"`
	Dst       int    `json:"dst"`
	Size      uint64 `json:"size_bytes"`
	Params    string `json:"params,omitempty"`
	Unit      string `json:"unit"`
	// LowerIsBetter: for times a rise is a regression, for rates a drop.
	LowerIsBetter bool `json:"lower_is_better"`
	// Cells has one entry per run; Changes one per run after the baseline.
	Cells   []Cell   `json:"cells"`
	Changes []Change `json:"changes"`
}

// Cell is one run's summary of a figure.
type Cell struct {
	Present bool `json:"present"`
	// Failed says why a present figure has no value (its error, bad data).
	Failed string `json:"failed,omitempty"`
	N      int    `json:"n"`
	// Center is the median; Lo and Hi its confidence interval (equal to
	// Center when there are too few samples for one: Spread is then "∞").
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Spread is the interval's half-width relative to the center, as
	// benchstat prints it ("±1%").
	Spread string `json:"spread"`
}

// Change compares one run's cell with the baseline's.
type Change struct {
	// Valid is false when either side has no value.
	Valid bool `json:"valid"`
	// Pct is the change of the median in percent (new/base − 1).
	Pct float64 `json:"pct"`
	// P is the U test's p-value; Tested is false when a side had no raw
	// samples to test.
	P      float64 `json:"p"`
	Tested bool    `json:"tested"`
	// Significant: P < Alpha.
	Significant bool `json:"significant"`
	// Regression (Improvement): significant, worse (better), and at least
	// Threshold in size.
	Regression  bool `json:"regression"`
	Improvement bool `json:"improvement"`
}

// Compare compares every run with the first on the figures they share.
func Compare(inputs []Input, opt Options) (*Result, error) {
	if len(inputs) < 2 {
		return nil, fmt.Errorf("compare: need at least two runs, got %d", len(inputs))
	}
	if opt.Alpha == 0 {
		opt.Alpha = benchmath.DefaultThresholds.CompareAlpha
	}
	if opt.Alpha <= 0 || opt.Alpha >= 1 {
		return nil, fmt.Errorf("compare: alpha %v is not between 0 and 1", opt.Alpha)
	}
	if opt.Threshold < 0 {
		return nil, fmt.Errorf("compare: threshold %v is negative", opt.Threshold)
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	thresholds := &benchmath.Thresholds{CompareAlpha: opt.Alpha}
	res := &Result{Alpha: opt.Alpha, Threshold: opt.Threshold, Confidence: opt.Confidence}
	for _, in := range inputs {
		res.Names = append(res.Names, in.Name)
	}
	res.Differences = differences(inputs)
	m := match(inputs)
	res.OnlyInBase, res.OnlyInOther = m.onlyInBase, m.onlyInOther

	// A row for every base figure that another run shares, in order; the
	// rows, their cells and their changes are allocated once, and workers
	// fill a range of rows each, with their own scratch memory and
	// warnings.
	base := inputs[0].Run.Figures
	rowOf := make([]int32, 0, len(base))
	for j := range base {
		if m.dupBase[j] {
			continue
		}
		for i := 1; i < len(inputs); i++ {
			if m.twin[i][j] >= 0 {
				rowOf = append(rowOf, int32(j))
				break
			}
		}
	}
	nIn := len(inputs)
	res.Rows = make([]Row, len(rowOf))
	cells := make([]Cell, len(rowOf)*nIn)
	changes := make([]Change, len(rowOf)*(nIn-1))
	cache := newPCache()
	parts := parallel(len(rowOf), func(lo, hi int) map[string]bool {
		w := newSummarizer(nIn, thresholds, opt.Confidence)
		var keyBuf []byte
		for r := lo; r < hi; r++ {
			j := rowOf[r]
			bf := &base[j]
			key := m.baseKeys[j]
			row := &res.Rows[r]
			*row = Row{Key: key, Test: string(bf.Test), Engine: string(bf.Engine), Direction: string(bf.Direction), Part: string(bf.Part), Src: bf.Src, Dst: bf.Dst,
				Size: bf.Size, Params: identityParams(key), Unit: string(bf.Unit), LowerIsBetter: bf.LowerIsBetter(),
				Cells: cells[r*nIn : (r+1)*nIn : (r+1)*nIn], Changes: changes[r*(nIn-1) : (r+1)*(nIn-1) : (r+1)*(nIn-1)]}
			for i := range inputs {
				var f *results.Figure
				if i == 0 {
					f = bf
				} else if t := m.twin[i][j]; t >= 0 {
					f = &inputs[i].Run.Figures[t]
				}
				w.summarize(i, f, &row.Cells[i])
			}
			for i := 1; i < nIn; i++ {
				row.Changes[i-1] = change(row, row.Cells[0], row.Cells[i], w.sample(0), w.sample(i), opt, cache, keyBuf, w.warnings)
			}
		}
		return w.warnings
	})
	warnings := map[string]bool{}
	for _, p := range parts {
		for w := range p {
			warnings[w] = true
		}
	}
	for w := range warnings {
		res.Warnings = append(res.Warnings, w)
	}
	sort.Strings(res.Warnings)
	return res, nil
}

// parallel splits [0, n) into one range per processor, runs fn on each at
// once and returns the results in order.
func parallel[T any](n int, fn func(lo, hi int) T) []T {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/1024))
	out := make([]T, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[w] = fn(n*w/workers, n*(w+1)/workers)
		}()
	}
	wg.Wait()
	return out
}

// identityParams is the params part of a figure key.
func identityParams(key string) string { return key[strings.LastIndexByte(key, '|')+1:] }

// summarizer makes cells: one per worker.
type summarizer struct {
	th         *benchmath.Thresholds
	confidence float64
	// samples[i] is run i's sample of the current row; values[i] holds
	// its values. benchmath sorts the values it is given, and the runs'
	// own must stay as they are: they are copied, into memory each row
	// reuses.
	samples []benchmath.Sample
	has     []bool
	values  [][]float64
	// spreads interns the cells' spreads ("0.3%"): a few hundred
	// different strings for hundreds of thousands of cells.
	spreads  map[string]string
	buf      []byte
	warnings map[string]bool
}

func newSummarizer(runs int, th *benchmath.Thresholds, confidence float64) *summarizer {
	return &summarizer{th: th, confidence: confidence, samples: make([]benchmath.Sample, runs), has: make([]bool, runs),
		values: make([][]float64, runs), spreads: map[string]string{}, warnings: map[string]bool{}}
}

// sample is run i's sample of the current row, nil without raw samples.
func (w *summarizer) sample(i int) *benchmath.Sample {
	if !w.has[i] {
		return nil
	}
	return &w.samples[i]
}

// summarize makes run i's cell of a figure, and its sample.
func (w *summarizer) summarize(i int, f *results.Figure, c *Cell) {
	w.has[i] = false
	*c = Cell{}
	if f == nil {
		return
	}
	c.Present = true
	switch {
	case f.Error != "":
		c.Failed = "ERR"
		if f.ErrorName != "" {
			c.Failed = "ERR " + strings.TrimPrefix(f.ErrorName, "CUDA_ERROR_")
		}
		return
	case f.Verify == results.VerifyFailed:
		c.Failed = "BAD DATA"
		return
	}
	if len(f.Samples) == 0 {
		// A summary without raw samples: its median, but nothing to test.
		if f.Stats == nil {
			c.Failed = "no data"
			return
		}
		c.N, c.Center, c.Lo, c.Hi, c.Spread = f.Stats.N, f.Stats.Median, f.Stats.Median, f.Stats.Median, "?"
		return
	}
	// What benchmath.NewSample makes of a copy: the values sorted.
	w.values[i] = sortedCopy(w.values[i], f.Samples)
	w.samples[i] = benchmath.Sample{Values: w.values[i], Thresholds: w.th}
	w.has[i] = true
	sum := benchmath.AssumeNothing.Summary(&w.samples[i], w.confidence)
	for _, warn := range sum.Warnings {
		w.warnings[warn.Error()] = true
	}
	w.buf = appendSpread(w.buf[:0], sum.Center, sum.Lo, sum.Hi)
	sp, ok := w.spreads[string(w.buf)]
	if !ok {
		sp = string(w.buf)
		w.spreads[sp] = sp
	}
	c.N, c.Center, c.Lo, c.Hi, c.Spread = len(f.Samples), sum.Center, sum.Lo, sum.Hi, sp
	if math.IsInf(c.Lo, 0) || math.IsInf(c.Hi, 0) {
		// Too few samples for an interval (Spread says ∞); JSON has no
		// infinities, so the bounds collapse to the center.
		c.Lo, c.Hi = c.Center, c.Center
	}
}

// sortedCopy copies v into dst's memory, sorted as sort.Float64s sorts.
// Small samples of positive values, nearly all, are insertion-sorted,
// twice as fast as sort.Float64s for 20 values: values that compare equal
// are then the same bits, so any correct sort gives the same order. Zeros
// (0 and −0 compare equal), NaNs and large samples go to sort.Float64s.
func sortedCopy(dst, v []float64) []float64 {
	dst = append(dst[:0], v...)
	if len(dst) > 32 {
		sort.Float64s(dst)
		return dst
	}
	for _, x := range dst {
		if !(x > 0) {
			sort.Float64s(dst)
			return dst
		}
	}
	for i := 1; i < len(dst); i++ {
		x := dst[i]
		j := i
		for j > 0 && dst[j-1] > x {
			dst[j] = dst[j-1]
			j--
		}
		dst[j] = x
	}
	return dst
}

func change(row *Row, base, other Cell, bs, os *benchmath.Sample, opt Options, cache *pCache, buf []byte, warnings map[string]bool) Change {
	if !base.Present || !other.Present || base.Failed != "" || other.Failed != "" || base.Center == 0 {
		return Change{}
	}
	ch := Change{Valid: true, Pct: 100 * (other.Center/base.Center - 1)}
	if bs != nil && os != nil {
		cmp := cache.compare(bs, os, buf)
		for _, w := range cmp.Warnings {
			warnings[w.Error()] = true
		}
		ch.Tested, ch.P = true, cmp.P
		ch.Significant = cmp.P < cmp.Alpha
	}
	worse := ch.Pct < 0
	if row.LowerIsBetter {
		worse = ch.Pct > 0
	}
	big := math.Abs(ch.Pct) >= 100*opt.Threshold && ch.Pct != 0
	ch.Regression = ch.Significant && worse && big
	ch.Improvement = ch.Significant && !worse && big
	return ch
}

// differences lists the properties of the runs that are not all equal.
func differences(inputs []Input) []Difference {
	props := []struct {
		what string
		get  func(r *results.Run) string
	}{
		{"host", func(r *results.Run) string { return r.Host }},
		{"GPUs", func(r *results.Run) string { return r.GPUSummary() }},
		{"driver", func(r *results.Run) string {
			e := r.Environment
			if e.DriverRelease != "" {
				return fmt.Sprintf("%s (%d)", e.DriverRelease, e.DriverVersion)
			}
			return fmt.Sprint(e.DriverVersion)
		}},
		{"CUDA", func(r *results.Run) string { return r.Environment.CUDAVersion }},
		{"p2pbench", func(r *results.Run) string { return r.Tool.Version }},
		{"simulated", func(r *results.Run) string {
			if !r.Simulated {
				return "no"
			}
			if r.SimMachine != "" {
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
	for _, p := range props {
		vals := make([]string, len(inputs))
		same := true
		for i, in := range inputs {
			vals[i] = p.get(in.Run)
			same = same && vals[i] == vals[0]
		}
		if !same {
			out = append(out, Difference{What: p.what, Values: vals})
		}
	}
	return out
}

// topologySummary describes the links in a few words: "56 pairs; 8 at 300
// GB/s, 48 unknown; ranks 0-2".
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
	var speeds []float64
	for s := range links {
		speeds = append(speeds, s)
	}
	sort.Float64s(speeds)
	for _, s := range speeds {
		if s == 0 {
			parts = append(parts, fmt.Sprintf("%d of unknown speed", links[s]))
		} else {
			parts = append(parts, fmt.Sprintf("%d at %g GB/s", links[s], s))
		}
	}
	var rs []int
	for v := range ranks {
		rs = append(rs, v)
	}
	sort.Ints(rs)
	rank := ""
	if len(rs) > 0 {
		rank = fmt.Sprintf("; perf rank %d", rs[0])
		if len(rs) > 1 {
			rank = fmt.Sprintf("; perf ranks %d–%d", rs[0], rs[len(rs)-1])
		}
	}
	return fmt.Sprintf("%d pairs: %s%s", len(t.Pairs), strings.Join(parts, ", "), rank)
}

// Regressions returns the rows with a regression in any run.
func (r *Result) Regressions() []Row {
	var out []Row
	for _, row := range r.Rows {
		for _, c := range row.Changes {
			if c.Regression {
				out = append(out, row)
				break
			}
		}
	}
	return out
}

// ReadInputs reads results files for Compare, at once, naming each run by
// its path. Compare summarises figures from their samples, so the stats of
// figures with samples are not read (results.ReadOptions.SkipStats), and
// figures with the same params share one map (ShareParams): the runs are
// for reading. The error is that of the first file, in argument order,
// that could not be read.
func ReadInputs(paths []string) ([]Input, error) {
	inputs := make([]Input, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inputs[i].Name = p
			inputs[i].Run, errs[i] = results.Read(p)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

// TuneGC sets the garbage collector for a command that compares the
// results files at paths and then exits, and returns what restores it.
// Nearly everything a comparison allocates stays live until the end (the
// runs, the rows, the text): collections while the heap grows to about
// the files' size find almost nothing to free, yet their marking, write
// barriers and assists took a fifth of the CPU time of comparing two
// 72-GPU runs, and a collection that scans a large slice before it is
// written makes every first write to it fault twice. TuneGC turns
// collection off up to a memory limit of twice the files' size and 512
// MiB, where the runtime takes it up again. Settings made with GOGC or
// GOMEMLIMIT are left alone.
func TuneGC(paths []string) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	var size int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	limit := debug.SetMemoryLimit(2*size + 512<<20)
	percent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// balanced reports whether files of about the same size are to be read at
// once: then each is best decoded on one goroutine (results.ReadOptions
// Serial), which spares joining pieces; a file much larger than another
// is better decoded in pieces on every processor.
func balanced(paths []string) bool {
	if len(paths) < 2 {
		return false
	}
	var least, most int64 = math.MaxInt64, 0
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		least, most = min(least, fi.Size()), max(most, fi.Size())
	}
	return least >= most/2
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
