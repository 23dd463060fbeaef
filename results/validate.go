package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/figstats"
)

// ValidationError lists every rule a Run breaks.
type ValidationError struct {
	Problems []string
	// limits counts the problems that are limits of the format rather than
	// rules of a run's sense: a text longer than MaxNameBytes or
	// MaxTextBytes, a subnormal value.
	limits int
}

// OnlyLimits reports whether every problem is a limit of the format (a text
// too long, a value too small to be measured): what a converter that copies
// its input's texts and values can reach only when the input holds them,
// unlike a broken rule (a duplicate figure, a bandwidth of 0 bytes), which
// is the converter's fault.
func (e *ValidationError) OnlyLimits() bool {
	return e.limits > 0 && e.limits == len(e.Problems)
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
// name their test and unit, a test this build knows in the unit its
// catalogue gives (a test it does not know, in the unit of the run's
// catalogue, if any), every value is finite and not negative, stats agree
// with the samples, device indices refer to devices of the run,
// verification states are known, no two figures have the same Key, and no
// free text is longer than MaxNameBytes or MaxTextBytes. It returns a
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
	v.header(r)
	if t := r.Topology; t != nil {
		v.topology(t)
	}
	keys := v.figures(r)
	for i, t := range r.Tuning {
		where := fmt.Sprintf("tuning[%d]", i)
		v.name(where, "direction", t.Direction)
		v.device(where, "src", t.Src, false)
		v.device(where, "dst", t.Dst, false)
		for j, c := range append([]TuneCandidate{t.Winner}, t.Tried...) {
			w := where + ".winner"
			if j > 0 {
				w = fmt.Sprintf("%s.tried[%d]", where, j-1)
			}
			v.finite(w, "median_gbps", c.MedianGBps)
			v.finite(w, "cv", c.CV)
			v.name(w, "variant", c.Variant)
			v.text(w, "error", c.Error)
		}
	}
	if r.Verdict != nil {
		v.verdict(r.Verdict, keys)
	}
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems, limits: v.limits}
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

// Limits of the free text a results file may carry, in bytes. Names are
// host and device names, ids and versions, test, engine, unit and param
// names and values; texts are sentences: command words, notes, conventions,
// error texts. Files p2pbench writes stay far below them (a Linux host name
// has at most 64 bytes, a path at most 4096, the longest convention about
// 1000), and readers lay text out in time that grows faster than its
// length (a 1 MB host name cost 30 s per plot), so a longer string is
// refused on reading rather than paid for by every reader. Producers bound
// what they record with ClipText.
const (
	MaxNameBytes = 256
	MaxTextBytes = 4096
)

// maxConventions bounds the conventions a catalogue entry names (each a
// name): p2pbench's tests name at most a dozen.
const maxConventions = 64

// ClipText returns s cut to at most MaxTextBytes, on a UTF-8 boundary, with
// a marker saying how much was cut: for texts p2pbench records from
// elsewhere (a child's output, errors joined over many devices).
func ClipText(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	const marker = " … [%d bytes cut]"
	n := MaxTextBytes - len(marker) - 8
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf(marker, len(s)-n)
}

type validator struct {
	devices  map[int]bool
	problems []string
	limits   int // problems that are limits of the format (ValidationError.OnlyLimits)
}

