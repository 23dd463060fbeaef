package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/p2pbench/p2pbench/internal/mem"
)

// This file holds hand-written JSON for the figures array, which is almost
// all of a results file: a 72-GPU run with a size sweep has hundreds of
// thousands of figures (hundreds of megabytes), which encoding/json takes
// tens of seconds to write or read. Everything else in a file still goes
// through encoding/json.
//
// Both directions are exact stand-ins, checked by tests and FuzzDecode:
//   - the encoder writes byte for byte what json.MarshalIndent followed by
//     compactNumberArrays writes;
//   - the decoder accepts only well-formed input in the shapes it knows and
//     produces what json.Unmarshal would; on anything else (escapes it does
//     not handle, nulls where values belong, keys that encoding/json would
//     match case-insensitively, any syntax error) it gives up and the caller
//     decodes with encoding/json, whose errors name the position.

// ---------------------------------------------------------------------------
// Encoding.

// encodeRun is Encode's body: encoding/json for everything but the figures.
func encodeRun(r *Run) ([]byte, error) {
	shallow := *r
	shallow.Figures = nil
	head, err := json.MarshalIndent(&shallow, "", "  ")
	if err != nil {
		return nil, err
	}
	head = compactNumberArrays(head)
	if r.Figures == nil {
		return head, nil
	}
	// A raw newline never occurs inside a JSON string, so this marks the
	// top-level figures member.
	marker := []byte("\n  \"figures\": null")
	at := bytes.Index(head, marker)
	if at < 0 {
		return nil, errors.New("encoding results: no figures member in the encoded run")
	}
	var e figureEncoder
	out := make([]byte, 0, len(head)+len(r.Figures)*1200)
	out = append(out, head[:at]...)
	out = append(out, "\n  \"figures\": "...)
	out, err = e.figures(out, r.Figures)
	if err != nil {
		return nil, err
	}
	return append(out, head[at+len(marker):]...), nil
}

// figureEncoder remembers the JSON form of strings it has seen: figures
// repeat the same few dozen strings (tests, units, conventions).
type figureEncoder struct {
	quoted map[string][]byte
}

func (e *figureEncoder) str(out []byte, s string) []byte {
	if q, ok := e.quoted[s]; ok {
		return append(out, q...)
	}
	// json.Marshal of a string cannot fail; it escapes exactly as
	// MarshalIndent does.
	q, _ := json.Marshal(s)
	if e.quoted == nil {
		e.quoted = map[string][]byte{}
	}
	e.quoted[s] = q
	return append(out, q...)
}

