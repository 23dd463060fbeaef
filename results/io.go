package results

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
)

// VersionError reports a results file written with another schema version.
type VersionError struct {
	File    string // "" when decoding a reader
	Version int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s has schema version %d; this p2pbench reads version %d",
		subject(e.File), e.Version, SchemaVersion)
}

// SyntaxError reports a results file that is not well-formed JSON of the
// expected shape: truncated, malformed, or with a value of the wrong type.
type SyntaxError struct {
	File string
	// Offset is the byte offset of the problem; Line and Column (1-based)
	// locate it for people (all 0 when the problem has no one place).
	Offset       int64
	Line, Column int
	// Truncated is true when the input ends in the middle of the JSON value.
	Truncated bool
	Err       error // the encoding/json error
	// what says what is wrong in the file's terms (field names and JSON
	// kinds, not Go types).
	what string
}

func (e *SyntaxError) Error() string {
	switch {
	case e.Truncated && e.Offset == 0:
		return fmt.Sprintf("%s is empty", subject(e.File))
	case e.Truncated:
		return fmt.Sprintf("%s is truncated: the JSON ends at line %d, column %d (byte offset %d) before it is complete",
			subject(e.File), e.Line, e.Column, e.Offset)
	case e.Line == 0:
		return fmt.Sprintf("%s is malformed: %s", subject(e.File), e.what)
	}
	return fmt.Sprintf("%s is malformed at line %d, column %d (byte offset %d): %s",
		subject(e.File), e.Line, e.Column, e.Offset, e.what)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// InvalidError reports a results file that decodes but breaks the schema's
// rules (see Validate).
type InvalidError struct {
	File string
	Err  error // a *ValidationError
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s is invalid: %v", subject(e.File), e.Err)
}

func (e *InvalidError) Unwrap() error { return e.Err }

// subject names the input in error messages.
func subject(file string) string {
	if file == "" {
		return "results input"
	}
	return "results file " + file
}

// MaxFileBytes bounds the JSON of a results file, decompressed: 256 MiB,
// thirteen times what the engine writes for 72 GPUs (19.6 MB) and four
// times the largest 72-GPU file seen (61 MB, every part of every many-pair
// test on every pair), so input that decompresses to more (a gzip bomb:
// 2 GiB of spaces in 2 MB) is refused with a *TooLargeError instead of
// filling memory; reading never holds more than this bound. Within it,
// what a file costs is what its content costs: long runs of whitespace are
// squeezed as it is read (squeezer), and JSON that is no whitespace (a
// string or a list of a quarter of a gigabyte) costs at most about a
// gigabyte to decode before it is refused.
const MaxFileBytes = 256 << 20

// TooLargeError reports a results input whose JSON is larger than
// MaxFileBytes, as stored or decompressed.
type TooLargeError struct {
	File string // "" when decoding a reader
	// Size is the size found (the file's, or its gzip trailer's), 0 when
	// reading stopped at the bound.
	Size  int64
	Limit int64
	// Objects and Values are the JSON objects and values counted when
	// reading stopped at MaxObjects or MaxValues; 0 otherwise.
	Objects, Values int64
	// LongString is set when reading stopped at a string longer than
	// MaxStringBytes.
	LongString bool
	// bounds are those reading stopped past (zero: fileBounds).
	bounds valueBounds
}

func (e *TooLargeError) Error() string {
	b := e.bounds
	if b == (valueBounds{}) {
		b = fileBounds
	}
	if e.LongString {
		return fmt.Sprintf("%s holds a string of more than %s, where a results file's longest texts are %d bytes: refused",
			subject(e.File), FormatBytes(uint64(b.str)), MaxTextBytes)
	}
	if e.Objects > b.objects || e.Values > b.values {
		what, n, max := "objects", e.Objects, b.objects
		if e.Values > b.values {
			what, n, max = "values", e.Values, b.values
		}
		return fmt.Sprintf("%s holds more than %d JSON %s (reading stopped at %d), more than a results file of at most %s holds (a 72-GPU run's holds about 2 million values): refused",
			subject(e.File), max, what, n, FormatBytes(uint64(e.Limit)))
	}
	if e.Size > 0 {
		return fmt.Sprintf("%s holds %s of JSON, more than the %s a results file may hold (a 72-GPU run's holds about 20 MB): refused",
			subject(e.File), FormatBytes(uint64(e.Size)), FormatBytes(uint64(e.Limit)))
	}
	return fmt.Sprintf("%s holds more than the %s of JSON a results file may hold (a 72-GPU run's holds about 20 MB): refused",
		subject(e.File), FormatBytes(uint64(e.Limit)))
}

// Stem is a results file's path without its extension (".json", or
// ".json.gz" of a compressed file), to name what is made of it beside it.
func Stem(path string) string {
	path = strings.TrimSuffix(path, ".gz")
	return strings.TrimSuffix(path, filepath.Ext(path))
}

// Read reads, checks and validates a results file, gzip-compressed or not;
// a file of schema version 1 is converted (see Decode). A file whose JSON
// is larger than MaxFileBytes is refused (a *TooLargeError).
func Read(path string) (*Run, error) {
	return readWithin(path, fileLimits)
}

// readWithin is Read holding the file to lim (fileLimits for every file
// read; the tests of what a bomb costs lower them).
func readWithin(path string, lim readLimits) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	defer f.Close()
	return readGuarded(path, f, lim, new(readBuffers), func(data []byte) (*Run, error) {
		return decode(path, data, true)
	})
}

