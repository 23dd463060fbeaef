package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/p2pbench/p2pbench/figstats"
)

// A reader of many runs at once (fleet, over a thousand nodes' files of
// several MB each) looks at each figure's identity, statistics,
// verification and error, never at its samples, which are most of a file
// and most of the time encoding/json takes to read it. A SummaryReader
// reads a file as Read does but keeps only what such a reader looks at, and
// decodes the lines of the figures, laid out as Encode writes them, with
// valyala/fastjson, which finds the values it is asked for without
// converting the rest: on an 8-GPU run, an eighth of encoding/json's time.
//
// What a summary drops it does not check: a file whose samples are not
// numbers is refused by Read and read by a SummaryReader. What it keeps it
// reads exactly as encoding/json does: a figure line with anything else
// (a key it does not know, or in other case, a key twice, a value of
// another kind, text that is not printable ASCII, whose decoding differs
// between the two) is decoded by encoding/json, and a file laid out
// otherwise or that does not decode is read whole, so that what is read
// and every error are the same either way. The run is then validated as
// Read validates it (what Validate checks of samples is left out).

// A SummaryReader reads results files as Read does and returns their
// summaries: each run without its figures' samples, rounds, link traffic
// and method checks, nor the verdict's figure verdicts (see
// Run.Summarize). Figures of a run whose params are alike may share one
// map: a summary is for reading. It keeps the buffers it read a file and
// its figures with for the next: a reader of many files keeps one for
// each goroutine. The zero value is ready to use; a SummaryReader is not
// for several goroutines at once.
type SummaryReader struct {
	bufs    readBuffers
	figures figureReader
}

// Read reads the summary of the results file at path. Nothing it returns
// holds the reader's buffers.
func (s *SummaryReader) Read(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	defer f.Close()
	// Read as Read reads: bounded, and what a file may cost squeezed or
	// refused as it is read.
	return readGuarded(path, f, fileLimits, &s.bufs, func(data []byte) (*Run, error) {
		return s.figures.decodeSummary(path, data)
	})
}

// Summarize drops what a summary does not keep: every figure's samples,
// rounds, link traffic and method check, and the verdict's figures. The
// figures' stats, their verification and errors stay.
func (r *Run) Summarize() {
	for i := range r.Figures {
		f := &r.Figures[i]
		f.Samples, f.Rounds, f.Traffic, f.Check = nil, nil, nil, nil
	}
	if r.Verdict != nil {
		r.Verdict.Figures = nil
	}
}

// decodeSummary decodes the summary of data, a file named file, with r.
func (r *figureReader) decodeSummary(file string, data []byte) (*Run, error) {
	run, ok := r.summaryLines(data)
	if !ok {
		whole, err := decode(file, data, false)
		if err != nil {
			return nil, err
		}
		whole.Summarize()
		return whole, nil
	}
	run.CompleteCatalogue()
	if err := run.Validate(); err != nil {
		return nil, &InvalidError{File: file, Err: err}
	}
	return run, nil
}

// summaryLines decodes the summary of data laid out as Encode writes it;
// ok is false, with nothing decoded, where decodeLines would find it
// otherwise, or where a figure does not decode.
func (r *figureReader) summaryLines(data []byte) (*Run, bool) {
	head, lines, tail, ok := splitLines(data, r.lines[:0])
	r.lines = lines
	if !ok {
		return nil, false
	}
	run, buf, ok := decodeRest(head, tail, r.rest, true)
	r.rest = buf
	if !ok {
		return nil, false
	}
	run.Figures = make([]Figure, len(lines))
	r.start(len(lines))
	for i, line := range lines {
		f := &run.Figures[i]
		if r.read(line, f) {
			continue
		}
		*f = Figure{}
		if json.Unmarshal(line, f) != nil {
			return nil, false
		}
		f.Samples, f.Rounds, f.Traffic, f.Check = nil, nil, nil, nil
	}
	if run.Verdict != nil {
		run.Verdict.Figures = nil
	}
	return &run, true
}

