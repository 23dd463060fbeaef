package ingest_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/ingest"
	"github.com/p2pbench/p2pbench/results"
)

const (
	sendrecvFixture  = "testdata/nccl-tests-2.19-sendrecv-h200x2.txt"
	allReduceFixture = "testdata/nccl-tests-all_reduce_perf-2023-h200x2.txt"
)

// ncclFigure finds a figure of an nccl-tests run by test, size and params.
func ncclFigure(t *testing.T, run *results.Run, test results.Test, size uint64, params string) results.Figure {
	t.Helper()
	for _, f := range run.Figures {
		if f.Test == test && f.Size == size && f.IdentityParams() == params {
			return f
		}
	}
	t.Fatalf("no figure %s %d %s", test, size, params)
	return results.Figure{}
}

func TestNCCLTestsSendRecv(t *testing.T) {
	run := importFile(t, sendrecvFixture, ingest.Options{})
	bw, time, _ := results.NCCLTests("sendrecv")
	if run.Tool.Name != "nccl-tests" || run.Tool.Version != "2.19.6" || strings.Join(run.Tool.Command, " ") != "sendrecv_perf" ||
		run.Host != "vm" || len(run.Environment.Devices) != 2 || run.Environment.Devices[1].PCIBusID != "0000:00:07" || !run.Complete || !run.Verify {
		t.Errorf("run: %+v %+v complete %v", run.Tool, run.Environment.Devices, run.Complete)
	}
	if len(run.Figures) != 14*2*3 {
		t.Errorf("%d figures, want 14 sizes × 2 operations × (time, algbw, busbw)", len(run.Figures))
	}
	const big = 536870912
	out := ncclFigure(t, run, bw, big, "bw=busbw,in_place=false,ranks=2,redop=sum,type=float")
	in := ncclFigure(t, run, bw, big, "bw=algbw,in_place=true,ranks=2,redop=sum,type=float")
	tm := ncclFigure(t, run, time, big, "in_place=false,ranks=2,redop=sum,type=float")
	if out.Stats.Median != 373.44 || out.Verify != results.VerifyPassed || out.Engine != results.EngineNCCL || out.Src != -1 || out.Dst != -1 ||
		in.Stats.Median != 375.31 || in.Verify != results.VerifyNA ||
		tm.Stats.Median != 1437650 || tm.Unit != results.UnitNs || len(tm.Samples) != 0 {
		t.Errorf("figures: %+v\n%+v\n%+v", out, in, tm)
	}
	if info := run.Info(bw); !strings.Contains(info.Convention, "busbw") || info.Unit != results.UnitGBps {
		t.Errorf("the catalogue's entry of %s: %+v", bw, info)
	}
}

// TestNCCLTestsRunCycles reads an older output that names its program only
// on an echoed command line and repeats its table (-N 2): the repeats
// become samples.
func TestNCCLTestsRunCycles(t *testing.T) {
	run := importFile(t, allReduceFixture, ingest.Options{})
	bw, _, _ := results.NCCLTests("all_reduce")
	if run.Tool.Version != "" || !strings.HasPrefix(strings.Join(run.Tool.Command, " "), "./build/all_reduce_perf -b 8") {
		t.Errorf("tool %+v", run.Tool)
	}
	f := ncclFigure(t, run, bw, 536870912, "bw=busbw,in_place=false,ranks=2,redop=sum,type=float")
	if len(f.Samples) != 2 || f.Stats.N != 2 || f.Verify != results.VerifyPassed {
		t.Errorf("a figure of two cycles: %+v", f)
	}
	if strings.Contains(strings.Join(run.Imported.Unknown, " "), "samples") {
		t.Errorf("every figure has samples, yet: %q", run.Imported.Unknown)
	}
}

// TestNCCLTestsCollective checks where the collective comes from when the
// output does not name its program.
func TestNCCLTestsCollective(t *testing.T) {
	data, err := os.ReadFile(allReduceFixture)
	if err != nil {
		t.Fatal(err)
	}
	bare := strings.Replace(string(data), "$ ./build/all_reduce_perf -b 8 -e 512M -f 4 -g 2 -N 2\n", "", 1)
	if _, err := ingest.Decode("log.txt", []byte(bare), ingest.Options{}); err == nil || !strings.Contains(err.Error(), "log.txt:8: which collective") {
		t.Errorf("an unnamed table was taken: %v", err)
	}
	run, err := ingest.Decode("dir/reduce_scatter-16gpu.txt", []byte(bare), ingest.Options{})
	if err != nil || run.Figures[0].Test != "nccl_reduce_scatter_time" {
		t.Errorf("from the file's name: %v %v", err, run)
	}
	run, err = ingest.Decode("log.txt", []byte(bare), ingest.Options{Collective: "all_gather"})
	if err != nil || run.Figures[0].Test != "nccl_all_gather_time" {
		t.Errorf("from the option: %v", err)
	}
	if _, err := ingest.Decode("log.txt", []byte(bare), ingest.Options{Collective: "allreduce"}); err == nil || !strings.Contains(err.Error(), "all_reduce") {
		t.Errorf("an unknown collective: %v", err)
	}
}