// Decode reads, checks and validates a results file from r, gzip-compressed
// or not. A file of schema version 1 is converted to the current version:
// the unit and convention each of its figures repeated become the catalogue
// entry of the figure's test. The run's catalogue is completed (see
// Run.CompleteCatalogue). Input whose JSON is larger than MaxFileBytes is
// refused (a *TooLargeError).
func Decode(r io.Reader) (*Run, error) {
	return readGuarded("", r, fileLimits, new(readBuffers), func(data []byte) (*Run, error) {
		return decode("", data, true)
	})
}

// readBoundedInto returns the JSON of r (named file in messages): its bytes,
// decompressed when they are gzip-compressed (they start with gzip's magic
// number), refusing more than limit bytes of JSON (a *TooLargeError). It
// holds no more than the JSON's true size: a regular file's size sizes the
// buffer, and a file larger than limit is refused unread; a gzip file's
// trailer states the size of its content, which sizes the buffer when it
// is within limit and proves true. Else (a trailer that states more, is cut
// off or lies; several gzip members) the file is first decompressed
// without being kept, until it proves too large or broken, then again
// into a buffer of the size found. Only input that cannot be read twice (a
// pipe) is read into a buffer that grows, up to limit.
// A regular file is first read the quick way (readWhole), its bytes kept
// in bufs (a mapping of it until bufs is released: readGuarded); nil bufs
// reads every input through the squeezer. The JSON's values are held to vb
// (fileBounds).
func readBoundedInto(file string, r io.Reader, limit int64, vb valueBounds, bufs *readBuffers) ([]byte, error) {
	f, _ := r.(*os.File)
	size, start := int64(-1), int64(0)
	if f != nil {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if start, err = f.Seek(0, io.SeekCurrent); err == nil {
				size = fi.Size() - start
			}
		}
	}
	if size > 0 && size <= limit && bufs != nil {
		if data, ok := readWhole(f, start, size, limit, vb, bufs); ok {
			return data, nil
		}
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("reading results: %w", err)
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		if size > limit {
			return nil, &TooLargeError{File: file, Size: size, Limit: limit}
		}
		data, _, err := readAtMost(br, size, limit, vb, true)
		if err != nil && !errors.As(err, new(*TooLargeError)) {
			return nil, fmt.Errorf("reading results: %w", err)
		}
		return data, tooLarge(err, file)
	}
	gunzip := func(hint, limit int64, keep bool) ([]byte, int64, error) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, 0, err
		}
		defer zr.Close()
		return readAtMost(zr, hint, limit, vb, keep)
	}
	rewind := func() error {
		_, err := f.Seek(start, io.SeekStart)
		br.Reset(f)
		return err
	}
	var data []byte
	var err error
	switch hint := gzipSize(f, start, size); {
	case size < 0:
		data, _, err = gunzip(-1, limit, true)
	case hint >= 0 && hint <= limit:
		if data, _, err = gunzip(hint, hint, true); err == nil || !errors.As(err, new(*TooLargeError)) {
			break
		}
		fallthrough // more than the trailer says: several members
	default:
		var n int64
		if err = rewind(); err == nil {
			_, n, err = gunzip(-1, limit, false)
		}
		if err == nil {
			if err = rewind(); err == nil {
				data, _, err = gunzip(n, n, true)
			}
		}
	}
	var tl *TooLargeError
	switch {
	case errors.As(err, &tl):
		tl.Limit = limit
		return nil, tooLarge(err, file)
	case err != nil:
		return nil, fmt.Errorf("%s is gzip-compressed but does not decompress: %w", subject(file), err)
	}
	return data, nil
}

