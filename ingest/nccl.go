package ingest

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// nccl-tests' text output (src/util.cu, src/common.cu): comment lines ("#
// ...") for the version, the program, its settings, one line per rank and
// the column headers, then one line per size and data type (and reduction
// and root where several run): size, count, type, redop, root, then for the
// out-of-place and the in-place operation its time (µs), algbw and busbw
// (GB/s) and #wrong (N/A without checking), each group followed by four
// per-iteration columns with -I and the line by a timestamp with -S. A
// table ends with the count of out-of-bounds values and the average bus
// bandwidth. Lines without "#" that are no table rows (NCCL's own logs) are
// skipped.

// ncclHeader matches the column line of a table.
var ncclHeader = regexp.MustCompile(`(?m)^#\s+size\s+count\s+type\s+redop\s+root\s+(?:cpu)?time\s+algbw\s+busbw`)

// ncclProgram matches a program of nccl-tests in a line: "all_reduce_perf",
// "./build/sendrecv_perf_mpi".
var ncclProgram = regexp.MustCompile(`([a-z_]+)_perf\b`)

// ncclRank matches a rank's line: "#  Rank  0 Group  0 Pid  1234 on host
// device  0 [0000:18:00] NVIDIA H100" (older: no Group, "[0x18]").
var ncclRank = regexp.MustCompile(`^#\s+Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$`)

// ncclDate matches the timestamp -S adds to a row.
var ncclDate = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)

// ncclWord is a data type or reduction as nccl-tests prints it.
var ncclWord = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// ncclTable is the state of reading one table and its header.
type ncclTable struct {
	collective  string
	line        int    // where its column line is, 0 before it
	group       int    // columns per operation: 4, or 8 with -I
	cputime     bool   // -C: times are CPU times
	validation  string // the settings line's "validation: N", "" when unknown
	ranks       []ncclRankLine
	threadsGPUs int  // nThread × nGpus from the settings line
	ended       bool // its summary was read
	// skipped counts the lines inside the table that were no rows, the
	// first of them at firstSkipped.
	skipped          int
	firstSkipped     int
	firstSkippedText string
}

// ncclRankLine is what a rank's line says.
type ncclRankLine struct {
	host, bus, name string
	device          int
}

// nccl is the state of reading an output.
type nccl struct {
	in      *input
	opt     Options
	b       *builder
	table   ncclTable
	program string // the collective the output last named, "" before
	rows    int
	// zeroNoted is set once the note on 0-byte rows is made.
	zeroNoted bool
}

func decodeNCCLTests(in *input, opt Options) (*results.Run, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	n := &nccl{in: in, opt: opt, b: newBuilder("nccl-tests")}
	lines := strings.Split(string(in.data), "\n")
	for i, line := range lines {
		if err := n.line(i+1, strings.TrimRight(line, "\r")); err != nil {
			return nil, err
		}
	}
	if n.rows == 0 {
		return nil, in.errorf(0, "no table rows: not an nccl-tests output, or one that measured nothing")
	}
	n.endTable()
	if n.table.line > 0 && !n.table.ended {
		n.b.run.Complete = false
		n.b.run.Stopped = "the output ends before nccl-tests' summary of its last table (\"# Avg bus bandwidth\")"
	}
	n.b.unknown("the date, the topology and the GPUs' state")
	n.b.run.Verify = n.table.validation != "0"
	return n.b.finish("nccl-tests"), nil
}

// line reads line number no.
func (n *nccl) line(no int, line string) error {
	s := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(s, "#"):
		return n.comment(no, s)
	case n.table.line > 0 && !n.table.ended && startsWithTwoInts(s):
		return n.row(no, s)
	case n.table.line > 0 && !n.table.ended && ncclNumber.MatchString(s):
		f := strings.Fields(s)
		return n.in.errorf(no, "a table row whose size %s and count %s are not both whole numbers of at most 64 bits", results.QuoteShort(f[0]), results.QuoteShort(field(f, 1)))
	case n.table.line > 0 && !n.table.ended && s != "":
		// NCCL's own log lines may fall inside a table; they are skipped,
		// and counted, so that a row mangled past recognition is not lost
		// without a word.
		if n.table.skipped == 0 {
			n.table.firstSkipped, n.table.firstSkippedText = no, results.QuoteShort(s)
		}
		n.table.skipped++
	case n.program == "" && ncclProgram.MatchString(s):
		// A command line echoed into the log names the program.
		if n.setProgram(ncclProgram.FindStringSubmatch(s)[1]) && n.b.run.Tool.Command == nil {
			n.b.run.Tool.Command = strings.Fields(strings.TrimLeft(s, "$+> "))
		}
	}
	return nil
}

