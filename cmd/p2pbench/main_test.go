package main

import (
	"bytes"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/p2pbench/p2pbench/internal/cpuprofile"
	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/results"
)

// asMain makes the test binary run as p2pbench itself: for the tests that
// need a p2pbench process of their own (one they kill).
const asMain = "P2PBENCH_TEST_AS_MAIN"

// Most tests run in parallel (t.Parallel): each command line parses into
// flags of its own (cmdline.Own). A test stays serial where it shares the
// process: it sets the environment (t.Setenv) or the working directory,
// signals the process or watches its children, or counts its allocations.
func TestMain(m *testing.M) {
	// The test binary is also p2pbench's IPC child (the ipc package starts
	// os.Executable with the hidden command) and, on request, p2pbench.
	if child := len(os.Args) > 1 && os.Args[1] == ipcChildName; os.Getenv(asMain) != "" || child {
		if fifo := os.Getenv(reportStopsEnv); fifo != "" && !child { // the children inherit it
			reportStops(fifo)
		}
		os.Exit(run(os.Args, os.Stdout, os.Stderr))
	}
	// The signal tests signal this process: keep their signals caught even
	// between two runs, so that a late one cannot end the tests.
	signal.Notify(make(chan os.Signal, 1), interrupt.Signals...)
	// No test may reach a real driver.
	os.Setenv("P2PBENCH_LIBCUDA", "/nonexistent/libcuda.so.1")
	os.Setenv("P2PBENCH_LIBNVML", "/nonexistent/libnvidia-ml.so.1")
	status := m.Run()
	for _, s := range []*sharedRun{&sample, &lean} {
		if s.dir != "" {
			os.RemoveAll(s.dir)
		}
	}
	fakeCUDA.Remove()
	fakeNVML.Remove()
	os.Exit(status)
}

// p2pbench runs the command line in this process, as main does.
func p2pbench(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var o, e bytes.Buffer
	status = run(append([]string{"p2pbench"}, args...), &o, &e)
	if strings.Contains(e.String(), "goroutine ") || strings.Contains(e.String(), "panic:") {
		t.Errorf("p2pbench %s: a Go panic or stack trace:\n%s", strings.Join(args, " "), e.String())
	}
	return o.String(), e.String(), status
}

// small is a quick simulated measurement.
var small = []string{"--simulate", "h200x2", "--samples", "2", "--size", "4KiB"}

// sample is one small simulated all run, made once and shared by the tests
// of the readers: its results file, and what all printed.
var sample = sharedRun{name: "sample", args: []string{"--sizes", "4KiB:64KiB:4"}}

// lean is a smaller simulated all run than the sample, made once and shared
// by the tests that need a results file for the readers to draw into their
// outputs, and not what the figures show: one bandwidth test at two sizes,
// so that plot draws two figures (a heatmap and a size curve) and a
// Markdown report one, where the sample's nineteen figures are most of a
// second of drawing for each command.
var lean = sharedRun{name: "lean", args: []string{"--tests", "ce_read", "--sizes", "4KiB:16KiB:2"}}

func sampleRun(t *testing.T) (path, stdout string) { return sample.get(t) }

func leanRun(t *testing.T) (path string) { path, _ = lean.get(t); return path }

// sharedRun is a small simulated all run made once, by the first test that
// asks for it, with args beside small: its results file, and what all
// printed.
type sharedRun struct {
	name              string
	args              []string
	once              sync.Once
	dir, path, stdout string
	err               string
}

func (s *sharedRun) get(t *testing.T) (path, stdout string) {
	t.Helper()
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "p2pbench-"+s.name+"-")
		if err != nil {
			s.err = err.Error()
			return
		}
		s.dir = dir
		// Its transfers are far below what the expectation table covers: a
		// spec of its own gives it a verdict (without one it is NOT JUDGED,
		// exit status 4).
		spec := filepath.Join(dir, "spec.json")
		if err := os.WriteFile(spec, []byte(`{"name": "the sample's floor", "figures": [{"test": "ce_read", "link": "nvlink", "min": 0.01}]}`), 0o644); err != nil {
			s.err = err.Error()
			return
		}
		var o, e bytes.Buffer
		args := append(append([]string{"p2pbench", "all"}, s.args...), "--dir", dir, "--expect", spec)
		if status := run(append(args, small...), &o, &e); status != exitOK {
			s.err = e.String()
			return
		}
		s.path, s.stdout = filepath.Join(dir, "results.json"), o.String()
	})
	if s.err != "" {
		t.Fatalf("the %s run failed: %s", s.name, s.err)
	}
	return s.path, s.stdout
}

// copyOf copies a file into dir under name.
func copyOf(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, name)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func readResults(t *testing.T, path string) *results.Run {
	t.Helper()
	run, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// leftovers lists the temporary and lock files p2pbench may leave in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	for _, pattern := range []string{".*.tmp-*", ".p2pbench-check-*", ".*.lock", "gofpdf-*", "p2pbench-*"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		left = append(left, m...)
	}
	return left
}

// P2PBENCH_CPUPROFILE is an output under the one policy: a path of the
// command line (an input, -o, --dir's results.json), a device's name in
// /dev or a path in /proc is refused before anything runs, and the input
// keeps its bytes (audit N17: the profile truncated the results file show
// was reading); a plain new file gets the profile.
func TestCPUProfileIsAnOutput(t *testing.T) {
	dir := t.TempDir()
	victim := copyOf(t, reference, dir, "victim.json")
	before, _ := os.ReadFile(victim)
	runDir := filepath.Join(dir, "run")
	os.Mkdir(runDir, 0o755)
	for _, c := range []struct {
		path string
		args []string
		want string
	}{
		{victim, []string{"show", victim}, "is also an input"},
		{filepath.Join(dir, "x.json"), []string{"bw", "-o", filepath.Join(dir, "x.json")}, "is also an input"},
		{filepath.Join(dir, "x.json"), []string{"bw", "--output=" + filepath.Join(dir, "x.json")}, "is also an input"},
		{filepath.Join(runDir, "results.json"), []string{"all", "--dir", runDir}, "is also an input"},
		{"/dev/p2pbench-loop-nonexist", []string{"topo"}, "is in /dev"},
		{"/proc/self/fd/1", []string{"topo"}, "is in /proc"},
	} {
		t.Setenv("P2PBENCH_CPUPROFILE", c.path)
		stop, err := cpuprofile.Start(os.Getenv("P2PBENCH_CPUPROFILE"), c.args)
		if err == nil {
			stop()
			t.Errorf("P2PBENCH_CPUPROFILE=%s %v: accepted", c.path, c.args)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("P2PBENCH_CPUPROFILE=%s %v: %v, want %q", c.path, c.args, err, c.want)
		}
	}
	if after, _ := os.ReadFile(victim); !bytes.Equal(before, after) {
		t.Error("the input was changed")
	}
	if _, err := os.Lstat("/dev/p2pbench-loop-nonexist"); err == nil {
		t.Error("a file was made in /dev")
	}
	prof := filepath.Join(dir, "cpu.prof")
	t.Setenv("P2PBENCH_CPUPROFILE", prof)
	stop, err := cpuprofile.Start(prof, []string{"show", victim})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("the profile (%d bytes, %v) is not pprof's gzip-compressed protobuf", len(b), err)
	}
}