// readAtMost reads r to its end, its long runs of whitespace squeezed
// (squeezer), keeping what it reads (in a buffer with room for hint bytes,
// none when hint < 0 or when the hint is large: a file mostly whitespace
// keeps far less than it holds) or not, and returns how many bytes it kept;
// more than limit bytes read from r, or values past vb, is a
// *TooLargeError.
func readAtMost(r io.Reader, hint, limit int64, vb valueBounds, keep bool) ([]byte, int64, error) {
	sq := newSqueezer(io.LimitReader(r, limit+1), vb)
	var n int64
	var data []byte
	var err error
	if !keep {
		n, err = io.Copy(io.Discard, sq)
	} else {
		data, err = readKept(sq, hint)
		n = int64(len(data))
	}
	switch {
	case sq.read > limit:
		return nil, n, &TooLargeError{Limit: limit}
	case errors.Is(err, errTooMany):
		return nil, n, &TooLargeError{Limit: limit, Objects: sq.objects, Values: sq.values, LongString: sq.longString, bounds: vb}
	}
	return data, n, err
}

// maxChunk is the largest piece readKept reads into.
const maxChunk = 8 << 20

// readKept reads r to its end (or its first error), keeping what it reads:
// in one buffer with room for hint bytes (and the read that finds the end)
// where hint is known and at most maxHint, else in pieces that double up to
// maxChunk, copied into one buffer of their total once r ends. A growing
// buffer copied and cleared up to 2.7 times the input's size as it grew
// (for a pipe or an io.Reader of a 96 MB bomb, most of the time its
// refusal took); the pieces cost its size once, and a read refused on the
// way (errTooMany) joins nothing.
func readKept(r io.Reader, hint int64) ([]byte, error) {
	size := 64 << 10
	if hint >= 0 && hint <= maxHint {
		size = int(hint) + bytes.MinRead
	}
	var pieces [][]byte
	total := 0
	for {
		buf := make([]byte, size)
		k, err := io.ReadFull(r, buf)
		total += k
		pieces = append(pieces, buf[:k])
		switch {
		case err == nil:
			size = min(2*size, maxChunk)
			continue
		case errors.Is(err, errTooMany):
			return nil, err
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			err = nil
		}
		if len(pieces) == 1 {
			return pieces[0], err
		}
		data := make([]byte, 0, total)
		for _, p := range pieces {
			data = append(data, p...)
		}
		return data, err
	}
}

// readBuffers hold the bytes of a file read the quick way, and of its
// JSON when it is gzip-compressed, for the next file; or the file mapped
// into memory, until released.
type readBuffers struct {
	raw, json []byte
	mapped    mapped
}

// readWhole reads the JSON of a regular file of size bytes (from its
// offset start, at most limit and maxHint) the quick way: mapped into
// memory (mapWhole), or else in one read into bufs.raw; and decompressed
// in memory into bufs.json when it is
// gzip-compressed and its trailer states at most limit and maxHint bytes
// (which then prove true). Its JSON is kept as it is when plainJSON
// vouches that the squeezer would keep it so and stop at none of its
// bounds. ok is false, with the file's offset moved, for anything else: a
// file that grew or shrank since its size was read, a read error, a gzip
// file that does not decompress to the size its trailer states, JSON the
// squeezer might change or refuse; readBounded then reads it through the
// squeezer, as it reads any other input.
func readWhole(f *os.File, start, size, limit int64, vb valueBounds, bufs *readBuffers) (data []byte, ok bool) {
	if size > maxHint {
		return nil, false
	}
	if data = mapWhole(f, start, size, bufs); data == nil {
		// One byte more than the file holds finds a file that grew.
		bufs.raw = room(bufs.raw, int(size)+1)
		if n, err := io.ReadFull(f, bufs.raw); int64(n) != size || err != io.ErrUnexpectedEOF {
			return nil, false
		}
		data = bufs.raw[:size]
	}
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		if size < 18 {
			return nil, false
		}
		hint := int64(binary.LittleEndian.Uint32(data[size-4:]))
		if hint == 0 || hint > limit || hint > maxHint {
			return nil, false
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, false
		}
		defer zr.Close()
		bufs.json = room(bufs.json, int(hint)+1)
		if n, err := io.ReadFull(zr, bufs.json); int64(n) != hint || err != io.ErrUnexpectedEOF {
			return nil, false
		}
		data = bufs.json[:hint]
	}
	return data, plainJSON(data, vb)
}

