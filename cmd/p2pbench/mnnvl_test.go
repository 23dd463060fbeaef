package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/p2pbench/p2pbench/internal/fakelib"
	"github.com/p2pbench/p2pbench/results"
)

// The fake driver and NVML, for processes that stand in for nodes: the fake
// libcuda shares fabric memory between processes through files in
// $FAKECUDA_FABRIC_DIR (named by the 64-byte fabric handles), runs the
// verification kernels and the SM copies, and its NVML reports a cluster and
// clique the environment can change.
var (
	fakeCUDA = &fakelib.Set{Src: "../../cuda/testdata/fakecuda.c", LibName: "libcuda.so.1"}
	fakeNVML = &fakelib.Set{Src: "../../nvml/testdata/fakenvml.c", LibName: "libnvidia-ml.so.1"}
)

// mnnvlNodes is four ranks of `p2pbench mnnvl` started as srun starts them,
// each a process of this test binary with its own Slurm variables, all on
// the fake driver; extra[rank] adds flags and variables to one rank.
type mnnvlNodes struct {
	t      *testing.T
	dir    string
	marker string // in every process's environment, children's too
	addr   string
}

func newMNNVLNodes(t *testing.T) *mnnvlNodes {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no TCP: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	n := &mnnvlNodes{t: t, dir: t.TempDir(), marker: fmt.Sprintf("P2PBENCH_MNNVL_TEST=%d-%d", os.Getpid(), time.Now().UnixNano()), addr: addr}
	if err := os.Mkdir(filepath.Join(n.dir, "fabric"), 0o755); err != nil {
		t.Fatal(err)
	}
	return n
}

type rankSetup struct {
	args []string // more flags
	env  []string // more variables
}

type rankResult struct {
	status         int
	stdout, stderr string
}

// run starts the ranks present (of 4) at once and waits for them all.
func (n *mnnvlNodes) run(present []int, common []string, setups map[int]rankSetup) []rankResult {
	t := n.t
	t.Helper()
	port := n.addr[strings.LastIndex(n.addr, ":")+1:]
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM") && !strings.HasPrefix(kv, "OMPI_") && !strings.HasPrefix(kv, "PMIX_") && !strings.HasPrefix(kv, "P2PBENCH_LIB") {
			base = append(base, kv)
		}
	}
	base = append(base, asMain+"=1", n.marker, "P2PBENCH_LIBCUDA="+fakeCUDA.Path(t, ""), "P2PBENCH_LIBNVML="+fakeNVML.Path(t, ""),
		"FAKECUDA_FABRIC_DIR="+filepath.Join(n.dir, "fabric"), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+port,
		"SLURM_NTASKS=4", "SLURM_NTASKS_PER_NODE=1", "SLURM_LOCALID=0", "SLURM_JOB_ID=1717")
	cmds := map[int]*exec.Cmd{}
	outs := map[int]*[2]bytes.Buffer{}
	for _, r := range present {
		args := append([]string{"mnnvl", "--imex-channel", "/dev/null", "--size", "64KiB", "--samples", "2", "--rendezvous-wait", "5s", "--child-timeout", "20s"}, common...)
		if r == 0 {
			args = append(args, "-o", filepath.Join(n.dir, "results.json"))
		}
		// A rank's own flags replace the defaults (a flag is given once).
		for extra := setups[r].args; len(extra) >= 2; extra = extra[2:] {
			if i := slices.Index(args, extra[0]); i >= 0 {
				args[i+1] = extra[1]
			} else {
				args = append(args, extra[:2]...)
			}
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(slices.Clone(base), fmt.Sprintf("SLURM_PROCID=%d", r), fmt.Sprintf("SLURMD_NODENAME=node%d", r))
		cmd.Env = append(cmd.Env, setups[r].env...)
		outs[r] = &[2]bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = &outs[r][0], &outs[r][1]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[r] = cmd
	}
	res := make([]rankResult, 4)
	for _, r := range present {
		done := make(chan error, 1)
		go func() { done <- cmds[r].Wait() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmds[r].Process.Kill()
			<-done
			t.Errorf("rank %d still ran after a minute: killed", r)
		}
		res[r] = rankResult{cmds[r].ProcessState.ExitCode(), outs[r][0].String(), outs[r][1].String()}
	}
	n.checkNoneLeft()
	return res
}

// checkNoneLeft fails when a process of the test (a rank, or a child a rank
// started) is still there 5 s after the ranks ended: those found then are
// waited on until they end (a rank's child dies by Pdeathsig, which the
// kernel sends as the rank ends, but takes its time).
func (n *mnnvlNodes) checkNoneLeft() {
	n.t.Helper()
	var found []int
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		env, err := os.ReadFile(p)
		if err == nil && bytes.Contains(env, []byte(n.marker+"\x00")) {
			pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
			found = append(found, pid)
		}
	}
	if left := waitGone(n.t, found, 5*time.Second); len(left) > 0 {
		n.t.Errorf("processes of the run left behind: %v", left)
	}
}

