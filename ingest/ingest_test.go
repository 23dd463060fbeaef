package ingest_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/compare"
	"github.com/p2pbench/p2pbench/ingest"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
)

// TestCompareWithReference compares the nvbandwidth fixture (figures the
// 2× H200 gave nvbandwidth, hardware.md) with p2pbench's reference run of
// that machine: the tests both measure pair up — the SM copies too, by what
// they measure, each showing its kernel (nvbandwidth's against p2pbench's)
// — each with the imported value, no interval and no test, a change of a
// few tenths of a percent, and another tool's method, not gated.
func TestCompareWithReference(t *testing.T) {
	ref, err := results.Read("../testdata/reference/h200x2/all.json")
	if err != nil {
		t.Fatal(err)
	}
	imported := importFile(t, nvbJSONFixture, ingest.Options{})
	res, err := compare.Compare([]compare.Input{{Name: "all.json", Runs: []*results.Run{ref}}, {Name: "nvbandwidth.json", Runs: []*results.Run{imported}}}, compare.Options{Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var tests []results.Test
	for _, row := range res.Rows {
		if !slices.Contains(tests, row.Test) {
			tests = append(tests, row.Test)
		}
		base, other, ch := row.Cells[0], row.Cells[1], row.Changes[0]
		switch {
		case base.N < 2 || other.N != 1 || other.Spread != "?" || other.Lo != other.Center || other.Hi != other.Center:
			t.Errorf("%s: cells %+v, %+v", row.Key, base, other)
		case !ch.Valid || ch.Tested || ch.Significant || ch.Regression || ch.Improvement:
			t.Errorf("%s: change %+v, want a valid, untested change", row.Key, ch)
		case math.Abs(ch.Pct) > 1:
			t.Errorf("%s: %+.2f%% between nvbandwidth's figure and p2pbench's", row.Key, ch.Pct)
		case !row.MethodChanged || !strings.HasPrefix(ch.MethodChange, "another tool: p2pbench → nvbandwidth") || ch.Ungated == "" ||
			(row.Engine == results.EngineSM) != (row.Methods[1] == "variant=nvbandwidth"):
			t.Errorf("%s: methods %q, change %q, not gated %q", row.Key, row.Methods, ch.MethodChange, ch.Ungated)
		}
	}
	want := []results.Test{results.H2D, results.D2H, results.LocalCopy, results.CERead, results.CEWrite, results.CEBidir,
		results.SMRead, results.SMWrite, results.SMBidir, results.AllToOne, results.OneToAll}
	if !slices.Equal(tests, want) || len(res.Rows) != 42 {
		t.Errorf("compared %d figures of %v, want 42 of %v", len(res.Rows), tests, want)
	}
	var out strings.Builder
	if err := compare.WriteText(&out, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), ": not gated)") {
		t.Errorf("the table does not say the changes are not gated:\n%s", out.String())
	}
}

func TestDetect(t *testing.T) {
	for path, want := range map[string]ingest.Format{
		nvbJSONFixture:   ingest.NVBandwidthJSON,
		nvbTextFixture:   ingest.NVBandwidthText,
		sendrecvFixture:  ingest.NCCLTestsText,
		allReduceFixture: ingest.NCCLTestsText,
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := ingest.Detect(data); !ok || got != want {
			t.Errorf("%s: %s, %v", path, got, ok)
		}
	}
	for _, junk := range []string{"", "{}", `{"schema": 2}`, "hello\n"} {
		if f, ok := ingest.Detect([]byte(junk)); ok {
			t.Errorf("%q detected as %s", junk, f)
		}
	}
	if _, err := ingest.ParseFormat("nvbandwidth"); err == nil || !strings.Contains(err.Error(), "nvbandwidth-json") {
		t.Errorf("ParseFormat of an unknown name: %v", err)
	}
	if f, err := ingest.ParseFormat("auto"); f != "" || err != nil {
		t.Errorf("auto: %q, %v", f, err)
	}
	if len(ingest.Formats()) != 3 {
		t.Errorf("formats: %v", ingest.Formats())
	}
}

// TestMalformed checks that bad inputs give one-line errors that name the
// file and the line or field.
func TestMalformed(t *testing.T) {
	const nvbHead = "nvbandwidth Version: v0.8\n\nRunning device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
	for _, tc := range []struct {
		name, in string
		format   ingest.Format
		want     string
	}{
		{"empty.txt", "", "", "empty.txt: not an output"},
		{"p2pbench.json", `{"schema": 2, "figures": []}`, "", "p2pbench.json: already a p2pbench results file"},
		{"cut.json", `{"nvbandwidth": {"version": "v0.8", "testcases": [`, "", "cut.json:1:51: malformed JSON"},
		{"type.json", `{"nvbandwidth": {"version": 8}}`, ingest.NVBandwidthJSON, "type.json:1:30: nvbandwidth.version is a number where nvbandwidth writes a string"},
		{"other.json", `{"nvbandwidthx": 1}`, ingest.NVBandwidthJSON, `other.json: no "nvbandwidth" object`},
		{"cell.json", `{"nvbandwidth": {"testcases": [{"name": "device_local_copy", "status": "Passed", "bandwidth_matrix": [["fast"]]}]}}`, "",
			`cell.json: nvbandwidth.testcases[0] (device_local_copy).bandwidth_matrix[0][0]: "fast" is not a value`},
		{"neg.json", `{"nvbandwidth": {"testcases": [{"name": "device_local_copy", "status": "Passed", "bandwidth_matrix": [["-3"]]}]}}`, "", `"-3" is not a value`},
		{"shape.json", `{"nvbandwidth": {"testcases": [{"name": "device_to_device_memcpy_read_ce", "status": "Passed", "bandwidth_matrix": [["1", "2"]]}]}}`, "",
			"shape.json: nvbandwidth.testcases[0] (device_to_device_memcpy_read_ce).bandwidth_matrix: 1 rows of 2 values: device_to_device_memcpy_read_ce has a square matrix"},
		{"devs.json", `{"nvbandwidth": {"GPU Device list": ["0: A (0:1:2): (h)"], "testcases": [{"name": "device_local_copy", "status": "Passed", "bandwidth_matrix": [["1", "2"]]}]}}`, "",
			"2 columns, where the output lists 1 devices"},
		{"dev.json", `{"nvbandwidth": {"GPU Device list": ["zero"]}}`, "", `dev.json: nvbandwidth.GPU Device list[0]: "zero" is not device 0's entry`},
		{"noname.json", `{"nvbandwidth": {"testcases": [{"status": "Passed"}]}}`, "", "noname.json: nvbandwidth.testcases[0]: a testcase without a name"},
		{"cols.txt", nvbHead + "  0 2\n", "", "cols.txt:5: \"0 2\" is not a matrix's line of column numbers"},
		{"row.txt", nvbHead + "  0 1\n 0 N/A 1.5\n 1 1.5\n", "", "row.txt:7: row 1 has 1 values; the matrix has 2 columns"},
		{"value.txt", nvbHead + "  0 1\n 0 N/A 1,5\n", "", `value.txt:6: row 0, column 1: "1,5" is not a value`},
		{"order.txt", nvbHead + "  0 1\n 1 N/A 1.5\n", "", `order.txt:6: "1 N/A 1.5" is not row 0 of the matrix`},
		{"norows.txt", nvbHead + "  0 1\n\n", "", "norows.txt:6: a matrix without rows"},
		{"device.txt", "nvbandwidth Version: v0.8\nDevice 1: X\n", "", `device.txt:2: "Device 1: X" is not the line of device 0`},
		{"none.txt", "nvbandwidth Version: v0.8\n", "", "none.txt: no testcase"},
		{"header.nccl", "# Collective test starting: sendrecv_perf\n#       size         count      type   redop    root     time   algbw   busbw  #wrong\n", "",
			"header.nccl:2: a column line without nccl-tests' out-of-place and in-place groups"},
		{"short.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns + "8 2 float sum -1 9.8 0.00 0.00 0 9.75 0.00\n", "",
			"short.nccl:3: 6 values after size, count, type, redop and root, where the table's columns give 8"},
		{"nan.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns + "8 2 float sum -1 9.8 NaN 0.00 0 9.75 0.00 0.00 N/A\n", "",
			`nan.nccl:3: out-of-place algbw: "NaN" is not a value`},
		{"wrong.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns + "8 2 float sum -1 9.8 0 0.00 x 9.75 0.00 0.00 N/A\n", "",
			`wrong.nccl:3: out-of-place #wrong: "x" is not a value`},
		{"norows.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns, "", "norows.nccl: no table rows"},
		// A mangled row is refused with its line, never dropped without a
		// word (audit N12); input that a results file cannot hold is the
		// input's fault, not the importer's, and no Go type is named (N13).
		{"negative.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns + "-8 2 float sum -1 9.8 0.1 0.1 0 9.75 0.1 0.1 N/A\n", "",
			`negative.nccl:3: a table row whose size "-8" and count "2" are not both whole numbers`},
		{"huge.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns + "12345678901234567890123 2 float sum -1 9.8 0.1 0.1 0 9.75 0.1 0.1 N/A\n", "",
			`huge.nccl:3: a table row whose size "12345678901234567890123"`},
		{"type.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns + "8 2 fl\x01\xffat sum -1 9.8 0.1 0.1 0 9.75 0.1 0.1 N/A\n", "",
			`type.nccl:3: a table row whose data type "fl\x01\xffat" or reduction "sum" is not a word`},
		{"redop.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns + "8 2 float s\u202eum -1 9.8 0.1 0.1 0 9.75 0.1 0.1 N/A\n", "",
			`redop.nccl:3: a table row whose data type "float" or reduction "s\u202eum" is not a word`},
		{"root.nccl", "# Collective test starting: sendrecv_perf\n" + ncclColumns + "8 2 float sum r0 9.8 0.1 0.1 0 9.75 0.1 0.1 N/A\n", "",
			`root.nccl:3: a table row whose root "r0" is not a rank`},
		{"array.json", `{"nvbandwidth": []}`, "", "array.json:1:18: nvbandwidth is an array where nvbandwidth writes an object"},
		{"subnormal.json", `{"nvbandwidth": {"testcases": [{"name": "device_local_copy", "status": "Passed", "bandwidth_matrix": [["1e-310"]]}]}}`, "",
			`"1e-310" is a subnormal number: no measurement is that small`},
		{"driver.json", `{"nvbandwidth": {"Driver Version": "` + strings.Repeat("9", 100000) + `", "testcases": [{"name": "device_local_copy", "status": "Passed", "bandwidth_matrix": [["1"]]}]}}`, "",
			"driver.json: the input holds what a p2pbench results file cannot: run: environment.driver_release is 100000 bytes long"},
	} {
		_, err := ingest.Decode(tc.name, []byte(tc.in), ingest.Options{Format: tc.format})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") ||
			strings.Contains(err.Error(), "a bug of the importer") || strings.Contains(err.Error(), "struct {") || len(err.Error()) > 1000 {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.want)
		}
	}
	if _, err := ingest.Import("testdata/no-such-file", ingest.Options{}); err == nil || !strings.Contains(err.Error(), "no-such-file") {
		t.Errorf("a missing file: %v", err)
	}
}

const ncclColumns = "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"

// Each input's results file is named for it in the directory; two inputs of
// one name, and -o for several inputs, are refused as options, naming the
// file both would be written to; an output that is an input is refused.
func TestOutputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	outs, err := ingest.Outputs([]string{"a/nvb.txt", "b/nccl.log", "c/run"}, "", out)
	if err != nil || !slices.Equal(outs, []string{out + "/nvb.p2pbench.json", out + "/nccl.p2pbench.json", out + "/run.p2pbench.json"}) {
		t.Errorf("%q, %v", outs, err)
	}
	var ie *ingest.Error
	if _, err := ingest.Outputs([]string{"a/x.txt", "b/x.log"}, "", out); !errors.As(err, &ie) || !ie.Option || !strings.Contains(err.Error(), out+"/x.p2pbench.json") {
		t.Errorf("two inputs of one name: %v", err)
	}
	if _, err := ingest.Outputs([]string{"a.txt", "b.txt"}, "x.json", out); !errors.As(err, &ie) || !ie.Option || err.Error() != "-o: names one results file, but there are 2 inputs; use --dir" {
		t.Errorf("-o for two inputs: %v", err)
	}
	in := filepath.Join(dir, "nvb.txt")
	os.WriteFile(in, []byte("x"), 0o644)
	if _, err := ingest.Outputs([]string{in}, in, "."); !errors.Is(err, outfile.ErrSameAsIn) {
		t.Errorf("-o naming the input: %v", err)
	}
	if outs, err := ingest.Outputs([]string{in}, filepath.Join(dir, "r.json"), "."); err != nil || len(outs) != 1 {
		t.Errorf("-o for one input: %q, %v", outs, err)
	}
}

// A collective is checked before any input is read.
func TestValidateCollective(t *testing.T) {
	for _, c := range append(results.NCCLCollectives(), "") {
		if err := (ingest.Options{Collective: c}).Validate(); err != nil {
			t.Errorf("%q: %v", c, err)
		}
	}
	if err := (ingest.Options{Collective: "bogus"}).Validate(); err == nil || !strings.HasPrefix(err.Error(), `unknown collective "bogus"; the collectives are all_reduce`) {
		t.Errorf("bogus: %v", err)
	}
}
