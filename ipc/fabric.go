package ipc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/internal/rendezvous"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/results"
)

// A run across the nodes of one multi-node NVLink domain (RunFabric): one
// process per GPU, started by the launcher, the ranks meeting at a TCP
// rendezvous. Before anything is measured each rank checks what fabric
// memory needs of its node and GPU (the IMEX channel device, the fabric
// handle type, the GPU's registration with the fabric), rank 0 checks that
// all ranks share one NVLink domain, and every rank fails with the same line
// when any check does. Then rank 0 is the parent of Run, with VMM memory
// exported as fabric handles: its own GPU is served by a child process, as
// in Run, every other rank serves over its rendezvous connection (Serve).
// An IPC event does not cross nodes, so there are no figures of both
// directions at once, and a peer's buffer cannot be opened in a context on
// the peer's GPU, which is on another node. Not yet validated on
// multi-node hardware: tested with the fake driver, in processes standing
// in for nodes.

// DefaultIMEXChannel is the IMEX channel device a rank must see.
const DefaultIMEXChannel = "/dev/nvidia-caps-imex-channels/channel0"

// ErrPreflight marks the failure of a run across nodes before it measured
// anything: a rank that never arrived, or what a rank or the group lacks.
var ErrPreflight = errors.New("mnnvl preflight")

// FabricOptions are one rank's settings of a run across nodes.
type FabricOptions struct {
	// Options are the settings of the measurements (the tests, none meaning
	// every test across processes that crosses nodes; size, samples,
	// verification, timeouts); on rank 0, Child serves its own GPU. The
	// Monitor reads the GPU's fabric info; RunFabric sets the devices, the
	// handles and the baseline.
	Options
	Rank, Ranks int
	// Device is this rank's GPU on its node; Host names the node (the
	// host name when empty).
	Device int
	Host   string
	// Rendezvous is rank 0's host:port; Job the launcher's job id (the same
	// on every rank); Wait how long the ranks wait for each other.
	Rendezvous, Job string
	Wait            time.Duration
	// IMEXChannel is the channel device every rank must see
	// (DefaultIMEXChannel when empty).
	IMEXChannel string
}

// fabricReport is what a rank tells rank 0 at the rendezvous.
type fabricReport struct {
	Rank     int             `json:"rank"`
	Host     string          `json:"host"`
	Device   cuda.DeviceInfo `json:"device"`
	Fabric   gpu.Fabric      `json:"fabric"`
	Problems []string        `json:"problems,omitempty"`
}

func (f fabricReport) where() string {
	return fmt.Sprintf("device %d of %s", f.Device.Index, f.Host)
}

// fabricRanks is how rank 0's parent reaches each rank.
type fabricRanks struct {
	reports []fabricReport
	peers   []net.Conn
}

// RunFabric is one rank of a run across nodes (see the top of fabric.go).
// On rank 0 the figures go into run, with the ranks as devices; the other
// ranks serve rank 0 until it is done (run is not used). A failed check
// before measuring is an error matching ErrPreflight, one line, the same on
// every rank that reached the rendezvous.
func RunFabric(ctx context.Context, drv gpu.Driver, opt FabricOptions, run *results.Run) error {
	if err := opt.prepareFabric(); err != nil {
		return err
	}
	report, err := json.Marshal(opt.preflight(drv))
	if err != nil {
		return err
	}
	var reports []fabricReport
	judge := func(raw [][]byte) (err error) {
		reports, err = judgeFabric(raw)
		return err
	}
	g, err := rendezvous.Meet(ctx, rendezvous.Config{Addr: opt.Rendezvous, Rank: opt.Rank, Size: opt.Ranks, Job: opt.Job, Wait: opt.Wait},
		report, judge)
	var re *rendezvous.Error
	if errors.As(err, &re) {
		return fmt.Errorf("%w: %s", ErrPreflight, re.Msg)
	}
	if err != nil {
		return err
	}
	defer g.Close()
	if opt.Rank != 0 {
		if err := Serve(ctx, drv, g.Leader); err != nil {
			return fmt.Errorf("rank %d, serving rank 0: %w", opt.Rank, err)
		}
		return nil
	}
	return opt.lead(ctx, drv, g.Peers, reports, run)
}

// maxRanks bounds the processes of a run across nodes: one per GPU, and a
// domain has at most units.MaxDevices GPUs.
const maxRanks = units.MaxDevices