// The tests the fake driver can run: the latency kernels it does not run.
var fakeTests = []string{"--tests", "ipc_ce_read,ipc_ce_write,ipc_sm_read,ipc_sm_write"}

// Four processes standing in for four nodes meet at the rendezvous, pass
// their checks, exchange fabric handles and measure every ordered pair of
// ranks; the data that moved between the processes is verified, rank 0
// writes the results, and the fabric memory is gone at the end.
func TestMNNVL(t *testing.T) {
	t.Parallel()
	n := newMNNVLNodes(t)
	res := n.run([]int{0, 1, 2, 3}, fakeTests, nil)
	for r, o := range res {
		if o.status != exitOK {
			t.Fatalf("rank %d: exit status %d: %s", r, o.status, o.stderr)
		}
	}
	if !strings.Contains(res[0].stdout, "Across processes: copy engine read") {
		t.Errorf("rank 0 printed no matrix:\n%s", res[0].stdout)
	}
	if !strings.Contains(res[2].stderr, "rank 2 served rank 0") {
		t.Errorf("rank 2 said %q", res[2].stderr)
	}
	run, err := results.Read(filepath.Join(n.dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Figures) != 4*3*4 || len(run.Environment.Devices) != 4 {
		t.Errorf("%d figures on %d devices, want 48 on the 4 ranks", len(run.Figures), len(run.Environment.Devices))
	}
	for _, f := range run.Figures {
		if f.Error != "" || f.Verify != results.VerifyPassed || f.Params[results.ParamIPCHandle] != results.IPCHandleFabric {
			t.Errorf("%s %d→%d: error %q, verify %s, %s=%q", f.Test, f.Src, f.Dst, f.Error, f.Verify, results.ParamIPCHandle, f.Params[results.ParamIPCHandle])
		}
	}
	if !slices.ContainsFunc(run.Notes, func(s string) bool { return strings.Contains(s, "rank 3 = device 0 of node3") }) {
		t.Errorf("the notes do not say where each rank ran: %q", run.Notes)
	}
	if left, _ := os.ReadDir(filepath.Join(n.dir, "fabric")); len(left) != 0 {
		t.Errorf("%d fabric memory files left", len(left))
	}
}

// Each failed check before measuring is one line, the same on every rank,
// and exit status 3 on every rank, with no process left.
func TestMNNVLPreflight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		present []int
		setups  map[int]rankSetup
		want    string
	}{
		{"no IMEX channel", []int{0, 1, 2, 3}, map[int]rankSetup{2: {args: []string{"--imex-channel", "/nonexistent/channel0"}}},
			"mnnvl preflight: rank 2 (node2, device 0): no IMEX channel device /nonexistent/channel0 (no such file or directory)"},
		{"no fabric handles", []int{0, 1, 2, 3}, map[int]rankSetup{1: {env: []string{"FAKECUDA_NO_FABRIC=1"}}},
			"mnnvl preflight: rank 1 (node1, device 0): device 0 does not support fabric handles (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is 0)"},
		{"another clique", []int{0, 1, 2, 3}, map[int]rankSetup{3: {env: []string{"FAKENVML_FABRIC_CLIQUE=9"}}},
			"mnnvl preflight: the ranks are not in one NVLink domain (one cluster UUID and clique id): ranks 0, 1, 2 on fabric cluster 00112233-4455-6677-8899-aabbccddeeff clique 7; rank 3 on fabric cluster 00112233-4455-6677-8899-aabbccddeeff clique 9"},
		{"a rank never arrives", []int{0, 1, 2}, map[int]rankSetup{0: {args: []string{"--rendezvous-wait", "1s"}}},
			"mnnvl preflight: rank 3 of 4 never arrived at the rendezvous on 127.0.0.1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newMNNVLNodes(t)
			res := n.run(tc.present, fakeTests, tc.setups)
			for _, r := range tc.present {
				o := res[r]
				lines := strings.Split(strings.TrimSpace(o.stderr), "\n")
				if o.status != exitNoGPU || len(lines) != 1 || !strings.HasPrefix(lines[0], "p2pbench: "+tc.want) {
					t.Errorf("rank %d: exit status %d, stderr %q\nwant %d and one line %q", r, o.status, o.stderr, exitNoGPU, tc.want)
				}
			}
			if _, err := os.Stat(filepath.Join(n.dir, "results.json")); err == nil {
				t.Error("rank 0 wrote a results file without measuring")
			}
		})
	}
}