// float appends f as encoding/json does (ES6 number formatting).
func appendJSONFloat(out []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	out = strconv.AppendFloat(out, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json.
		n := len(out)
		if n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out, nil
}

const (
	figIndent   = "    "
	fieldIndent = "      "
	innerIndent = "        "
)

func (e *figureEncoder) figures(out []byte, figs []Figure) ([]byte, error) {
	if len(figs) == 0 {
		return append(out, "[]"...), nil
	}
	out = append(out, "[\n"...)
	var err error
	for i := range figs {
		if i > 0 {
			out = append(out, ",\n"...)
		}
		if out, err = e.figure(out, &figs[i]); err != nil {
			return nil, err
		}
	}
	return append(out, "\n  ]"...), nil
}

func (e *figureEncoder) figure(out []byte, f *Figure) ([]byte, error) {
	out = append(out, figIndent+"{\n"...)
	field := func(name string) {
		out = append(out, fieldIndent+`"`...)
		out = append(out, name...)
		out = append(out, `": `...)
	}
	next := func() { out = append(out, ",\n"...) }
	field("test")
	out = e.str(out, f.Test)
	next()
	field("engine")
	out = e.str(out, f.Engine)
	if f.Direction != "" {
		next()
		field("direction")
		out = e.str(out, f.Direction)
	}
	if f.Part != "" {
		next()
		field("part")
		out = e.str(out, f.Part)
	}
	next()
	field("src")
	out = strconv.AppendInt(out, int64(f.Src), 10)
	next()
	field("dst")
	out = strconv.AppendInt(out, int64(f.Dst), 10)
	next()
	field("size_bytes")
	out = strconv.AppendUint(out, f.Size, 10)
	next()
	field("unit")
	out = e.str(out, f.Unit)
	next()
	field("convention")
	out = e.str(out, f.Convention)
	if len(f.Params) > 0 {
		next()
		field("params")
		out = append(out, "{\n"...)
		keys := make([]string, 0, len(f.Params))
		for k := range f.Params {
			keys = append(keys, k)
		}
		// encoding/json sorts map keys by their string value.
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				out = append(out, ",\n"...)
			}
			out = append(out, innerIndent...)
			out = e.str(out, k)
			out = append(out, ": "...)
			out = e.str(out, f.Params[k])
		}
		out = append(out, "\n"+fieldIndent+"}"...)
	}
	var err error
	if len(f.Samples) > 0 {
		next()
		field("samples")
		out = append(out, '[')
		for i, v := range f.Samples {
			if i > 0 {
				out = append(out, ", "...)
			}
			if out, err = appendJSONFloat(out, v); err != nil {
				return nil, err
			}
		}
		out = append(out, ']')
	}
	if s := f.Stats; s != nil {
		next()
		field("stats")
		out = append(out, "{\n"+innerIndent+`"n": `...)
		out = strconv.AppendInt(out, int64(s.N), 10)
		for _, kv := range [...]struct {
			name string
			v    float64
		}{{"median", s.Median}, {"mean", s.Mean}, {"stddev", s.Stddev}, {"cv", s.CV}, {"min", s.Min},
			{"max", s.Max}, {"p5", s.P5}, {"p95", s.P95}, {"p99", s.P99}} {
			if kv.name == "p99" && kv.v == 0 {
				continue // omitempty
			}
			out = append(out, ",\n"+innerIndent+`"`...)
			out = append(out, kv.name...)
			out = append(out, `": `...)
			if out, err = appendJSONFloat(out, kv.v); err != nil {
				return nil, err
			}
		}
		out = append(out, "\n"+fieldIndent+"}"...)
	}
	next()
	field("verify")
	out = e.str(out, f.Verify)
	for _, kv := range [...]struct{ name, v string }{{"verify_detail", f.VerifyDetail}, {"error", f.Error}, {"error_name", f.ErrorName}} {
		if kv.v != "" {
			next()
			field(kv.name)
			out = e.str(out, kv.v)
		}
	}
	if f.Traffic != nil {
		next()
		field("link_traffic")
		b, err := json.MarshalIndent(f.Traffic, fieldIndent, "  ")
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return append(out, "\n"+figIndent+"}"...), nil
}

// ---------------------------------------------------------------------------
// Decoding.

// decodeFast decodes a results file, or reports false when the caller must
// use encoding/json instead (see the top of this file).
func decodeFast(data []byte, opt ReadOptions) (*Run, bool) {
	d := &scanner{data: data, opt: opt}
	d.ws()
	if !d.byte('{') {
		return nil, false
	}
	rest := make([]byte, 0, 1<<16)
	rest = append(rest, '{')
	var figures []Figure
	seenFigures, seenSchema := false, false
	d.ws()
	if !d.byte('}') {
		for {
			keyStart := d.pos
			key, ok := d.plainString()
			if !ok {
				return nil, false
			}
			d.ws()
			if !d.byte(':') {
				return nil, false
			}
			d.ws()
			switch {
			case string(key) == "figures":
				if seenFigures {
					return nil, false
				}
				seenFigures = true
				if figures, ok = d.figureArray(); !ok {
					return nil, false
				}
			case foldsTo(key, "figures"):
				return nil, false
			default:
				// A file without a schema version gets encoding/json's
				// reading, which says so.
				seenSchema = seenSchema || string(key) == "schema"
				if !d.skipValue(0) {
					return nil, false
				}
				if len(rest) > 1 {
					rest = append(rest, ',')
				}
				rest = append(rest, data[keyStart:d.pos]...)
			}
			d.ws()
			if d.byte(',') {
				d.ws()
				continue
			}
			if d.byte('}') {
				break
			}
			return nil, false
		}
	}
	d.ws()
	if d.pos != len(data) || !seenSchema {
		return nil, false
	}
	rest = append(rest, '}')
	var run Run
	if err := json.Unmarshal(rest, &run); err != nil {
		return nil, false
	}
	run.Figures = figures
	return &run, true
}

