package measure

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// Watch looks at the selected GPUs before measuring and after every test,
// for what disturbs figures: other programs' compute processes (NVML lists
// every process with a context on a GPU; this one and its IPC children are
// left out by pid), and why the clocks are held down and how fast they run.
// It reads the GPUs' NVLink error totals too, a second apart or more and at
// the start of each round (Round), for the link check's rates over time
// (DeviceWatch.LinkErrors).
// It records what it sees in the run (Environment.OtherProcesses and
// DuringRun), marks the figures measured while another program was there
// (Figure.OtherProcesses), and unless busy GPUs are allowed stops the run
// with a *BusyError. One Watch serves one run, in-process tests and IPC
// tests alike; a nil Watch watches nothing.
//
// Inside a container NVML gives the host's pids, which this process cannot
// see or tell from its own. So a pid the first check (before any context of
// the run exists) did not list, and whose name /proc does not give, is
// taken to be the run's own (this process or a child, under its host pid):
// noted, not counted. Other programs are caught when they were there before
// the run, or when this process can see them.
type Watch struct {
	mon   gpu.Monitor
	allow bool

	mu      sync.Mutex
	checked bool
	before  map[int]bool  // pids the first check listed
	run     *results.Run  // the run whose figures are marked
	marked  int           // run.Figures before this index are marked
	prev    map[int][]int // device → other programs' pids at the last check
	noted   map[string]bool
	// round is the round of the tests in one process now (from 1; 0
	// outside them).
	round int
	// lastTotals is when each device's NVLink error totals were last read;
	// totalsEvery the least time between two readings (LinkTotalsEvery,
	// doubled each time a device's readings are thinned).
	lastTotals  map[int]time.Time
	totalsEvery time.Duration
}

// LinkTotalsEvery is the least time between two readings of a GPU's
// NVLink error totals between tests: a second, the interval of the
// samples dcgmi diag's per-second rule compares.
const LinkTotalsEvery = time.Second

// NewWatch returns the watch of mon (nil when mon is nil). With allowBusy,
// other programs on the GPUs are recorded and their figures marked, but the
// run goes on.
func NewWatch(mon gpu.Monitor, allowBusy bool) *Watch {
	if mon == nil {
		return nil
	}
	return &Watch{mon: mon, allow: allowBusy, before: map[int]bool{}, noted: map[string]bool{},
		lastTotals: map[int]time.Time{}, totalsEvery: LinkTotalsEvery}
}

// Round tells the watch the round of the tests in one process about to
// run (from 1; 0 when the rounds are over) and reads the devices' NVLink
// error totals (index → PCI bus id) into run at once, so that each round's
// readings start with it and the rounds' rates can be told apart.
func (w *Watch) Round(run *results.Run, devs map[int]string, round int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.round = round
	order := slices.Sorted(maps.Keys(devs))
	rd := make([]reading, len(order))
	var wg sync.WaitGroup
	for i, dev := range order {
		wg.Go(func() { rd[i] = reading{due: true, totals: w.readTotals(dev, devs[dev])} })
	}
	wg.Wait()
	for i, dev := range order {
		w.linkTotals(run, dev, rd[i])
	}
}

// BusyError is the refusal to measure while other programs' compute
// processes use the selected GPUs.
type BusyError struct {
	Processes []results.Process
}

// busyListed bounds the processes a BusyError names.
const busyListed = 4

func (e *BusyError) Error() string {
	var names []string
	for i, p := range e.Processes {
		if i == busyListed {
			names = append(names, fmt.Sprintf("and %d more", len(e.Processes)-busyListed))
			break
		}
		names = append(names, p.String())
	}
	return "other programs' compute processes are on the selected GPUs: " + strings.Join(names, ", ") +
		"; their work would disturb the figures"
}

