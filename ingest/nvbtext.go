package ingest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// nvbandwidth's plain-text output (output.cpp): "key: value" header lines,
// the host name and "Device N: ..." lines, then per testcase a "Running
// NAME." line, its matrices (a description ending in its unit, a line of
// column numbers, one line per row: its number and values, N/A where there
// is none) each followed by "SUM KEY VALUE", or a status line ("Waived:",
// "Error: ..."). Verbose outputs add sample lines, which are skipped.

// nvbRunning matches a testcase's first line.
var nvbRunning = regexp.MustCompile(`(?m)^Running ([a-z0-9_]+)\.\s*$`)

// nvbStatus matches the line of a testcase that gave no results.
var nvbStatus = regexp.MustCompile(`^(Waived|Waiving|Error|ERROR)\b:? ?(.*)$`)

// nvbText is the state of reading a text output.
type nvbText struct {
	in    *input
	lines []string
	meta  nvbMeta
	tcs   []nvbTestcase
}

func decodeNVBandwidthText(in *input, opt Options) (*results.Run, error) {
	t := &nvbText{in: in, lines: strings.Split(string(in.data), "\n")}
	for i := range t.lines {
		t.lines[i] = strings.TrimRight(t.lines[i], "\r")
	}
	for i := 0; i < len(t.lines); i++ {
		next, err := t.line(i)
		if err != nil {
			return nil, err
		}
		i = next
	}
	if len(t.tcs) == 0 {
		return nil, in.errorf(0, "no testcase (\"Running NAME.\" line): not an nvbandwidth output, or one that ran nothing")
	}
	stopped := ""
	switch last := &t.tcs[len(t.tcs)-1]; {
	case last.status == "" && len(last.matrices) == 0:
		last.status = "it did not finish"
		stopped = "the output ends during testcase " + last.name
	case last.status == nvbCrashed:
		stopped = "nvbandwidth stopped during testcase " + last.name + ": " + last.msg
	}
	run, err := convertNVB(t.meta, t.tcs, opt, in)
	if err != nil {
		return nil, err
	}
	if stopped != "" {
		run.Complete, run.Stopped = false, stopped
	}
	return run, nil
}

// nvbCrashed is the status of a testcase during which nvbandwidth printed
// a fatal error.
const nvbCrashed = "it stopped"

// line reads line i and returns the last line it used.
func (t *nvbText) line(i int) (int, error) {
	s := strings.TrimSpace(t.lines[i])
	key, value, _ := strings.Cut(s, ": ")
	cur := t.current()
	switch {
	case key == "nvbandwidth Version":
		t.meta.version = value
	case key == "Built from Git version":
		t.meta.git = value
	case key == "CUDA Driver Version":
		t.meta.cudaVersion, _ = strconv.Atoi(value)
	case key == "CUDA Runtime Version": // before v0.5 the runtime's, since the driver's
		t.meta.runtime, _ = strconv.Atoi(value)
	case key == "Driver Version":
		t.meta.driver = value
	case strings.HasPrefix(s, "Device ") && cur == nil:
		return i, t.device(i)
	case strings.HasPrefix(s, nvbSmallBuffer):
		t.meta.smallBuffer = true
	case nvbRunning.MatchString(s):
		name := nvbRunning.FindStringSubmatch(s)[1]
		t.tcs = append(t.tcs, nvbTestcase{name: name, where: t.lineError(i + 1)})
	case nvbStatus.MatchString(s):
		// A status names no testcase: it is the pending one's, else a
		// testcase's that printed no "Running" line (one waived or not found).
		if m := nvbStatus.FindStringSubmatch(s); cur != nil && cur.status == "" && len(cur.matrices) == 0 {
			cur.status, cur.msg = m[1], m[2]
		} else {
			t.meta.errors = append(t.meta.errors, s)
		}
	case strings.HasPrefix(s, "[CUDA_ERROR_") || strings.HasPrefix(s, "ASSERT in expression") || strings.HasPrefix(s, "NVML_ERROR"):
		t.meta.errors = append(t.meta.errors, s)
		if cur != nil && cur.status == "" && len(cur.matrices) == 0 {
			cur.status, cur.msg = nvbCrashed, s
		}
	case cur != nil && cur.status == "" && (strings.HasSuffix(s, "(GB/s)") || strings.HasSuffix(s, "(ns)")):
		return t.matrix(i + 1)
	}
	return i, nil
}

// current is the testcase being read, nil before the first.
func (t *nvbText) current() *nvbTestcase {
	if len(t.tcs) == 0 {
		return nil
	}
	return &t.tcs[len(t.tcs)-1]
}

// device reads a "Device N: NAME (BUS)" line; the line before the first
// names the host (v0.7 and later).
func (t *nvbText) device(i int) error {
	dev, _, err := nvbDevice(strings.TrimPrefix(strings.TrimSpace(t.lines[i]), "Device "))
	if err != nil || dev.Index != len(t.meta.devices) {
		return t.in.errorf(i+1, "%q is not the line of device %d (\"Device %d: NAME (BUS)\")", strings.TrimSpace(t.lines[i]), len(t.meta.devices), len(t.meta.devices))
	}
	if dev.Index == 0 && i > 0 {
		prev := strings.TrimSpace(t.lines[i-1])
		if prev != "" && !strings.Contains(prev, ": ") && !strings.ContainsAny(prev, " \t") {
			t.meta.host = prev
		}
	}
	t.meta.devices = append(t.meta.devices, dev)
	return nil
}

// matrix reads a matrix whose column line is line i (0-based), and the
// SUM line after it; it returns the last line it used.
func (t *nvbText) matrix(i int) (int, error) {
	if i >= len(t.lines) {
		return i, t.in.errorf(i, "the output ends after a matrix's description")
	}
	cols := strings.Fields(t.lines[i])
	for c, f := range cols {
		if n, err := strconv.Atoi(f); err != nil || n != c {
			return i, t.in.errorf(i+1, "%q is not a matrix's line of column numbers 0 1 2 ...", strings.TrimSpace(t.lines[i]))
		}
	}
	if len(cols) == 0 {
		return i, t.in.errorf(i+1, "a matrix without its line of column numbers")
	}
	m := nvbMatrix{where: t.lineError(i + 1)}
	j := i + 1
	for ; j < len(t.lines); j++ {
		fields := strings.Fields(t.lines[j])
		if len(fields) == 0 {
			break
		}
		if n, err := strconv.Atoi(fields[0]); err != nil || n != len(m.rows) {
			return j, t.in.errorf(j+1, "%q is not row %d of the matrix", strings.TrimSpace(t.lines[j]), len(m.rows))
		}
		if len(fields) != len(cols)+1 {
			return j, t.in.errorf(j+1, "row %d has %d values; the matrix has %d columns", len(m.rows), len(fields)-1, len(cols))
		}
		row := make([]*float64, len(cols))
		for c, f := range fields[1:] {
			if f == "N/A" {
				continue
			}
			v, err := parseValue(f)
			if err != nil {
				return j, t.in.errorf(j+1, "row %d, column %d: %v", len(m.rows), c, err)
			}
			row[c] = v
		}
		m.rows = append(m.rows, row)
	}
	if len(m.rows) == 0 {
		return j, t.in.errorf(j+1, "a matrix without rows")
	}
	cur := t.current()
	cur.matrices = append(cur.matrices, m)
	return j, nil
}

// lineError returns a function making errors about a line (1-based).
func (t *nvbText) lineError(line int) func(format string, args ...any) *Error {
	return func(format string, args ...any) *Error { return t.in.errorf(line, format, args...) }
}