// foldsTo reports whether encoding/json could match key to name other than
// exactly: equal ignoring ASCII case, or with non-ASCII bytes (Unicode
// folding maps the Kelvin sign to k and the long s to s).
func foldsTo(key []byte, name string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return bytes.EqualFold(key, []byte(name))
}

// scanner reads JSON from data at pos.
type scanner struct {
	data   []byte
	pos    int
	opt    ReadOptions
	intern map[string]string
	floats []float64 // an arena for samples
	stats  []Stats   // an arena for stats
	// last holds each string member's value in the previous figure, for
	// strLike; recentParams the last few different params objects read,
	// for params.
	last         [numLast]string
	recentParams [4]recentParams
	nextParams   int
}

// recentParams is a params object's text and what it decoded to.
type recentParams struct {
	text []byte
	m    map[string]string
}

// Figure string members that strLike remembers, indexes into scanner.last.
const (
	lastTest = iota
	lastEngine
	lastDirection
	lastPart
	lastUnit
	lastConvention
	lastVerify
	numLast
)

func (d *scanner) ws() {
	d.pos = skipSpace(d.data, d.pos)
}

// isSpace marks JSON's white space.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skipSpace returns the end of the white space at data[i:].
func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace[data[i]] {
		i++
	}
	return i
}

// colon passes over the white space, colon and white space between a key
// and its value; a single space after the colon, as written, is checked
// first.
func (d *scanner) colon() bool {
	if p := d.pos; p+2 < len(d.data) && d.data[p] == ':' && d.data[p+1] == ' ' && !isSpace[d.data[p+2]] {
		d.pos = p + 2
		return true
	}
	d.ws()
	if !d.byte(':') {
		return false
	}
	d.ws()
	return true
}

// memberIndent is how results files separate the members of a figure.
const memberIndent = ",\n" + fieldIndent + `"`

// nextMember passes over the comma and indentation before a figure's next
// member when they are as written, and reports whether it did.
func (d *scanner) nextMember() bool {
	p := d.pos
	if p+len(memberIndent) <= len(d.data) && string(d.data[p:p+len(memberIndent)]) == memberIndent {
		d.pos = p + len(memberIndent) - 1
		return true
	}
	return false
}

func (d *scanner) byte(c byte) bool {
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *scanner) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

func (d *scanner) literal(lit string) bool {
	if bytes.HasPrefix(d.data[d.pos:], []byte(lit)) {
		d.pos += len(lit)
		return true
	}
	return false
}

// plainString reads a string without escapes or control characters and
// returns its bytes (valid UTF-8 or not: callers check what they need).
func (d *scanner) plainString() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.pos
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return d.data[start:i], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string value into dst, interned; null leaves dst as it is,
// as encoding/json does. Strings with escapes or invalid UTF-8 go through
// encoding/json.
func (d *scanner) str(dst *string) bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	start := d.pos
	if !d.byte('"') {
		return false
	}
	ascii := true
	for i := d.pos; i < len(d.data); i++ {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			b := d.data[start+1 : i]
			if !ascii && !utf8.Valid(b) {
				return d.slowString(start, dst)
			}
			*dst = d.internBytes(b)
			return true
		case c == '\\':
			d.pos = start
			if !d.skipString() {
				return false
			}
			return d.slowString(start, dst)
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return false
}

// strLike is str for a member whose value is most often the one it had in
// the previous figure (its test, unit, convention): when the same bytes
// follow, comparing them is cheaper than scanning them. Only values read
// from plain tokens, whose bytes are the value, are remembered.
func (d *scanner) strLike(dst *string, member int) bool {
	last, p := d.last[member], d.pos
	if end := p + len(last) + 1; end < len(d.data) && d.data[p] == '"' && d.data[end] == '"' && string(d.data[p+1:end]) == last {
		*dst = last
		d.pos = end + 1
		return true
	}
	if !d.str(dst) {
		return false
	}
	if d.pos-p == len(*dst)+2 && string(d.data[p+1:d.pos-1]) == *dst {
		d.last[member] = *dst
	}
	return true
}

// slowString decodes the string token data[start:d.pos] with encoding/json.
func (d *scanner) slowString(start int, dst *string) bool {
	var s string
	if err := json.Unmarshal(d.data[start:d.pos], &s); err != nil {
		return false
	}
	*dst = d.internBytes([]byte(s))
	return true
}

