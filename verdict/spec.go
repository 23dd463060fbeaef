package verdict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/internal/infile"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// Spec is an --expect file: the least figures (for rates) or the most (for
// times) a machine must reach, per test, link class and size, as a purchase
// contract or a vendor's test plan states them. It is JSON:
//
//	{
//	  "name": "2× H200 SXM (NV18): acceptance floors",
//	  "figures": [
//	    {"test": "ce_read", "link": "nvlink", "size": "512MiB", "min": 370},
//	    {"test": "ce_bidir", "direction": "write", "link": "nvlink", "min": 740},
//	    {"test": "h2d", "link": "host", "min": 50},
//	    {"test": "lat_pingpong", "params": {"measure": "one_way", "ordering": "release_acquire"}, "max": 3000}
//	  ]
//	}
//
// Each entry holds every figure it matches: of its test; of its direction
// and part where it names them (a test both ways without a part: the total;
// an aggregate: the total); of its link class where it names one (see
// LinkClass); of its size where it names one (without: the run's matrix
// size for the pairwise matrices, every size for other tests); with the
// params it names. A figure below its min (above its max) FAILs. Several
// entries may hold one figure; the worst outcome counts. Figures no entry
// matches are not judged; an entry that matches no figure of the run (another
// size, a typo in a params value, a test not run) is an error, never a pass:
// a contract is judged whole or not at all. The tests across processes are
// held to their twins in one process, never to a spec.
//
// JSON rather than YAML: encoding/json reads it with no new dependency,
// rejects unknown fields and says where a malformed file breaks; a YAML
// spec converts to it with any YAML tool.
type Spec struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Figures     []SpecEntry `json:"figures"`
	file        string
}

// SpecEntry is one line of a spec.
type SpecEntry struct {
	Test      results.Test      `json:"test"`
	Direction results.Direction `json:"direction,omitempty"`
	Part      results.Part      `json:"part,omitempty"`
	Link      LinkClass         `json:"link,omitempty"`
	// Size is a transfer size as the command line takes it ("512MiB").
	Size   string            `json:"size,omitempty"`
	Params map[string]string `json:"params,omitempty"`
	// Min is the least a rate must reach; Max the most a time may take.
	// An entry has one of them, above 0.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`

	size uint64
}

// LinkClass names what a figure's data crosses, as a spec entry selects it.
type LinkClass string

// The link classes.
const (
	LinkNVLink LinkClass = "nvlink" // between two GPUs joined by NVLink
	LinkPCIe   LinkClass = "pcie"   // between two GPUs with peer access over PCIe
	LinkNoP2P  LinkClass = "nop2p"  // between two GPUs without peer access
	LinkHost   LinkClass = "host"   // between a GPU and host memory
	LinkLocal  LinkClass = "local"  // within one GPU
	LinkAll    LinkClass = "all"    // every GPU at once (an aggregate's total)
)

var linkClasses = []LinkClass{LinkNVLink, LinkPCIe, LinkNoP2P, LinkHost, LinkLocal, LinkAll}

// SpecError is a spec that cannot be used: a malformed file, a bad entry,
// or an entry that does not fit the run. Its message is one line; the
// command line exits 2 for it.
type SpecError struct {
	File string
	// Entry is the index of the entry at fault, -1 for the file as a whole.
	Entry int
	Err   error
}

func (e *SpecError) Error() string {
	where := "expectations file " + e.File
	if e.Entry >= 0 {
		where += fmt.Sprintf(": figures[%d]", e.Entry)
	}
	return where + ": " + e.Err.Error()
}

func (e *SpecError) Unwrap() error { return e.Err }

// MaxSpecBytes bounds a spec file: a contract is a few kilobytes.
const MaxSpecBytes = 4 << 20

// LoadSpec reads and checks a spec file (see Spec); every problem is a
// *SpecError. Only a regular file of at most MaxSpecBytes is read: a FIFO
// or a device is refused before it is opened (infile).
func LoadSpec(path string) (*Spec, error) {
	data, err := infile.ReadFile(path, MaxSpecBytes)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == path {
		err = pe.Err // the message names the file already
	}
	if err != nil {
		return nil, &SpecError{File: path, Entry: -1, Err: err}
	}
	return ParseSpec(path, data)
}

