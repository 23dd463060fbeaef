package ingest_test

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/ingest"
	"github.com/p2pbench/p2pbench/results"
)

const (
	nvbJSONFixture = "testdata/nvbandwidth-v0.8-h200x2.json"
	nvbTextFixture = "testdata/nvbandwidth-v0.8-h200x2.txt"
)

// importFile imports a file and checks that the run survives a round trip
// through the results file format.
func importFile(t *testing.T, path string, opt ingest.Options) *results.Run {
	t.Helper()
	run, err := ingest.Import(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := run.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := results.Decode(&buf)
	if err != nil {
		t.Fatalf("the imported run does not read back: %v", err)
	}
	if len(back.Figures) != len(run.Figures) || back.Imported == nil || back.Imported.SHA256 != run.Imported.SHA256 {
		t.Fatalf("the run changed on its way through a file")
	}
	return back
}

// figure finds the figure of a key's fields; it fails the test without one.
func figure(t *testing.T, run *results.Run, test results.Test, engine results.Engine, dir results.Direction, part results.Part, src, dst int) results.Figure {
	t.Helper()
	for _, f := range run.Figures {
		if f.Test == test && f.Engine == engine && f.Direction == dir && f.Part == part && f.Src == src && f.Dst == dst {
			return f
		}
	}
	t.Fatalf("no figure %s %s %s %s %d→%d", test, engine, dir, part, src, dst)
	return results.Figure{}
}

func TestNVBandwidthFixtures(t *testing.T) {
	nvb := results.SMCopyEngine("nvbandwidth")
	for _, tc := range []struct {
		path   string
		format ingest.Format
		tol    float64 // the text prints two decimals
	}{
		{nvbJSONFixture, ingest.NVBandwidthJSON, 1e-9},
		{nvbTextFixture, ingest.NVBandwidthText, 0.005},
	} {
		t.Run(string(tc.format), func(t *testing.T) {
			run := importFile(t, tc.path, ingest.Options{Importer: "p2pbench test"})
			im := run.Imported
			if im.Format != string(tc.format) || im.File != tc.path[len("testdata/"):] || len(im.SHA256) != 64 || im.Importer != "p2pbench test" {
				t.Errorf("imported = %+v", im)
			}
			if run.Simulated || run.Tool.Name != "nvbandwidth" || run.Tool.Version != "v0.8" || run.Host != "vm" ||
				run.Environment.CUDAVersion != "13.0" || run.Environment.DriverRelease != "580.159.04" || len(run.Environment.Devices) != 2 {
				t.Errorf("run = %+v %+v", run.Tool, run.Environment)
			}
			if !run.Complete || !strings.Contains(strings.Join(im.Unknown, "\n"), "no significance test") {
				t.Errorf("complete %v, unknown %q", run.Complete, im.Unknown)
			}
			for _, want := range []struct {
				test     results.Test
				engine   results.Engine
				dir      results.Direction
				part     results.Part
				src, dst int
				value    float64
			}{
				// nvbandwidth's read matrix has the destination as row:
				// its cell (0, 1) is the copy 1 → 0.
				{results.CERead, results.EngineCopy, results.DirRead, "", 1, 0, 393.812},
				{results.CEWrite, results.EngineCopy, results.DirWrite, "", 0, 1, 396.512},
				{results.CEBidir, results.EngineCopy, results.DirRead, results.PartForward, 1, 0, 389.351},
				{results.CEBidir, results.EngineCopy, results.DirRead, results.PartReverse, 1, 0, 389.372},
				{results.CEBidir, results.EngineCopy, results.DirWrite, results.PartTotal, 0, 1, 783.625},
				{results.H2D, results.EngineCopy, "", "", -1, 1, 55.4198},
				{results.SMD2H, nvb, "", "", 0, -1, 52.6033},
				{results.SMRead, nvb, results.DirRead, "", 0, 1, 376.182},
				{results.SMBidir, nvb, results.DirWrite, results.PartTotal, 1, 0, 735.001},
				{results.AllToOne, results.EngineCopy, results.DirWrite, results.PartTotal, -1, 0, 396.503},
				{results.OneToAll, results.EngineCopy, results.DirRead, results.PartTotal, 1, -1, 393.779},
				{results.AllToOne, results.EngineCopy, results.DirRead, results.PartTotal, -1, 1, 393.812},
				{results.LocalCopy, results.EngineCopy, "", "", 1, 1, 2102.87},
				{results.LatHostChase, results.EngineSM, "", "", -1, 0, 1189.62},
				{results.LatChase, results.EngineSM, "", "", 0, 1, 741.952},
				{results.HostToAll, results.EngineCopy, "", results.PartPair, -1, 0, 55.4103},
				// Both ways with the host: the device → host copy is the
				// reverse part, filed under host → device.
				{results.HostBidir, results.EngineCopy, "", results.PartForward, -1, 0, 48.9123},
				{results.HostBidir, results.EngineCopy, "", results.PartReverse, -1, 0, 49.1203},
				{results.HostAllBidir, results.EngineCopy, "", results.PartReverse, -1, 0, 48.7034},
				{results.SMH2D, nvb, "", "", -1, 0, 51.2104},
				{results.SMAllToOne, nvb, results.DirWrite, results.PartTotal, -1, 0, 372.103},
			} {
				f := figure(t, run, want.test, want.engine, want.dir, want.part, want.src, want.dst)
				if v, ok := f.Value(); !ok || math.Abs(v-want.value) > tc.tol || f.Stats.N != 1 || len(f.Samples) != 0 || f.Verify != results.VerifyNA {
					t.Errorf("%s: %v (%v), stats %+v, %d samples, verify %s; want %v", f.Key(), v, ok, f.Stats, len(f.Samples), f.Verify, want.value)
				}
				wantSize := uint64(512 << 20)
				if want.test == results.LatChase || want.test == results.LatHostChase {
					wantSize = 2 << 20
				}
				if f.Size != wantSize {
					t.Errorf("%s: size %d", f.Key(), f.Size)
				}
			}
			f := figure(t, run, results.AllToOne, results.EngineCopy, results.DirWrite, results.PartTotal, -1, 0)
			if f.Params["pairs"] != "1" {
				t.Errorf("all_to_one's pairs = %q", f.Params["pairs"])
			}
			if info := run.Info(results.CERead); info.Title != results.CERead.Title() || !strings.Contains(info.Convention, "nvbandwidth device_to_device_memcpy_read_ce") {
				t.Errorf("ce_read in the run's catalogue: %+v", info)
			}
			if info := run.Info("nvbandwidth_all_to_one_read_sm"); info.Unit != results.UnitGBps || info.Title == "" || info.Convention == "" {
				t.Errorf("an unmapped testcase's entry: %+v", info)
			}
		})
	}
}

// TestNVBandwidthJSONAndTextAgree checks that both outputs of one run give
// the same figures.
func TestNVBandwidthJSONAndTextAgree(t *testing.T) {
	fromJSON := importFile(t, nvbJSONFixture, ingest.Options{})
	fromText := importFile(t, nvbTextFixture, ingest.Options{})
	if len(fromJSON.Figures) != len(fromText.Figures) || len(fromJSON.Figures) != 86 {
		t.Fatalf("%d figures from JSON, %d from text, want 86", len(fromJSON.Figures), len(fromText.Figures))
	}
	for i, f := range fromJSON.Figures {
		g := fromText.Figures[i]
		if f.Key() != g.Key() || math.Abs(f.Stats.Median-g.Stats.Median) > 0.005 {
			t.Errorf("figure %d: %s %v from JSON, %s %v from text", i, f.Key(), f.Stats.Median, g.Key(), g.Stats.Median)
		}
	}
}

// TestNVBandwidthVersions checks what depends on the version: the buffer
// size, the single matrix of the both-ways testcases before v0.6, and the
// device latency testcase before v0.8.
func TestNVBandwidthVersions(t *testing.T) {
	old := `nvbandwidth Version: v0.5
Built from Git version: 

CUDA Runtime Version: 12040
CUDA Driver Version: 12040
Driver Version: 550.54.15

Device 0: NVIDIA H100 80GB HBM3
Device 1: NVIDIA H100 80GB HBM3

Running device_to_device_bidirectional_memcpy_read_ce.
memcpy CE GPU(row) <-> GPU(column) bandwidth (GB/s)
          0         1
0       N/A    365.12
1    364.98       N/A

SUM device_to_device_bidirectional_memcpy_read_ce 730.10

Running device_to_device_bidirectional_memcpy_read_sm.
memcpy SM GPU(row) <-> GPU(column) bandwidth (GB/s)
          0         1
0       N/A    640.02
1    641.77       N/A

SUM device_to_device_bidirectional_memcpy_read_sm 1281.79

Running device_to_device_latency_sm.
Device to Device Latency SM GPU(row) <-> GPU(column) (ns)
          0         1
0       N/A    612.00
1    611.00       N/A

SUM device_to_device_latency_sm 1223.00

Running all_to_one_write_ce.
memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)
          0         1
0    370.11    370.02

SUM all_to_one_write_ce 740.13

Running host_device_latency_sm.
`
	run, err := ingest.Decode("old.txt", []byte(old), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ce := figure(t, run, results.CEBidir, results.EngineCopy, results.DirRead, results.PartForward, 1, 0)
	back := figure(t, run, results.CEBidir, results.EngineCopy, results.DirRead, results.PartForward, 0, 1)
	if ce.Size != 64<<20 || ce.Stats.Median != 365.12 || back.Stats.Median != 364.98 {
		t.Errorf("v0.5 CE both ways: %+v %+v", ce, back)
	}
	smTotal := figure(t, run, results.SMBidir, results.SMCopyEngine("nvbandwidth"), results.DirRead, results.PartTotal, 0, 1)
	if smTotal.Stats.Median != 641.77 {
		t.Errorf("v0.5 SM both ways, total: %+v", smTotal)
	}
	if len(run.FiguresOf(results.LatChase)) != 0 || !strings.Contains(strings.Join(run.Notes, "\n"), "device_to_device_latency_sm left out") {
		t.Errorf("the device latency of v0.5 was imported: notes %q", run.Notes)
	}
	if run.Complete || !strings.Contains(run.Stopped, "host_device_latency_sm") || run.Host != "" {
		t.Errorf("complete %v, stopped %q, host %q", run.Complete, run.Stopped, run.Host)
	}
	if f := figure(t, run, results.AllToOne, results.EngineCopy, results.DirWrite, results.PartTotal, -1, 1); f.Params["pairs"] != "1" {
		t.Errorf("pairs from the device-to-device matrices: %v", f.Params)
	}

	run, err = ingest.Decode("old.txt", []byte(old), ingest.Options{BufferSize: 1 << 30})
	if err != nil || run.Figures[0].Size != 1<<30 {
		t.Errorf("the option's buffer size: %v, %v", err, run.Figures[0].Size)
	}
}

func TestNVBandwidthSmallBuffer(t *testing.T) {
	in := `{"nvbandwidth": {"version": "v0.8", "warning": "NOTE: You have chosen a buffer size that is smaller than the default buffer size. It is suggested to use the default buffer size (64MB) to achieve maximal peak bandwidth.",
"testcases": [{"name": "device_local_copy", "status": "Passed", "bandwidth_matrix": [["1500.5"]]}]}}`
	if _, err := ingest.Decode("small.json", []byte(in), ingest.Options{}); err == nil || !strings.Contains(err.Error(), "buffer size") {
		t.Errorf("a smaller buffer of unknown size was taken: %v", err)
	}
	run, err := ingest.Decode("small.json", []byte(in), ingest.Options{BufferSize: 32 << 20})
	if err != nil || run.Figures[0].Size != 32<<20 {
		t.Errorf("with the size given: %v", err)
	}
}

// TestNVBandwidthJSONStatuses checks the entries of testcases without
// results: waived, failed, and the duplicate "Running" entry nvbandwidth
// leaves before a failed one.
func TestNVBandwidthJSONStatuses(t *testing.T) {
	in := `{"nvbandwidth": {"version": "v0.8", "error": "[CUDA_ERROR_OUT_OF_MEMORY] out of memory",
"testcases": [
 {"name": "device_to_device_memcpy_read_ce", "status": "Waived"},
 {"name": "device_to_device_memcpy_write_ce", "status": "Running"},
 {"name": "device_to_device_memcpy_write_ce", "status": "Error"},
 {"name": "multinode_device_to_device_memcpy_read_ce", "status": "Passed", "bandwidth_matrix": [["N/A"]]},
 {"name": "device_local_copy", "status": "Passed", "bandwidth_matrix": [["2100", "2101"]]}]}}`
	run, err := ingest.Decode("s.json", []byte(in), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(run.Notes, "\n")
	for _, want := range []string{"read_ce gave no results: Waived", "write_ce gave no results: Error", "multinode", "CUDA_ERROR_OUT_OF_MEMORY"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q: %s", want, notes)
		}
	}
	if strings.Contains(notes, "Running") || len(run.Figures) != 2 {
		t.Errorf("notes %s; %d figures", notes, len(run.Figures))
	}
}

// TestNVBandwidthTextStatuses checks the text's lines of testcases without
// results: an error after "Running", a waived testcase (which prints no
// "Running" line), and a fatal error that ends the output.
func TestNVBandwidthTextStatuses(t *testing.T) {
	in := `nvbandwidth Version: v0.8
Waived: 
Running device_to_device_memcpy_read_ce.
Error: peer access failed
Running device_local_copy.
memcpy local GPU(column) bandwidth (GB/s)
           0
 0   2103.45

SUM device_local_copy 2103.45

Running device_to_host_memcpy_ce.
[CUDA_ERROR_ILLEGAL_ADDRESS] an illegal memory access was encountered in expression cuStreamSynchronize(stream)
`
	run, err := ingest.Decode("st.txt", []byte(in), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(run.Notes, "\n")
	for _, want := range []string{"reported: Waived:", "device_to_device_memcpy_read_ce gave no results: Error: peer access failed", "CUDA_ERROR_ILLEGAL_ADDRESS"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if len(run.Figures) != 1 || run.Complete || !strings.Contains(run.Stopped, "stopped during testcase device_to_host_memcpy_ce: [CUDA_ERROR_ILLEGAL_ADDRESS]") {
		t.Errorf("%d figures, complete %v, stopped %q", len(run.Figures), run.Complete, run.Stopped)
	}
}
