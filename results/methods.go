package results

import (
	"fmt"
	"slices"
	"sync"
)

// How each test is measured changes from build to build; a figure measured
// one way and a figure measured another are not the same measurement, and
// a reader that sets them side by side (compare) must say so rather than
// call the difference the machine's. The history below lists every change
// of how p2pbench measures that moves what a figure reads: a changed
// timing, sampling, placement or renewal, not a refactor, a plan or a
// faster path to the same samples. A change whose figures say it in a
// param (the SM kernel's variant, in_kernel_reps, queue, sm_share) is
// listed too where more than the param changed.
//
// The catalogue's Method of a test is 1 + the changes naming it: adding a
// change here bumps it, and files record it (TestInfo.Method) from the
// build that introduced it on. The history only grows at its end: a file's
// version counts changes in their order, and methodBuilds names them by
// their place. Files of earlier builds are placed by their
// build (Tool.Version, a commit of p2pbench's history): methodBuilds,
// generated from git by TestMethodBuilds, says which changes each commit
// includes.

// MethodChange is one change of how some tests are measured.
type MethodChange struct {
	// Commit is the commit that made the change (its short hash); "" for
	// a change made since builds record their methods in their files.
	Commit string
	Tests  []Test
	// Applies, when set, narrows the change to the figures it moved (the
	// small pulls of ce_read, the chase beyond L2).
	Applies func(f *Figure) bool
	// What says what changed, in a few words.
	What string
	// RoundsByNumber, where set, says how the figures measured this way
	// (until a later change of the same tests) took something by the
	// round's number, the same in every process: their rounds are no
	// replicates (RoundsByNumber).
	RoundsByNumber string
}

// Groups of tests that changes name.
var (
	// inProcessCopies are the copy tests of one process (bench).
	inProcessCopies = []Test{H2D, D2H, SMH2D, SMD2H, HostBidir, SMHostBidir, LocalCopy, CERead, CEWrite, CEBidir, SMRead, SMWrite, SMBidir,
		NoP2PCopy, AllToOne, OneToAll, SMAllToOne, SMOneToAll, AllPairs, HostToAll, AllToHost, HostAllBidir, SMHostToAll, SMAllToHost, SMHostAllBidir}
	// hostCopies are the copies between pinned host memory and devices.
	hostCopies = []Test{H2D, D2H, SMH2D, SMD2H, HostBidir, SMHostBidir, HostToAll, AllToHost, HostAllBidir, SMHostToAll, SMAllToHost, SMHostAllBidir}
	// oneIssuer are the tests that issue two transfers or more on one
	// device at once.
	oneIssuer = []Test{HostBidir, SMHostBidir, HostAllBidir, SMHostAllBidir, AllToOne, OneToAll, SMAllToOne, SMOneToAll}
	// ipcCopies are the copies across processes.
	ipcCopies = []Test{IPCCERead, IPCCEWrite, IPCCEBidir, IPCSMRead, IPCSMWrite, IPCSMBidir}
	// inProcess are every test of one process.
	inProcess = append(slices.Clone(inProcessCopies), LatChase, LatPingPong, LatCopyDevice, LatCopyHost, LatCopyB2B, LatHostChase, AtomicTput, AtomicLatency)
	everyTest = append(slices.Clone(inProcess), append(slices.Clone(ipcCopies), IPCLatChase, IPCLatPingPong)...)
	chases    = []Test{LatChase, IPCLatChase}
	pings     = []Test{LatPingPong, IPCLatPingPong}
	unheld    = []Test{CERead, LatCopyB2B}
)

// heldWindows narrows a change to the figures whose windows were held:
// where one device copies to and from the host, nothing is held and the
// figure is measured as before.
func heldWindows(f *Figure) bool { return f.Params[ParamHeldReps] != "" }

// smallPulls narrows a change to what it moved: ce_read below
// UnheldPullBelow, every figure of the other tests.
func smallPulls(f *Figure) bool { return f.Test != CERead || f.Size < UnheldPullBelow }

// beyondL2 narrows a change to the chases beyond L2 (and to every chase of
// a file that does not say where its working set sat).
func beyondL2(f *Figure) bool { return f.Params["cache"] != "in_l2" }

