// Package ingest converts the outputs of other GPU benchmarks into p2pbench
// results runs (schema v2), so that compare, report, plot and fleet work on
// the history people keep of them: nvbandwidth's JSON and text outputs
// (mapped onto p2pbench's tests where one measures the same thing; see
// nvbandwidth.go for the table) and nccl-tests' text tables (tests of their
// own, results.NCCLTests).
//
// A converted run is marked as imported (results.Run.Imported): the input's
// format, file name and hash, and what the input does not say. Those tools
// print one value per figure, not the samples behind it: such a figure
// carries statistics of that one value and no samples, so no significance
// test is possible on it. A figure the input repeats (run cycles, several
// runs in one log) keeps its values as samples.
//
// Malformed input gives an *Error naming the file and the line or field.
//
// ingest reads files and imports results only.
package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
)

// Format names an input format.
type Format string

// The formats Import reads.
const (
	NVBandwidthJSON Format = "nvbandwidth-json"
	NVBandwidthText Format = "nvbandwidth-text"
	NCCLTestsText   Format = "nccl-tests-text"
)

// decoder converts an input of one format.
type decoder func(*input, Options) (*results.Run, error)

// formatInfo is a format, what it is, and its decoder.
type formatInfo struct {
	format Format
	doc    string
	decode decoder
}

// formats are the formats Import reads, in the order Formats lists them.
var formats = []formatInfo{
	{NVBandwidthJSON, "nvbandwidth --json output (v0.5 and later)", decodeNVBandwidthJSON},
	{NVBandwidthText, "nvbandwidth's plain-text output (v0.1 and later)", decodeNVBandwidthText},
	{NCCLTestsText, "nccl-tests' text output of any *_perf program (its header and tables)", decodeNCCLTests},
}

// Formats lists the formats Import reads, each with a line saying what it is.
func Formats() [][2]string {
	out := make([][2]string, len(formats))
	for i, f := range formats {
		out[i] = [2]string{string(f.format), f.doc}
	}
	return out
}

// ParseFormat reads a format's name; "" and "auto" mean detect it.
func ParseFormat(s string) (Format, error) {
	if s == "" || s == "auto" {
		return "", nil
	}
	for _, f := range formats {
		if string(f.format) == s {
			return f.format, nil
		}
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f.format)
	}
	return "", fmt.Errorf("unknown import format %q; the formats are auto, %s", s, strings.Join(names, ", "))
}

// Options say what an input does not.
type Options struct {
	// Format of the input; "" detects it (Detect).
	Format Format
	// BufferSize is the buffer nvbandwidth copied (its -b, in bytes); 0
	// takes its default for the version the input names.
	BufferSize uint64
	// Collective is the nccl-tests collective ("all_reduce", "sendrecv")
	// of tables whose output does not name it.
	Collective string
	// Importer names the converting program in the run ("p2pbench v1.4").
	Importer string
}

// Validate checks options before any input is read: a Collective, when
// given, is one of results.NCCLCollectives.
func (o Options) Validate() error {
	if o.Collective != "" && !slices.Contains(results.NCCLCollectives(), o.Collective) {
		return fmt.Errorf("unknown collective %q; the collectives are %s", o.Collective, strings.Join(results.NCCLCollectives(), ", "))
	}
	return nil
}

