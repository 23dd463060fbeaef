package results

import (
	"fmt"
	"math"
	"strings"
)

// ValidationError lists every rule a Run breaks.
type ValidationError struct {
	Problems []string
}

// maxListed bounds the problems an error message spells out: a file broken
// everywhere would otherwise print one line per figure.
const maxListed = 8

func (e *ValidationError) Error() string {
	var b strings.Builder
	n := len(e.Problems)
	for i, p := range e.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "; and %d more", n-maxListed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p)
	}
	return b.String()
}

// Validate checks the rules of the schema that JSON decoding cannot: figures
// name their test and unit, in the unit the run's catalogue gives their test
// (Run.Info; a test no catalogue describes may have any unit), every value is
// finite and not negative, stats agree with the samples, device indices refer
// to devices of the run, verification states are known. It returns a
// *ValidationError listing every problem, or nil. SCHEMA.md lists the rules.
func (r *Run) Validate() error {
	v := validator{}
	if r.Schema != SchemaVersion {
		v.add("schema is %d, want %d", r.Schema, SchemaVersion)
	}
	if !r.Start.IsZero() && !r.End.IsZero() && r.End.Before(r.Start) {
		v.add("end %s is before start %s", r.End.Format("2006-01-02T15:04:05Z07:00"), r.Start.Format("2006-01-02T15:04:05Z07:00"))
	}
	v.devices = r.knownDevices()
	seen := map[int]bool{}
	for i, d := range r.Environment.Devices {
		if d.Index < 0 {
			v.add("environment.devices[%d]: index %d is negative", i, d.Index)
		}
		if seen[d.Index] {
			v.add("environment.devices[%d]: index %d appears twice", i, d.Index)
		}
		seen[d.Index] = true
		if l := d.PCIe; l != nil && (l.Gen < 0 || l.Width < 0 || l.MaxGen < 0 || l.MaxWidth < 0) {
			v.add("environment.devices[%d]: a PCIe generation or width is negative", i)
		}
	}
	for _, states := range []struct {
		name string
		s    []DeviceState
	}{{"state_start", r.Environment.StateStart}, {"state_end", r.Environment.StateEnd}} {
		for i, s := range states.s {
			where := fmt.Sprintf("environment.%s[%d]", states.name, i)
			v.device(where, "index", s.Index, false)
			v.finite(where, "power_w", s.PowerW)
		}
	}
	v.health(&r.Environment)
	if t := r.Topology; t != nil {
		v.topology(t)
	}
	for i := range r.Figures {
		f := &r.Figures[i]
		v.figure(figureAt{i, f}, f, r.Info(f.Test).Unit)
	}
	for i, t := range r.Tuning {
		where := fmt.Sprintf("tuning[%d]", i)
		v.device(where, "src", t.Src, false)
		v.device(where, "dst", t.Dst, false)
		for j, c := range append([]TuneCandidate{t.Winner}, t.Tried...) {
			w := where + ".winner"
			if j > 0 {
				w = fmt.Sprintf("%s.tried[%d]", where, j-1)
			}
			v.finite(w, "median_gbps", c.MedianGBps)
			v.finite(w, "cv", c.CV)
		}
	}
	if r.Verdict != nil {
		keys := make(map[string]bool, len(r.Figures))
		for i := range r.Figures {
			keys[r.Figures[i].Key()] = true
		}
		v.verdict(r.Verdict, keys)
	}
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems}
}

// knownDevices is the set of device indices the run describes, or nil when it
// describes none (then device references cannot be checked).
func (r *Run) knownDevices() map[int]bool {
	var set map[int]bool
	add := func(i int) {
		if set == nil {
			set = map[int]bool{}
		}
		set[i] = true
	}
	for _, d := range r.Environment.Devices {
		add(d.Index)
	}
	if r.Topology != nil {
		for _, d := range r.Topology.Devices {
			add(d)
		}
	}
	return set
}

type validator struct {
	devices  map[int]bool
	problems []string
}

func (v *validator) add(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// device checks a device index; host allows -1 (the host, or all devices).
// where, like the where of the other checks, is a string or a fmt.Stringer.
func (v *validator) device(where any, field string, idx int, host bool) {
	switch {
	case host && idx == -1:
	case idx < 0:
		v.add("%s: %s %d is not a device index", where, field, idx)
	case v.devices != nil && !v.devices[idx]:
		v.add("%s: %s %d is not one of the run's devices", where, field, idx)
	}
}

func (v *validator) finite(where any, field string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		v.add("%s: %s is %v", where, field, x)
	}
}