// comment reads a "#" line.
func (n *nccl) comment(no int, s string) error {
	body := strings.TrimSpace(strings.TrimPrefix(s, "#"))
	switch {
	case strings.HasPrefix(body, "nccl-tests version "):
		f := strings.Fields(body)
		n.b.run.Tool.Version = field(f, 2)
		if len(f) > 3 {
			n.b.run.Environment.Notes = appendOnce(n.b.run.Environment.Notes, "NCCL version codes: "+strings.Join(f[3:], ", "))
		}
	case strings.HasPrefix(body, "Collective test starting:"):
		n.newTable(ncclTable{})
		n.program = ""
		if m := ncclProgram.FindStringSubmatch(body); m != nil && n.setProgram(m[1]) && n.b.run.Tool.Command == nil {
			n.b.run.Tool.Command = []string{m[0]}
		}
	case strings.HasPrefix(body, "nThread "):
		n.settings(body)
	case ncclRank.MatchString(s):
		m := ncclRank.FindStringSubmatch(s)
		dev, _ := strconv.Atoi(m[2])
		n.table.ranks = append(n.table.ranks, ncclRankLine{host: m[1], device: dev, bus: m[3], name: strings.TrimSpace(m[4])})
	case ncclHeader.MatchString(s):
		return n.header(no, body)
	case strings.HasPrefix(body, "Out of bounds values") && strings.Contains(body, "FAILED"),
		strings.HasPrefix(body, "error:"):
		n.b.note("nccl-tests reported: %s", body)
	case strings.HasPrefix(body, "Avg bus bandwidth"):
		n.table.ended = true
	}
	return nil
}

// settings reads the line of the program's settings.
func (n *nccl) settings(body string) {
	f := strings.Fields(body)
	var threads, gpus int
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "nThread":
			threads, _ = strconv.Atoi(f[i+1])
		case "nGpus":
			gpus, _ = strconv.Atoi(f[i+1])
		case "validation:":
			n.table.validation = f[i+1]
		}
	}
	if n.table.line > 0 { // a new run in the same log
		n.newTable(ncclTable{validation: n.table.validation})
	}
	n.table.threadsGPUs = threads * gpus
	n.b.run.Notes = appendOnce(n.b.run.Notes, "nccl-tests settings: "+body)
}

// header reads a table's column line.
func (n *nccl) header(no int, body string) error {
	cols := strings.Fields(body)
	var starts []int
	for i, c := range cols {
		if c == "time" || c == "cputime" {
			starts = append(starts, i)
		}
	}
	if len(starts) != 2 || starts[0] != 5 || starts[1]-starts[0] < 4 {
		return n.in.errorf(no, "a column line without nccl-tests' out-of-place and in-place groups (time algbw busbw #wrong)")
	}
	if n.program != "" && n.opt.Collective != "" && n.program != n.opt.Collective {
		return n.in.optionError(no, "the output names its program, %s_perf, but the collective given is %s", n.program, n.opt.Collective)
	}
	prev := n.table
	n.newTable(ncclTable{collective: n.program, line: no, group: starts[1] - starts[0], cputime: cols[5] == "cputime",
		validation: prev.validation, ranks: prev.ranks, threadsGPUs: prev.threadsGPUs})
	if n.table.collective == "" {
		c, err := n.guessCollective(no)
		if err != nil {
			return err
		}
		n.table.collective = c
	}
	n.describeRanks()
	return nil
}

// newTable starts reading another table (or run) of the output.
func (n *nccl) newTable(t ncclTable) {
	n.endTable()
	if n.table.line > 0 && !n.table.ended {
		n.b.note("the %s table of line %d ends without nccl-tests' summary", n.table.collective, n.table.line)
	}
	n.table = t
}