// Outputs names the results file of each input: out (-o) for a single
// input, else DIR/NAME.p2pbench.json in dir, NAME the input's name without
// its extension. Every output is checked by the policy of internal/outfile,
// none of them one of the inputs, before any input is read. A choice the
// inputs cannot take (-o for several, two inputs of one name into one
// file) is an option's Error.
func Outputs(inputs []string, out, dir string) ([]string, error) {
	if out != "" && len(inputs) > 1 {
		return nil, &Error{File: "-o", Msg: fmt.Sprintf("names one results file, but there are %d inputs; use --dir", len(inputs)), Option: true}
	}
	outs := []string{out}
	if out == "" {
		if err := outfile.DirWritable(dir, inputs...); err != nil {
			return nil, err
		}
		outs = make([]string, len(inputs))
		for i, in := range inputs {
			base := filepath.Base(in)
			outs[i] = filepath.Join(dir, strings.TrimSuffix(base, filepath.Ext(base))+".p2pbench.json")
			if slices.Contains(outs[:i], outs[i]) {
				return nil, &Error{File: in, Msg: fmt.Sprintf("another input has the same name, so both would be written to %s; import them separately", outs[i]), Option: true}
			}
		}
	}
	for _, o := range outs {
		if err := outfile.Check(o, inputs...); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// Error is a problem with an input: its file, and the line (text) or field
// (JSON) where it is.
type Error struct {
	File  string
	Line  int    // 1-based; 0 when the problem has no line
	Col   int    // 1-based column within Line, 0 when unknown
	Field string // the JSON field, "" for text
	Msg   string
	// Option is set when the fault is an option given to the import (a
	// collective the output contradicts, a buffer size of no MiB), not the
	// input: the command line's, exit status 2.
	Option bool
}

func (e *Error) Error() string {
	where := e.File
	switch {
	case e.Line > 0 && e.Col > 0:
		where = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	case e.Line > 0:
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field != "" {
		where += ": " + e.Field
	}
	return where + ": " + e.Msg
}

// input is a file being converted.
type input struct {
	name string // for messages and the run's Imported.File
	data []byte
}

// errorf is an error at line (0: none) of the input.
func (in *input) errorf(line int, format string, args ...any) *Error {
	return &Error{File: in.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Import reads and converts one file.
func Import(path string, opt Options) (*results.Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	return Decode(path, data, opt)
}

// optionError is errorf for an option given to the import that the input
// contradicts or cannot use.
func (in *input) optionError(line int, format string, args ...any) *Error {
	e := in.errorf(line, format, args...)
	e.Option = true
	return e
}

// Decode converts the content of the file named name (used in messages
// and recorded without its directory).
func Decode(name string, data []byte, opt Options) (*results.Run, error) {
	in := &input{name: name, data: data}
	format := opt.Format
	if format == "" {
		var ok bool
		if format, ok = Detect(data); !ok {
			if jsonKeys(data)["schema"] {
				return nil, in.errorf(0, "already a p2pbench results file: there is nothing to import")
			}
			return nil, in.errorf(0, "not an output Import knows (nvbandwidth JSON or text, nccl-tests text)")
		}
	}
	i := slices.IndexFunc(formats, func(f formatInfo) bool { return f.format == format })
	if i < 0 {
		return nil, in.errorf(0, "unknown format %q", format)
	}
	// An option for another tool's format would be ignored: refused.
	switch nccl := format == NCCLTestsText; {
	case nccl && opt.BufferSize != 0:
		return nil, in.optionError(0, "a buffer size is given, but this is nccl-tests' output, whose rows give their sizes (the buffer size is nvbandwidth's)")
	case !nccl && opt.Collective != "":
		return nil, in.optionError(0, "a collective is given, but this is %s's output (the collective is nccl-tests')", strings.SplitN(string(format), "-", 2)[0])
	}
	run, err := formats[i].decode(in, opt)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	run.Imported.Format = string(format)
	run.Imported.File = filepath.Base(name)
	run.Imported.SHA256 = hex.EncodeToString(sum[:])
	run.Imported.Importer = opt.Importer
	if err := run.Validate(); err != nil {
		// A text too long or a value too small for a results file came
		// from the input, which is at fault; any other broken rule is the
		// importer's.
		var ve *results.ValidationError
		if errors.As(err, &ve) && ve.OnlyLimits() {
			return nil, in.errorf(0, "the input holds what a p2pbench results file cannot: %v", err)
		}
		return nil, in.errorf(0, "the converted run is invalid (a bug of the importer): %v", err)
	}
	return run, nil
}

// Detect tells an input's format from its content. A JSON object whose
// top-level key is "nvbandwidth", or malformed JSON that names it, is
// nvbandwidth's (so that its decoder locates the flaw).
func Detect(data []byte) (Format, bool) {
	keys := jsonKeys(data)
	switch {
	case bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) && bytes.Contains(data, []byte(`"nvbandwidth"`)) && (keys == nil || keys["nvbandwidth"]):
		return NVBandwidthJSON, true
	case bytes.Contains(data, []byte("nvbandwidth Version:")) || nvbRunning.Match(data):
		return NVBandwidthText, true
	case ncclHeader.Match(data):
		return NCCLTestsText, true
	}
	return "", false
}

// jsonKeys returns the top-level keys of a JSON object; nil for anything
// else.
func jsonKeys(data []byte) map[string]bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return nil
	}
	keys := make(map[string]bool, len(probe))
	for k := range probe {
		keys[k] = true
	}
	return keys
}
