package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/bench"
	"github.com/p2pbench/p2pbench/ipc"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

func TestMain(m *testing.M) {
	// No test may reach a real driver.
	os.Setenv("P2PBENCH_LIBCUDA", "/nonexistent/libcuda.so.1")
	os.Setenv("P2PBENCH_LIBNVML", "/nonexistent/libnvidia-ml.so.1")
	os.Exit(m.Run())
}

// bwOptions are a quick run of tests on the simulated 2× H200 into the
// results file path.
func bwOptions(path string, tests ...results.Test) Options {
	return Options{
		Target: Target{Sim: "h200x2", Seed: 1},
		Path:   path,
		Bench: &bench.Options{Settings: measure.Settings{Tests: tests, Size: 4 << 10, Samples: 2, Rounds: 2,
			Verify: true, LatchTimeout: 5 * time.Second}},
		Version: "test",
		Args:    []string{"p2pbench", "bw"},
	}
}

// step is a Progress that calls each on every step.
type step func(done, total int)

func (f step) Update(done, total int, _ string) { f(done, total) }
func (f step) Finish()                          {}

// run starts, prepares and measures o, and finishes the run.
func run(t *testing.T, ctx context.Context, o Options) (*Session, End) {
	t.Helper()
	s, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	return s, s.Finish(s.Measure())
}

// A run on a simulated machine: its record holds the machine's environment
// before and after, its figures, its verdict when asked, and its results
// file reads back as the run.
func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "r.json")
	o := bwOptions(path, results.CERead, results.LocalCopy)
	o.Judge = true
	s, end := run(t, context.Background(), o)
	if end.SaveErr != nil || end.Stopped != nil || end.SavedTo != path || s.Path() != path {
		t.Fatalf("end %+v, path %q", end, s.Path())
	}
	run := s.Run
	if !run.Complete || !run.Simulated || run.SimMachine != "h200x2" || len(run.Figures) == 0 || run.Verdict == nil || run.Verdict.Build != "test" {
		t.Errorf("complete %v, simulated %v (%q), %d figures, verdict %+v", run.Complete, run.Simulated, run.SimMachine, len(run.Figures), run.Verdict)
	}
	env := run.Environment
	if len(env.HealthBefore) != 2 || len(env.HealthAfter) != 2 || len(env.StateEnd) != 2 || env.System == nil {
		t.Errorf("health before %d, after %d, state at the end %d, system %v", len(env.HealthBefore), len(env.HealthAfter), len(env.StateEnd), env.System)
	}
	back, err := results.Read(path)
	if err != nil || len(back.Figures) != len(run.Figures) || !back.Complete {
		t.Fatalf("the results file: %v, %d figures", err, len(back.Figures))
	}
}

// A run whose context is cancelled half-way keeps what it measured, marked
// partial with the cause, and says what was stopped; a verdict that cannot
// judge it is left unsaid (the stop is the error).
func TestStopped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	o := bwOptions(path, results.H2D, results.D2H, results.LocalCopy, results.CERead)
	o.Progress = step(func(done, _ int) {
		if done == 2 {
			cancel(errors.New("told to stop"))
		}
	})
	s, end := run(t, ctx, o)
	if end.Stopped == nil || end.Stopped.Error() != "told to stop" || s.Run.Complete || s.Run.Stopped != "told to stop" {
		t.Fatalf("stopped %v; run complete %v, stopped %q", end.Stopped, s.Run.Complete, s.Run.Stopped)
	}
	back, err := results.Read(path)
	if err != nil || back.Complete || len(back.Figures) == 0 || len(back.Figures) != len(s.Run.Figures) {
		t.Fatalf("the partial results file: %v, complete %v, %d figures of %d", err, back.Complete, len(back.Figures), len(s.Run.Figures))
	}
}

// The results directory vanishing during a run loses nothing: the run ends
// and its figures go to a file that the error names.
func TestRescuedWhenTheDirectoryGoes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	rescue := t.TempDir()
	t.Setenv("TMPDIR", rescue)
	o := bwOptions(filepath.Join(dir, "r.json"), results.H2D, results.D2H, results.LocalCopy, results.CERead)
	o.Progress = step(func(done, _ int) {
		if done == 2 {
			if err := os.RemoveAll(dir); err != nil {
				t.Error(err)
			}
		}
	})
	s, end := run(t, context.Background(), o)
	saved, _ := filepath.Glob(filepath.Join(rescue, "p2pbench-unsaved-*.json"))
	if len(saved) != 1 || end.SavedTo != saved[0] || end.SaveErr == nil || !strings.Contains(end.SaveErr.Error(), saved[0]) {
		t.Fatalf("rescued files %v; end %+v", saved, end)
	}
	if back, err := results.Read(saved[0]); err != nil || !back.Complete || len(back.Figures) != len(s.Run.Figures) {
		t.Fatalf("the rescued run is not the complete run: %v", err)
	}
}

// What cannot be done is said by its kind: an unknown simulated machine
// and expectations that cannot judge the machine are Usage (before
// anything is measured or made), no driver or an absent device NoGPU, the
// driver's error naming the simulator to try.
func TestErrorKinds(t *testing.T) {
	kind := func(err error) Kind {
		var e *Error
		if errors.As(err, &e) {
			return e.Kind
		}
		return 0
	}
	if _, err := Open(Target{Sim: "nope"}); kind(err) != Usage {
		t.Errorf("an unknown machine: %v", err)
	}
	_, err := Open(Target{})
	if kind(err) != NoGPU || !strings.Contains(err.Error(), "--simulate "+trySimulated) {
		t.Errorf("no libcuda: %v", err)
	}
	if _, err := Open(Target{Sim: "h200x2", Devices: []int{7}}); kind(err) != NoGPU {
		t.Errorf("an absent device: %v", err)
	}

	spec, err := verdict.ParseSpec("spec.json", []byte(`{"name": "x", "figures": [{"test": "ce_read", "link": "pcie", "min": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	o := bwOptions(filepath.Join(dir, "r.json"), results.CERead)
	o.Judge, o.Expect = true, spec
	if _, err := Start(context.Background(), o); kind(err) != Usage {
		t.Errorf("a spec of a link class the machine lacks: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused run left %s behind", dir)
	}
}

// One device selected: tests that all need two are a Usage error before
// anything is made; where some need one, Note names those left out; ipc
// without its same-GPU baseline has nothing left on one device.
func TestPairsOnOneDevice(t *testing.T) {
	prepare := func(o Options) error {
		o.Target.Devices = []int{1}
		s, err := Start(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return s.Prepare()
	}
	var notes []string
	o := bwOptions("", results.CERead, results.SMBidir)
	o.Note = func(n string) { notes = append(notes, n) }
	var e *Error
	if err := prepare(o); !errors.As(err, &e) || e.Kind != Usage || err.Error() != "ce_read, sm_bidir need two devices, and only device 1 is selected (see --devices)" {
		t.Errorf("pair tests alone: %v", err)
	}
	o.Bench.Tests = []results.Test{results.CERead, results.LocalCopy}
	if err := prepare(o); err != nil || len(notes) != 1 || notes[0] != "only device 1 is selected; skipping ce_read, which needs two devices" {
		t.Errorf("a pair test and a local one: %v, notes %q", err, notes)
	}
	ipcOnly := Options{Target: o.Target, Version: "test", IPC: &ipc.Options{SkipSameGPU: true}}
	if err := prepare(ipcOnly); !errors.As(err, &e) || e.Kind != Usage || err.Error() != "one device and --no-same-gpu leave no pair to measure" {
		t.Errorf("ipc --no-same-gpu: %v", err)
	}
}
