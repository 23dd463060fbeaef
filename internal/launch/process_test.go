package launch_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/fleet"
	"github.com/p2pbench/p2pbench/internal/launch"
	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// helperPattern, in a process's environment, makes the test binary act as a
// node of a launch: it expands the pattern from its launcher's environment
// and writes a small synthetic results file into that directory, as `all
// --dir PATTERN` will.
const helperPattern = "P2PBENCH_LAUNCH_TEST_PATTERN"

func TestMain(m *testing.M) {
	if pattern := os.Getenv(helperPattern); pattern != "" {
		if err := node(pattern); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func node(pattern string) error {
	env, err := launch.Detect(os.Getenv, os.Hostname)
	if err != nil {
		return err
	}
	dir, warning, err := env.Expand(pattern, start)
	if err != nil {
		return err
	}
	if warning != "" {
		os.Stderr.WriteString("warning: " + warning + "\n")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Samples: 5, Tests: []results.Test{results.CEWrite}, Host: env.Host, Seed: uint64(env.Rank)})
	out := filepath.Join(dir, "results.json")
	return outfile.Write(out, run.EncodeFor(out))
}

// launcherVars are the variables of every launcher Detect reads; a test
// process starts without the ones its own environment may have.
var launcherVars = []string{"SLURM_", "SLURMD_", "OMPI_", "PMIX_", "JOB_COMPLETION_INDEX"}

// launchFour starts four processes of this test binary as a launcher would,
// each with the variables vars(rank) gives, and waits for them.
func launchFour(t *testing.T, pattern string, vars func(rank int) []string) {
	t.Helper()
	var base []string
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(launcherVars, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			base = append(base, kv)
		}
	}
	cmds := make([]*exec.Cmd, 4)
	outs := make([]strings.Builder, 4)
	for rank := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(slices.Clone(base), append(vars(rank), helperPattern+"="+pattern)...)
		cmd.Stdout, cmd.Stderr = &outs[rank], &outs[rank]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[rank] = cmd
	}
	for rank, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("rank %d: %v: %s", rank, err, outs[rank].String())
		} else if outs[rank].Len() > 0 {
			t.Errorf("rank %d said: %s", rank, outs[rank].String())
		}
	}
}

// analyse runs the fleet analysis over root and checks that it finds the
// four nodes, all PASS.
func analyse(t *testing.T, root string) {
	t.Helper()
	f, err := fleet.Load([]string{root}, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 4 || len(f.Unreadable) > 0 {
		t.Fatalf("the fleet has %d nodes and %d unreadable files, want 4 and none: %+v", len(f.Nodes), len(f.Unreadable), f.Unreadable)
	}
	for _, n := range f.Nodes {
		if n.Verdict != results.StatusPass {
			t.Errorf("node %s: %s %v", n.Name, n.Verdict, n.Reasons)
		}
	}
}

// dirs lists the results directories under root, relative to it.
func dirs(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "results.json" {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFourProcesses starts four processes with the variables srun sets (one
// task on each of four nodes), then four with those mpirun sets (four ranks
// on this host, inside a Slurm allocation whose own variables they inherit),
// and checks that each writes its own directory, named by host and rank,
// and that the fleet analysis reads the four as four nodes.
func TestFourProcesses(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	t.Run("srun", func(t *testing.T) {
		root := t.TempDir()
		launchFour(t, filepath.Join(root, "%j", "%h-%r"), func(rank int) []string {
			return []string{"SLURM_PROCID=" + strconv.Itoa(rank), "SLURM_NTASKS=4", "SLURM_NTASKS_PER_NODE=1",
				"SLURM_JOB_ID=4242", "SLURMD_NODENAME=gpu" + strconv.Itoa(10+rank)}
		})
		want := []string{"4242/gpu10-0", "4242/gpu11-1", "4242/gpu12-2", "4242/gpu13-3"}
		if got := dirs(t, root); !slices.Equal(got, want) {
			t.Errorf("directories %v, want %v", got, want)
		}
		analyse(t, root)
	})
	t.Run("mpirun", func(t *testing.T) {
		root := t.TempDir()
		launchFour(t, filepath.Join(root, "%h-%r"), func(rank int) []string {
			r := strconv.Itoa(rank)
			return []string{"SLURM_PROCID=0", "SLURM_JOB_ID=4242", "OMPI_COMM_WORLD_RANK=" + r, "OMPI_COMM_WORLD_SIZE=4",
				"OMPI_COMM_WORLD_LOCAL_SIZE=4", "PMIX_RANK=" + r, "PMIX_NAMESPACE=prterun-1@1"}
		})
		var want []string
		for rank := range 4 {
			want = append(want, strings.ReplaceAll(host, "/", "_")+"-"+strconv.Itoa(rank))
		}
		if got := dirs(t, root); !slices.Equal(got, want) {
			t.Errorf("directories %v, want %v", got, want)
		}
		analyse(t, root)
	})
}