// figureReader reads the figures' lines of one file at a time.
type figureReader struct {
	lines   [][]byte // the figures' lines
	rest    []byte   // what follows the figures, as an object
	p       fastjson.Parser
	scratch []byte // a line without its samples
	num     []byte // a number's text
	strs    map[string]string
	// paramsSeen are the params read, by their text.
	paramsSeen map[string]map[string]string
	// stats and rounds are the figures' stats, one allocation for all.
	stats  []figstats.Stats
	rounds []figstats.RoundStats
	// The figure being read, and whether it reads.
	f    *Figure
	ok   bool
	seen uint32
}

// start readies r for a file of n figures.
func (r *figureReader) start(n int) {
	r.strs, r.paramsSeen = map[string]string{}, map[string]map[string]string{}
	r.stats, r.rounds = make([]figstats.Stats, 0, n), make([]figstats.RoundStats, 0, n)
}

// read reads a figure's line into f as encoding/json would, leaving out
// what a summary drops; false where it cannot vouch for that.
func (r *figureReader) read(line []byte, f *Figure) bool {
	r.scratch = withoutSamples(r.scratch[:0], line)
	v, err := r.p.ParseBytes(r.scratch)
	if err != nil {
		return false
	}
	o, err := v.Object()
	if err != nil {
		return false
	}
	r.f, r.ok, r.seen = f, true, 0
	o.Visit(r.field)
	return r.ok
}

// withoutSamples appends line to dst without the numbers of its samples
// and rounds, which are most of its values: the arrays are left empty.
// Only arrays that follow their key as Encode writes it (after a comma: a
// quote inside a string is escaped) and hold no string (no quote, so the
// first ']' closes them, or a nested array, which then does not parse and
// the line goes to encoding/json) are emptied.
func withoutSamples(dst, line []byte) []byte {
	for _, key := range [][]byte{[]byte(`,"samples":[`), []byte(`,"rounds":[`)} {
		i := bytes.Index(line, key)
		if i < 0 {
			continue
		}
		from := i + len(key)
		end := bytes.IndexByte(line[from:], ']')
		if end < 0 || bytes.IndexByte(line[from:from+end], '"') >= 0 {
			continue
		}
		dst = append(dst, line[:from]...)
		line = line[from+end:]
	}
	return append(dst, line...)
}

// figureVerdicts finds the lines of the verdict's figures in what follows
// the figures of a file laid out as Encode writes it (a raw newline is
// only ever a separator there: compact JSON escapes those in text): they
// are t[from:to], their array's brackets left out; ok is false where there
// are none.
func figureVerdicts(t []byte) (from, to int, ok bool) {
	v := bytes.Index(t, []byte(",\n\"verdict\":{"))
	if v < 0 {
		return 0, 0, false
	}
	open := bytes.Index(t[v:], []byte("\n\"figures\":["))
	if open < 0 {
		return 0, 0, false
	}
	from = v + open + len("\n\"figures\":[")
	n := bytes.Index(t[from:], []byte("\n]}"))
	if n < 0 {
		return 0, 0, false
	}
	return from, from + n, true
}

// The keys of a figure's line that figureReader reads, and of its stats;
// a key of neither is decoded by encoding/json (a test holds them to the
// JSON fields of Figure, figstats.Stats and figstats.RoundStats, and to figureKey, statsKey
// and roundsKey).
var (
	summaryKeys = []string{"test", "engine", "direction", "part", "src", "dst", "size_bytes", "unit", "params",
		"samples", "rounds", "stats", "verify", "verify_detail", "error", "error_name", "link_traffic",
		"other_processes", "method_check"}
	summaryStatsKeys  = []string{"n", "median", "mean", "stddev", "cv", "min", "max", "p5", "p95", "p99", "rounds"}
	summaryRoundsKeys = []string{"n", "median_lo", "median_hi", "confidence", "run_cv"}
)