func (d *scanner) internBytes(b []byte) string {
	if s, ok := d.intern[string(b)]; ok {
		return s
	}
	if d.intern == nil {
		d.intern = map[string]string{}
	}
	s := string(b)
	d.intern[s] = s
	return s
}

// number reads a JSON number and returns its text; integer says it has no
// fraction or exponent.
func (d *scanner) number() (text []byte, integer bool, ok bool) {
	start, i := d.pos, d.pos
	data := d.data
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return nil, false, false
	}
	integer = true
	if i < len(data) && data[i] == '.' {
		integer = false
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return nil, false, false
		}
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		integer = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return nil, false, false
		}
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	d.pos = i
	return data[start:i], integer, true
}

// float reads a number into dst; null leaves dst as it is.
func (d *scanner) float(dst *float64) bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	v, end, ok := scanFloat(d.data, d.pos)
	if !ok {
		return false // not a number, or out of range: encoding/json reports it
	}
	d.pos = end
	*dst = v
	return true
}

// skipFloat passes over what float would read, without converting it
// unless it may be out of float64's range.
func (d *scanner) skipFloat() bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	start := d.pos
	text, integer, ok := d.number()
	if !ok {
		return false
	}
	// Without an exponent, 300 characters stay far inside the range.
	if integer && len(text) <= 300 || len(text) <= 300 && bytes.IndexByte(text, 'e') < 0 && bytes.IndexByte(text, 'E') < 0 {
		return true
	}
	_, end, ok := scanFloat(d.data, start)
	return ok && end == d.pos
}

// int reads an integer into dst; null leaves dst as it is.
func (d *scanner) int(dst *int) bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	text, integer, ok := d.number()
	if !ok || !integer {
		return false
	}
	v, err := strconv.ParseInt(string(text), 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*dst = int(v)
	return true
}

func (d *scanner) uint64(dst *uint64) bool {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	text, integer, ok := d.number()
	if !ok || !integer || text[0] == '-' {
		return false
	}
	v, err := strconv.ParseUint(string(text), 10, 64)
	if err != nil {
		return false
	}
	*dst = v
	return true
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// skipString passes over a string token, checking its escapes.
func (d *scanner) skipString() bool {
	if !d.byte('"') {
		return false
	}
	data := d.data
	for i := d.pos; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			d.pos = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			i++
			if i >= len(data) {
				return false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return false
				}
				for _, h := range data[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				i += 4
			default:
				return false
			}
		}
	}
	return false
}

