package ingest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// nvbJSON is nvbandwidth's --json output (json_output.cpp): one object
// "nvbandwidth" with the versions, the devices and the testcases, each with
// its matrix of values as strings ("N/A" where there is none). A testcase
// with several matrices (the both-ways ones) has their rows one after the
// other in one bandwidth_matrix.
type nvbJSON struct {
	NVB *struct {
		Version   string            `json:"version"`
		Git       string            `json:"git_version"`
		CUDA      int               `json:"CUDA Runtime Version"` // what cuDriverGetVersion gave
		Driver    string            `json:"Driver Version"`
		Devices   []string          `json:"GPU Device list"`
		Testcases []nvbJSONTestcase `json:"testcases"`
		Error     string            `json:"error"`
		Warning   string            `json:"warning"`
	} `json:"nvbandwidth"`
}

// nvbJSONTestcase is one entry of the testcases.
type nvbJSONTestcase struct {
	Name   string              `json:"name"`
	Status string              `json:"status"`
	Error  string              `json:"error"`
	Matrix [][]json.RawMessage `json:"bandwidth_matrix"`
}

// nvbSmallBuffer starts nvbandwidth's warning that -b is below its default.
const nvbSmallBuffer = "NOTE: You have chosen a buffer size that is smaller than the default"

func decodeNVBandwidthJSON(in *input, opt Options) (*results.Run, error) {
	var doc nvbJSON
	if err := json.Unmarshal(in.data, &doc); err != nil {
		return nil, in.jsonError(err)
	}
	n := doc.NVB
	if n == nil {
		return nil, in.errorf(0, `no "nvbandwidth" object: not an nvbandwidth JSON output`)
	}
	meta := nvbMeta{version: n.Version, git: n.Git, cudaVersion: n.CUDA, driver: n.Driver,
		smallBuffer: strings.HasPrefix(n.Warning, nvbSmallBuffer)}
	if n.Error != "" {
		meta.errors = append(meta.errors, n.Error)
	}
	for i, d := range n.Devices {
		dev, host, err := nvbDevice(d)
		if err != nil || dev.Index != i {
			return nil, &Error{File: in.name, Field: fmt.Sprintf("nvbandwidth.GPU Device list[%d]", i), Msg: fmt.Sprintf("%q is not device %d's entry (\"%d: NAME (BUS): (HOST)\")", d, i, i)}
		}
		meta.devices = append(meta.devices, dev)
		meta.host = cmp.Or(meta.host, host)
	}
	var tcs []nvbTestcase
	for i, t := range n.Testcases {
		field := fmt.Sprintf("nvbandwidth.testcases[%d]", i)
		if t.Name == "" {
			return nil, &Error{File: in.name, Field: field, Msg: "a testcase without a name"}
		}
		field += " (" + t.Name + ")"
		tc := nvbTestcase{name: t.Name, where: in.fieldError(field)}
		switch {
		case t.Status == "Passed" || t.Status == "" && len(t.Matrix) > 0:
			m, err := nvbJSONMatrices(t.Name, t.Matrix, in, field)
			if err != nil {
				return nil, err
			}
			tc.matrices = m
		case t.Status == "Running" && laterStatus(n.Testcases[i+1:], t.Name):
			continue // an entry nvbandwidth adds again with the testcase's final status
		case t.Status == "Running":
			tc.status = "it did not finish"
		default:
			tc.status, tc.msg = t.Status, t.Error
		}
		tcs = append(tcs, tc)
	}
	return convertNVB(meta, tcs, opt, in)
}

// laterStatus reports whether a later entry gives the testcase's status.
func laterStatus(rest []nvbJSONTestcase, name string) bool {
	for _, t := range rest {
		if t.Name == name {
			return true
		}
	}
	return false
}

// nvbJSONMatrices reads a testcase's matrix rows, split into the matrices
// the testcase printed: a square matrix of n columns has n rows, so a
// device-to-device testcase with k·n rows printed k matrices.
func nvbJSONMatrices(name string, rows [][]json.RawMessage, in *input, field string) ([]nvbMatrix, error) {
	var all [][]*float64
	for r, row := range rows {
		var vals []*float64
		for c, raw := range row {
			v, err := nvbCell(raw)
			if err != nil {
				return nil, &Error{File: in.name, Field: fmt.Sprintf("%s.bandwidth_matrix[%d][%d]", field, r, c), Msg: err.Error()}
			}
			vals = append(vals, v)
		}
		all = append(all, vals)
	}
	k := 1
	if c, ok := nvbCaseOf(name); ok && c.cells.square() && len(all) > 0 && len(all[0]) > 0 && len(all)%len(all[0]) == 0 {
		k = len(all) / len(all[0])
	}
	per := len(all) / k
	out := make([]nvbMatrix, k)
	for i := range out {
		out[i] = nvbMatrix{rows: all[i*per : (i+1)*per], where: in.fieldError(field + ".bandwidth_matrix")}
	}
	return out, nil
}

// nvbCell reads a matrix value: a number as a string (or a number), nil for
// "N/A".
func nvbCell(raw json.RawMessage) (*float64, error) {
	text := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "N/A" {
			return nil, nil
		}
		text = s
	}
	return parseValue(text)
}

// parseValue reads a value of a table: a finite number, not negative.
func parseValue(s string) (*float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
		return nil, fmt.Errorf("%q is not a value (a number ≥ 0, or N/A)", s)
	}
	if v != 0 && v < 0x1p-1022 {
		return nil, fmt.Errorf("%q is a subnormal number: no measurement is that small", s)
	}
	return &v, nil
}

// nvbDeviceRE reads a device's entry: "0: NVIDIA H200 (00000000:06:00)",
// followed in JSON by ": (host)"; older text outputs have the name alone.
var nvbDeviceRE = regexp.MustCompile(`^(\d+): (.*?)(?: \(([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f.]+)\))?(?:: \((.*)\))?$`)

// nvbDevice reads a device's entry and the host it names.
func nvbDevice(s string) (results.Device, string, error) {
	m := nvbDeviceRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || m[2] == "" {
		return results.Device{}, "", fmt.Errorf("not a device entry")
	}
	i, err := strconv.Atoi(m[1])
	if err != nil {
		return results.Device{}, "", err
	}
	return results.Device{Index: i, Name: m[2], PCIBusID: m[3]}, m[4], nil
}

// jsonError locates an encoding/json error in the input.
func (in *input) jsonError(err error) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var offset int64
	msg := strings.TrimPrefix(err.Error(), "json: ")
	switch {
	case errors.As(err, &se):
		offset, msg = se.Offset, "malformed JSON: "+msg
	case errors.As(err, &te):
		offset = te.Offset
		got := te.Value
		if strings.HasPrefix(got, "number ") {
			got = "the number " + results.QuoteShort(strings.TrimPrefix(got, "number ")) + ", out of range,"
		} else if strings.HasPrefix(got, "a") || strings.HasPrefix(got, "o") {
			got = "an " + got
		} else {
			got = "a " + got
		}
		msg = fmt.Sprintf("%s is %s where nvbandwidth writes %s", cmp.Or(te.Field, "the input"), got, results.JSONKind(te.Type))
	default:
		return in.errorf(0, "%s", msg)
	}
	offset = min(offset, int64(len(in.data)))
	before := in.data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return &Error{File: in.name, Line: line, Col: col, Msg: msg}
}

// fieldError returns a function making errors about a JSON field.
func (in *input) fieldError(field string) func(format string, args ...any) *Error {
	return func(format string, args ...any) *Error {
		return &Error{File: in.name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}