func (v *validator) topology(t *Topology) {
	seen := map[int]bool{}
	for i, d := range t.Devices {
		if d < 0 || seen[d] {
			v.add("topology.devices[%d]: %d is negative or repeated", i, d)
		}
		seen[d] = true
	}
	for i, p := range t.Pairs {
		where := fmt.Sprintf("topology.pairs[%d]", i)
		v.device(where, "src", p.Src, false)
		v.device(where, "dst", p.Dst, false)
		if p.Src == p.Dst {
			v.add("%s: src and dst are both %d", where, p.Src)
		}
		v.finite(where, "link_gbps", p.LinkGBps)
		if p.LinkGBps < 0 {
			v.add("%s: link_gbps %v is negative", where, p.LinkGBps)
		}
	}
	for i, dl := range t.Links {
		where := fmt.Sprintf("topology.links[%d]", i)
		v.device(where, "device", dl.Device, false)
		for j, l := range dl.Links {
			v.finite(fmt.Sprintf("%s.links[%d]", where, j), "speed_gbps", l.SpeedGBps)
		}
	}
}

// figureAt names a figure in problems the way people look for it. It is
// formatted only when a problem is found: a valid 72-GPU run has hundreds of
// thousands of figures.
type figureAt struct {
	i int
	f *Figure
}

func (a figureAt) String() string {
	return fmt.Sprintf("figures[%d] (%s %d->%d %s)", a.i, a.f.Test, a.f.Src, a.f.Dst, FormatBytes(a.f.Size))
}

func (v *validator) figure(where fmt.Stringer, f *Figure, unit Unit) {
	if f.Test == "" {
		v.add("%s: test is empty", where)
	}
	switch {
	case f.Unit == "":
		v.add("%s: unit is empty", where)
	case unit != "" && f.Unit != unit:
		v.add("%s: unit is %s, but the catalogue gives %s for %s", where, f.Unit, unit, f.Test)
	}
	v.device(where, "src", f.Src, true)
	v.device(where, "dst", f.Dst, true)
	switch f.Verify {
	case VerifyPassed, VerifyFailed, VerifySkipped, VerifyNA, "":
	default:
		v.add("%s: verify %q is not passed, failed, skipped or n/a", where, f.Verify)
	}
	if len(f.Samples) == 0 && f.Stats == nil && f.Error == "" {
		v.add("%s: has neither samples nor an error", where)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, x := range f.Samples {
		// Not NaN, infinite or negative, in one comparison.
		if !(x >= 0 && x <= math.MaxFloat64) {
			v.add("%s: samples[%d] is %v", where, j, x)
			continue
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if f.Stats != nil {
		v.stats(where, f.Stats, len(f.Samples), lo, hi)
	}
}

// stats checks a figure's stats against themselves and against its n
// samples, whose valid values range over [lo, hi].
func (v *validator) stats(where fmt.Stringer, s *Stats, n int, lo, hi float64) {
	bad := false
	for _, fv := range []struct {
		name string
		x    float64
	}{{"median", s.Median}, {"mean", s.Mean}, {"stddev", s.Stddev}, {"cv", s.CV},
		{"min", s.Min}, {"max", s.Max}, {"p5", s.P5}, {"p95", s.P95}, {"p99", s.P99}} {
		if !(fv.x >= 0 && fv.x <= math.MaxFloat64) {
			v.add("%s: stats.%s is %v", where, fv.name, fv.x)
			bad = true
		}
	}
	if s.N < 0 || (n > 0 && s.N != n) {
		v.add("%s: stats.n is %d but there are %d samples", where, s.N, n)
		bad = true
	}
	if bad {
		return
	}
	// Order statistics must be ordered; a relative tolerance absorbs the
	// rounding of different percentile implementations.
	tol := 1e-9 * math.Max(1, s.Max)
	order := []struct {
		name string
		x    float64
	}{{"min", s.Min}, {"p5", s.P5}, {"median", s.Median}, {"p95", s.P95}, {"max", s.Max}}
	for j := 1; j < len(order); j++ {
		if order[j].x < order[j-1].x-tol {
			v.add("%s: stats.%s %v is below stats.%s %v", where, order[j].name, order[j].x, order[j-1].name, order[j-1].x)
		}
	}
	if s.Mean < s.Min-tol || s.Mean > s.Max+tol {
		v.add("%s: stats.mean %v is outside [min, max]", where, s.Mean)
	}
	if n > 0 && !math.IsInf(lo, 0) && (math.Abs(s.Min-lo) > tol || math.Abs(s.Max-hi) > tol) {
		v.add("%s: stats min/max %v/%v differ from the samples' %v/%v", where, s.Min, s.Max, lo, hi)
	}
}