// endTable notes the lines of the table that were skipped.
func (n *nccl) endTable() {
	if t := &n.table; t.skipped > 0 {
		n.b.note("%d line%s inside the %s table of line %d %s no table row and %s skipped (the first, line %d: %s)",
			t.skipped, units.Plural(t.skipped, "", "s"), t.collective, t.line, units.Plural(t.skipped, "is", "are"), units.Plural(t.skipped, "was", "were"), t.firstSkipped, t.firstSkippedText)
		t.skipped = 0
	}
}

// ncclNumber matches a line that starts as a number does: a row, or one
// mangled (a negative size, a size of 23 digits).
var ncclNumber = regexp.MustCompile(`^[-+]?[0-9]`)

// setProgram takes the collective of a program's name; it reports whether
// the name is one of nccl-tests' programs.
func (n *nccl) setProgram(name string) bool {
	if _, _, ok := results.NCCLTests(name); !ok {
		return false
	}
	n.program = name
	return true
}

// guessCollective is the collective of a table whose output does not name
// its program: the option's, else the one the file's name contains.
func (n *nccl) guessCollective(no int) (string, error) {
	if n.opt.Collective != "" {
		return n.opt.Collective, nil
	}
	base := strings.ToLower(filepath.Base(n.in.name))
	best := ""
	for _, c := range results.NCCLCollectives() {
		if strings.Contains(base, c) && len(c) > len(best) {
			best = c
		}
	}
	if best == "" {
		return "", n.in.errorf(no, "which collective is this table of? The output names no program (\"# Collective test starting: X_perf\" or a command line) and neither does the file's name; give the collective: one of %s",
			strings.Join(results.NCCLCollectives(), ", "))
	}
	n.b.note("collective %s taken from the file's name", best)
	return best, nil
}

// describeRanks records the ranks of the table about to be read: the host
// and, on one host, its devices.
func (n *nccl) describeRanks() {
	ranks := n.table.ranks
	var hosts []string
	for _, r := range ranks {
		if !slices.Contains(hosts, r.host) {
			hosts = append(hosts, r.host)
		}
	}
	n.b.run.Host = strings.Join(hosts, ", ")
	if len(hosts) == 1 && len(n.b.run.Environment.Devices) == 0 {
		for _, r := range ranks {
			if !slices.ContainsFunc(n.b.run.Environment.Devices, func(d results.Device) bool { return d.Index == r.device }) {
				n.b.run.Environment.Devices = append(n.b.run.Environment.Devices, results.Device{Index: r.device, Name: r.name, PCIBusID: r.bus})
			}
		}
	}
	if len(hosts) > 1 {
		n.b.run.Notes = appendOnce(n.b.run.Notes, fmt.Sprintf("%d ranks on %d hosts", len(ranks), len(hosts)))
	}
}