// Check reads the devices (index → PCI bus id); children are the pids of
// this run's child processes. It records what it finds in run, marks the
// figures added to run since the last check and those in grew
// (indices of figures added before that took more samples since: a later
// round, Collector.Grown), and returns a *BusyError when another program
// is on a device and busy GPUs are not allowed.
func (w *Watch) Check(run *results.Run, devs map[int]string, children, grew []int) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run != run {
		w.run, w.marked, w.prev = run, len(run.Figures), nil
	}
	now := time.Now().UTC()
	ours := append([]int{os.Getpid()}, children...)
	order := slices.Sorted(maps.Keys(devs))
	// Every device is read at once: NVML answers each in a few hundred
	// µs, and a run checks after every step (a tenth of a second or more of
	// an all run, one device after the other).
	rd := make([]reading, len(order))
	var wg sync.WaitGroup
	for i, dev := range order {
		due := now.Sub(w.lastTotals[dev]) >= w.totalsEvery
		wg.Go(func() { rd[i] = w.read(dev, devs[dev], due) })
	}
	wg.Wait()
	cur := map[int][]int{}
	var busy []results.Process
	for i, dev := range order {
		if err := rd[i].procErr; err != nil {
			w.note(run, "processes", "the processes on GPU %d could not be listed (%v): other programs on it go unseen", dev, err)
		}
		for _, p := range rd[i].procs {
			if !w.other(run, p, ours) {
				continue
			}
			cur[dev] = append(cur[dev], p.PID)
			busy = append(busy, w.record(run, p, now))
		}
		w.sample(run, dev, rd[i])
		w.linkTotals(run, dev, rd[i])
	}
	w.checked = true
	w.mark(run, order, cur, grew)
	w.prev = cur
	if len(busy) > 0 && !w.allow {
		return &BusyError{Processes: busy}
	}
	return nil
}

// other reports whether p is another program's process.
func (w *Watch) other(run *results.Run, p results.Process, ours []int) bool {
	switch {
	case slices.Contains(ours, p.PID):
		return false
	case !w.checked:
		w.before[p.PID] = true
	case !w.before[p.PID] && p.Name == "":
		w.note(run, fmt.Sprint("pid ", p.PID), "pid %d on GPU %d, which this process cannot see (another pid namespace: p2pbench in a container?), "+
			"appeared during the run and is taken to be one of the run's own processes", p.PID, p.Device)
		return false
	}
	return true
}

// record adds p to the run's other processes, or updates its entry.
func (w *Watch) record(run *results.Run, p results.Process, now time.Time) results.Process {
	e := &run.Environment
	for i := range e.OtherProcesses {
		if q := &e.OtherProcesses[i]; q.Device == p.Device && q.PID == p.PID {
			q.LastSeen, q.UsedBytes = now, p.UsedBytes
			if q.Name == "" {
				q.Name = p.Name
			}
			return *q
		}
	}
	p.FirstSeen, p.LastSeen = now, now
	e.OtherProcesses = append(e.OtherProcesses, p)
	return p
}

// sample reads the device's throttle reasons and SM clock into the run.
func (w *Watch) sample(run *results.Run, dev int, rd reading) {
	if rd.throttleErr != nil {
		w.note(run, "throttle", "the throttle reasons of GPU %d could not be read (%v)", dev, rd.throttleErr)
		return
	}
	x := w.deviceWatch(run, dev)
	x.Readings++
	for _, r := range rd.throttle {
		if x.Throttle == nil {
			x.Throttle = map[results.ThrottleReason]int{}
		}
		x.Throttle[r]++
	}
	if st := rd.state; rd.stateErr == nil && st.SMClockMHz > 0 {
		if x.SMClockMinMHz == 0 || st.SMClockMHz < x.SMClockMinMHz {
			x.SMClockMinMHz = st.SMClockMHz
		}
		x.SMClockMaxMHz = max(x.SMClockMaxMHz, st.SMClockMHz)
	}
}