// Validate checks the options of a run across nodes before anything loads:
// this rank's device, the number of processes and this one's rank among
// them, the rendezvous address (HOST:PORT), the waits, and the tests (none
// runs both directions at once, which an IPC event started on one node
// cannot start on another).
func (o *FabricOptions) Validate() error {
	switch {
	case o.Device < 0 || o.Device >= units.MaxDevices:
		return fmt.Errorf("--device %d: device indices go from 0 to %d", o.Device, units.MaxDevices-1)
	case o.Ranks < 2:
		return errors.New("mnnvl needs the number of processes: start it under a launcher (srun, mpirun, a Kubernetes indexed Job) or give --ranks and --rank")
	case o.Ranks > maxRanks:
		return fmt.Errorf("the launcher says %d processes: at most %d", o.Ranks, maxRanks)
	case o.Rank >= o.Ranks || o.Rank < 0:
		return fmt.Errorf("rank %d of %d processes: ranks go from 0 to %d", o.Rank, o.Ranks, o.Ranks-1)
	}
	_, port, err := net.SplitHostPort(o.Rendezvous)
	if err != nil {
		return fmt.Errorf("the rendezvous address %q is not HOST:PORT: give --rendezvous, or set MASTER_ADDR and MASTER_PORT", o.Rendezvous)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("the rendezvous address %q: port %q is not a number from 1 to 65535", o.Rendezvous, port)
	}
	if o.Wait <= 0 || o.Timeout <= 0 {
		return errors.New("--rendezvous-wait and --child-timeout must be positive")
	}
	for _, test := range o.Tests {
		if test.Info().BothWays {
			return fmt.Errorf("--tests: %s runs both directions at once, started by an IPC event, which does not cross nodes; leave out %s",
				test, strings.Join(bothWays(), ", "))
		}
	}
	return nil
}

// bothWays names the tests across processes that run both directions at once.
func bothWays() []string {
	var out []string
	for _, t := range results.Catalogue() {
		if t.Name.IsIPC() && t.BothWays {
			out = append(out, string(t.Name))
		}
	}
	return out
}

// prepareFabric checks the options and sets what a run across nodes fixes.
func (o *FabricOptions) prepareFabric() error {
	if err := o.Validate(); err != nil {
		return fmt.Errorf("mnnvl: %w", err)
	}
	if o.IMEXChannel == "" {
		o.IMEXChannel = DefaultIMEXChannel
	}
	if len(o.Tests) == 0 {
		o.Tests, _ = results.ParseTests("all", results.CommandIPC)
		o.Tests = slices.DeleteFunc(o.Tests, func(t results.Test) bool { return t.Info().BothWays })
	}
	o.Handles, o.SkipSameGPU = []Handles{HandlesFabric}, true
	o.Devices = make([]int, o.Ranks)
	for r := range o.Devices {
		o.Devices[r] = r
	}
	if o.Rank != 0 {
		return nil
	}
	return o.prepare()
}

// preflight checks what this rank needs of its node and GPU: every problem,
// each one line naming the rank and its host.
func (o *FabricOptions) preflight(drv gpu.Driver) fabricReport {
	host := o.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	rep := fabricReport{Rank: o.Rank, Host: host}
	prefix := fmt.Sprintf("rank %d (%s, device %d): ", o.Rank, host, o.Device)
	problem := func(format string, args ...any) {
		rep.Problems = append(rep.Problems, prefix+fmt.Sprintf(format, args...))
	}
	if st, err := os.Stat(o.IMEXChannel); err != nil {
		problem("no IMEX channel device %s (%v): start the IMEX service (nvidia-imex) and give this process the channel", o.IMEXChannel, errors.Unwrap(err))
	} else if st.Mode()&os.ModeCharDevice == 0 {
		problem("%s is not a character device, so not an IMEX channel", o.IMEXChannel)
	}
	info, err := drv.DeviceInfo(o.Device)
	if err != nil {
		problem("%v", err)
		return rep
	}
	rep.Device = info
	if err := HandlesFabric.checkDevice(info); err != nil {
		problem("%v", err)
	}
	if o.Monitor == nil {
		problem("no NVML to read the GPU's fabric info (cluster UUID and clique id)")
		return rep
	}
	if rep.Fabric, err = o.Monitor.Fabric(o.Device, info.PCIBusID); err != nil {
		problem("the GPU's fabric info (cluster UUID and clique id) cannot be read: %v", err)
	} else if rep.Fabric.Unregistered != "" {
		problem("the GPU is not registered with the NVLink fabric (%s): is the fabric manager running?", rep.Fabric.Unregistered)
	}
	return rep
}