// row reads one line of a table.
func (n *nccl) row(no int, s string) error {
	f := strings.Fields(s)
	size, _ := strconv.ParseUint(f[0], 10, 64)
	typ := field(f, 2)
	redop, root, rest := "", "", []string(nil)
	if _, err := strconv.Atoi(field(f, 3)); err == nil {
		root, rest = f[3], f[4:] // an operation without a reduction prints none
	} else if len(f) > 4 {
		redop, root, rest = f[3], f[4], f[5:]
	}
	if k := len(rest); k >= 2 && ncclDate.MatchString(rest[k-2]+" "+rest[k-1]) {
		rest = rest[:k-2] // -S: a timestamp ends the line
	}
	g := n.table.group
	var groups [][]string
	switch len(rest) {
	case 2 * g: // out-of-place, in-place
		groups = [][]string{rest[:g], rest[g:]}
	case g: // the in-place operation alone (a trace replay)
		groups = [][]string{nil, rest}
	default:
		return n.in.errorf(no, "%d values after size, count, type, redop and root, where the table's columns give %d (or %d for the in-place operation alone)", len(rest), 2*g, g)
	}
	if typ == "" {
		return n.in.errorf(no, "a row without its data type")
	}
	// nccl-tests names types and reductions in words (float, bfloat16,
	// f8e4m3; sum, premulsum) and roots by rank: anything else is a mangled
	// row, which would otherwise become a figure's params.
	if !ncclWord.MatchString(typ) || redop != "" && !ncclWord.MatchString(redop) {
		return n.in.errorf(no, "a table row whose data type %q or reduction %q is not a word of letters and digits, as nccl-tests names them", typ, redop)
	}
	if _, err := strconv.Atoi(root); root != "" && err != nil {
		return n.in.errorf(no, "a table row whose root %q is not a rank", root)
	}
	params := map[string]string{"type": typ}
	if redop != "" && redop != "none" {
		params["redop"] = redop
	}
	if root != "-1" {
		params["root"] = root
	}
	if len(n.table.ranks) > 0 {
		params["ranks"] = strconv.Itoa(len(n.table.ranks))
	} else if n.table.threadsGPUs > 0 {
		params["ranks"] = strconv.Itoa(n.table.threadsGPUs)
	}
	if n.table.cputime {
		params["cputime"] = "true"
	}
	for i, grp := range groups {
		if grp != nil {
			if err := n.operation(no, size, params, i == 1, grp); err != nil {
				return err
			}
		}
	}
	n.rows++
	return nil
}

// operation adds the figures of one operation of a row: time, algbw,
// busbw, #wrong.
func (n *nccl) operation(no int, size uint64, params map[string]string, inPlace bool, cols []string) error {
	bwTest, timeTest, _ := results.NCCLTests(n.table.collective)
	place := "out-of-place"
	if inPlace {
		place = "in-place"
	}
	var vals [3]float64
	for i, name := range []string{"time", "algbw", "busbw"} {
		v, err := parseValue(cols[i])
		if err != nil {
			return n.in.errorf(no, "%s %s: %v", place, name, err)
		}
		vals[i] = *v
	}
	verify, detail := results.VerifyNA, ""
	switch wrong := cols[3]; {
	case wrong == "N/A" && n.table.validation == "0":
		verify = results.VerifySkipped
	case wrong == "N/A":
	default:
		v, err := parseValue(wrong)
		if err != nil {
			return n.in.errorf(no, "%s #wrong: %v", place, err)
		}
		verify = results.VerifyPassed
		if *v > 0 {
			verify, detail = results.VerifyFailed, "nccl-tests counted "+wrong+" wrong elements"
		}
	}
	for i, test := range []results.Test{timeTest, bwTest, bwTest} {
		if i > 0 && size == 0 {
			// A 0-byte row (nccl-tests run with -b 0) moves no bytes: its
			// time is a figure, its bandwidths (0 by definition) are none.
			if !n.zeroNoted {
				n.zeroNoted = true
				n.b.note("0-byte rows (line %d, the first): their times are kept; their bandwidths, 0 GB/s by definition, are no figures and are left out", no)
			}
			continue
		}
		f := results.Figure{Test: test, Engine: results.EngineNCCL, Src: results.HostDevice, Dst: results.HostDevice, Size: size,
			Unit: results.UnitGBps, Params: maps.Clone(params), Verify: verify, VerifyDetail: detail}
		f.Params[results.ParamNCCLInPlace] = strconv.FormatBool(inPlace)
		v := vals[i]
		switch i {
		case 0:
			f.Unit, v = results.UnitNs, v*1000 // µs
		case 1:
			f.Params[results.ParamNCCLBandwidth] = results.NCCLAlgBW
		case 2:
			f.Params[results.ParamNCCLBandwidth] = results.NCCLBusBW
		}
		n.b.add(f, v)
	}
	return nil
}

// startsWithTwoInts reports whether a line starts with two integers, as a
// table row does (size and count).
func startsWithTwoInts(s string) bool {
	f := strings.Fields(s)
	if len(f) < 2 {
		return false
	}
	_, e1 := strconv.ParseUint(f[0], 10, 64)
	_, e2 := strconv.ParseUint(f[1], 10, 64)
	return e1 == nil && e2 == nil
}

// field is f[i], or "" past its end.
func field(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// appendOnce appends s unless list has it.
func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