// skipValue passes over any JSON value, checking its syntax.
func (d *scanner) skipValue(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch d.peek() {
	case '"':
		return d.skipString()
	case '{':
		d.pos++
		d.ws()
		if d.byte('}') {
			return true
		}
		for {
			if !d.skipString() {
				return false
			}
			d.ws()
			if !d.byte(':') {
				return false
			}
			d.ws()
			if !d.skipValue(depth + 1) {
				return false
			}
			d.ws()
			if d.byte(',') {
				d.ws()
				continue
			}
			return d.byte('}')
		}
	case '[':
		d.pos++
		d.ws()
		if d.byte(']') {
			return true
		}
		for {
			if !d.skipValue(depth + 1) {
				return false
			}
			d.ws()
			if d.byte(',') {
				d.ws()
				continue
			}
			return d.byte(']')
		}
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	_, _, ok := d.number()
	return ok
}

// parallelMin is the size from which the figures are decoded in parallel.
const parallelMin = 4 << 20

// figureArray reads the figures member's value: null, or an array of
// figures, decoded on several goroutines when it is large.
func (d *scanner) figureArray() ([]Figure, bool) {
	if d.peek() == 'n' {
		return nil, d.literal("null")
	}
	if !d.byte('[') {
		return nil, false
	}
	d.ws()
	if d.byte(']') {
		return []Figure{}, true
	}
	if n := runtime.GOMAXPROCS(0); n > 1 && !d.opt.Serial && len(d.data)-d.pos >= parallelMin {
		if figs, end, ok := d.parallelFigures(n); ok {
			d.pos = end
			return figs, true
		}
	}
	return d.figureSlice()
}

// figureSlice decodes the figures array from d.pos, at its first element,
// on this goroutine, into one slice.
func (d *scanner) figureSlice() ([]Figure, bool) {
	start := d.pos
	var figs []Figure
	for {
		if len(figs) == cap(figs) {
			figs = d.growFigures(figs, start)
		}
		figs = append(figs, Figure{})
		if !d.figure(&figs[len(figs)-1]) {
			return nil, false
		}
		d.ws()
		if d.byte(',') {
			d.ws()
			continue
		}
		return figs, d.byte(']')
	}
}

// sampleFigures is how many figures figureSlice reads before it sizes its
// slice for the rest.
const sampleFigures = 256

// growFigures makes room for more figures, decoded from start to d.pos so
// far: first for sampleFigures of them, then for as many as the bytes left
// would make at the rate so far and a quarter more (which a later growth
// revises if need be). The memory is populated at once (see joinFigures).
// However small the figures so far, a figure is taken to need at least 128
// bytes, which bounds the memory a short start can claim.
func (d *scanner) growFigures(figs []Figure, start int) []Figure {
	n := sampleFigures
	if len(figs) > 0 {
		left := len(d.data) - d.pos
		perFigure := max(float64(d.pos-start)/float64(len(figs)), 128)
		n = len(figs) + sampleFigures + int(1.25*float64(left)/perFigure)
	}
	grown := make([]Figure, n)
	mem.Populate(grown)
	return append(grown[:0], figs...)
}

// figureChunk is how many figures figureRun decodes into one allocation.
// One large slice filled as decoding goes would be scanned, untouched end
// included, by any garbage collection during decoding: that maps its pages
// to the zero page, and each first write then faults a second time, with a
// TLB flush on every processor. Small chunks, joined at the end, are
// written soon after they are allocated.
const figureChunk = 512

// figureRun decodes figures from start, at the start of an element of the
// figures array, into chunks. It stops after the comma before limit (when
// limit > 0: limit must then be where an element starts) or after the
// closing bracket, and returns the position after it.
func (d *scanner) figureRun(start, limit int) ([][]Figure, int, bool) {
	d.pos = start
	var chunks [][]Figure
	var figs []Figure
	for {
		if len(figs) == cap(figs) {
			figs = make([]Figure, 0, figureChunk)
			mem.Populate(figs[:cap(figs)])
			chunks = append(chunks, nil)
		}
		figs = append(figs, Figure{})
		chunks[len(chunks)-1] = figs
		if !d.figure(&figs[len(figs)-1]) {
			return nil, 0, false
		}
		d.ws()
		if d.byte(',') {
			d.ws()
			if limit > 0 {
				if d.pos == limit {
					return chunks, d.pos, true
				}
				if d.pos > limit {
					return nil, 0, false
				}
			}
			continue
		}
		if limit <= 0 && d.byte(']') {
			return chunks, d.pos, true
		}
		return nil, 0, false
	}
}

// joinFigures copies chunks of figures into one slice. The slice's pages
// are populated first (see mem.Populate): a garbage collection that the
// allocation starts would otherwise scan them before the copy writes them.
func joinFigures(chunks [][]Figure) []Figure {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	figs := make([]Figure, n)
	mem.Populate(figs)
	at := 0
	for _, c := range chunks {
		at += copy(figs[at:], c)
	}
	return figs
}

// parallelFigures splits the figures array at element starts and decodes
// the pieces at once. An element start is found as a raw newline (never
// inside a JSON string) after a comma and before an opening brace; a split
// that lands in some other array makes the piece before it fail to decode,
// and the caller then decodes sequentially.
func (d *scanner) parallelFigures(n int) ([]Figure, int, bool) {
	start := d.pos
	cuts := []int{start}
	span := len(d.data) - start
	for k := 1; k < n; k++ {
		c := findElementStart(d.data, start+span*k/n)
		if c < 0 || c <= cuts[len(cuts)-1] {
			break
		}
		cuts = append(cuts, c)
	}
	if len(cuts) < 2 {
		return nil, 0, false
	}
	type piece struct {
		figs  [][]Figure
		end   int
		ok    bool
		fault any // a memory fault reading mapped data, for this goroutine to raise
	}
	pieces := make([]piece, len(cuts))
	var wg sync.WaitGroup
	for i := range cuts {
		limit := -1
		if i+1 < len(cuts) {
			limit = cuts[i+1]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// See decodeMapped: a fault reaches the caller's goroutine,
			// which turns it into an error.
			debug.SetPanicOnFault(true)
			defer func() {
				if r := recover(); r != nil {
					if !isFault(r) {
						panic(r)
					}
					pieces[i].fault = r
				}
			}()
			sub := &scanner{data: d.data, opt: d.opt}
			figs, end, ok := sub.figureRun(cuts[i], limit)
			pieces[i] = piece{figs: figs, end: end, ok: ok}
		}()
	}
	wg.Wait()
	for _, p := range pieces {
		if p.fault != nil {
			panic(p.fault)
		}
	}
	var chunks [][]Figure
	for _, p := range pieces {
		if !p.ok {
			return nil, 0, false
		}
		chunks = append(chunks, p.figs...)
	}
	return joinFigures(chunks), pieces[len(pieces)-1].end, true
}

// findElementStart returns the offset of the first '{' at or after from
// that begins a line whose previous line ends with a comma, or -1.
func findElementStart(data []byte, from int) int {
	for from < len(data) {
		nl := bytes.IndexByte(data[from:], '\n')
		if nl < 0 {
			return -1
		}
		at := from + nl
		from = at + 1
		// Before the newline: white space, then a comma.
		j := at - 1
		for j >= 0 && (data[j] == ' ' || data[j] == '\t' || data[j] == '\r') {
			j--
		}
		if j < 0 || data[j] != ',' {
			continue
		}
		k := at + 1
		for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\r') {
			k++
		}
		if k < len(data) && data[k] == '{' {
			return k
		}
	}
	return -1
}

