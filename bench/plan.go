package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/results"
)

// TestInfo describes one test a user can select by name.
type TestInfo struct {
	Name    string
	Command string // the subcommand it belongs to: bw, lat, atomic
	Doc     string
}

// Tests lists every test, in the order a run makes them.
var Tests = []TestInfo{
	{"h2d", "bw", "host → device copy, pinned memory"},
	{"d2h", "bw", "device → host copy, pinned memory"},
	{"local_copy", "bw", "copy within one device's memory"},
	{"ce_read", "bw", "copy engine, cuMemcpyPeerAsync issued by the destination (pull)"},
	{"ce_write", "bw", "copy engine, cuMemcpyPeerAsync issued by the source (push)"},
	{"ce_bidir", "bw", "copy engine, both directions at once (read and write variants)"},
	{"sm_read", "bw", "SM copy kernel on the destination reading the peer (pull)"},
	{"sm_write", "bw", "SM copy kernel on the source writing the peer (push)"},
	{"sm_bidir", "bw", "SM copy kernels, both directions at once (read and write variants)"},
	{"nop2p_copy", "bw", "cuMemcpyPeerAsync with peer access disabled (staged through the host)"},
	{"all_to_one", "bw", "every other device pushing to one device at once"},
	{"one_to_all", "bw", "one device pushing to every other at once"},
	{"all_pairs", "bw", "every ordered pair copying at once"},
	{"lat_chase", "lat", "pointer chase through local and peer memory, in and beyond L2"},
	{"lat_pingpong", "lat", "flag ping-pong between two GPUs (system-scope release/acquire)"},
	{"lat_copy", "lat", "completion time of one small cuMemcpyPeerAsync, device-timed and host-timed"},
	{"atomic_tput", "atomic", "atomic throughput per operation, distinct addresses and contended"},
	{"atomic_latency", "atomic", "latency of a dependent chain of atomics"},
	// The same tests across processes (RunIPC), named for the in-process
	// test they repeat.
	{"ipc_ce_read", "ipc", "copy engine (cuMemcpyAsync on the IPC-mapped address) issued by the destination's process (pull)"},
	{"ipc_ce_write", "ipc", "copy engine (cuMemcpyAsync on the IPC-mapped address) issued by the source's process (push)"},
	{"ipc_ce_bidir", "ipc", "copy engine, both processes at once, started by one latch through an IPC event"},
	{"ipc_sm_read", "ipc", "SM copy kernel in the destination's process reading the mapped peer buffer (pull)"},
	{"ipc_sm_write", "ipc", "SM copy kernel in the source's process writing the mapped peer buffer (push)"},
	{"ipc_sm_bidir", "ipc", "SM copy kernels, both processes at once, started by one latch through an IPC event"},
	{"ipc_lat_chase", "ipc", "pointer chase through the peer process's memory, chain built through the mapping"},
	{"ipc_lat_pingpong", "ipc", "flag ping-pong between two processes, each flag in its owner's memory"},
}

// needsPair lists the tests that measure something only between two
// devices; on one device they have nothing to run.
var needsPair = map[string]bool{
	"ce_read": true, "ce_write": true, "ce_bidir": true, "sm_read": true, "sm_write": true, "sm_bidir": true,
	"nop2p_copy": true, "all_to_one": true, "one_to_all": true, "all_pairs": true,
	"lat_pingpong": true, "lat_copy": true,
}

// NeedsTwoDevices reports whether a test measures only between two devices.
// The IPC tests do not: on one device they measure two processes sharing it.
func NeedsTwoDevices(test string) bool { return needsPair[test] }

// TestNames returns the names of the tests of a command ("" for all).
func TestNames(command string) []string {
	var out []string
	for _, t := range Tests {
		if command == "" || t.Command == command {
			out = append(out, t.Name)
		}
	}
	return out
}