// judgeFabric reads every rank's report and gives rank 0's verdict: the
// first problem (and how many more), else ranks in more than one NVLink
// domain.
func judgeFabric(raw [][]byte) ([]fabricReport, error) {
	reports := make([]fabricReport, len(raw))
	var problems []string
	var troubled []int
	for r, b := range raw {
		if err := json.Unmarshal(b, &reports[r]); err != nil || reports[r].Rank != r {
			return nil, fmt.Errorf("rank %d sent a report rank 0 cannot read (is it another version of p2pbench?)", r)
		}
		problems = append(problems, reports[r].Problems...)
		if len(reports[r].Problems) > 0 {
			troubled = append(troubled, r)
		}
	}
	if len(problems) > 0 {
		msg := problems[0]
		if n := len(problems) - 1; n > 0 {
			msg += fmt.Sprintf(" (%d more problem(s) in all, of %s)", n, rankList(troubled))
		}
		return nil, errors.New(msg)
	}
	domains := map[gpu.Fabric][]int{}
	var order []gpu.Fabric
	for _, rep := range reports {
		if domains[rep.Fabric] == nil {
			order = append(order, rep.Fabric)
		}
		domains[rep.Fabric] = append(domains[rep.Fabric], rep.Rank)
	}
	if len(order) == 1 {
		return reports, nil
	}
	var parts []string
	for _, f := range order {
		parts = append(parts, fmt.Sprintf("%s on fabric cluster %s clique %d", rankList(domains[f]), f.ClusterUUID, f.CliqueID))
	}
	return nil, fmt.Errorf("the ranks are not in one NVLink domain (one cluster UUID and clique id): %s", strings.Join(parts, "; "))
}

// rankList names ranks: "rank 3", "ranks 0, 1, 2".
func rankList(ranks []int) string {
	if len(ranks) == 1 {
		return fmt.Sprintf("rank %d", ranks[0])
	}
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = fmt.Sprint(r)
	}
	return "ranks " + strings.Join(s, ", ")
}

// lead is rank 0's part once every rank passed its checks: Run's parent
// measures with the ranks as its devices, the run records each rank's GPU
// as the device of its number, and the notes say where each rank ran.
func (o *FabricOptions) lead(ctx context.Context, drv gpu.Driver, peers []net.Conn, reports []fabricReport, run *results.Run) error {
	opt := o.Options
	// This node's NVML cannot read the other nodes' GPUs, nor see their
	// processes.
	opt.Monitor, opt.Watch = nil, nil
	opt.fabric = &fabricRanks{reports: reports, peers: peers}
	infos := make([]cuda.DeviceInfo, len(reports))
	run.Environment.Devices = nil
	var where []string
	for r, rep := range reports {
		infos[r] = rep.Device
		infos[r].Index = r
		run.Environment.Devices = append(run.Environment.Devices, gpu.DeviceRecord(infos[r]))
		where = append(where, fmt.Sprintf("rank %d = %s", r, rep.where()))
	}
	run.Notes = append(run.Notes,
		fmt.Sprintf("mnnvl: %d ranks met at the rendezvous %s, all in NVLink domain cluster %s clique %d; devices are numbered by rank: %s",
			len(reports), o.Rendezvous, reports[0].Fabric.ClusterUUID, reports[0].Fabric.CliqueID, strings.Join(where, ", ")),
		"mnnvl: no figures of both directions at once (an IPC event, which starts both, does not cross nodes), and no copies through a context on the peer's GPU (it is on another node)",
		"mnnvl: the path across nodes is not yet validated on multi-node NVLink hardware")
	return runHandles(ctx, drv, opt, HandlesFabric, infos, run)
}

// startRank starts the child of rank on device dev: a process of its own,
// or, across nodes, rank 0's GPU served by a process of its own and every
// other rank by its process on its node, over its rendezvous connection.
func (r *parent) startRank(rank, dev int) (*childProc, error) {
	f := r.opt.fabric
	if f == nil {
		return startChild(r.opt.Child, rank, dev)
	}
	rep := f.reports[rank]
	if rank > 0 {
		return remoteChild(f.peers[rank], rank, dev, rep.Device.Index, rep.where()), nil
	}
	k, err := startChild(r.opt.Child, rank, dev)
	if err == nil {
		k.local, k.where = rep.Device.Index, rep.where()
	}
	return k, err
}

// processes says how the run's GPUs are served, for its notes.
func (r *parent) processes() string {
	if r.opt.fabric != nil {
		return "one process per GPU across nodes: rank 0's GPU served by a child of rank 0's process, every other rank by its own process over its rendezvous connection"
	}
	return "one child process per device"
}
