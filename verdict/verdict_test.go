package verdict_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/gpu/sim"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
	"github.com/p2pbench/p2pbench/verdict"
)

const reference = "../testdata/reference/h200x2/"

func read(t *testing.T, path string) *results.Run {
	t.Helper()
	run, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// shared is the run of path read once for the test binary
// (resultstest.ReadShared), a shallow copy: judge writes its verdict into the
// copy. A test that changes more than the run's own fields reads its own
// (read).
func shared(t *testing.T, path string) *results.Run {
	t.Helper()
	run, err := resultstest.ReadShared(path)
	if err != nil {
		t.Fatal(err)
	}
	c := *run
	return &c
}

func judge(t *testing.T, run *results.Run, exp verdict.Expectations) *results.Verdict {
	t.Helper()
	v, err := verdict.Judge(run, exp)
	if err != nil {
		t.Fatal(err)
	}
	// The verdict is kept in the run and must validate with it.
	run.Verdict = v
	if err := run.Validate(); err != nil {
		t.Fatalf("the judged run does not validate: %v", err)
	}
	return v
}

// worst lists the checks and items that warned or failed.
func worst(v *results.Verdict) string {
	var b strings.Builder
	for _, c := range v.Checks {
		if c.Status == results.StatusWarn || c.Status == results.StatusFail {
			b.WriteString(c.Status.Label() + " " + c.Name + ": " + c.Summary + "\n")
		}
	}
	return b.String()
}

// item finds a check's item of status st whose subject contains subject.
func item(v *results.Verdict, check string, st results.Status, subject string) *results.CheckItem {
	for _, c := range v.Checks {
		for i, it := range c.Items {
			if c.Name == check && it.Status == st && strings.Contains(it.Subject, subject) {
				return &c.Items[i]
			}
		}
	}
	return nil
}

// TestHealthyH200Passes judges the 2× H200 reference run by the table
// without its own sources (the run's GPUs are theirs): the published and
// vendor figures that remain pass it, and the copies across processes
// that the NVLink counters explain are notes.
func TestHealthyH200Passes(t *testing.T) {
	run := shared(t, reference+"all.json")
	v := judge(t, run, verdict.Model(run))
	if v.Status != results.StatusPass || worst(v) != "" {
		t.Fatalf("the reference 2× H200: %s, want PASS with no warning:\n%s", v.Status, worst(v))
	}
	notes := strings.Join(v.Expectations.Notes, "\n")
	if !strings.Contains(notes, "Sources that measured this machine (h200x2) are left out") || !v.Expectations.Conservative {
		t.Errorf("the machine's own sources judged it: notes %q", notes)
	}
	if n := bandwidthJudged(v); n != 72 {
		t.Errorf("%d bandwidth figures judged, want 72 (the matrices, host, local and staged copies from 64 MiB)", n)
	}
	// The IPC copy-engine arrangements the counters explain are noted.
	if it := item(v, "ipc", results.StatusNote, "ipc_ce_bidir read own context"); it == nil || !strings.Contains(it.Message, "each payload byte cost more on the wire") {
		t.Errorf("no note of the IPC arrangement: %+v", v.Checks)
	}
	// Its latency figures that two other machines measured as it did are
	// held to the table's latency part, and pass.
	if c := check(v, "latency"); c.Status != results.StatusPass || !strings.Contains(c.Summary, "judged") {
		t.Errorf("latency: %+v", c)
	}
}

// bandwidthJudged counts a verdict's judged bandwidth figures.
func bandwidthJudged(v *results.Verdict) int {
	n := 0
	for _, c := range v.Checks {
		if c.Name == "bandwidth" {
			fmt.Sscanf(c.Summary, "%d figures", &n)
		}
	}
	return n
}

// inProcess counts a verdict's judged figures in one process.
func inProcess(v *results.Verdict) int {
	n := 0
	for _, f := range v.Figures {
		if !strings.HasPrefix(f.Key, "ipc_") {
			n++
		}
	}
	return n
}

func TestSpecDemandingMoreFails(t *testing.T) {
	run := shared(t, reference+"all.json")
	spec, err := verdict.ParseSpec("contract.json", []byte(`{"name": "contract", "figures": [
		{"test": "ce_read", "link": "nvlink", "min": 400}, {"test": "ce_write", "link": "nvlink", "min": 390}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v := judge(t, run, spec)
	if v.Status != results.StatusFail || !verdict.Failing(v, false) {
		t.Fatalf("status %s, want FAIL", v.Status)
	}
	for _, pair := range []string{"ce_read read 0→1", "ce_read read 1→0"} {
		if it := item(v, "bandwidth", results.StatusFail, pair); it == nil || !strings.Contains(it.Message, "short of the 400 it must reach") {
			t.Errorf("no failure naming %s: %s", pair, worst(v))
		}
	}
	if inProcess(v) != 4 || v.Expectations.Kind != results.ExpectSpec || v.Expectations.File != "contract.json" {
		t.Errorf("%d figures judged, source %+v; want the four of the matrices", len(v.Figures), v.Expectations)
	}
}

func TestShippedSpecsPassTheMachinesTheyDescribe(t *testing.T) {
	run := shared(t, reference+"all.json")
	spec, err := verdict.LoadSpec("../examples/expect/h200x2.json")
	if err != nil {
		t.Fatal(err)
	}
	if v := judge(t, run, spec); v.Status != results.StatusPass {
		t.Errorf("h200x2.json on the reference: %s\n%s", v.Status, worst(v))
	}
	for _, machine := range []string{"dgx-h100", "pcie-4gpu"} {
		spec, err := verdict.LoadSpec("../examples/expect/" + machine + ".json")
		if err != nil {
			t.Fatal(err)
		}
		// The simulated run measures simTests only: the spec's other
		// entries would match nothing, which Judge refuses.
		spec.Figures = slices.DeleteFunc(spec.Figures, func(e verdict.SpecEntry) bool { return !slices.Contains(simTests, e.Test) })
		run := simRun(t, machine, simTests, false)
		if v := judge(t, run, spec); v.Status != results.StatusPass {
			t.Errorf("%s.json on the simulated %s: %s\n%s", machine, machine, v.Status, worst(v))
		}
	}
}

func TestBaselineOfARepeatPasses(t *testing.T) {
	run, base := shared(t, reference+"all-repeat.json"), shared(t, reference+"all.json")
	v := judge(t, run, verdict.FromBaseline(base, "all.json", 0))
	if v.Status != results.StatusPass || worst(v) != "" {
		t.Fatalf("all-repeat.json against all.json: %s\n%s", v.Status, worst(v))
	}
	var lat bool
	for _, c := range v.Checks {
		lat = lat || c.Name == "latency" && c.Status == results.StatusPass
	}
	if !lat || len(v.Figures) < 400 {
		t.Errorf("%d figures judged, latency judged %v; want nearly all", len(v.Figures), lat)
	}
	// A run 10% slower at large transfers fails against it.
	slow := read(t, reference+"all-repeat.json")
	for i := range slow.Figures {
		f := &slow.Figures[i]
		if f.Test == results.CEWrite && f.Size == 512<<20 {
			for j := range f.Samples {
				f.Samples[j] *= 0.9
			}
			f.Stats = figstats.ComputeStats(f.Samples)
		}
	}
	v = judge(t, slow, verdict.FromBaseline(base, "all.json", 0))
	if v.Status != results.StatusFail || item(v, "bandwidth", results.StatusFail, "ce_write write 0→1 512 MiB") == nil {
		t.Errorf("ce_write 10%% slower: %s\n%s", v.Status, worst(v))
	}
}

// TestBaselinesThatCannotJudge: a simulated baseline for a real run, a
// real one for a simulated run, and a baseline cut short are refused with a
// *SpecError, never judged (audit D9: a real run was judged FAIL against a
// simulator, an interrupted baseline accepted silently).
func TestBaselinesThatCannotJudge(t *testing.T) {
	real := shared(t, reference+"all.json")
	sim := simRun(t, "h200x2", []results.Test{results.CERead}, false)
	partial := shared(t, reference+"all-repeat.json")
	partial.Complete, partial.Stopped = false, "interrupted (SIGINT)"
	for name, tc := range map[string]struct {
		run, base *results.Run
		want      string
	}{
		"simulated baseline": {real, sim, "the baseline is a simulated run (p2pbench's simulator of h200x2), not a known-good machine"},
		"real baseline":      {sim, real, "this run is simulated and the baseline a real machine's"},
		"partial baseline":   {real, partial, "the baseline did not complete (interrupted (SIGINT); "},
	} {
		_, err := verdict.Judge(tc.run, verdict.FromBaseline(tc.base, "base.json", 0))
		var se *verdict.SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *SpecError saying %q", name, err, tc.want)
		}
	}
}

func TestBadSpecs(t *testing.T) {
	for name, tc := range map[string]struct{ spec, want string }{
		"unknown test":  {`{"figures": [{"test": "ce_reed", "min": 1}]}`, `figures[0]: unknown test "ce_reed"; the tests are: h2d, d2h`},
		"negative":      {`{"figures": [{"test": "ce_read", "min": 1}, {"test": "ce_write", "min": -5}]}`, "figures[1]: ce_write: -5 is not a min above 0"},
		"malformed":     {"{\"figures\": [\n{\"test\": \"ce_read\" \"min\": 1}]}", "malformed at line 2, column 20"},
		"truncated":     {`{"figures": [`, "empty or truncated JSON"},
		"unknown field": {`{"figures": [{"test": "ce_read", "floor": 1}]}`, `unknown field "floor"`},
		"max of a rate": {`{"figures": [{"test": "ce_read", "max": 1}]}`, "ce_read is a rate (GB/s): give min"},
		"min of a time": {`{"figures": [{"test": "lat_chase", "min": 1}]}`, "lat_chase is a time (ns): give max"},
		"both":          {`{"figures": [{"test": "ce_read", "min": 1, "max": 2}]}`, "give either min"},
		"class":         {`{"figures": [{"test": "ce_read", "link": "infiniband", "min": 1}]}`, `link class "infiniband" is not one of nvlink`},
		"size":          {`{"figures": [{"test": "ce_read", "size": "big", "min": 1}]}`, `bad size "big"`},
		"empty":         {`{"name": "x"}`, "no figures"},
		// Vacuous bounds and unbounded texts (audit N20, N14).
		"subnormal min": {`{"figures": [{"test": "ce_read", "min": 5e-324}]}`, "ce_read: min 5e-324 is a subnormal number, which no measurement is: it would judge nothing"},
		"tiny min":      {`{"figures": [{"test": "ce_read", "min": 1e-9}]}`, "ce_read: min 1e-09 is below 1e-06 GB/s, which every figure reaches"},
		"huge max":      {`{"figures": [{"test": "lat_chase", "max": 1e308}]}`, "lat_chase: max 1e+308 is above 1e+12 ns"},
		"long name":     {`{"name": "` + strings.Repeat("n", 100000) + `", "figures": [{"test": "ce_read", "min": 1}]}`, "name of 100000 bytes: at most 256"},
		"long params":   {`{"figures": [{"test": "ce_read", "min": 1, "params": {"op": "` + strings.Repeat("v", 300) + `"}}]}`, "params value of 300 bytes: at most 256"},
	} {
		_, err := verdict.ParseSpec("spec.json", []byte(tc.spec))
		var se *verdict.SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") ||
			!strings.HasPrefix(err.Error(), "expectations file spec.json: ") {
			t.Errorf("%s: %v, want a one-line *SpecError with %q", name, err, tc.want)
		}
	}
	// A link class no pair of the run has: refused when judging (and by Fits).
	spec, err := verdict.ParseSpec("spec.json", []byte(`{"figures": [{"test": "ce_read", "link": "pcie", "min": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	run := shared(t, reference+"all.json")
	_, err = verdict.Judge(run, spec)
	var se *verdict.SpecError
	if !errors.As(err, &se) || se.Entry != 0 || !strings.Contains(err.Error(), "no pair of this run has link class pcie (it has all, host, local, nvlink)") {
		t.Errorf("a class no pair has: %v", err)
	}
	// A params key no figure has matches nothing, even with an empty value,
	// and is refused like any entry that matches nothing (audit N20).
	spec, err = verdict.ParseSpec("spec.json", []byte(`{"figures": [{"test": "ce_read", "params": {"nonexistent_key": ""}, "min": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err = verdict.Judge(run, spec); !errors.As(err, &se) || !strings.Contains(err.Error(), "1 of its 1 entries match no figure") {
		t.Errorf("a params key no figure has: %v", err)
	}
	path := filepath.Join(t.TempDir(), "missing.json")
	if _, err := verdict.LoadSpec(path); !errors.As(err, &se) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// simTests are the tests of the simulated checks: the pairwise matrices,
// local and staged copies. Host copies move real host memory in the
// simulator, seconds at 512 MiB: the reference run judges them.
var simTests = []results.Test{results.LocalCopy, results.CERead, results.CEWrite, results.CEBidir,
	results.SMRead, results.SMWrite, results.NoP2PCopy}

// simRun measures tests at 512 MiB on a simulated machine, watched and with
// its health read before and after, as p2pbench all does.
func simRun(t *testing.T, machine string, tests []results.Test, allowBusy bool, opts ...sim.Option) *results.Run {
	t.Helper()
	return simRunSized(t, machine, tests, 512<<20, allowBusy, opts...)
}

// simRunSized is simRun at transfer size size.
func simRunSized(t *testing.T, machine string, tests []results.Test, size uint64, allowBusy bool, opts ...sim.Option) *results.Run {
	t.Helper()
	drv, err := sim.New(machine, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	mon := drv.Monitor()
	var opt bench.Options
	opt.Tests, opt.Verify, opt.Size, opt.Samples = tests, true, size, 3
	if opt.Devices, err = bench.SelectDevices(drv, nil); err != nil {
		t.Fatal(err)
	}
	opt.Watch = measure.NewWatch(mon, allowBusy)
	run := &results.Run{Schema: results.SchemaVersion, Simulated: true, SimMachine: machine, Start: time.Now().UTC(), Verify: true}
	if run.Environment, run.Topology, err = bench.Discover(drv, mon, opt.Devices); err != nil {
		t.Fatal(err)
	}
	if err := bench.NewEngine(drv, opt).Run(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	run.Environment.HealthAfter = bench.ReadHealth(mon, run.Environment.Devices)
	run.End, run.Complete = time.Now().UTC(), true
	return run
}

func TestSimulatedHealthyMachinesPass(t *testing.T) {
	for _, machine := range []string{"dgx-h100", "pcie-4gpu"} {
		run := simRun(t, machine, simTests, false)
		v := judge(t, run, verdict.Model(run))
		if v.Status != results.StatusPass || worst(v) != "" {
			t.Errorf("healthy %s: %s\n%s", machine, v.Status, worst(v))
		}
		// Neither machine is the one the factors were measured on: the H100's
		// memory and the L40S's PCIe links get lower floors, and say so.
		if !v.Expectations.Conservative {
			t.Errorf("%s: not conservative; notes %q", machine, v.Expectations.Notes)
		}
	}
}

func TestSimulatedWeakLinkFails(t *testing.T) {
	weak, err := sim.ParseHealth("slow-link:0:1:0.5")
	if err != nil {
		t.Fatal(err)
	}
	run := simRun(t, "pcie-4gpu", simTests, false, weak)
	v := judge(t, run, verdict.Model(run))
	if v.Status != results.StatusFail || !verdict.Failing(v, false) {
		t.Fatalf("a weak link 0↔1: %s, want FAIL", v.Status)
	}
	// Its class has 4 pairs, two of them the weak link's: each pair is held
	// to the others of its class, so both directions are named.
	for _, pair := range []string{"0→1", "1→0"} {
		if item(v, "pairs", results.StatusFail, " "+pair) == nil {
			t.Errorf("no failure naming %s:\n%s", pair, worst(v))
		}
	}
	for _, pair := range []string{"2→3", "3→2", "0→2", "2→0"} {
		if item(v, "pairs", results.StatusFail, " "+pair) != nil || item(v, "pairs", results.StatusWarn, " "+pair) != nil {
			t.Errorf("a healthy pair %s named:\n%s", pair, worst(v))
		}
	}
}

// TestSimulatedLinkErrorsFail: the simulator's NVLink 7 of GPU 1 retrains
// under traffic; DCGM's health watch fails any recovery error, and the
// advice says what DCGM would fail on.
func TestSimulatedLinkErrorsFail(t *testing.T) {
	run := simRun(t, "h200x2", []results.Test{results.CERead}, false,
		sim.WithLinkErrors(sim.LinkErrors{Device: 1, Link: 7, Counter: results.LinkRecovery, PerSecond: 1000}))
	v := judge(t, run, verdict.Model(run))
	it := item(v, "links", results.StatusFail, "GPU 1 NVLinks")
	if v.Status != results.StatusFail || it == nil || !strings.Contains(it.Message, "recovery errors on NVLink 7") ||
		!strings.Contains(it.Message, "DCGM_FR_NVLINK_ERROR_CRITICAL") || !strings.Contains(it.Message, "NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL") {
		t.Errorf("a link that retrains: %s\n%s", v.Status, worst(v))
	}
	if len(v.NextSteps) == 0 || !strings.Contains(v.NextSteps[0], "DCGM would fail") || !strings.Contains(v.NextSteps[0], "dcgmi") {
		t.Errorf("next steps %q", v.NextSteps)
	}
}

// TestSimulatedLinkFaults: the link check on simulated machines with an
// injected fault, each as DCGM's health watch would judge it: one replay
// fails; CRC-data rising at 50 a second warns, saying to monitor, never
// to open a ticket; at a rate whose rise over DCGM's minute is 100 a
// second or more it fails; a driver whose CRC-data total is N/A is said to
// leave DCGM seeing nothing.
func TestSimulatedLinkFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   sim.Option
		want  results.Status
		words []string
	}{
		{"replay +1", sim.WithLinkErrors(sim.LinkErrors{Device: 0, Link: 3, Counter: results.LinkReplay, Burst: 1, At: time.Millisecond}), results.StatusFail,
			[]string{"1 replay errors on NVLink 3 (+1)", "DCGM_FR_NVLINK_ERROR_CRITICAL"}},
		{"CRC-data at 50 a second", sim.WithLinkErrors(sim.LinkErrors{Device: 1, Link: 2, Counter: results.LinkCRCData, PerSecond: 50}), results.StatusWarn,
			[]string{"under the 100 a second at which DCGM's health watch fails", "a second during the run's", "no replay or recovery error", "to monitor"}},
		{"CRC-data at 100 a second over DCGM's minute", sim.WithLinkErrors(sim.LinkErrors{Device: 1, Link: 2, Counter: results.LinkCRCData, Burst: 6000, At: time.Millisecond}), results.StatusFail,
			[]string{"6000 in DCGM's minute at the run's end, 100.0 a second", "DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD"}},
	} {
		run := simRun(t, "h200x2", []results.Test{results.CERead, results.CEWrite}, false, tc.opt)
		v := judge(t, run, verdict.Model(run))
		it := item(v, "links", tc.want, "NVLinks")
		if v.Status != tc.want || it == nil {
			t.Errorf("%s: %s\n%s", tc.name, v.Status, worst(v))
			continue
		}
		for _, w := range tc.words {
			if !strings.Contains(it.Message, w) {
				t.Errorf("%s: %q lacks %q", tc.name, it.Message, w)
			}
		}
		if next := strings.Join(v.NextSteps, " "); strings.Contains(next, "ticket") || tc.want == results.StatusWarn && !strings.Contains(next, "Monitor") {
			t.Errorf("%s: next steps %q", tc.name, v.NextSteps)
		}
	}
	run := simRun(t, "h200x2", []results.Test{results.CERead}, false, sim.WithLinkTotalUnavailable(1, results.LinkCRCData, false),
		sim.WithLinkErrors(sim.LinkErrors{Device: 1, Link: 2, Counter: results.LinkCRCData, PerSecond: 50}))
	v := judge(t, run, verdict.Model(run))
	if it := item(v, "links", results.StatusWarn, "GPU 1 NVLinks"); it == nil || !strings.Contains(it.Message, "NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, which this driver answers N/A (simulated: Not Supported): it would see nothing") {
		t.Errorf("the total N/A: %s\n%s", v.Status, worst(v))
	}
}

// TestSimulatedLinkDownFails: a link down before the run, or one that goes
// down during it, fails, naming GPU and link.
func TestSimulatedLinkDownFails(t *testing.T) {
	run := simRun(t, "h200x2", []results.Test{results.CERead}, false, sim.WithLinkDown(0, 3, time.Millisecond))
	v := judge(t, run, verdict.Model(run))
	if it := item(v, "links", results.StatusFail, "GPU 0 NVLink 3"); v.Status != results.StatusFail || it == nil ||
		!strings.Contains(it.Message, "went down during the run") || !strings.Contains(it.Message, "DCGM_FR_NVLINK_DOWN") {
		t.Errorf("a link that goes down: %s\n%s", v.Status, worst(v))
	}
	run = simRun(t, "h200x2", []results.Test{results.CERead}, false, sim.WithLinkDown(1, 5, 0))
	v = judge(t, run, verdict.Model(run))
	if it := item(v, "links", results.StatusFail, "GPU 1"); v.Status != results.StatusFail || it == nil || !strings.Contains(it.Message, "17 of the NVIDIA H200's 18 NVLinks are up (down: [5])") {
		t.Errorf("a link down before the run: %s\n%s", v.Status, worst(v))
	}
}

// TestSimulatedOtherProcess: a run beside another program's process is
// refused; with --allow-busy it is measured, and the verdict warns naming
// the GPU.
func TestSimulatedOtherProcess(t *testing.T) {
	busy := sim.WithProcess(sim.Process{Device: 1, PID: 4242, Name: "python", UsedBytes: 2 << 30})
	drv, err := sim.New("h200x2", busy)
	if err != nil {
		t.Fatal(err)
	}
	var opt bench.Options
	opt.Tests, opt.Verify, opt.Size, opt.Samples = []results.Test{results.CERead}, true, 512<<20, 3
	opt.Devices = []int{0, 1}
	opt.Watch = measure.NewWatch(drv.Monitor(), false)
	refused := &results.Run{Schema: results.SchemaVersion, Simulated: true, Start: time.Now().UTC(), Verify: true}
	if refused.Environment, refused.Topology, err = bench.Discover(drv, drv.Monitor(), opt.Devices); err != nil {
		t.Fatal(err)
	}
	var be *measure.BusyError
	if err := bench.NewEngine(drv, opt).Run(context.Background(), refused); !errors.As(err, &be) {
		t.Errorf("without --allow-busy: %v, want the run refused", err)
	}
	drv.Close()

	run := simRun(t, "h200x2", []results.Test{results.CERead, results.LocalCopy}, true, busy)
	v := judge(t, run, verdict.Model(run))
	if v.Status != results.StatusWarn || item(v, "processes", results.StatusWarn, "GPU 1") == nil {
		t.Errorf("another program on GPU 1: %s\n%s", v.Status, worst(v))
	}
	if verdict.Failing(v, false) || !verdict.Failing(v, true) {
		t.Error("a warning fails automation only with strict")
	}
}

func TestLinkFacts(t *testing.T) {
	run := read(t, reference+"all.json")
	run.Environment.Devices[1].PCIe = &results.PCIeLink{Gen: 5, Width: 8, MaxGen: 5, MaxWidth: 16}
	run.Topology.Links[0].Links[5].Active = false
	v := judge(t, run, verdict.Model(run))
	if it := item(v, "links", results.StatusFail, "GPU 0"); it == nil || !strings.Contains(it.Message, "17 of the NVIDIA H200's 18 NVLinks are up (down: [5])") {
		t.Errorf("a link down before the run:\n%s", worst(v))
	}
	if it := item(v, "links", results.StatusWarn, "GPU 1"); it == nil || !strings.Contains(it.Message, "runs on 8 of its 16 lanes (Gen5 x8 (of Gen5 x16))") {
		t.Errorf("a narrow PCIe link:\n%s", worst(v))
	}
	// The recorded link, not the GPU model's, sets the path of host copies;
	// the reference's GPU 0 has no PCIe reading, so its link is assumed.
	notes := strings.Join(v.Expectations.Notes, "\n")
	if !strings.Contains(notes, "GPU 0's PCIe link is assumed from its model") || strings.Contains(notes, "GPU 1's PCIe link is assumed") {
		t.Errorf("notes %q", notes)
	}
}

// TestUnknownPathsAreConservative: NVLink 5 has no measurement in the
// table; its copies are held to the vendor's figure with a wide margin,
// and the verdict says so.
func TestUnknownPathsAreConservative(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 8, Layout: resultstest.NVSwitch, NoSweep: true, Tests: []results.Test{results.CERead}})
	v := judge(t, run, verdict.Model(run))
	if v.Status != results.StatusPass || !v.Expectations.Conservative ||
		!strings.Contains(strings.Join(v.Expectations.Notes, "\n"), "NVLink 5 ×18, ce_read: no measurement in the table; held to the vendor's figure") {
		t.Errorf("8 GPUs on NVSwitch (NVLink 5): %s, conservative %v, notes %q", v.Status, v.Expectations.Conservative, v.Expectations.Notes)
	}
}

// TestBaselineInRounds holds runs in rounds to a baseline in rounds (each
// round of a figure off by 1% at small sizes, 0.1% at large ones): another
// run of the unchanged machine passes, and a figure 10% slower fails, its
// floor what the rounds show or the threshold.
func TestBaselineInRounds(t *testing.T) {
	mk := func(seed uint64) *results.Run {
		return resultstest.New(resultstest.Options{GPUs: 2, Seed: seed, NoSweep: true, Rounds: 5})
	}
	base := mk(1)
	v := judge(t, mk(2), verdict.FromBaseline(base, "base.json", 0))
	if v.Status != results.StatusPass {
		t.Fatalf("a run of the unchanged machine against its baseline: %s\n%s", v.Status, worst(v))
	}
	slow := mk(2)
	for i := range slow.Figures {
		if f := &slow.Figures[i]; f.Test == results.CERead && f.Src == 0 && f.Dst == 1 {
			for j := range f.Samples {
				f.Samples[j] *= 0.9
			}
			f.Stats = figstats.ComputeRoundStats(f.Samples, f.Rounds)
		}
	}
	v = judge(t, slow, verdict.FromBaseline(base, "base.json", 0))
	it := item(v, "bandwidth", results.StatusFail, "ce_read read 0→1 512 MiB")
	if v.Status != results.StatusFail || it == nil {
		t.Fatalf("ce_read 10%% slower: %s\n%s", v.Status, worst(v))
	}
	for _, f := range v.Figures {
		if f.Status == results.StatusFail && !strings.Contains(f.Reason, "threshold and the run-to-run noise") {
			t.Errorf("%s: reason %q does not say what set the floor", f.Key, f.Reason)
		}
	}
}
