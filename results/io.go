package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
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
	// locate it for people.
	Offset       int64
	Line, Column int
	// Truncated is true when the input ends in the middle of the JSON value.
	Truncated bool
	Err       error // the encoding/json error
}

func (e *SyntaxError) Error() string {
	switch {
	case e.Truncated && e.Offset == 0:
		return fmt.Sprintf("%s is empty", subject(e.File))
	case e.Truncated:
		return fmt.Sprintf("%s is truncated: the JSON ends at line %d, column %d (byte offset %d) before it is complete",
			subject(e.File), e.Line, e.Column, e.Offset)
	}
	return fmt.Sprintf("%s is malformed at line %d, column %d (byte offset %d): %v",
		subject(e.File), e.Line, e.Column, e.Offset, strings.TrimPrefix(e.Err.Error(), "json: "))
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

// Read reads, checks and validates a results file.
func Read(path string) (*Run, error) {
	return ReadWith(path, ReadOptions{})
}

// ReadOptions let a reader that needs less than the whole run read a large
// file faster. The zero value reads everything.
type ReadOptions struct {
	// SkipStats leaves Stats nil on every figure that has samples, for
	// readers that compute what they need from the samples (compare).
	// Such stats are still checked to be well-formed JSON, but not
	// against their samples. Figures without samples keep their stats.
	SkipStats bool
	// ShareParams lets figures whose params objects are written alike
	// share one map instead of a copy each, for readers that only look
	// at params (compare): the run's params must then not be changed.
	ShareParams bool
	// Serial decodes on the calling goroutine only, for callers that
	// read several files at once (compare); a large file is otherwise
	// decoded in pieces on every processor.
	Serial bool
}

// ReadWith is Read with options.
func ReadWith(path string, opt ReadOptions) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	defer f.Close()
	if data, unmap, ok := mapFile(f); ok {
		defer unmap()
		return decodeMapped(path, data, opt)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return decode(path, data, opt)
}

// decodeMapped decodes a file mapped into memory. Pages a file loses while
// it is mapped (another program truncating it) fault when touched; the
// fault becomes an error instead of a crash. Nothing decoded refers to
// data, which the caller unmaps.
func decodeMapped(file string, data []byte, opt ReadOptions) (run *Run, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !isFault(r) {
				panic(r)
			}
			run, err = nil, fmt.Errorf("%s changed while it was being read", subject(file))
		}
	}()
	return decode(file, data, opt)
}

// isFault reports whether a recovered value is a memory fault turned into
// a panic by debug.SetPanicOnFault.
func isFault(r any) bool {
	_, ok := r.(interface{ Addr() uintptr })
	return ok
}

// Decode reads, checks and validates a results file from r.
func Decode(r io.Reader) (*Run, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return decode("", data, ReadOptions{})
}

// decode checks the schema version before decoding the whole file, so that a
// file of another version is reported as such rather than as whatever type
// mismatch its different shape happens to cause first. Options apply to
// the fast decoder; encoding/json reads everything.
func decode(file string, data []byte, opt ReadOptions) (*Run, error) {
	if run, ok := decodeFast(data, opt); ok {
		if run.Schema != SchemaVersion {
			return nil, &VersionError{File: file, Version: run.Schema}
		}
		if err := run.Validate(); err != nil {
			return nil, &InvalidError{File: file, Err: err}
		}
		return run, nil
	}
	return decodeSlow(file, data)
}

// decodeSlow decodes with encoding/json alone: the reference behaviour,
// and the one whose errors say where a file is broken.
func decodeSlow(file string, data []byte) (*Run, error) {
	var probe struct {
		Schema *json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, syntaxError(file, data, err)
	}
	if probe.Schema == nil {
		return nil, fmt.Errorf("%s has no schema version: it is not a p2pbench results file", subject(file))
	}
	var version int
	if err := json.Unmarshal(*probe.Schema, &version); err != nil {
		return nil, fmt.Errorf("%s has schema version %s, which is not an integer", subject(file), *probe.Schema)
	}
	if version != SchemaVersion {
		return nil, &VersionError{File: file, Version: version}
	}
	// Unknown fields are ignored: within a schema version fields may only be
	// added, so a newer file of the same version still reads correctly here.
	var run Run
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, syntaxError(file, data, err)
	}
	if err := run.Validate(); err != nil {
		return nil, &InvalidError{File: file, Err: err}
	}
	return &run, nil
}