// ParseTests checks a comma-separated test list against the tests of a
// command; "all" or "" selects every one of them.
func ParseTests(s, command string) ([]string, error) {
	valid := TestNames(command)
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return valid, nil
	}
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(valid, t) {
			return nil, fmt.Errorf("unknown test %q; the tests are: %s", t, strings.Join(valid, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (e *Engine) selected(test string) bool { return slices.Contains(e.opt.Tests, test) }

func (e *Engine) needsBandwidthBuffers() bool {
	for _, t := range e.opt.Tests {
		if slices.Contains(TestNames("bw"), t) {
			return true
		}
	}
	return false
}

// plan turns the selected tests into steps.
func (e *Engine) plan() []step {
	// Tuning goes first, so the SM tests after it use what it found.
	steps := e.tuneSteps()
	size := e.opt.Size
	for _, d := range e.order {
		dv := e.devs[d]
		for _, t := range []string{"h2d", "d2h"} {
			if e.selected(t) {
				steps = append(steps, step{fmt.Sprintf("%s device %d", t, d), func(ctx context.Context) {
					host, err := e.hostBuffer(size)
					if err != nil {
						e.add(failFigure(hostFigure(t, d, size), err))
						return
					}
					e.hostCopy(ctx, t, dv, host, size)
				}})
			}
		}
		if e.selected("local_copy") {
			steps = append(steps, step{fmt.Sprintf("local copy device %d", d), func(ctx context.Context) { e.localCopy(ctx, dv, size) }})
		}
	}
	for _, s := range e.order {
		for _, d := range e.order {
			if s == d {
				continue
			}
			sd, dd := e.devs[s], e.devs[d]
			steps = append(steps, step{fmt.Sprintf("pair %d→%d", s, d), func(ctx context.Context) { e.pairTests(ctx, sd, dd) }})
		}
	}
	if e.selected("nop2p_copy") {
		for _, s := range e.order {
			for _, d := range e.order {
				if s != d {
					sd, dd := e.devs[s], e.devs[d]
					steps = append(steps, step{fmt.Sprintf("no-P2P copy %d→%d", s, d), func(ctx context.Context) {
						e.uniPair(ctx, "nop2p_copy", sd, dd, size)
					}})
				}
			}
		}
	}
	if len(e.order) > 1 {
		if e.selected("all_to_one") {
			for _, d := range e.order {
				var pairs [][2]int
				for _, s := range e.order {
					if s != d {
						pairs = append(pairs, [2]int{s, d})
					}
				}
				steps = append(steps, step{fmt.Sprintf("all to %d", d), func(ctx context.Context) { e.aggregate(ctx, "all_to_one", pairs, size) }})
			}
		}
		if e.selected("one_to_all") {
			for _, s := range e.order {
				var pairs [][2]int
				for _, d := range e.order {
					if s != d {
						pairs = append(pairs, [2]int{s, d})
					}
				}
				steps = append(steps, step{fmt.Sprintf("%d to all", s), func(ctx context.Context) { e.aggregate(ctx, "one_to_all", pairs, size) }})
			}
		}
		if e.selected("all_pairs") {
			var pairs [][2]int
			for _, s := range e.order {
				for _, d := range e.order {
					if s != d {
						pairs = append(pairs, [2]int{s, d})
					}
				}
			}
			steps = append(steps, step{"all pairs at once", func(ctx context.Context) { e.aggregate(ctx, "all_pairs", pairs, size) }})
		}
	}
	steps = append(steps, e.latencySteps()...)
	steps = append(steps, e.atomicSteps()...)
	return steps
}

func hostFigure(test string, d int, size uint64) (f results.Figure) {
	f = results.Figure{Test: test, Engine: "copy_engine", Src: -1, Dst: d, Size: size, Unit: "GB/s", Convention: convHost}
	if test == "d2h" {
		f.Src, f.Dst = d, -1
	}
	return f
}

// pairPeerTests are the tests that need peer access between the pair.
var pairPeerTests = []string{"ce_read", "ce_write", "ce_bidir", "sm_read", "sm_write", "sm_bidir"}

// pairTests runs every selected peer test on s → d: the matrices at the
// matrix size, then the size sweep.
func (e *Engine) pairTests(ctx context.Context, s, d *device) {
	var want []string
	for _, t := range pairPeerTests {
		if e.selected(t) {
			want = append(want, t)
		}
	}
	if len(want) == 0 {
		return
	}
	if err := e.enablePair(s, d); err != nil {
		// Unsupported (or failing) pairs are recorded as such; nop2p_copy
		// still measures them through the host.
		for _, t := range want {
			for _, f := range e.pairTemplates(t, s, d) {
				e.add(failFigure(f, err))
			}
		}
		e.disableIdle()
		return
	}
	defer func() {
		e.releasePair(s, d)
		e.disableIdle()
	}()
	sizes := []uint64{e.opt.Size}
	for _, z := range e.opt.Sweep {
		if z != e.opt.Size {
			sizes = append(sizes, z)
		}
	}
	for _, t := range want {
		for i, z := range sizes {
			if ctx.Err() != nil {
				return
			}
			switch t {
			case "ce_bidir", "sm_bidir":
				if i == 0 {
					e.bidirPair(ctx, t, "read", s, d, z)
					e.bidirPair(ctx, t, "write", s, d, z)
				}
			default:
				e.uniPair(ctx, t, s, d, z)
			}
		}
	}
}

// pairTemplates returns the figures test would produce on s → d at the matrix size.
func (e *Engine) pairTemplates(test string, s, d *device) []results.Figure {
	switch test {
	case "ce_bidir", "sm_bidir":
		var out []results.Figure
		for _, dir := range []string{"read", "write"} {
			for _, part := range []string{"forward", "reverse", "total"} {
				f := e.pairFlow(test, dir, s, d, e.opt.Size, 0, 0).fig
				f.Part = part
				out = append(out, f)
			}
		}
		return out
	case "ce_write", "sm_write":
		return []results.Figure{e.pairFlow(test, "write", s, d, e.opt.Size, 0, 0).fig}
	}
	return []results.Figure{e.pairFlow(test, "read", s, d, e.opt.Size, 0, 0).fig}
}

// hostBuffer returns the shared pinned, mapped host buffer for h2d/d2h,
// allocating it on first use (portable, so every device can use it).
func (e *Engine) hostBuffer(size uint64) (cuda.HostBuffer, error) {
	if e.host.Host != nil {
		return e.host, nil
	}
	owner := e.devs[e.order[0]]
	h, err := owner.ctx.HostAlloc(size, true)
	if err != nil {
		return cuda.HostBuffer{}, fmt.Errorf("allocating %s of pinned host memory: %w", FormatBytes(size), err)
	}
	e.host, e.hostOwner = h, owner
	return h, nil
}