// field reads one field of the figure's line.
func (r *figureReader) field(key []byte, v *fastjson.Value) {
	if !r.ok {
		return
	}
	// string(key) in a switch, a comparison or a call inlined converts
	// nothing: no allocation for each key.
	if r.ok = once(&r.seen, figureKey(key)); !r.ok {
		return
	}
	f := r.f
	switch string(key) {
	case "test":
		r.ok = r.text(v, (*string)(&f.Test))
	case "engine":
		r.ok = r.text(v, (*string)(&f.Engine))
	case "direction":
		r.ok = r.text(v, (*string)(&f.Direction))
	case "part":
		r.ok = r.text(v, (*string)(&f.Part))
	case "unit":
		r.ok = r.text(v, (*string)(&f.Unit))
	case "verify":
		r.ok = r.text(v, &f.Verify)
	case "verify_detail":
		r.ok = r.text(v, &f.VerifyDetail)
	case "error":
		r.ok = r.text(v, &f.Error)
	case "error_name":
		r.ok = r.text(v, &f.ErrorName)
	case "src":
		r.ok = r.whole(v, &f.Src)
	case "dst":
		r.ok = r.whole(v, &f.Dst)
	case "size_bytes":
		r.ok = r.unsigned(v, &f.Size)
	case "params":
		r.ok = r.params(v, f)
	case "stats":
		r.ok = r.figureStats(v, f)
	case "other_processes":
		r.ok = r.pids(v, f)
	case "samples", "rounds":
		r.ok = kind(v, fastjson.TypeArray)
	case "link_traffic", "method_check":
		r.ok = kind(v, fastjson.TypeObject)
	}
}

// figureKey is the index of a figure's key in summaryKeys, -1 for none.
func figureKey(k []byte) int {
	switch string(k) {
	case "test":
		return 0
	case "engine":
		return 1
	case "direction":
		return 2
	case "part":
		return 3
	case "src":
		return 4
	case "dst":
		return 5
	case "size_bytes":
		return 6
	case "unit":
		return 7
	case "params":
		return 8
	case "samples":
		return 9
	case "rounds":
		return 10
	case "stats":
		return 11
	case "verify":
		return 12
	case "verify_detail":
		return 13
	case "error":
		return 14
	case "error_name":
		return 15
	case "link_traffic":
		return 16
	case "other_processes":
		return 17
	case "method_check":
		return 18
	}
	return -1
}

// statsKey is the index of a key of stats in summaryStatsKeys, -1 for
// none.
func statsKey(k []byte) int {
	switch string(k) {
	case "n":
		return 0
	case "median":
		return 1
	case "mean":
		return 2
	case "stddev":
		return 3
	case "cv":
		return 4
	case "min":
		return 5
	case "max":
		return 6
	case "p5":
		return 7
	case "p95":
		return 8
	case "p99":
		return 9
	case "rounds":
		return 10
	}
	return -1
}

// roundsKey is the index of a key of the rounds' summary in
// summaryRoundsKeys, -1 for none.
func roundsKey(k []byte) int {
	switch string(k) {
	case "n":
		return 0
	case "median_lo":
		return 1
	case "median_hi":
		return 2
	case "confidence":
		return 3
	case "run_cv":
		return 4
	}
	return -1
}

// once reports whether key i is a known key (i ≥ 0) not seen before, and
// marks it seen (encoding/json merges a key given twice into what the
// first left, which the summary does not imitate).
func once(seen *uint32, i int) bool {
	if i < 0 || *seen&(1<<i) != 0 {
		return false
	}
	*seen |= 1 << i
	return true
}

// kind reports whether v is null (which leaves a field as it is) or of
// type t.
func kind(v *fastjson.Value, t fastjson.Type) bool {
	return v.Type() == fastjson.TypeNull || v.Type() == t
}