// Figure field bits, to refuse duplicate keys: encoding/json would let the
// last one win (or merge maps), which is not worth copying.
const (
	fTest = 1 << iota
	fEngine
	fDirection
	fPart
	fSrc
	fDst
	fSize
	fUnit
	fConvention
	fParams
	fSamples
	fStats
	fVerify
	fVerifyDetail
	fError
	fErrorName
	fTraffic
)

var figureFields = []string{"test", "engine", "direction", "part", "src", "dst", "size_bytes", "unit", "convention",
	"params", "samples", "stats", "verify", "verify_detail", "error", "error_name", "link_traffic"}

func (d *scanner) figure(f *Figure) bool {
	if !d.byte('{') {
		return false
	}
	d.ws()
	if d.byte('}') {
		return true
	}
	seen := 0
	skippedStats := -1 // where stats left for later start
	for {
		key, ok := d.plainString()
		if !ok {
			return false
		}
		if !d.colon() {
			return false
		}
		bit := 0
		switch string(key) {
		case "test":
			bit, ok = fTest, d.strLike(&f.Test, lastTest)
		case "engine":
			bit, ok = fEngine, d.strLike(&f.Engine, lastEngine)
		case "direction":
			bit, ok = fDirection, d.strLike(&f.Direction, lastDirection)
		case "part":
			bit, ok = fPart, d.strLike(&f.Part, lastPart)
		case "src":
			bit, ok = fSrc, d.int(&f.Src)
		case "dst":
			bit, ok = fDst, d.int(&f.Dst)
		case "size_bytes":
			bit, ok = fSize, d.uint64(&f.Size)
		case "unit":
			bit, ok = fUnit, d.strLike(&f.Unit, lastUnit)
		case "convention":
			bit, ok = fConvention, d.strLike(&f.Convention, lastConvention)
		case "params":
			bit, ok = fParams, d.params(&f.Params)
		case "samples":
			bit, ok = fSamples, d.samples(&f.Samples)
		case "stats":
			bit = fStats
			if d.opt.SkipStats {
				// Samples may follow: whether the stats are needed is
				// known at the end of the figure.
				skippedStats = d.pos
				ok = d.skipStats()
			} else {
				ok = d.statsValue(&f.Stats)
			}
		case "verify":
			bit, ok = fVerify, d.strLike(&f.Verify, lastVerify)
		case "verify_detail":
			bit, ok = fVerifyDetail, d.str(&f.VerifyDetail)
		case "error":
			bit, ok = fError, d.str(&f.Error)
		case "error_name":
			bit, ok = fErrorName, d.str(&f.ErrorName)
		case "link_traffic":
			start := d.pos
			// Rare and small: encoding/json reads it, as the slow path would.
			if bit, ok = fTraffic, d.skipValue(1); ok && string(d.data[start:d.pos]) != "null" {
				f.Traffic = new(LinkTraffic)
				ok = json.Unmarshal(d.data[start:d.pos], f.Traffic) == nil
			}
		default:
			for _, name := range figureFields {
				if foldsTo(key, name) {
					return false
				}
			}
			ok = d.skipValue(1)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.nextMember() {
			continue
		}
		d.ws()
		if d.byte(',') {
			d.ws()
			continue
		}
		if !d.byte('}') {
			return false
		}
		if skippedStats >= 0 && len(f.Samples) == 0 {
			end := d.pos
			d.pos = skippedStats
			if !d.statsValue(&f.Stats) {
				return false
			}
			d.pos = end
		}
		return true
	}
}

func (d *scanner) params(dst *map[string]string) bool {
	if d.peek() == 'n' {
		if !d.literal("null") {
			return false
		}
		*dst = nil
		return true
	}
	// Figures of one kind have the same params, written the same way:
	// when the text of a params object read recently follows, its map is
	// copied, or shared with ShareParams.
	start := d.pos
	for _, r := range d.recentParams {
		if len(r.text) > 0 && bytes.HasPrefix(d.data[start:], r.text) {
			d.pos += len(r.text)
			if d.opt.ShareParams {
				*dst = r.m
			} else {
				*dst = maps.Clone(r.m)
			}
			return true
		}
	}
	if !d.byte('{') {
		return false
	}
	m := make(map[string]string, 4)
	d.ws()
	if d.byte('}') {
		*dst = m
		return true
	}
	for {
		var k, v string
		if d.peek() != '"' || !d.str(&k) {
			return false
		}
		d.ws()
		if !d.byte(':') {
			return false
		}
		d.ws()
		// A null value would store "" in encoding/json; refuse it.
		if d.peek() != '"' || !d.str(&v) {
			return false
		}
		m[k] = v
		d.ws()
		if d.byte(',') {
			d.ws()
			continue
		}
		if !d.byte('}') {
			return false
		}
		*dst = m
		d.recentParams[d.nextParams] = recentParams{d.data[start:d.pos], m}
		d.nextParams = (d.nextParams + 1) % len(d.recentParams)
		return true
	}
}

func (d *scanner) samples(dst *[]float64) bool {
	if d.peek() == 'n' {
		if !d.literal("null") {
			return false
		}
		*dst = nil
		return true
	}
	if !d.byte('[') {
		return false
	}
	d.ws()
	if d.byte(']') {
		*dst = []float64{}
		return true
	}
	// Samples of many figures share one arena; each figure's slice is
	// capped so that appending to it can never write into its neighbour's.
	if cap(d.floats)-len(d.floats) < 256 {
		d.floats = make([]float64, 0, 1<<16)
		mem.Populate(d.floats[:cap(d.floats)])
	}
	first := len(d.floats)
	data, i := d.data, d.pos
	for {
		v, end, ok := scanFloat(data, i)
		if !ok {
			return false
		}
		d.floats = append(d.floats, v)
		// ", " between samples, as written, or any white space.
		if end+2 < len(data) && data[end] == ',' && data[end+1] == ' ' && !isSpace[data[end+2]] {
			i = end + 2
			continue
		}
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i >= len(data) || data[i] != ']' {
			return false
		}
		d.pos = i + 1
		break
	}
	// If the arena had to grow during this array, append moved it, this
	// array included; earlier figures keep the old one. Either way the
	// slice is right.
	*dst = d.floats[first:len(d.floats):len(d.floats)]
	return true
}

func (d *scanner) statsValue(dst **Stats) bool {
	if d.peek() == 'n' {
		if !d.literal("null") {
			return false
		}
		*dst = nil
		return true
	}
	if len(d.stats) == cap(d.stats) {
		d.stats = make([]Stats, 0, 4096)
	}
	d.stats = append(d.stats, Stats{})
	s := &d.stats[len(d.stats)-1]
	if !d.statsObject(s, true) {
		return false
	}
	*dst = s
	return true
}

// skipStats passes over a stats value that statsValue would accept, but
// converts no number, checking only that each is one float64 can hold.
func (d *scanner) skipStats() bool {
	if end, ok := skipPlainStats(d.data, d.pos); ok {
		d.pos = end
		return true
	}
	if d.peek() == 'n' {
		return d.literal("null")
	}
	var s Stats
	return d.statsObject(&s, false)
}

// statsIndent is how results files separate the members of stats.
const statsIndent = ",\n" + innerIndent + `"`

// statsBit numbers the stats members, to find repeated ones; 0 for
// another key.
func statsBit(key []byte) int {
	switch string(key) {
	case "n":
		return 1
	case "median":
		return 2
	case "mean":
		return 4
	case "stddev":
		return 8
	case "cv":
		return 16
	case "min":
		return 32
	case "max":
		return 64
	case "p5":
		return 128
	case "p95":
		return 256
	case "p99":
		return 512
	}
	return 0
}

// skipPlainStats is skipStats' quick path for stats as results files hold
// them: each member known and once, each value a number without exponent
// (n an integer of at most 18 digits). It returns where the object ends,
// or false for anything else, which skipStats then reads in full.
func skipPlainStats(data []byte, i int) (end int, ok bool) {
	if i >= len(data) || data[i] != '{' {
		return 0, false
	}
	seen := 0
	for {
		// The comma (or brace) and indentation before a member, as
		// written, or any white space.
		if i+len(statsIndent) <= len(data) && string(data[i+1:i+len(statsIndent)]) == statsIndent[1:] {
			i += len(statsIndent) - 1
		} else {
			i = skipSpace(data, i+1)
		}
		if i >= len(data) || data[i] != '"' {
			return 0, false
		}
		k := i + 1
		for k < len(data) && data[k] >= 'a' && data[k] <= 'z' || k < len(data) && data[k] >= '0' && data[k] <= '9' {
			k++
		}
		if k >= len(data) || data[k] != '"' {
			return 0, false
		}
		bit := statsBit(data[i+1 : k])
		if bit == 0 || seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		if k+3 < len(data) && data[k+1] == ':' && data[k+2] == ' ' && !isSpace[data[k+3]] {
			i = k + 3
		} else {
			i = skipSpace(data, k+1)
			if i >= len(data) || data[i] != ':' {
				return 0, false
			}
			i = skipSpace(data, i+1)
		}
		// -?(0|[1-9][0-9]*)(.[0-9]+)?
		if i < len(data) && data[i] == '-' {
			i++
		}
		start := i
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
		// Up to 300 digits before and after the point the value is
		// far inside float64's range; n must fit an int.
		if digits := i - start; digits == 0 || digits > 1 && data[start] == '0' || digits > 300 || bit == 1 && digits > 18 {
			return 0, false
		}
		if i < len(data) && data[i] == '.' {
			if bit == 1 {
				return 0, false
			}
			i++
			start = i
			for i < len(data) && data[i]-'0' <= 9 {
				i++
			}
			if i == start || i-start > 300 {
				return 0, false
			}
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ',':
			continue
		case '}':
			return i + 1, true
		}
		return 0, false
	}
}

// statsObject reads a stats object into s, its numbers only when convert
// is set.
func (d *scanner) statsObject(s *Stats, convert bool) bool {
	if !d.byte('{') {
		return false
	}
	d.ws()
	if d.byte('}') {
		return true
	}
	float := func(dst *float64) bool {
		if convert {
			return d.float(dst)
		}
		return d.skipFloat()
	}
	seen := 0
	for {
		key, ok := d.plainString()
		if !ok {
			return false
		}
		d.ws()
		if !d.byte(':') {
			return false
		}
		d.ws()
		bit := 0
		switch string(key) {
		case "n":
			bit, ok = 1, d.int(&s.N)
		case "median":
			bit, ok = 2, float(&s.Median)
		case "mean":
			bit, ok = 4, float(&s.Mean)
		case "stddev":
			bit, ok = 8, float(&s.Stddev)
		case "cv":
			bit, ok = 16, float(&s.CV)
		case "min":
			bit, ok = 32, float(&s.Min)
		case "max":
			bit, ok = 64, float(&s.Max)
		case "p5":
			bit, ok = 128, float(&s.P5)
		case "p95":
			bit, ok = 256, float(&s.P95)
		case "p99":
			bit, ok = 512, float(&s.P99)
		default:
			for _, name := range []string{"n", "median", "mean", "stddev", "cv", "min", "max", "p5", "p95", "p99"} {
				if foldsTo(key, name) {
					return false
				}
			}
			ok = d.skipValue(2)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		d.ws()
		if d.byte(',') {
			d.ws()
			continue
		}
		return d.byte('}')
	}
}
