package measure

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/figstats"
	"github.com/p2pbench/p2pbench/results"
)

// Renewal is a set of what a run makes afresh on every device between two
// rounds, so that state a process keeps for its whole life (where its
// buffers landed, its streams, its events) differs from round to round as
// it differs from one run to the next. Each kind is its own switch, so that
// measurements on a GPU can tell which of them matters.
type Renewal uint8

const (
	// RenewOffset moves the bandwidth and scratch buffers by
	// PlacementStep within allocations PlacementSpare larger than they
	// need: another 2 MiB page and another position within a page.
	RenewOffset Renewal = 1 << iota
	// RenewAlloc allocates the bandwidth and scratch buffers afresh, the
	// new ones before the old are freed (twice their memory for a moment).
	RenewAlloc
	// RenewStreams destroys the device's streams and creates new ones.
	RenewStreams
	// RenewEvents destroys the timing events and allocates a new latch
	// (its flag and status words in mapped host memory).
	RenewEvents
	// RenewModules unloads the kernels' modules; the next use loads them
	// again, at wherever the driver puts them this time.
	RenewModules
	// RenewSmall allocates the buffer of flags, statuses and timestamps
	// (Small) afresh, the new one before the old is freed.
	RenewSmall
	// RenewContext moves the device's work (streams, events, modules,
	// launches, copies) to a new green context of the primary context
	// (gpu.Context.Green), which keeps the memory: small SM copies between
	// GPUs take one of two times, drawn afresh by every new context and
	// kept by every stream of one, so the rounds carry that mode only if
	// each draws its own; a green context costs a few ms (docs/methods.md,
	// "Rounds"). It implies the streams, events and modules, which belong
	// to a context.
	RenewContext
)

// DefaultRenewal is what a run renews unless told otherwise: everything
// but fresh allocations. Each renewal moves between rounds something that
// otherwise differs only between processes (where the buffers, the
// kernels' code and the flags land; the mode of small SM copies, which
// stays with its context), so that a run's intervals hold other runs'
// medians; fresh allocations would too, but slow the host-to-device copy
// right after them by 10% (the driver readies new memory with the copy
// engines). The measurements are in docs/methods.md, "Rounds".
const DefaultRenewal = RenewOffset | RenewStreams | RenewEvents | RenewModules | RenewSmall | RenewContext

var renewalNames = []struct {
	r    Renewal
	name string
}{{RenewOffset, "offset"}, {RenewAlloc, "alloc"}, {RenewStreams, "streams"}, {RenewEvents, "events"}, {RenewModules, "modules"}, {RenewSmall, "small"}, {RenewContext, "context"}}

// RenewalNames are the names ParseRenewal reads, one per kind.
func RenewalNames() []string {
	var out []string
	for _, n := range renewalNames {
		out = append(out, n.name)
	}
	return out
}

// ParseRenewal reads a comma-separated list of RenewalNames, or "all",
// or "none".
func ParseRenewal(s string) (Renewal, error) {
	var r Renewal
	switch s = strings.TrimSpace(s); s {
	case "none":
		return 0, nil
	case "all":
		for _, n := range renewalNames {
			r |= n.r
		}
		return r, nil
	}
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		i := slices.Index(RenewalNames(), w)
		if i < 0 {
			return 0, fmt.Errorf("unknown renewal %.32q: want all, none, or a list of %s", w, strings.Join(RenewalNames(), ", "))
		}
		r |= renewalNames[i].r
	}
	return r, nil
}