func TestNCCLTestsOptionalColumns(t *testing.T) {
	// -I adds four columns to each operation, -S a timestamp, -C names the
	// time cputime; a wrong count fails its check; a table cut short makes
	// an incomplete run.
	in := `# Collective test starting: broadcast_perf
# nThread 1 nGpus 4 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#       size         count      type   redop    root  cputime   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%  cputime   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%           timestamp
        1024           256     float    none       0    20.00    0.05    0.05       0    19.00    21.00    21.00     2.00    20.00    0.05    0.05       3    19.00    21.00    21.00     2.00  2026-11-23 10:00:00
host:123:123 [0] NCCL INFO Channel 00/24 : 0 1 2 3
        2048           512     float    none       0    20.00    0.10    0.10       0    19.00    21.00    21.00     2.00    20.00    0.10    0.10       0    19.00    21.00    21.00     2.00  2026-11-23 10:00:01
`
	run, err := ingest.Decode("b.txt", []byte(in), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bw, _, _ := results.NCCLTests("broadcast")
	f := ncclFigure(t, run, bw, 1024, "bw=algbw,cputime=true,in_place=true,ranks=4,root=0,type=float")
	if f.Verify != results.VerifyFailed || !strings.Contains(f.VerifyDetail, "3 wrong") {
		t.Errorf("a failed check: %+v", f)
	}
	if run.Complete || !strings.Contains(run.Stopped, "Avg bus bandwidth") {
		t.Errorf("a table without its summary: complete %v %q", run.Complete, run.Stopped)
	}
}

// A log with a 0-byte row (nccl-tests run with -b 0) imports: the row's
// times are figures, its bandwidths (0 by definition) are left out with a
// note, and the other rows are as they were (audit N5; the input make fuzz
// found is in testdata/fuzz/FuzzNCCLTests).
func TestNCCLTestsZeroByteRow(t *testing.T) {
	data, err := os.ReadFile(sendrecvFixture)
	if err != nil {
		t.Fatal(err)
	}
	const first = "           8             2     float     sum      -1     9.80    0.00    0.00       0     9.75    0.00    0.00    N/A"
	in := strings.Replace(string(data), first, "           0             0     float     sum      -1     9.80    0.00    0.00       0     9.75    0.00    0.00    N/A", 1)
	if in == string(data) {
		t.Fatal("the fixture's first row changed")
	}
	run, err := ingest.Decode("n-size0.txt", []byte(in), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, time, _ := results.NCCLTests("sendrecv")
	if len(run.Figures) != 13*2*3+2 {
		t.Errorf("%d figures, want 13 sizes × 2 operations × 3 and the 0-byte row's 2 times", len(run.Figures))
	}
	if f := ncclFigure(t, run, time, 0, "in_place=false,ranks=2,redop=sum,type=float"); f.Stats.Median != 9800 {
		t.Errorf("the 0-byte row's time: %v ns, want 9800", f.Stats.Median)
	}
	if !slices.ContainsFunc(run.Notes, func(n string) bool { return strings.Contains(n, "0-byte rows (line 12, the first)") }) {
		t.Errorf("no note on the 0-byte row: %q", run.Notes)
	}
}

// Lines inside a table that are no rows (NCCL's own log lines, a row
// mangled past recognition) are skipped and counted in a note, never lost
// without a word (audit N12).
func TestNCCLTestsSkippedLinesAreNoted(t *testing.T) {
	in := "# Collective test starting: sendrecv_perf\n" + ncclColumns +
		"8 2 float sum -1 9.8 0.1 0.1 0 9.75 0.1 0.1 N/A\n" +
		"\x00\x01garbage 32 8 float sum -1 9.8 0.1 0.1 0 9.75 0.1 0.1 N/A\n" +
		"vm:4242:4242 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n" +
		"# Avg bus bandwidth : 1\n"
	run, err := ingest.Decode("skip.nccl", []byte(in), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(run.Notes, func(n string) bool {
		return strings.Contains(n, "2 lines inside the sendrecv table of line 2 are no table row and were skipped (the first, line 4: ")
	}) {
		t.Errorf("no note of the skipped lines: %q", run.Notes)
	}
}