// plainJSON reports whether the squeezer would return data as it is and
// stop at none of its bounds (vb). It looks at data as a whole rather than
// following JSON's strings, so that it holds every count to a bound at
// least as strict as the squeezer's: data holds no run of more than
// maxSpaceRun whitespace bytes (outside strings or in them), no more
// '{' than vb.objects nor ',' than vb.values (outside strings or in them),
// and no stretch of vb.str/2 bytes, from a multiple of it, without
// a quote that no backslash escapes (a string of vb.str covers
// such a stretch, in which its quotes are escaped). A few passes over the
// bytes, each with the standard library's vector code or one byte in
// maxSpaceRun: a tenth of the squeezer's time.
func plainJSON(data []byte, vb valueBounds) bool {
	if int64(bytes.Count(data, []byte{'{'})) > vb.objects || int64(bytes.Count(data, []byte{','})) > vb.values {
		return false
	}
	// A run of more than maxSpaceRun whitespace bytes holds a byte at an
	// index one less than a multiple of maxSpaceRun.
	for i := maxSpaceRun - 1; i < len(data); i += maxSpaceRun {
		if !jsonSpace(data[i]) {
			continue
		}
		lo, hi := i, i+1
		for lo > 0 && jsonSpace(data[lo-1]) {
			lo--
		}
		for hi < len(data) && jsonSpace(data[hi]) {
			hi++
		}
		if hi-lo > maxSpaceRun {
			return false
		}
	}
	stretch := vb.str / 2
	for from := 0; from+stretch <= len(data); from += stretch {
		if !unescapedQuote(data, from, from+stretch) {
			return false
		}
	}
	return true
}

// jsonSpace reports whether c is whitespace between JSON's tokens.
func jsonSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// unescapedQuote reports whether data[from:to] holds a quote that is not
// escaped: one after an even number of backslashes.
func unescapedQuote(data []byte, from, to int) bool {
	for i := from; i < to; {
		j := bytes.IndexByte(data[i:to], '"')
		if j < 0 {
			return false
		}
		q := i + j
		k := q
		for k > 0 && data[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return true
		}
		i = q + 1
	}
	return false
}

// room is b with length n, its bytes to be read over: b itself where it
// has the room, else a new buffer. slices.Grow clears all it adds, which
// took as long again as reading a file into it; make clears only memory
// the runtime had used before, not fresh pages.
func room(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}

// maxHint is the largest size hint that sizes a buffer before reading: a
// real results file is smaller (a 72-GPU run's is about 20 MB).
const maxHint = 64 << 20

// tooLarge names file in err when it is a *TooLargeError.
func tooLarge(err error, file string) error {
	var tl *TooLargeError
	if errors.As(err, &tl) {
		tl.File = file
	}
	return err
}

// gzipSize is the decompressed size that the trailer of a gzip file
// states (modulo 2^32: exact up to 4 GiB unless the file is cut off or
// lies, which gzip's own check at its end finds; of the last member only
// when there are several), the file holding size bytes from start; -1 when
// it cannot be read.
func gzipSize(f *os.File, start, size int64) int64 {
	var tail [4]byte
	if f == nil || size < 18 {
		return -1
	}
	if _, err := f.ReadAt(tail[:], start+size-4); err != nil {
		return -1
	}
	return int64(binary.LittleEndian.Uint32(tail[:]))
}