// text reads a string, null leaving dst as it is, the same text once per
// file. Only printable ASCII is taken: encoding/json decodes invalid UTF-8
// and lone surrogates as U+FFFD and refuses control characters, fastjson
// does neither.
func (r *figureReader) text(v *fastjson.Value, dst *string) bool {
	switch v.Type() {
	case fastjson.TypeNull:
		return true
	case fastjson.TypeString:
	default:
		return false
	}
	b, err := v.StringBytes()
	if err != nil || !printable(b) {
		return false
	}
	*dst = r.intern(b)
	return true
}

// intern returns b as a string, the same one for the same text.
func (r *figureReader) intern(b []byte) string {
	if s, ok := r.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	r.strs[s] = s
	return s
}

// printable reports whether b is printable ASCII.
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// number reads the text of a JSON number into r.num, and reports whether
// it is one as JSON writes it (fastjson's parser takes any run of digits,
// signs, dots and exponents, and NaN and Inf, as a number), with how many
// digits its integer and fraction hold and whether it has an exponent.
func (r *figureReader) number(v *fastjson.Value) (digits int, exponent, ok bool) {
	if v.Type() != fastjson.TypeNumber {
		return 0, false, false
	}
	r.num = v.MarshalTo(r.num[:0])
	return jsonNumber(r.num)
}

// jsonNumber reports whether b is a number as JSON writes one,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, with how many digits its
// integer and fraction hold and whether it has an exponent.
func jsonNumber(b []byte) (digits int, exponent, ok bool) {
	i := 0
	run := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	switch digits = run(); {
	case digits == 0:
		return 0, false, false
	case b[start] == '0' && digits > 1:
		return 0, false, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		n := run()
		if n == 0 {
			return 0, false, false
		}
		digits += n
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if run() == 0 {
			return 0, false, false
		}
		exponent = true
	}
	return digits, exponent, i == len(b)
}

// fastDigits is the longest number fastjson converts here: a whole
// number of 15 digits, or a decimal of 15 digits without an exponent, is
// exact in a float64, and fastjson's one division of it by an exact power
// of ten rounds as strconv does; longer ones go to strconv.
const fastDigits = 15

// whole reads an int as encoding/json does (no fraction, no exponent),
// null leaving dst as it is.
func (r *figureReader) whole(v *fastjson.Value, dst *int) bool {
	if v.Type() == fastjson.TypeNull {
		return true
	}
	if _, _, ok := r.number(v); !ok {
		return false
	}
	var err error
	if len(r.num) <= fastDigits {
		*dst, err = v.Int()
	} else {
		var n int64
		n, err = strconv.ParseInt(string(r.num), 10, strconv.IntSize)
		*dst = int(n)
	}
	return err == nil
}

// unsigned reads a uint64 as encoding/json does.
func (r *figureReader) unsigned(v *fastjson.Value, dst *uint64) bool {
	if v.Type() == fastjson.TypeNull {
		return true
	}
	if _, _, ok := r.number(v); !ok {
		return false
	}
	var err error
	if len(r.num) <= fastDigits {
		*dst, err = v.Uint64()
	} else {
		*dst, err = strconv.ParseUint(string(r.num), 10, 64)
	}
	return err == nil
}

// float reads a float64 as encoding/json does (as strconv.ParseFloat
// reads it, which refuses a number beyond float64's range).
func (r *figureReader) float(v *fastjson.Value, dst *float64) bool {
	if v.Type() == fastjson.TypeNull {
		return true
	}
	digits, exponent, ok := r.number(v)
	if !ok {
		return false
	}
	var err error
	if digits <= fastDigits && !exponent {
		*dst, err = v.Float64()
	} else {
		*dst, err = strconv.ParseFloat(string(r.num), 64)
	}
	return err == nil
}