// methodChanges is the history, oldest first.
var methodChanges = []MethodChange{
	{Commit: "2082852", Tests: []Test{H2D, D2H}, What: "host copies as flows of their own pinned regions, with host-length samples"},
	{Commit: "5824ee8", Tests: []Test{SMHostBidir, SMHostAllBidir}, What: "SM copies at once on one device split its SMs"},
	{Commit: "907a905", Tests: everyTest, What: "samples in rounds spread over the run, the buffers placed afresh each round"},
	{Commit: "eff74da", Tests: []Test{LatChase, IPCLatChase, LatHostChase}, What: "the chase warms its chain every round"},
	{Commit: "ea4e806", Tests: []Test{SMHostBidir, SMHostAllBidir}, What: "SM copies sharing a device launch one block per SM of their share"},
	{Commit: "504a6d0", Tests: inProcess, What: "rounds allocate their buffers afresh"},
	{Commit: "4d6104f", Tests: inProcessCopies, What: "steady-state samples: a two-point fit against one copy alone per round"},
	{Commit: "d7a3e89", Tests: inProcessCopies, What: "samples of 0.25 ms, a quarter of them from 1 ms of copies"},
	{Commit: "45c3324", Tests: inProcess, What: "rounds no longer allocate their buffers afresh"},
	{Commit: "4fc5352", Tests: oneIssuer, What: "copies issued on one device at once take plain samples of one window"},
	{Commit: "932248a", Tests: ipcCopies, What: "steady-state samples across processes"},
	{Commit: "2f7613b", Tests: ipcCopies, What: "plain samples across processes again"},
	{Commit: "31016ae", Tests: inProcessCopies, What: "the fit's short window behind an untimed copy"},
	{Commit: "56165bc", Tests: ipcCopies, What: "windows of four copies or more"},
	{Commit: "1916092", Tests: ipcCopies, What: "allocations in whole 2 MiB pages"},
	{Commit: "9922653", Tests: hostCopies, What: "plain windows from 10 ms: two host copies of 512 MiB, not four"},
	{Commit: "2787561", Tests: inProcessCopies, What: "a round's windows queued back to back behind one latch"},
	{Commit: "e1a51b2", Tests: hostCopies, What: "host copies one copy a sample"},
	{Commit: "ddef958", Tests: pings, What: "the flag buffer renewed every round"},
	{Commit: "477ff7d", Tests: hostCopies, What: "host copies two copies a sample, four windows a round"},
	{Commit: "6185600", Tests: []Test{LatCopyDevice}, What: "a sample is the mean of two copies each timed alone"},
	{Commit: "f87537f", Tests: []Test{AtomicLatency}, What: "eight counters a placement step apart, the launch's cost taken out"},
	{Commit: "86bf78e", Tests: inProcessCopies, What: "the fit's windows of an even number of copies, two in the short one"},
	{Commit: "c9a87c7", Tests: []Test{AtomicLatency}, What: "the counters at the same places every round"},
	{Commit: "bbf8b94", Tests: chases, What: "the same four chains every round"},
	{Commit: "6efa040", Tests: chases, Applies: beyondL2, What: "beyond L2 each round's chains in an allocation of their own"},
	{Commit: "ca8420c", Tests: inProcessCopies, What: "samples of 125 µs, three a round"},
	{Commit: "382273e", Tests: chases, Applies: beyondL2, What: "the untimed pass beyond L2 of 1024 hops"},
	{Commit: "46d3617", Tests: []Test{AtomicLatency, AtomicTput}, What: "every module loaded in the warm-up (local atomics' latency 155-159 ns before, 207-213 after, on 2× H200s)"},
	{Commit: "447bfeb", Tests: pings, What: "the flags at another slot every round",
		RoundsByNumber: "each round's flags at the slot its number chose, in every process: its rounds are the slots', not replicates"},
	{Commit: "e316737", Tests: chases, Applies: beyondL2, What: "beyond L2 each round's allocation kept to the end of the run"},
	{Commit: "95c3763", Tests: chases, Applies: beyondL2, What: "the chase starts at the node its build wrote first"},
	{Commit: "d799684", Tests: append(slices.Clone(unheld), ipcCopies...), Applies: smallPulls, What: "each unheld window fitted against a short window of its own; copies under 0.5 ms timed behind an untimed one"},
	{Commit: "77a1ab0", Tests: unheld, Applies: smallPulls, What: "a round's unheld windows queued together as issued"},
	{Commit: "4552280", Tests: pings, What: "a sample at every flag slot each round, not one slot a round by its number"},
	{Tests: []Test{HostAllBidir, SMHostAllBidir}, Applies: heldWindows, What: "each direction timed while every other copy still runs (held windows), the total the sum of their rates"},
}