// decode decodes a file of this version in one pass (with byLines, its
// figures on every CPU at once where it is laid out as Encode writes it,
// lines.go). Unknown fields are ignored: within a schema version fields may
// only be added, so a newer file of the same version still reads. Only when
// that fails or finds another version does it look at the version alone, so
// that a file of another version is reported as such rather than as
// whatever type mismatch its different shape happens to cause first.
func decode(file string, data []byte, byLines bool) (*Run, error) {
	var run Run
	fast := false
	if byLines {
		run, fast = decodeLines(data)
	}
	if !fast {
		// encoding/json appends a slice's elements to what the slice holds,
		// so room for every figure saves growing (and copying) the slice a
		// figure at a time; Encode writes each figure's test first.
		run = Run{Figures: make([]Figure, 0, bytes.Count(data, []byte(`{"test":`)))}
	}
	if err := decodeWhole(fast, data, &run); err != nil || run.Schema != SchemaVersion {
		version, verr := schemaVersion(file, data)
		switch {
		case verr != nil:
			return nil, verr
		case version != SchemaVersion && version != 1:
			return nil, &VersionError{File: file, Version: version}
		case err != nil:
			return nil, syntaxError(file, data, err)
		}
		if err := convertV1(data, &run); err != nil {
			return nil, syntaxError(file, data, err)
		}
	}
	if !run.Verify && !namesVerify(data) {
		run.Verify = run.verifiedByFigures()
	}
	run.CompleteCatalogue()
	if err := run.Validate(); err != nil {
		return nil, &InvalidError{File: file, Err: err}
	}
	return &run, nil
}

// namesVerify reports whether the run's object in data has its own
// "verify" field (the figures' are their own): p2pbench always writes it,
// but another program's file may leave it out. Only the run's fields are
// read: of a file laid out as Encode writes it, the lines but the figures'.
func namesVerify(data []byte) bool {
	var probe struct {
		Verify json.RawMessage `json:"verify"`
	}
	if head, _, tail, ok := splitLines(data, nil); ok {
		// The first line's last byte, its comma, made the object's end.
		last := len(head) - 1
		head[last] = '}'
		err := json.Unmarshal(head, &probe)
		head[last] = ','
		if err == nil {
			if probe.Verify != nil {
				return true
			}
			if t := bytes.TrimLeft(tail, jsonSpaces); bytes.HasPrefix(t, []byte(",")) {
				return json.Unmarshal(append([]byte("{"), t[1:]...), &probe) == nil && probe.Verify != nil
			}
			return false
		}
	}
	return json.Unmarshal(data, &probe) == nil && probe.Verify != nil
}

// verifiedByFigures is a run's verify read from its figures, for a file
// without the run's own: the data was checked where some figure says it
// passed or failed the check and none says the check was skipped.
func (r *Run) verifiedByFigures() bool {
	checked := false
	for i := range r.Figures {
		switch r.Figures[i].Verify {
		case VerifySkipped:
			return false
		case VerifyPassed, VerifyFailed:
			checked = true
		}
	}
	return checked
}

// decodeWhole decodes data into run with encoding/json, unless decodeLines
// did (done).
func decodeWhole(done bool, data []byte, run *Run) error {
	if done {
		return nil
	}
	return json.Unmarshal(data, run)
}

// schemaVersion reads the schema version of a results file and nothing else.
func schemaVersion(file string, data []byte) (int, error) {
	var probe struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return 0, syntaxError(file, data, err)
	}
	switch string(probe.Schema) {
	case "":
		return 0, fmt.Errorf("%s has no schema version: it is not a p2pbench results file", subject(file))
	case "null":
		return 0, fmt.Errorf("%s has schema null, not a version number: it is not a p2pbench results file", subject(file))
	}
	var version int
	if err := json.Unmarshal(probe.Schema, &version); err != nil {
		return 0, fmt.Errorf("%s has schema version %s, which is not an integer", subject(file), brief(string(probe.Schema)))
	}
	return version, nil
}

// convertV1 converts run, decoded from the schema-1 file data, to the
// current version. Version 1 had the same fields, but each figure carried
// its unit and convention, which become the catalogue entry of its test.
// Where the figures of one test carry different conventions (version 1's IPC
// figures added a clause for same_gpu and ipc_open, which their params still
// say), the first figure's is kept.
func convertV1(data []byte, run *Run) error {
	var v1 struct {
		Figures []struct {
			Convention string `json:"convention"`
		} `json:"figures"`
	}
	if err := json.Unmarshal(data, &v1); err != nil {
		return err
	}
	run.Schema = SchemaVersion
	for i, f := range run.Figures {
		if _, ok := run.Catalogue[f.Test]; ok {
			continue
		}
		if run.Catalogue == nil {
			run.Catalogue = map[Test]TestInfo{}
		}
		run.Catalogue[f.Test] = TestInfo{Unit: f.Unit, Convention: v1.Figures[i].Convention}
	}
	return nil
}