// syntaxError locates an encoding/json error in data.
func syntaxError(file string, data []byte, err error) error {
	var offset int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &te):
		offset = te.Offset
	default:
		return fmt.Errorf("%s: %w", subject(file), err)
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	truncated := se != nil && se.Error() == "unexpected end of JSON input"
	if se != nil && !truncated && offset > 0 {
		offset-- // encoding/json counts the offending byte as read
	}
	if truncated && len(bytes.TrimSpace(data)) == 0 {
		offset = 0 // an empty file
	}
	line, col := position(data, offset)
	return &SyntaxError{File: file, Offset: offset, Line: line, Column: col, Truncated: truncated, Err: err}
}

// position converts a byte offset to a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// Encode writes r as indented JSON. Arrays of numbers (the samples) stay on
// one line each, which keeps files of thousands of figures readable.
func (r *Run) Encode(w io.Writer) error {
	data, err := encodeRun(r)
	if err != nil {
		var uv *json.UnsupportedValueError
		if errors.As(err, &uv) {
			return fmt.Errorf("encoding results: %w (every figure value must be finite; Validate finds which)", err)
		}
		return fmt.Errorf("encoding results: %w", err)
	}
	data = append(data, '\n')
	_, err = w.Write(data)
	return err
}

// Write writes r to path atomically: the JSON goes to a temporary file in the
// same directory, is synced to disk, and then renamed over path, so a crash
// or a full disk never leaves a truncated results file where a good one (or
// none) was.
func Write(path string, r *Run) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = r.Encode(bw); err != nil {
		return fmt.Errorf("writing results %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing results %s: %w", path, err)
	}
	// CreateTemp makes the file private (0600); a results file is meant to
	// be shared like any other output.
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing results %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing results %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing results %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing results %s: %w", path, err)
	}
	// Sync the directory so that the rename itself survives a crash. Some
	// file systems cannot sync directories; the data is already safe then.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// compactNumberArrays rewrites indented JSON so that arrays holding only
// numbers sit on one line: [1.5, 2, 3] instead of one element per line.
func compactNumberArrays(in []byte) []byte {
	out := make([]byte, 0, len(in))
	inString := false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inString {
			out = append(out, c)
			switch c {
			case '\\':
				if i+1 < len(in) {
					i++
					out = append(out, in[i])
				}
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case '[':
			if end, ok := numberArrayEnd(in, i); ok {
				out = appendCompactArray(out, in[i:end+1])
				i = end
				continue
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}

// numberArrayEnd reports where the array opening at in[start] closes, if it
// holds at least one element and only numbers.
func numberArrayEnd(in []byte, start int) (int, bool) {
	elems := 0
	inNumber := false
	for i := start + 1; i < len(in); i++ {
		switch c := in[i]; {
		case c == ']':
			return i, elems > 0
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			inNumber = false
		case c == ',':
			inNumber = false
		case c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9'):
			if !inNumber {
				elems++
				inNumber = true
			}
		default:
			return 0, false
		}
	}
	return 0, false
}

// appendCompactArray appends arr (an array of numbers with any white space)
// as "[a, b, c]".
func appendCompactArray(out, arr []byte) []byte {
	out = append(out, '[')
	first := true
	for _, f := range bytes.FieldsFunc(arr[1:len(arr)-1], func(r rune) bool {
		return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r'
	}) {
		if !first {
			out = append(out, ", "...)
		}
		first = false
		out = append(out, f...)
	}
	return append(out, ']')
}