// String is the list ParseRenewal reads back: "none" for no renewal.
func (r Renewal) String() string {
	var out []string
	for _, n := range renewalNames {
		if r&n.r != 0 {
			out = append(out, n.name)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}

// Placement of the buffers in their allocations: round r uses offset
// (r mod placements) × PlacementStep, a step of one 2 MiB page, one 4 KiB
// page and 256 bytes, which keeps every transfer aligned as the allocation
// was (256 bytes) while moving it to other pages and another position
// within them.
const (
	PlacementStep  = 2<<20 + 4<<10 + 256
	placements     = 8
	PlacementSpare = (placements - 1) * PlacementStep
)

// AllocBytes is the allocation that holds buffers of n bytes at every
// placement: n and PlacementSpare, rounded up to whole 2 MiB pages. Two
// processes pushing into each other's buffers through legacy IPC handles
// lose 30% (at 1.35 raw NVLink bytes per payload byte) from allocations
// that are not whole pages, where one process loses nothing
// (docs/findings.md, "Behind the code").
func AllocBytes(n uint64) uint64 {
	const page = 2 << 20
	return (n + PlacementSpare + page - 1) / page * page
}

// placementOffset is round's offset within an allocation.
func placementOffset(round int) uint64 { return uint64(round%placements) * PlacementStep }

// Renew makes afresh what what names, for round (counted from 0). The
// device is idle when it returns. Whatever could not be renewed keeps
// working as it was; the error says what failed.
func (dv *Device) Renew(what Renewal, round int) error {
	c, d := dv.Ctx, dv.Index
	if err := c.Synchronize(); err != nil {
		return fmt.Errorf("device %d: %w", d, err)
	}
	var errs []error
	if what&RenewAlloc != 0 {
		errs = append(errs, dv.reallocate())
	}
	if what&RenewOffset != 0 {
		dv.offset = placementOffset(round)
		dv.place()
	}
	if what&RenewContext != 0 && !dv.noGreen {
		// What belongs to the context goes with it.
		what |= RenewStreams | RenewEvents | RenewModules
	}
	if what&(RenewStreams|RenewContext) != 0 {
		for _, s := range dv.streams {
			_ = c.StreamDestroy(s)
		}
	}
	if what&(RenewModules|RenewContext) != 0 {
		for name, m := range dv.mods {
			if err := c.UnloadModule(m); err != nil {
				errs = append(errs, fmt.Errorf("device %d: unloading module %s: %w", d, name, err))
			}
		}
		dv.mods, dv.fns = map[string]cuda.Module{}, map[string]cuda.Function{}
	}
	if what&(RenewEvents|RenewContext) != 0 {
		for _, ev := range dv.events {
			_ = c.EventDestroy(ev)
		}
		dv.events = nil
	}
	if what&RenewContext != 0 && !dv.noGreen {
		errs = append(errs, dv.renewContext())
	}
	if what&(RenewStreams|RenewContext) != 0 {
		n := max(len(dv.streams), 2)
		dv.streams = nil
		if _, err := dv.Stream(n - 1); err != nil {
			errs = append(errs, err)
		}
	}
	mem := dv.Primary
	if what&RenewSmall != 0 && dv.small != 0 {
		p, err := mem.MemAlloc(SmallBytes)
		if err != nil {
			errs = append(errs, fmt.Errorf("device %d: allocating a new flag buffer: %w", d, err))
		} else {
			if err := mem.MemFree(dv.small); err != nil {
				errs = append(errs, fmt.Errorf("device %d: freeing memory: %w", d, err))
			}
			dv.small = p
		}
	}
	if what&RenewEvents != 0 {
		latch, err := mem.HostAlloc(latchBytes, true)
		if err != nil {
			errs = append(errs, fmt.Errorf("device %d: allocating a new latch: %w", d, err))
		} else {
			_ = mem.HostFree(dv.latch)
			dv.latch = latch
		}
	}
	return errors.Join(errs...)
}

// renewContext makes a new green context of the primary context the
// device's working context, and destroys the green context before it (its
// streams, events and modules already went). Where the driver has no green
// contexts, the device works in its primary context from then on, and
// Renew does not ask again.
func (dv *Device) renewContext() error {
	g, err := dv.Primary.Green()
	if errors.Is(err, cuda.ErrNoGreenContexts) {
		dv.noGreen = true
	}
	old := dv.Ctx
	if err != nil {
		g = dv.Primary
	}
	dv.Ctx = g
	if old != dv.Primary {
		if derr := old.Destroy(); derr != nil {
			err = errors.Join(err, fmt.Errorf("device %d: destroying the last round's green context: %w", dv.Index, derr))
		}
	}
	if err != nil {
		return fmt.Errorf("device %d: a new context for the round: %w", dv.Index, err)
	}
	return nil
}

// reallocate allocates the bandwidth buffers afresh, each before its old
// one is freed, and lets the scratch buffer go (the next Scratch allocates it).
func (dv *Device) reallocate() error {
	c, d := dv.Primary, dv.Index
	var errs []error
	for _, p := range []*cuda.DevicePtr{&dv.sendBase, &dv.recvBase} {
		if *p == 0 {
			continue
		}
		n, err := c.MemAlloc(AllocBytes(dv.BufBytes))
		if err != nil {
			errs = append(errs, fmt.Errorf("device %d: allocating a new buffer: %w", d, err))
			continue
		}
		if err := c.MemFree(*p); err != nil {
			errs = append(errs, fmt.Errorf("device %d: freeing memory: %w", d, err))
		}
		*p = n
	}
	if dv.scratch != 0 {
		if err := c.MemFree(dv.scratch); err != nil {
			errs = append(errs, fmt.Errorf("device %d: freeing memory: %w", d, err))
		}
		dv.scratch, dv.scratchBytes = 0, 0
	}
	dv.place()
	return errors.Join(errs...)
}

// place points Send and Recv at the current offset of their allocations.
func (dv *Device) place() {
	if dv.sendBase != 0 {
		dv.Send, dv.Recv = dv.sendBase+cuda.DevicePtr(dv.offset), dv.recvBase+cuda.DevicePtr(dv.offset)
	}
}

// Collector appends figures to a run as they come, round after round: the
// first round of a figure (results.Figure.Key) is appended; each later round
// adds its samples to that figure as a round of its own (Figure.Rounds). A
// round that fails marks the figure failed (its error says which round) and
// keeps the samples of the rounds before; a figure that failed takes no
// more rounds. It is safe for concurrent use.
type Collector struct {
	mu  sync.Mutex
	run *results.Run
	at  map[string]int
	// grown are the figures that took another round since Grown was last
	// called.
	grown []int
}

// NewCollector collects into run.
func NewCollector(run *results.Run) *Collector {
	return &Collector{run: run, at: map[string]int{}}
}

// Add records f, measured in round (counted from 0). A figure without
// samples or error (a round that had none of its samples) is left out.
func (c *Collector) Add(f results.Figure, round int) {
	if len(f.Samples) == 0 && f.Error == "" && f.Stats == nil {
		return
	}
	f = Finish(f)
	c.mu.Lock()
	defer c.mu.Unlock()
	k := f.Key()
	i, ok := c.at[k]
	if !ok {
		if len(f.Samples) > 0 {
			f.Rounds = []int{len(f.Samples)}
			f.Stats = figstats.ComputeRoundStats(f.Samples, f.Rounds)
		}
		c.at[k] = len(c.run.Figures)
		c.run.Figures = append(c.run.Figures, f)
		return
	}
	g := &c.run.Figures[i]
	if g.Error != "" {
		return
	}
	c.grown = append(c.grown, i)
	if f.Error != "" {
		g.Error, g.ErrorName = results.ClipText(fmt.Sprintf("round %d: %s", round+1, f.Error)), f.ErrorName
	} else {
		g.Samples = append(g.Samples, f.Samples...)
		g.Rounds = append(g.Rounds, len(f.Samples))
	}
	if f.Verify == results.VerifyFailed && g.Verify != results.VerifyFailed {
		g.Verify, g.VerifyDetail = results.VerifyFailed, results.ClipText(fmt.Sprintf("round %d: %s", round+1, f.VerifyDetail))
	}
	if g.Traffic == nil {
		g.Traffic = f.Traffic
	}
	if f.Check != nil {
		g.Check = f.Check
	}
	for _, p := range f.OtherProcesses {
		if !slices.Contains(g.OtherProcesses, p) {
			g.OtherProcesses = append(g.OtherProcesses, p)
		}
	}
	if len(g.Samples) > 0 {
		g.Stats = figstats.ComputeRoundStats(g.Samples, g.Rounds)
	}
}

// Grown returns the indices in the run of the figures that took another
// round since the last call (for Watch.Check), and forgets them.
func (c *Collector) Grown() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.grown
	c.grown = nil
	return out
}