// reading is what one check read of one device: its processes, its
// throttle reasons and, where those were read, its clocks; its NVLink
// error totals when they were due.
type reading struct {
	procs       []results.Process
	procErr     error
	throttle    []results.ThrottleReason
	throttleErr error
	state       results.DeviceState
	stateErr    error
	due         bool // the totals were to be read
	totals      *results.LinkTotals
}

// read reads device dev (PCI bus id bus) for a check, with its NVLink
// error totals when totals is set.
func (w *Watch) read(dev int, bus string, totals bool) reading {
	var rd reading
	rd.procs, rd.procErr = w.mon.Processes(dev, bus)
	if rd.throttle, rd.throttleErr = w.mon.Throttle(dev, bus); rd.throttleErr == nil {
		rd.state, rd.stateErr = w.mon.State(dev, bus)
	}
	if rd.due = totals; totals {
		rd.totals = w.readTotals(dev, bus)
	}
	return rd
}

// readTotals reads a device's NVLink error totals; nil when it has none
// to give (no NVLink, a driver without the fields: the readings before
// and after the run, Health, say why).
func (w *Watch) readTotals(dev int, bus string) *results.LinkTotals {
	if t, err := w.mon.LinkErrorTotals(dev, bus); err == nil && len(t.Totals) > 0 {
		return &t
	}
	return nil
}

// linkTotals records a reading of the device's NVLink error totals, and
// thins the device's readings when they reach MaxLinkErrorReadings: every
// other one goes but the first of each round, and the time between
// readings doubles.
func (w *Watch) linkTotals(run *results.Run, dev int, rd reading) {
	if !rd.due {
		return
	}
	// Read or not, the next reading is due after the interval.
	w.lastTotals[dev] = time.Now().UTC()
	if rd.totals == nil {
		return
	}
	x := w.deviceWatch(run, dev)
	x.LinkErrors = append(x.LinkErrors, results.LinkErrorReading{Time: rd.totals.Time, Round: w.round, Totals: rd.totals.Totals})
	if len(x.LinkErrors) < results.MaxLinkErrorReadings {
		return
	}
	kept := x.LinkErrors[:0]
	for i, r := range x.LinkErrors {
		if i%2 == 0 || i == len(x.LinkErrors)-1 || r.Round != x.LinkErrors[i-1].Round {
			kept = append(kept, r)
		}
	}
	x.LinkErrors = kept
	w.totalsEvery *= 2
}

// deviceWatch is the run's record of what the readings between tests saw
// of dev, added when missing.
func (w *Watch) deviceWatch(run *results.Run, dev int) *results.DeviceWatch {
	e := &run.Environment
	i := slices.IndexFunc(e.DuringRun, func(x results.DeviceWatch) bool { return x.Device == dev })
	if i < 0 {
		e.DuringRun = append(e.DuringRun, results.DeviceWatch{Device: dev})
		i = len(e.DuringRun) - 1
	}
	return &e.DuringRun[i]
}

// mark gives every figure added since the last check, and those that grew
// since, the other programs' pids seen on its GPUs at that check or this
// one.
func (w *Watch) mark(run *results.Run, devs []int, cur map[int][]int, grew []int) {
	figs := grew
	for i := w.marked; i < len(run.Figures); i++ {
		figs = append(figs, i)
	}
	for _, i := range figs {
		if i < 0 || i >= len(run.Figures) {
			continue
		}
		f := &run.Figures[i]
		for _, g := range f.GPUs(devs) {
			f.OtherProcesses = append(f.OtherProcesses, w.prev[g]...)
			f.OtherProcesses = append(f.OtherProcesses, cur[g]...)
		}
		slices.Sort(f.OtherProcesses)
		f.OtherProcesses = slices.Compact(f.OtherProcesses)
	}
	w.marked = len(run.Figures)
}

// note adds a remark to the run's environment once per key.
func (w *Watch) note(run *results.Run, key, format string, args ...any) {
	if w.noted[key] {
		return
	}
	w.noted[key] = true
	run.Environment.Notes = append(run.Environment.Notes, fmt.Sprintf(format, args...))
}
