package launch_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/internal/launch"
)

var start = time.Date(2025, 6, 2, 9, 30, 5, 0, time.UTC)

// detect runs Detect on a fake environment and host name.
func detect(t *testing.T, env map[string]string) launch.Env {
	t.Helper()
	e, err := launch.Detect(func(k string) string { return env[k] }, func() (string, error) { return "box.example.com", nil })
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want launch.Env
	}{
		{"no launcher", nil, launch.Env{Host: "box.example.com"}},
		{"srun", map[string]string{"SLURM_PROCID": "3", "SLURM_NTASKS": "8", "SLURM_NTASKS_PER_NODE": "1", "SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "gpu017"},
			launch.Env{Launcher: "Slurm", Rank: 3, Size: 8, LocalSize: 1, Host: "gpu017", JobID: "4242"}},
		{"srun, four per node", map[string]string{"SLURM_PROCID": "6", "SLURM_NTASKS": "8", "SLURM_NTASKS_PER_NODE": "4", "SLURM_LOCALID": "2", "SLURMD_NODENAME": "gpu018"},
			launch.Env{Launcher: "Slurm", Rank: 6, Size: 8, LocalSize: 4, LocalRank: 2, Host: "gpu018"}},
		// What srun -n 4 on one node sets (Slurm 22.05): no
		// SLURM_NTASKS_PER_NODE without --ntasks-per-node.
		{"srun -n 4 on one node", map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1", "SLURM_NODEID": "0",
			"SLURM_STEP_TASKS_PER_NODE": "4", "SLURM_TASKS_PER_NODE": "4", "SLURM_JOB_ID": "3", "SLURMD_NODENAME": "vm"},
			launch.Env{Launcher: "Slurm", Rank: 1, Size: 4, LocalSize: 4, LocalRank: 1, Host: "vm", JobID: "3"}},
		{"srun, the fourth node of 2(x3),1", map[string]string{"SLURM_PROCID": "6", "SLURM_NTASKS": "7", "SLURM_NODEID": "3",
			"SLURM_STEP_TASKS_PER_NODE": "2(x3),1", "SLURM_NTASKS_PER_NODE": "2", "SLURMD_NODENAME": "gpu4"},
			launch.Env{Launcher: "Slurm", Rank: 6, Size: 7, LocalSize: 1, Host: "gpu4"}},
		{"srun, the job's tasks per node", map[string]string{"SLURM_PROCID": "2", "SLURM_NODEID": "1", "SLURM_TASKS_PER_NODE": "1,3", "SLURMD_NODENAME": "gpu2"},
			launch.Env{Launcher: "Slurm", Rank: 2, LocalSize: 3, Host: "gpu2"}},
		{"mpirun inside a Slurm allocation", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "gpu017",
			"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "16", "OMPI_COMM_WORLD_LOCAL_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "5", "PMIX_RANK": "5", "PMIX_NAMESPACE": "prterun-gpu017-1@1"},
			launch.Env{Launcher: "Open MPI", Rank: 5, Size: 16, LocalSize: 8, LocalRank: 5, Host: "box.example.com", JobID: "4242"}},
		{"PMIx", map[string]string{"PMIX_RANK": "2", "PMIX_NAMESPACE": "prterun-a/1@1"},
			launch.Env{Launcher: "PMIx", Rank: 2, Host: "box.example.com", JobID: "prterun-a/1@1"}},
		{"Kubernetes indexed Job", map[string]string{"JOB_COMPLETION_INDEX": "7"},
			launch.Env{Launcher: "Kubernetes indexed Job", Rank: 7, Host: "box.example.com"}},
		{"torchrun's rendezvous", map[string]string{"MASTER_ADDR": "fe80::1", "MASTER_PORT": "29500"},
			launch.Env{Host: "box.example.com", Master: "[fe80::1]:29500"}},
		{"MASTER_ADDR without its port", map[string]string{"MASTER_ADDR": "node0"}, launch.Env{Host: "box.example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := detect(t, tt.env); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDetectErrors(t *testing.T) {
	for _, env := range []map[string]string{
		{"SLURM_PROCID": "x"},
		{"OMPI_COMM_WORLD_RANK": "-1"},
		{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "0"},
		{"SLURM_PROCID": "1", "SLURM_NTASKS_PER_NODE": "2(x3)"},
		{"SLURM_PROCID": "1", "SLURM_STEP_TASKS_PER_NODE": "2(x3"},
		{"SLURM_PROCID": "1", "SLURM_STEP_TASKS_PER_NODE": "2(x0)"},
		{"SLURM_PROCID": "1", "SLURM_STEP_TASKS_PER_NODE": "2,2", "SLURM_NODEID": "2"},
		{"SLURM_PROCID": "1", "SLURM_STEP_TASKS_PER_NODE": "2", "SLURM_NODEID": "x"},
	} {
		if _, err := launch.Detect(func(k string) string { return env[k] }, nil); err == nil {
			t.Errorf("%v: no error", env)
		}
	}
	_, err := launch.Detect(func(string) string { return "" }, func() (string, error) { return "", errors.New("no name") })
	if err == nil || !strings.Contains(err.Error(), "host name") {
		t.Errorf("a failing host name gave %v", err)
	}
}

// The default pattern tells a launcher's processes apart, and no warning
// comes of it.
func TestDefaultPattern(t *testing.T) {
	for _, tt := range []struct {
		env  launch.Env
		want string
	}{
		{launch.Env{Host: "box"}, "p2pbench-box-20250602-093005"},
		{launch.Env{Launcher: "Slurm", Rank: 3, Size: 8, LocalSize: 4, Host: "gpu017"}, "p2pbench-gpu017-3-20250602-093005"},
	} {
		got, warning, err := tt.env.Expand(tt.env.DefaultPattern(), start)
		if err != nil || warning != "" || got != tt.want {
			t.Errorf("%+v: %q, warning %q, %v; want %q", tt.env, got, warning, err, tt.want)
		}
	}
}

func TestExpand(t *testing.T) {
	slurm := launch.Env{Launcher: "Slurm", Rank: 3, Size: 8, LocalSize: 1, Host: "gpu017", JobID: "4242"}
	mpi := launch.Env{Launcher: "Open MPI", Rank: 5, Size: 16, LocalSize: 8, Host: "gpu017", JobID: "ns/1"}
	k8s := launch.Env{Launcher: "Kubernetes indexed Job", Rank: 7, Host: "p2pbench-7-x2k9q"}
	alone := launch.Env{Host: "box"}
	tests := []struct {
		env      launch.Env
		pattern  string
		want     string
		warns    string // a word of the warning, "" for none
		errWords string // a word of the error, "" for none
	}{
		{slurm, "out/%j/%h-%r", "out/4242/gpu017-3", "", ""},
		{slurm, "p2pbench-%h-%t", "p2pbench-gpu017-20250602-093005", "", ""},
		{slurm, "100%%-%r", "100%-3", "", ""},
		{slurm, "results", "results", "8 processes", ""},
		{mpi, "%j/%h", "ns_1/gpu017", "by host only", ""},
		{mpi, "%j/%h-%r", "ns_1/gpu017-5", "", ""},
		{k8s, "/results/%h", "/results/p2pbench-7-x2k9q", "", ""},
		{k8s, "/results/run", "/results/run", "several processes", ""},
		{alone, "p2pbench-%h-%r", "p2pbench-box-0", "", ""},
		{alone, "%j", "", "", "no launcher job id"},
		{slurm, "out-%x", "", "", "%x"},
		{slurm, "out-%", "", "", "lone %"},
	}
	for _, tt := range tests {
		got, warning, err := tt.env.Expand(tt.pattern, start)
		switch {
		case tt.errWords != "":
			if err == nil || !strings.Contains(err.Error(), tt.errWords) {
				t.Errorf("%s with %s: error %v, want one saying %q", tt.pattern, tt.env.Launcher, err, tt.errWords)
			}
		case err != nil:
			t.Errorf("%s with %s: %v", tt.pattern, tt.env.Launcher, err)
		case got != tt.want:
			t.Errorf("%s with %s: %q, want %q", tt.pattern, tt.env.Launcher, got, tt.want)
		case (warning == "") != (tt.warns == "") || !strings.Contains(warning, tt.warns):
			t.Errorf("%s with %s: warning %q, want one saying %q", tt.pattern, tt.env.Launcher, warning, tt.warns)
		}
	}
}