// methodOf is 1 + the changes of methodChanges that name t: the
// catalogue's Method of t.
func methodOf(t Test) int {
	n := 1
	for _, c := range methodChanges {
		n += b2i(slices.Contains(c.Tests, t))
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MethodOf says how f, a figure of run, was measured: the indices in the
// history of the changes that apply to it and that its build includes
// (from the run's catalogue where its build recorded its methods, else
// from its build's commit), and false where neither says (an import, a
// build p2pbench's history does not hold).
func (r *Run) MethodOf(f *Figure) ([]int, bool) {
	if r.Imported != nil {
		return nil, false
	}
	naming := testChanges()[f.Test]
	applies := func(i int) bool {
		c := methodChanges[i]
		return c.Applies == nil || c.Applies(f)
	}
	// Room for every change that names the test: one allocation, where
	// growing the list as changes applied was most of MethodOf's time.
	out := make([]int, 0, len(naming))
	if v := r.Info(f.Test).Method; v > 0 {
		for _, i := range naming {
			if v--; v == 0 {
				break
			}
			if applies(i) {
				out = append(out, i)
			}
		}
		return out, true
	}
	set, ok := buildMethods(r.Tool.Version)
	if !ok {
		return nil, false
	}
	for _, i := range naming {
		if set&(1<<i) != 0 && applies(i) {
			out = append(out, i)
		}
	}
	return out, true
}

// testChanges is, per test, the indices of the changes of methodChanges
// that name it, in order: MethodOf is asked for every figure a reader
// compares, and looking the test up in every change's list was most of
// its time.
var testChanges = sync.OnceValue(func() map[Test][]int {
	m := map[Test][]int{}
	for i, c := range methodChanges {
		for _, t := range c.Tests {
			if !slices.Contains(m[t], i) {
				m[t] = append(m[t], i)
			}
		}
	}
	return m
})

// buildMethods is the set of changes a build includes (bit i: change i),
// from methodBuilds; false for a build the history does not hold. A
// "-dirty" build is placed by its commit.
func buildMethods(version string) (uint64, bool) {
	set, ok := methodBuilds[buildCommit(version)]
	return set, ok
}

// MethodChangesBetween says what changed between two figures' methods (as
// MethodOf gives them): the changes b has and a has not, and those a has
// and b has not, in words.
func MethodChangesBetween(a, b []int) (added, undone []string) {
	for _, i := range b {
		if !slices.Contains(a, i) {
			added = append(added, methodText(i))
		}
	}
	for _, i := range a {
		if !slices.Contains(b, i) {
			undone = append(undone, methodText(i))
		}
	}
	return added, undone
}

// MethodLabel names a figure's method (as MethodOf gives it) in a few
// characters: the commit of the last change that applies to it ("77a1ab0"),
// "first" where none does.
func MethodLabel(changes []int) string {
	if len(changes) == 0 {
		return "first"
	}
	c := methodChanges[changes[len(changes)-1]]
	if c.Commit == "" {
		return "change " + fmt.Sprint(changes[len(changes)-1])
	}
	return c.Commit
}

// RoundsByNumber says why the rounds of a figure measured by changes (as
// MethodOf gives them) are no replicates: the last change that applies to
// it took something by the round's number ("" where none did).
func RoundsByNumber(changes []int) string {
	if len(changes) == 0 {
		return ""
	}
	return methodChanges[changes[len(changes)-1]].RoundsByNumber
}

// MethodIDs names changes of the history (indices, as MethodOf gives
// them) by their commits, or for a change made since builds record their
// methods by its words: names that stay when changes are added.
func MethodIDs(indices []int) []string {
	var out []string
	for _, i := range indices {
		if i >= 0 && i < len(methodChanges) {
			out = append(out, methodID(i))
		}
	}
	return out
}

func methodID(i int) string {
	if c := methodChanges[i]; c.Commit != "" {
		return c.Commit
	}
	return methodChanges[i].What
}

func methodText(i int) string {
	c := methodChanges[i]
	if c.Commit == "" {
		return c.What
	}
	return c.What + " (" + c.Commit + ")"
}