// syntaxError locates an encoding/json error in data and says what it
// means in the file's terms.
func syntaxError(file string, data []byte, err error) error {
	var offset int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var what string
	switch {
	case errors.As(err, &se):
		offset, what = se.Offset, se.Error()
	case errors.As(err, &te):
		offset, what = te.Offset, typeProblem(te)
	default:
		// Only time.Time's own decoding fails otherwise: start or end.
		return &SyntaxError{File: file, Err: err, what: timeProblem(data)}
	}
	// At the end of the data, encoding/json reports a number or literal cut
	// short as an invalid character ' ' (its scanner's end-of-input step):
	// that is a truncated file too.
	truncated := se != nil && (se.Error() == "unexpected end of JSON input" ||
		offset >= int64(len(data)) && strings.HasPrefix(se.Error(), "invalid character ' '"))
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if se != nil && !truncated && offset > 0 {
		offset-- // encoding/json counts the offending byte as read
	}
	if truncated && len(bytes.TrimSpace(data)) == 0 {
		offset = 0 // an empty file
	}
	line, col := position(data, offset)
	return &SyntaxError{File: file, Offset: offset, Line: line, Column: col, Truncated: truncated, Err: err, what: what}
}

// typeProblem says which field holds a value of the wrong JSON kind.
func typeProblem(te *json.UnmarshalTypeError) string {
	got := te.Value
	switch {
	case strings.HasPrefix(got, "number ") && len(got) > len("number ")+briefBytes:
		got = fmt.Sprintf("a number of %d characters", len(got)-len("number "))
	case strings.HasPrefix(got, "number "):
		got = "the " + got
	case got == "array" || got == "object":
		got = "an " + got
	case got == "bool":
		got = "a boolean"
	default:
		got = "a " + got
	}
	if te.Field == "" {
		return fmt.Sprintf("the input is %s, not a JSON object: it is not a p2pbench results file", got)
	}
	return fmt.Sprintf("%s is %s, want %s", te.Field, got, jsonKind(te.Type))
}

// jsonKind names the JSON values a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Time]() {
		return "a time (an RFC 3339 string)"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("a whole number of at most %d bits", t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number ≥ 0 of at most %d bits", t.Bits())
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}

// timeProblem says which of the run's times (start, end) does not read.
func timeProblem(data []byte) string {
	var times struct {
		Start json.RawMessage `json:"start"`
		End   json.RawMessage `json:"end"`
	}
	_ = json.Unmarshal(data, &times)
	for _, t := range []struct {
		field string
		raw   json.RawMessage
	}{{"start", times.Start}, {"end", times.End}} {
		var v time.Time
		if len(t.raw) > 0 && v.UnmarshalJSON(t.raw) != nil {
			return fmt.Sprintf("%s is %s, want a time as an RFC 3339 string such as \"2025-01-31T12:00:00Z\"", t.field, brief(string(t.raw)))
		}
	}
	return "a time is not an RFC 3339 string"
}

