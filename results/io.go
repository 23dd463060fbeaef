package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
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

// Read reads, checks and validates a results file; a file of schema
// version 1 is converted (see Decode).
func Read(path string) (*Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return decode(path, data)
}

// Decode reads, checks and validates a results file from r. A file of schema
// version 1 is converted to the current version: the convention each of its
// figures repeated becomes the catalogue's entry of the figure's test.
func Decode(r io.Reader) (*Run, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return decode("", data)
}

// decode checks the schema version before decoding the whole file, so that a
// file of another version is reported as such rather than as whatever type
// mismatch its different shape happens to cause first.
func decode(file string, data []byte) (*Run, error) {
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
	var run Run
	switch version {
	case SchemaVersion:
		// Unknown fields are ignored: within a schema version fields may
		// only be added, so a newer file of the same version still reads.
		if err := json.Unmarshal(data, &run); err != nil {
			return nil, syntaxError(file, data, err)
		}
	case 1:
		if err := decodeV1(data, &run); err != nil {
			return nil, syntaxError(file, data, err)
		}
	default:
		return nil, &VersionError{File: file, Version: version}
	}
	if err := run.Validate(); err != nil {
		return nil, &InvalidError{File: file, Err: err}
	}
	return &run, nil
}

// decodeV1 decodes a schema-1 file into the current types: the same fields,
// but each figure carried its convention. The first convention seen for a
// test becomes its catalogue entry, with the unit and titles of the current
// catalogue where the test is known.
func decodeV1(data []byte, run *Run) error {
	var v1 struct {
		Figures []struct {
			Convention string `json:"convention"`
		} `json:"figures"`
	}
	if err := json.Unmarshal(data, run); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &v1); err != nil {
		return err
	}
	run.Schema = SchemaVersion
	for i, f := range run.Figures {
		if _, ok := run.Catalogue[f.Test]; ok || i >= len(v1.Figures) {
			continue
		}
		info := f.Test.Info()
		if info.Unit == "" {
			info.Unit = f.Unit
		}
		if c := v1.Figures[i].Convention; c != "" {
			info.Convention = c
		}
		if run.Catalogue == nil {
			run.Catalogue = map[Test]TestInfo{}
		}
		run.Catalogue[f.Test] = info
	}
	return nil
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

// Encode writes r as compact JSON with one figure per line: the run's other
// fields on the first line, then each figure, then tuning and notes. Entries
// of the catalogue missing for tests the figures name are filled in from
// this build's catalogue (r itself is not changed).
func (r *Run) Encode(w io.Writer) error {
	head := *r
	head.Catalogue = r.catalogueFilled()
	figures, tuning, notes := r.Figures, r.Tuning, r.Notes
	head.Figures, head.Tuning, head.Notes = nil, nil, nil
	var b bytes.Buffer
	if err := encodeJSON(&b, head); err != nil {
		return err
	}
	// head ends with "figures":null} (Run's last field that is always
	// written); the figures, tuning and notes follow.
	out, ok := bytes.CutSuffix(bytes.TrimRight(b.Bytes(), "\n"), []byte(`"figures":null}`))
	if !ok {
		return errors.New("encoding results: figures must be the last field of Run that is always written")
	}
	var buf bytes.Buffer
	buf.Grow(len(out) + 512*len(figures))
	buf.Write(out)
	buf.WriteString("\n\"figures\":[")
	for i := range figures {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
		if err := encodeJSON(&buf, &figures[i]); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // the encoder's newline
	}
	buf.WriteString("\n]")
	for _, tail := range []struct {
		key string
		v   any
		n   int
	}{{"tuning", tuning, len(tuning)}, {"notes", notes, len(notes)}} {
		if tail.n == 0 {
			continue
		}
		fmt.Fprintf(&buf, ",\n%q:", tail.key)
		if err := encodeJSON(&buf, tail.v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteString("}\n")
	_, err := w.Write(buf.Bytes())
	return err
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

// catalogueFilled returns r's catalogue with this build's entries added for
// the tests r's figures name that it lacks.
func (r *Run) catalogueFilled() map[Test]TestInfo {
	var out map[Test]TestInfo
	for i := range r.Figures {
		t := r.Figures[i].Test
		if _, ok := r.Catalogue[t]; ok {
			continue
		}
		if _, ok := out[t]; ok {
			continue
		}
		info, known := Lookup(t)
		if !known {
			continue
		}
		if out == nil {
			out = maps.Clone(r.Catalogue)
			if out == nil {
				out = map[Test]TestInfo{}
			}
		}
		out[t] = info
	}
	if out == nil {
		return r.Catalogue
	}
	return out
}

// Convention says how the figures of test t were computed: the run's own
// catalogue entry, else this build's, else "".
func (r *Run) Convention(t Test) string {
	if info, ok := r.Catalogue[t]; ok {
		return info.Convention
	}
	return t.Info().Convention
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