// params reads a figure's params: an object of strings. Figures of a file
// whose params are written alike share one map.
func (r *figureReader) params(v *fastjson.Value, f *Figure) bool {
	if v.Type() == fastjson.TypeNull {
		return true
	}
	o, err := v.Object()
	if err != nil {
		return false
	}
	r.num = v.MarshalTo(r.num[:0])
	if m, ok := r.paramsSeen[string(r.num)]; ok {
		f.Params = m
		return true
	}
	text := string(r.num)
	f.Params = make(map[string]string, o.Len())
	ok := true
	o.Visit(func(key []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		if _, twice := f.Params[string(key)]; twice || !printable(key) {
			ok = false
			return
		}
		var s string
		if ok = r.text(v, &s); ok {
			f.Params[r.intern(key)] = s
		}
	})
	if ok {
		r.paramsSeen[text] = f.Params
	}
	return ok
}

// pids reads a figure's other processes: an array of whole numbers.
func (r *figureReader) pids(v *fastjson.Value, f *Figure) bool {
	if v.Type() == fastjson.TypeNull {
		return true
	}
	a, err := v.Array()
	if err != nil {
		return false
	}
	f.OtherProcesses = make([]int, len(a))
	for i, x := range a {
		if !r.whole(x, &f.OtherProcesses[i]) {
			return false
		}
	}
	return true
}

// figureStats reads a figure's stats, its rounds' summary included.
func (r *figureReader) figureStats(v *fastjson.Value, f *Figure) bool {
	if v.Type() == fastjson.TypeNull {
		f.Stats = nil
		return true
	}
	o, err := v.Object()
	if err != nil {
		return false
	}
	r.stats = append(r.stats, figstats.Stats{})
	s := &r.stats[len(r.stats)-1]
	if len(r.stats) == cap(r.stats) { // the next figure's in a new slab
		r.stats = make([]figstats.Stats, 0, cap(r.stats))
	}
	f.Stats = s
	var seen uint32
	ok := true
	o.Visit(func(key []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		if ok = once(&seen, statsKey(key)); !ok {
			return
		}
		switch string(key) {
		case "n":
			ok = r.whole(v, &s.N)
		case "median":
			ok = r.float(v, &s.Median)
		case "mean":
			ok = r.float(v, &s.Mean)
		case "stddev":
			ok = r.float(v, &s.Stddev)
		case "cv":
			ok = r.float(v, &s.CV)
		case "min":
			ok = r.float(v, &s.Min)
		case "max":
			ok = r.float(v, &s.Max)
		case "p5":
			ok = r.float(v, &s.P5)
		case "p95":
			ok = r.float(v, &s.P95)
		case "p99":
			ok = r.float(v, &s.P99)
		case "rounds":
			ok = r.roundStats(v, s)
		}
	})
	return ok
}

// roundStats reads the summary of a figure's rounds.
func (r *figureReader) roundStats(v *fastjson.Value, s *figstats.Stats) bool {
	if v.Type() == fastjson.TypeNull {
		s.Rounds = nil
		return true
	}
	o, err := v.Object()
	if err != nil {
		return false
	}
	r.rounds = append(r.rounds, figstats.RoundStats{})
	rs := &r.rounds[len(r.rounds)-1]
	if len(r.rounds) == cap(r.rounds) {
		r.rounds = make([]figstats.RoundStats, 0, cap(r.rounds))
	}
	s.Rounds = rs
	var seen uint32
	ok := true
	o.Visit(func(key []byte, v *fastjson.Value) {
		if !ok {
			return
		}
		if ok = once(&seen, roundsKey(key)); !ok {
			return
		}
		switch string(key) {
		case "n":
			ok = r.whole(v, &rs.N)
		case "median_lo":
			ok = r.float(v, &rs.MedianLo)
		case "median_hi":
			ok = r.float(v, &rs.MedianHi)
		case "confidence":
			ok = r.float(v, &rs.Confidence)
		case "run_cv":
			ok = r.float(v, &rs.RunCV)
		}
	})
	return ok
}
