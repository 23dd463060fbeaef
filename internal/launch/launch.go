// Package launch names a run's output after the process that made it, as
// the launcher that started it sees it: under srun, mpirun (Open MPI),
// another PMIx launcher or a Kubernetes indexed Job, each of many processes
// writes its own results directory, named by host and rank, without any
// cluster manager of p2pbench's own. Detect reads the launcher's
// environment; Env.Expand fills a pattern such as "results/%j/%h-%r" from it.
//
// It imports nothing of the project.
package launch

import (
	"cmp"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Env is what the launcher says about this process.
type Env struct {
	// Launcher names what set the rank ("Open MPI", "PMIx", "Slurm",
	// "Kubernetes indexed Job"), "" when no launcher started the process.
	Launcher string
	// Rank is the process's rank among those the launcher started; 0 for a
	// process no launcher started (a singleton is rank 0 of 1).
	Rank int
	// Size is the number of processes the launcher started, 0 when it does
	// not say (PMIx and a Kubernetes Job do not).
	Size int
	// LocalSize is the number of those on this host, 0 when unknown;
	// LocalRank this process's rank among them (0 when the launcher does
	// not say: PMIx and a Kubernetes Job).
	LocalSize, LocalRank int
	// Host is the node's name: SLURMD_NODENAME when Slurm set the rank (the
	// name Slurm knows the node by), else the host name.
	Host string
	// JobID identifies the launcher's job: SLURM_JOB_ID, else PMIX_NAMESPACE;
	// "" when neither is set.
	JobID string
	// Master is MASTER_ADDR:MASTER_PORT, the rendezvous address the
	// training launchers (torchrun, a PyTorchJob) give every process; ""
	// unless both are set.
	Master string
}

// ranks are the variables that carry a process's rank, in order of
// precedence: the innermost launcher first. mpirun started inside a Slurm
// allocation passes the allocation's SLURM_* variables on to the processes
// it starts, so Open MPI's own rank must win over SLURM_PROCID; srun with
// PMIx sets PMIX_RANK equal to SLURM_PROCID.
var ranks = []struct {
	launcher, rank, size, localSize, localRank string
}{
	{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMIx", "PMIX_RANK", "", "", ""},
	{"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE", "SLURM_LOCALID"},
	{"Kubernetes indexed Job", "JOB_COMPLETION_INDEX", "", "", ""},
}

// Detect reads the launcher's environment through getenv (os.Getenv) and
// the host name through hostname (os.Hostname), which it calls only when
// Slurm does not name the node. A rank or size that is not a number is an
// error: it means the environment is not what it claims to be.
//
// The rank comes from the first of these that is set, the innermost
// launcher first: OMPI_COMM_WORLD_RANK (Open MPI's mpirun), PMIX_RANK (any
// PMIx launcher), SLURM_PROCID (srun), JOB_COMPLETION_INDEX (a Kubernetes
// indexed Job). The size, the processes per host and the rank among them
// come from the same launcher's variables (OMPI_COMM_WORLD_SIZE,
// _LOCAL_SIZE and _LOCAL_RANK; SLURM_NTASKS, SLURM_NTASKS_PER_NODE and
// SLURM_LOCALID; under srun the tasks on this node come from
// SLURM_STEP_TASKS_PER_NODE and SLURM_NODEID). A Kubernetes pod's host name
// is the pod's.
func Detect(getenv func(string) string, hostname func() (string, error)) (Env, error) {
	var e Env
	for _, r := range ranks {
		v := getenv(r.rank)
		if v == "" {
			continue
		}
		rank, err := strconv.Atoi(v)
		if err != nil || rank < 0 {
			return Env{}, fmt.Errorf("%s=%q is not a rank", r.rank, v)
		}
		e.Launcher, e.Rank = r.launcher, rank
		for _, c := range []struct {
			name  string
			to    *int
			least int
		}{{r.size, &e.Size, 1}, {r.localSize, &e.LocalSize, 1}, {r.localRank, &e.LocalRank, 0}} {
			if c.name == "" || getenv(c.name) == "" {
				continue
			}
			n, err := strconv.Atoi(getenv(c.name))
			if err != nil || n < c.least {
				return Env{}, fmt.Errorf("%s=%q is not a number of processes or a rank", c.name, getenv(c.name))
			}
			*c.to = n
		}
		if e.Launcher == "Slurm" {
			n, err := slurmTasksHere(getenv)
			if err != nil {
				return Env{}, err
			}
			e.LocalSize = cmp.Or(n, e.LocalSize)
		}
		break
	}
	e.JobID = cmp.Or(getenv("SLURM_JOB_ID"), getenv("PMIX_NAMESPACE"))
	if addr, port := getenv("MASTER_ADDR"), getenv("MASTER_PORT"); addr != "" && port != "" {
		e.Master = net.JoinHostPort(addr, port)
	}
	if e.Launcher == "Slurm" {
		// Processes that mpirun starts inherit the SLURM_* variables of
		// the allocation, which may name another node.
		e.Host = getenv("SLURMD_NODENAME")
	}
	if e.Host == "" {
		h, err := hostname()
		if err != nil {
			return Env{}, fmt.Errorf("reading the host name: %w", err)
		}
		e.Host = h
	}
	return e, nil
}

// slurmTasksHere is the number of the step's tasks on this node, 0 when
// Slurm does not say. srun sets SLURM_NTASKS_PER_NODE only for
// --ntasks-per-node; what it always sets is SLURM_STEP_TASKS_PER_NODE (the
// job's is SLURM_TASKS_PER_NODE), a count per node of the step's nodes in
// their order, runs of equal counts written N(xK) ("4", "2(x3),1"), and
// SLURM_NODEID, this node's place among them.
func slurmTasksHere(getenv func(string) string) (int, error) {
	name := "SLURM_STEP_TASKS_PER_NODE"
	list := getenv(name)
	if list == "" {
		name = "SLURM_TASKS_PER_NODE"
		list = getenv(name)
	}
	if list == "" {
		return 0, nil
	}
	node := 0
	if v := getenv("SLURM_NODEID"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("SLURM_NODEID=%q is not a node's place in the job", v)
		}
		node = n
	}
	bad := fmt.Errorf("%s=%q is not a list of tasks per node, such as 4 or 2(x3),1", name, list)
	for _, run := range strings.Split(list, ",") {
		count, times := run, "1"
		if c, rest, ok := strings.Cut(run, "(x"); ok {
			r, found := strings.CutSuffix(rest, ")")
			if !found {
				return 0, bad
			}
			count, times = c, r
		}
		n, err1 := strconv.Atoi(count)
		k, err2 := strconv.Atoi(times)
		if err1 != nil || err2 != nil || n < 1 || k < 1 {
			return 0, bad
		}
		if node < k {
			return n, nil
		}
		node -= k
	}
	return 0, fmt.Errorf("SLURM_NODEID=%s is beyond the nodes of %s=%q", getenv("SLURM_NODEID"), name, list)
}

// several reports whether other processes of the same launch may exist: the
// launcher says there are more than one, or it started this process and
// does not say how many.
func (e Env) several() bool { return e.Size > 1 || e.Size == 0 && e.Launcher != "" }

// processes says how many processes n is, "several" when unknown.
func processes(n int) string {
	if n == 0 {
		return "several processes"
	}
	return fmt.Sprintf("%d processes", n)
}

// TimeLayout is how %t writes the start time: the layout of p2pbench's
// default results directory names.
const TimeLayout = "20060102-150405"

// DefaultPattern is the pattern of the results directory of a run that
// names none: p2pbench-%h-%t, and under a launcher, which may start
// several processes on one host, p2pbench-%h-%r-%t.
func (e Env) DefaultPattern() string {
	if e.Launcher != "" {
		return "p2pbench-%h-%r-%t"
	}
	return "p2pbench-%h-%t"
}

// Expand fills pattern from the environment: %h the host, %r the rank, %j
// the job id, %t the start time (TimeLayout, in start's zone), %% a
// percent sign. Any other %x, a % at the end, or %j without a job id is an
// error. Host and job id are written with path separators replaced by
// underscores, so that they name one directory level.
//
// The warning is non-empty when several processes may run and the pattern
// does not tell them apart (no %r, and no %h or the launcher says several
// processes share this host): they would all write to the same directory.
func (e Env) Expand(pattern string, start time.Time) (path, warning string, err error) {
	var b strings.Builder
	byRank, byHost := false, false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(pattern) {
			return "", "", fmt.Errorf("output pattern %q ends in a lone %%; write %%%% for a percent sign", pattern)
		}
		i++
		switch pattern[i] {
		case '%':
			b.WriteByte('%')
		case 'h':
			b.WriteString(oneLevel(e.Host))
			byHost = true
		case 'r':
			b.WriteString(strconv.Itoa(e.Rank))
			byRank = true
		case 'j':
			if e.JobID == "" {
				return "", "", fmt.Errorf("output pattern %q has %%j, but no launcher job id is set (SLURM_JOB_ID, PMIX_NAMESPACE)", pattern)
			}
			b.WriteString(oneLevel(e.JobID))
		case 't':
			b.WriteString(start.Format(TimeLayout))
		default:
			return "", "", fmt.Errorf("output pattern %q has %%%c, which p2pbench does not know (%%h host, %%r rank, %%j job id, %%t time, %%%% percent sign)", pattern, pattern[i])
		}
	}
	switch {
	case !e.several() || byRank:
	case !byHost:
		warning = fmt.Sprintf("output pattern %q does not tell processes apart, but %s started %s: they may write to the same directory; add %%r (rank) or %%h (host)",
			pattern, e.Launcher, processes(e.Size))
	case e.LocalSize > 1:
		warning = fmt.Sprintf("output pattern %q tells processes apart by host only, but %s started %s on this host: add %%r (rank)",
			pattern, e.Launcher, processes(e.LocalSize))
	}
	return b.String(), warning, nil
}

// oneLevel replaces path separators so that s names one directory level.
func oneLevel(s string) string { return strings.NewReplacer("/", "_", `\`, "_").Replace(s) }