func (v *validator) add(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// limit adds a problem that is a limit of the format.
func (v *validator) limit(format string, args ...any) {
	v.add(format, args...)
	v.limits++
}

// value adds the problem of a bad value: a limit of the format when why
// says so (a subnormal number), a broken rule otherwise (NaN, negative).
func (v *validator) value(why, format string, args ...any) {
	if why != "" {
		v.limit(format, args...)
	} else {
		v.add(format, args...)
	}
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

// name and text check the length of free text (see MaxNameBytes).
func (v *validator) name(where any, field, s string) { v.length(where, field, s, MaxNameBytes, "name") }
func (v *validator) text(where any, field, s string) { v.length(where, field, s, MaxTextBytes, "text") }

func (v *validator) length(where any, field, s string, limit int, kind string) {
	if len(s) > limit {
		v.limit("%s: %s is %d bytes long, over the %d bytes a results file allows for a %s", where, field, len(s), limit, kind)
	}
}

// header checks the free text of everything but the figures and topology.
func (v *validator) header(r *Run) {
	for _, n := range []struct{ field, s string }{
		{"tool.name", r.Tool.Name}, {"tool.version", r.Tool.Version}, {"tool.goos", r.Tool.GoOS},
		{"tool.goarch", r.Tool.GoArch}, {"sim_machine", r.SimMachine}, {"host", r.Host},
		{"environment.cuda_version", r.Environment.CUDAVersion}, {"environment.driver_release", r.Environment.DriverRelease},
		{"replicates", r.Replicates},
	} {
		v.name("run", n.field, n.s)
	}
	v.text("run", "stopped", r.Stopped)
	v.text("run", "environment.library", r.Environment.Library)
	for _, list := range []struct {
		field string
		s     []string
	}{{"tool.command", r.Tool.Command}, {"notes", r.Notes}, {"environment.notes", r.Environment.Notes}} {
		for i, s := range list.s {
			v.text("run", fmt.Sprintf("%s[%d]", list.field, i), s)
		}
	}
	where := &place{of: "environment.devices"}
	for i, d := range r.Environment.Devices {
		where.i = i
		v.name(where, "name", d.Name)
		v.name(where, "uuid", d.UUID)
		v.name(where, "pci_bus_id", d.PCIBusID)
		v.name(where, "compute_capability", d.ComputeCapability)
	}
	for t, info := range r.Catalogue {
		where := "catalogue entry " + brief(string(t))
		v.name(where, "test name", string(t))
		v.name(where, "unit", string(info.Unit))
		v.name(where, "title", info.Title)
		v.name(where, "short", info.Short)
		v.text(where, "convention", info.Convention)
		if len(info.Conventions) > maxConventions {
			v.limit("%s: %d conventions, more than the %d an entry may name", where, len(info.Conventions), maxConventions)
		}
		for i, id := range info.Conventions {
			v.name(where, fmt.Sprintf("conventions[%d]", i), id)
		}
		if known, ok := Lookup(t); ok && info.Unit != known.Unit {
			v.add("%s: unit is %s, but %s is measured in %s", where, brief(string(info.Unit)), t, known.Unit)
		}
	}
}

// brief shows s in a message: as it is when short, else quoted and cut to
// a few dozen bytes.
func brief(s string) string {
	if len(s) <= briefBytes {
		return s
	}
	return quoteShort(s)
}

const briefBytes = 40

// QuoteShort quotes s for a message, cut to a few dozen bytes with its
// length said: text from a file or an argument echoed in a message.
func QuoteShort(s string) string { return quoteShort(s) }

// quoteShort quotes s for a message, cut to a few dozen bytes.
func quoteShort(s string) string {
	const n = briefBytes
	if len(s) <= n {
		return strconv.Quote(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
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
	for i, n := range t.Notes {
		v.text("topology", fmt.Sprintf("notes[%d]", i), n)
	}
	where := &place{of: "topology.pairs"}
	for i, p := range t.Pairs {
		where.i = i
		v.pairText(where, p)
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
	where = &place{of: "topology.links"}
	w := &place{where: where, of: "links"}
	for i, dl := range t.Links {
		where.i = i
		v.device(where, "device", dl.Device, false)
		for j, l := range dl.Links {
			w.i = j
			v.finite(w, "speed_gbps", l.SpeedGBps)
			v.name(w, "remote_pci_bus_id", l.RemoteBus)
			v.name(w, "speed_source", l.SpeedSource)
		}
	}
	where = &place{of: "topology.conformance"}
	for i, c := range t.Conformance {
		where.i = i
		for _, n := range []struct{ field, s string }{{"name", c.Name}, {"call", c.Call}, {"documented", c.Documented}, {"observed", c.Observed}} {
			v.name(where, n.field, n.s)
		}
		v.text(where, "note", c.Note)
	}
}

// pairText checks the free text of a topology pair.
func (v *validator) pairText(where fmt.Stringer, p Pair) {
	for k := range p.Attributes {
		v.name(where, "attributes key", k)
	}
	for k, e := range p.AttributeErrors {
		v.name(where, "attribute_errors key", k)
		if len(e) > MaxTextBytes { // the field's name only for a problem
			v.text(where, "attribute_errors["+quoteShort(k)+"]", e)
		}
	}
	for k := range p.AtomicCaps {
		v.name(where, "atomic_caps key", k)
	}
	v.text(where, "atomic_caps_error", p.AtomicCapsError)
}

// place names an element of a list in problems, "of[i]" after where
// (when not nil) and a dot: formatted only when a problem is found. A
// 72-GPU run's topology has 5,112 pairs and links, each with a few checks,
// and formatting every name up front (or making an interface of a string
// for every check) was most of a reading's allocations. The validator
// formats a problem when it adds it, so one place may be moved on (i
// changed) from one element to the next.
type place struct {
	where fmt.Stringer
	of    string
	i     int
}

func (p *place) String() string {
	if p.where != nil {
		return fmt.Sprintf("%s.%s[%d]", p.where, p.of, p.i)
	}
	return fmt.Sprintf("%s[%d]", p.of, p.i)
}

// figureAt names a figure in problems the way people look for it. It is
// formatted only when a problem is found: a valid 72-GPU run has hundreds of
// thousands of figures.
type figureAt struct {
	i int
	f *Figure
}

func (a figureAt) String() string {
	return fmt.Sprintf("figures[%d] (%s %d->%d %s)", a.i, brief(string(a.f.Test)), a.f.Src, a.f.Dst, FormatBytes(a.f.Size))
}

// figures checks every figure, in the unit its test has (this build's
// catalogue, else the run's), and that no two have the same Key.
// figures checks every figure and returns the index of the first figure
// of each Key.
func (v *validator) figures(r *Run) map[string]int {
	first := make(map[string]int, len(r.Figures))
	for i := range r.Figures {
		f := &r.Figures[i]
		unit := r.Catalogue[f.Test].Unit
		if info, known := Lookup(f.Test); known {
			unit = info.Unit
		}
		v.figure(figureAt{i, f}, f, unit)
		k := f.Key()
		if j, dup := first[k]; dup {
			v.add("%s and %s are the same figure: the same test, engine, direction, part, devices, size and params",
				figureAt{j, &r.Figures[j]}, figureAt{i, f})
			continue
		}
		first[k] = i
	}
	return first
}

func (v *validator) figure(where fmt.Stringer, f *Figure, unit Unit) {
	v.figureText(where, f)
	if f.Test == "" {
		v.add("%s: test is empty", where)
	}
	switch {
	case f.Unit == "":
		v.add("%s: unit is empty", where)
	case unit != "" && f.Unit != unit:
		v.add("%s: unit is %s, but the catalogue gives %s for %s", where, brief(string(f.Unit)), brief(string(unit)), brief(string(f.Test)))
	case f.Unit == UnitGBps && f.Size == 0:
		v.add("%s: size_bytes is 0, but a bandwidth figure moves bytes", where)
	}
	v.device(where, "src", f.Src, true)
	v.device(where, "dst", f.Dst, true)
	switch f.Verify {
	case VerifyPassed, VerifyFailed, VerifySkipped, VerifyNA:
	case "":
		v.add("%s: verify is missing: want passed, failed, skipped or n/a", where)
	default:
		v.add("%s: verify %s is not passed, failed, skipped or n/a", where, quoteShort(f.Verify))
	}
	if len(f.Samples) == 0 && f.Stats == nil && f.Error == "" {
		v.add("%s: has neither samples nor an error", where)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, x := range f.Samples {
		if bad, why := badValue(x); bad {
			v.value(why, "%s: samples[%d] is %v%s", where, j, x, why)
			continue
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if f.Stats != nil {
		v.stats(where, f.Stats, len(f.Samples), lo, hi)
	}
	v.rounds(where, f)
	v.methodCheck(where, f.Check)
}

// methodCheck checks a figure's method check: its windows' repetitions and
// figures, and values that are numbers (Delta, a change, may be negative).
func (v *validator) methodCheck(where fmt.Stringer, c *MethodCheck) {
	if c == nil {
		return
	}
	if c.RepsPerSample < 1 || len(c.Samples) == 0 {
		v.add("%s: method_check has %d repetitions per sample and %d samples: want at least one of each", where, c.RepsPerSample, len(c.Samples))
	}
	for j, x := range c.Samples {
		if bad, why := badValue(x); bad {
			v.value(why, "%s: method_check.samples[%d] is %v%s", where, j, x, why)
		}
	}
	for _, fv := range []struct {
		name string
		x    float64
	}{{"median", c.Median}, {"method_median", c.MethodMedian}, {"tolerance", c.Tolerance}, {"delta", math.Abs(c.Delta)}} {
		if bad, why := badValue(fv.x); bad {
			v.value(why, "%s: method_check.%s is %v%s", where, fv.name, fv.x, why)
		}
	}
}

// rounds checks a figure's rounds against its samples and its stats.
func (v *validator) rounds(where fmt.Stringer, f *Figure) {
	sum := 0
	for j, n := range f.Rounds {
		if n < 1 {
			v.add("%s: rounds[%d] is %d: a round has at least one sample", where, j, n)
			return
		}
		sum += n
	}
	if len(f.Rounds) > 0 && sum != len(f.Samples) {
		v.add("%s: rounds count %d samples but there are %d", where, sum, len(f.Samples))
		return
	}
	if f.Stats == nil || f.Stats.Rounds == nil {
		return
	}
	r := f.Stats.Rounds
	for _, fv := range []struct {
		name string
		x    float64
	}{{"median_lo", r.MedianLo}, {"median_hi", r.MedianHi}, {"confidence", r.Confidence}, {"run_cv", r.RunCV}} {
		if b, why := badValue(fv.x); b {
			v.value(why, "%s: stats.rounds.%s is %v%s", where, fv.name, fv.x, why)
			return
		}
	}
	tol := 1e-9 * math.Max(1, r.MedianHi)
	switch {
	case r.N < 2:
		v.add("%s: stats.rounds.n is %d: rounds are summarised from two on", where, r.N)
	case len(f.Samples) > 0 && r.N != len(f.Rounds):
		v.add("%s: stats.rounds.n is %d but the figure has %d rounds", where, r.N, len(f.Rounds))
	case r.Confidence > 1:
		v.add("%s: stats.rounds.confidence %v is above 1", where, r.Confidence)
	case r.MedianLo > f.Stats.Median+tol || r.MedianHi < f.Stats.Median-tol:
		v.add("%s: stats.rounds [median_lo, median_hi] = [%v, %v] leaves out the median %v", where, r.MedianLo, r.MedianHi, f.Stats.Median)
	}
}

// figureText checks the free text of a figure.
func (v *validator) figureText(where fmt.Stringer, f *Figure) {
	for _, n := range []struct{ field, s string }{
		{"test", string(f.Test)}, {"engine", string(f.Engine)}, {"direction", string(f.Direction)},
		{"part", string(f.Part)}, {"unit", string(f.Unit)}, {"error_name", f.ErrorName},
	} {
		v.name(where, n.field, n.s)
	}
	for k, p := range f.Params {
		v.name(where, "params key", k)
		if len(p) > MaxNameBytes { // the field's name only for a problem
			v.name(where, "params["+quoteShort(k)+"]", p)
		}
	}
	v.text(where, "error", f.Error)
	v.text(where, "verify_detail", f.VerifyDetail)
}

// badValue reports whether x cannot be a measured value, and why beyond
// the value itself: NaN, infinite, negative, or subnormal (no measurement
// is smaller than 2.2e-308 of any unit, and a ratio of such a value, as
// compare makes, overflows).
func badValue(x float64) (bad bool, why string) {
	switch {
	case !(x >= 0 && x <= math.MaxFloat64): // NaN, infinite or negative
		return true, ""
	case x != 0 && x < minNormal:
		return true, ", a subnormal number: no measurement is that small"
	}
	return false, ""
}

// minNormal is the smallest normal float64.
const minNormal = 0x1p-1022

// stats checks a figure's stats against themselves and against its n
// samples, whose valid values range over [lo, hi].
func (v *validator) stats(where fmt.Stringer, s *figstats.Stats, n int, lo, hi float64) {
	bad := false
	for _, fv := range []struct {
		name string
		x    float64
	}{{"median", s.Median}, {"mean", s.Mean}, {"stddev", s.Stddev}, {"cv", s.CV},
		{"min", s.Min}, {"max", s.Max}, {"p5", s.P5}, {"p95", s.P95}, {"p99", s.P99}} {
		if b, why := badValue(fv.x); b {
			v.value(why, "%s: stats.%s is %v%s", where, fv.name, fv.x, why)
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