// position converts a byte offset to a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// Encode writes r as compact JSON with one figure per line: the run's other
// fields on the first line, then each figure, then tuning and notes, then
// the verdict: its other fields on a line, then each figure verdict. The
// catalogue it writes is r's completed (see Run.CompleteCatalogue), so that
// the file states the convention of every test this build knows; r itself
// is not changed. The file is built in memory and written with one Write,
// so nothing is written when encoding fails.
func (r *Run) Encode(w io.Writer) error {
	head := *r
	head.Catalogue = r.completedCatalogue()
	var buf bytes.Buffer
	if len(r.Figures) == 0 && r.Verdict == nil {
		// No figures to put on lines of their own: the run is one line.
		if err := encodeJSON(&buf, &head); err != nil {
			return err
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	head.Figures, head.Tuning, head.Notes, head.Verdict = nil, nil, nil, nil
	// Figures is the last field of Run that is always written.
	if err := encodeOpen(&buf, &head, "figures"); err != nil {
		return err
	}
	if err := encodeLines(&buf, r.Figures); err != nil {
		return err
	}
	for _, part := range []struct {
		key string
		v   any
		n   int
	}{{"tuning", r.Tuning, len(r.Tuning)}, {"notes", r.Notes, len(r.Notes)}} {
		if part.n == 0 {
			continue
		}
		fmt.Fprintf(&buf, ",\n%q:", part.key)
		if err := encodeJSON(&buf, part.v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
	}
	if v := r.Verdict; v != nil {
		buf.WriteString(",\n\"verdict\":")
		vh := *v
		vh.Figures = nil
		// Figures is the last field of Verdict, always written.
		if err := encodeOpen(&buf, &vh, "figures"); err != nil {
			return err
		}
		if err := encodeLines(&buf, v.Figures); err != nil {
			return err
		}
		buf.WriteString("}")
	}
	buf.WriteString("}\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// encodeOpen appends v's compact JSON up to its last field, named last,
// which must be null in v: the JSON ends in "<last>":, for the caller to
// write its value and close the object.
func encodeOpen(b *bytes.Buffer, v any, last string) error {
	start := b.Len()
	if err := encodeJSON(b, v); err != nil {
		return err
	}
	tail := fmt.Sprintf("%q:null}\n", last)
	if !bytes.HasSuffix(b.Bytes()[start:], []byte(tail)) {
		return fmt.Errorf("encoding results: %s must be the last field of %T that is always written", last, v)
	}
	b.Truncate(b.Len() - len(tail))
	fmt.Fprintf(b, "\n%q:", last)
	return nil
}

// encodeLines appends items as a JSON array with one item per line.
func encodeLines[T any](b *bytes.Buffer, items []T) error {
	b.WriteByte('[')
	for i := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		if err := encodeJSON(b, &items[i]); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // the encoder's newline
	}
	b.WriteString("\n]")
	return nil
}

// encodeJSON appends v's compact JSON and a newline to b, keeping <, > and &
// as they are.
func encodeJSON(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		var uv *json.UnsupportedValueError
		if errors.As(err, &uv) {
			return fmt.Errorf("encoding results: %w (every figure value must be finite; Validate finds which)", err)
		}
		return fmt.Errorf("encoding results: %w", err)
	}
	return nil
}

// EncodeFor returns what writes r into a file named name: Encode,
// gzip-compressed when name ends in ".gz" (a quarter of the size: 15 MB of
// nvl72's 61; Read and Decode read either).
func (r *Run) EncodeFor(name string) func(io.Writer) error {
	if !strings.HasSuffix(name, ".gz") {
		return r.Encode
	}
	return func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		if err := r.Encode(zw); err != nil {
			return err
		}
		return zw.Close()
	}
}

// CompleteCatalogue makes r's catalogue describe the tests of its figures
// as far as this build knows them: each entry takes from this build's entry
// of its test what files do not store (how the test is selected, whether it
// needs a pair, is a matrix, ...) and the words the entry leaves empty; a
// test the figures name and the catalogue lacks gets this build's entry. A
// test this build does not know keeps the file's words, or has no entry.
// Decode calls it, so a run read from a file always has a complete
// catalogue; Encode writes the completed catalogue without changing r.
func (r *Run) CompleteCatalogue() { r.Catalogue = r.completedCatalogue() }

// completedCatalogue is CompleteCatalogue's result, in a new map; nil when
// it would be empty.
func (r *Run) completedCatalogue() map[Test]TestInfo {
	out := make(map[Test]TestInfo, len(r.Catalogue))
	for t, words := range r.Catalogue {
		info := t.Info()
		info.Unit = cmp.Or(words.Unit, info.Unit)
		info.Title = cmp.Or(words.Title, info.Title)
		info.Short = cmp.Or(words.Short, info.Short)
		if words.Convention != "" || len(words.Conventions) > 0 {
			// The file's own rules, by reference or in words.
			info.Conventions, info.Convention = words.Conventions, words.Convention
		}
		// The method is the file's: none where its build recorded none.
		info.Method = words.Method
		out[t] = info
	}
	for i := range r.Figures {
		t := r.Figures[i].Test
		if _, ok := out[t]; ok {
			continue
		}
		if info, known := Lookup(t); known {
			out[t] = info
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Info describes test t as run r does: the run's catalogue entry, else this
// build's (an unknown test's entry names it and nothing else).
func (r *Run) Info(t Test) TestInfo {
	if info, ok := r.Catalogue[t]; ok {
		return info
	}
	return t.Info()
}

// Convention says in words how the figures of test t were computed: the
// words of the conventions the run's catalogue entry names (else this
// build's entry), or the entry's own words where it names none (a file of
// an earlier build, an import: with words its build is known to have got
// wrong corrected, and said so: correctedConvention), else "".
func (r *Run) Convention(t Test) string {
	info := r.Info(t)
	if info.Convention != "" || len(info.Conventions) == 0 {
		return r.correctedConvention(info.Convention)
	}
	return conventionWords(info.Conventions)
}