// ParseSpec reads a spec from data, naming it file in errors.
func ParseSpec(file string, data []byte) (*Spec, error) {
	fail := func(entry int, format string, args ...any) error {
		return &SpecError{File: file, Entry: entry, Err: fmt.Errorf(format, args...)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, fail(-1, "%s", jsonProblem(data, dec, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(-1, "more than one JSON value")
	}
	if len(s.Figures) == 0 {
		return nil, fail(-1, "no figures: a spec lists at least one")
	}
	if len(s.Name) > results.MaxNameBytes {
		return nil, fail(-1, "name of %d bytes: at most %d", len(s.Name), results.MaxNameBytes)
	}
	s.file = file
	for i := range s.Figures {
		if err := s.Figures[i].check(); err != nil {
			return nil, fail(i, "%v", err)
		}
	}
	return &s, nil
}

// jsonProblem says where data stops being the JSON a spec is.
func jsonProblem(data []byte, dec *json.Decoder, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := dec.InputOffset()
	switch {
	case errors.As(err, &se):
		off = se.Offset - 1 // encoding/json counts the offending byte as read
	case errors.As(err, &te):
		off = te.Offset
		err = typeProblem(te)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "empty or truncated JSON"
	}
	off = min(max(off, 0), int64(len(data)))
	line := bytes.Count(data[:off], []byte("\n")) + 1
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("malformed at line %d, column %d: %s", line, col, strings.TrimPrefix(err.Error(), "json: "))
}

// typeProblem says in JSON's words (not Go's) which value has the wrong
// kind: "figures.min: a number, not a string".
func typeProblem(te *json.UnmarshalTypeError) error {
	where := "the spec"
	if te.Field != "" {
		where = te.Field
	}
	if strings.HasPrefix(te.Value, "number ") { // a number that does not fit: 1e999, -1 for a count
		return fmt.Errorf("%s: %s, and the number %s is out of range", where, results.JSONKind(te.Type), results.QuoteShort(strings.TrimPrefix(te.Value, "number ")))
	}
	return fmt.Errorf("%s: %s, not %s", where, results.JSONKind(te.Type), article(te.Value))
}

// article puts "a" or "an" before one of encoding/json's value kinds.
func article(kind string) string {
	if strings.HasPrefix(kind, "a") || strings.HasPrefix(kind, "o") {
		return "an " + kind
	}
	return "a " + kind
}

// check checks an entry on its own.
func (e *SpecEntry) check() error {
	info, known := results.Lookup(e.Test)
	if err := e.texts(); err != nil {
		return err
	}
	switch {
	case e.Test == "":
		return errors.New("no test")
	case !known:
		names := make([]string, 0)
		for _, t := range results.Catalogue() {
			names = append(names, string(t.Name))
		}
		return fmt.Errorf("unknown test %q; the tests are: %s", e.Test, strings.Join(names, ", "))
	case e.Direction != "" && e.Direction != results.DirRead && e.Direction != results.DirWrite:
		return fmt.Errorf("direction %q is not read or write", e.Direction)
	case e.Part != "" && !slices.Contains([]results.Part{results.PartForward, results.PartReverse, results.PartPair, results.PartTotal}, e.Part):
		return fmt.Errorf("part %q is not forward, reverse, pair or total", e.Part)
	case info.SameProcess != "":
		return fmt.Errorf("%s is held to %s, its twin in one process, not to a spec: name %s", e.Test, info.SameProcess, info.SameProcess)
	case e.Link != "" && !slices.Contains(linkClasses, e.Link):
		return fmt.Errorf("link class %q is not one of %s", e.Link, joinClasses(linkClasses))
	case (e.Min == nil) == (e.Max == nil):
		return fmt.Errorf("%s: give either min (least rate) or max (most time)", e.Test)
	case e.Min != nil && info.LowerIsBetter():
		return fmt.Errorf("%s is a time (%s): give max, the most it may take", e.Test, info.Unit)
	case e.Max != nil && !info.LowerIsBetter():
		return fmt.Errorf("%s is a rate (%s): give min, the least it must reach", e.Test, info.Unit)
	}
	if v := e.limit(); !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: %v is not a %s above 0", e.Test, v, e.limitName())
	}
	if why := vacuous(e.limit(), e.Min != nil, info.Unit); why != "" {
		return fmt.Errorf("%s: %s %v %s: it would judge nothing", e.Test, e.limitName(), e.limit(), why)
	}
	if e.Size != "" {
		n, err := units.ParseSize(e.Size)
		if err != nil {
			return err
		}
		e.size = n
	}
	return nil
}

// texts refuses an entry's text longer than a results file's names may
// be (results.MaxNameBytes): no figure has such a test, size or params.
func (e *SpecEntry) texts() error {
	fields := [][2]string{{"test", string(e.Test)}, {"direction", string(e.Direction)}, {"part", string(e.Part)},
		{"link", string(e.Link)}, {"size", e.Size}}
	for k, v := range e.Params {
		fields = append(fields, [2]string{"params key", k}, [2]string{"params value", v})
	}
	for _, f := range fields {
		if len(f[1]) > results.MaxNameBytes {
			return fmt.Errorf("%s of %d bytes: at most %d", f[0], len(f[1]), results.MaxNameBytes)
		}
	}
	return nil
}

// Bounds beyond which a spec judges nothing: no link moves less than a
// kilobyte a second (or a thousand operations), and nothing p2pbench times
// takes a quarter of an hour; a subnormal number is no measurement at all
// (the results reader refuses one).
const (
	leastRate = 1e-6 // GB/s or Gop/s
	mostTime  = 1e12 // ns
)

// vacuous says why a min (least rate) or max (most time) bound of unit
// would pass every figure; "" when it would not.
func vacuous(v float64, min bool, unit results.Unit) string {
	switch {
	case v < 0x1p-1022:
		return "is a subnormal number, which no measurement is"
	case min && v < leastRate:
		return fmt.Sprintf("is below %g %s, which every figure reaches", leastRate, unit)
	case !min && unit == results.UnitNs && v > mostTime:
		return fmt.Sprintf("is above %g ns (%.0f minutes), which no figure takes", float64(mostTime), mostTime/60e9)
	}
	return ""
}

// limit is the entry's min or max.
func (e *SpecEntry) limit() float64 {
	if e.Min != nil {
		return *e.Min
	}
	return *e.Max
}

func (e *SpecEntry) limitName() string {
	if e.Min != nil {
		return "min"
	}
	return "max"
}

func joinClasses(cs []LinkClass) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// Source names the spec.
func (s *Spec) Source() results.ExpectationSource {
	name := s.Name
	if name == "" {
		name = s.file
	}
	src := results.ExpectationSource{Kind: results.ExpectSpec, Name: name, File: s.file}
	if s.Description != "" {
		src.Notes = []string{s.Description}
	}
	return src
}

// Fits checks the spec against a run: every link class it names must be
// one that some pair (or figure) of the run has. The error is a *SpecError;
// the command line checks a spec with Fits as soon as it knows the
// topology, before measuring.
func (s *Spec) Fits(run *results.Run) error {
	have := map[LinkClass]bool{}
	if run.Topology != nil {
		for _, p := range run.Topology.Pairs {
			have[pairClass(p)] = true
		}
		if len(run.Topology.Pairs) > 0 {
			have[LinkAll] = true
		}
	}
	if len(run.Environment.Devices) > 0 || len(run.DeviceIndices()) > 0 {
		have[LinkHost], have[LinkLocal] = true, true
	}
	for i := range run.Figures {
		have[classOf(run, &run.Figures[i])] = true
	}
	for i, e := range s.Figures {
		if e.Link != "" && !have[e.Link] {
			return &SpecError{File: s.file, Entry: i, Err: fmt.Errorf("%s: no pair of this run has link class %s (it has %s)",
				e.Test, e.Link, joinClasses(slices.Sorted(maps.Keys(have))))}
		}
	}
	return nil
}

// pairClass is the link class of a pair of GPUs.
func pairClass(p results.Pair) LinkClass {
	switch {
	case !p.CanAccessPeer:
		return LinkNoP2P
	case p.NVLinks > 0 || p.LinkGBps > 0:
		return LinkNVLink
	}
	return LinkPCIe
}

// classOf is the link class of a figure of run.
func classOf(run *results.Run, f *results.Figure) LinkClass {
	switch {
	case f.Src == f.Dst:
		return LinkLocal
	case f.Src >= 0 && f.Dst >= 0:
		if p, ok := run.Topology.Pair(f.Src, f.Dst); ok {
			return pairClass(p)
		}
		return ""
	case f.Test.Info().NeedsPair:
		return LinkAll
	}
	return LinkHost
}

func (s *Spec) forRun(run *results.Run) (figureJudge, error) {
	if err := s.Fits(run); err != nil {
		return nil, err
	}
	matrix := run.MatrixSize()
	classes := run.Topology.PairIndex()
	class := func(f *results.Figure) LinkClass {
		if f.Src >= 0 && f.Dst >= 0 && f.Src != f.Dst {
			if p, ok := classes[[2]int{f.Src, f.Dst}]; ok {
				return pairClass(p)
			}
		}
		return classOf(run, f)
	}
	if err := s.unmatched(run, matrix, class); err != nil {
		return nil, err
	}
	return func(f *results.Figure) (results.FigureVerdict, bool) {
		var out results.FigureVerdict
		found := false
		for i := range s.Figures {
			e := &s.Figures[i]
			if !e.matches(f, matrix, class) {
				continue
			}
			b := bound{pass: e.limit(), fail: e.limit(), lower: e.Max != nil,
				basis: fmt.Sprintf("%s, figures[%d]: %s %s", s.Source().Name, i, e.limitName(), fmtValue(e.limit()))}
			v, _ := f.Value()
			fv := b.judge(f, v)
			if !found || fv.Status.Worse(out.Status) {
				out, found = fv, true
			}
		}
		return out, found
	}, nil
}

// matches reports whether the entry holds figure f (see Spec).
func (e *SpecEntry) matches(f *results.Figure, matrixSize uint64, class func(*results.Figure) LinkClass) bool {
	// Without a part, an entry holds the whole: figures of no part, or the
	// total of those that have parts.
	part := f.Part == e.Part || e.Part == "" && f.Part == results.PartTotal
	size := e.size
	if size == 0 && f.Test.Info().Matrix {
		size = matrixSize
	}
	if f.Test != e.Test || e.Direction != "" && f.Direction != e.Direction || !part || size != 0 && f.Size != size {
		return false
	}
	for k, v := range e.Params {
		// A key the figure lacks never matches, even an empty value: a typo
		// in a key then matches nothing and is refused, never all.
		if got, ok := f.Params[k]; !ok || got != v {
			return false
		}
	}
	return e.Link == "" || class(f) == e.Link
}

// unmatched is the *SpecError of the entries that match no figure of run:
// they would judge nothing, and a verdict over a part of a contract is not
// the contract's. A figure that failed counts as matched: it fails the run.
func (s *Spec) unmatched(run *results.Run, matrix uint64, class func(*results.Figure) LinkClass) error {
	var idle []string
	for i := range s.Figures {
		e := &s.Figures[i]
		found := false
		for j := range run.Figures {
			if e.matches(&run.Figures[j], matrix, class) {
				found = true
				break
			}
		}
		if !found {
			idle = append(idle, fmt.Sprintf("figures[%d] (%s)", i, e.describe()))
		}
	}
	if len(idle) == 0 {
		return nil
	}
	n := len(idle)
	if n > maxListed {
		idle = append(idle[:maxListed], fmt.Sprintf("and %d more", n-maxListed))
	}
	return &SpecError{File: s.file, Entry: -1, Err: fmt.Errorf("%d of its %d entries match no figure of this run, so they would judge nothing: %s; measure what they name (--tests, --size, --sizes) or remove them",
		n, len(s.Figures), strings.Join(idle, ", "))}
}

// describe writes an entry in a few words: its test and what it selects.
func (e *SpecEntry) describe() string {
	words := []string{string(e.Test)}
	for _, w := range []string{string(e.Direction), string(e.Part), string(e.Link), e.Size} {
		if w != "" {
			words = append(words, w)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Params)) {
		words = append(words, fmt.Sprintf("%s=%q", k, e.Params[k]))
	}
	return strings.Join(words, " ")
}
