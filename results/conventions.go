package results

import (
	"fmt"
	"slices"
	"strings"
)

// A Convention is one rule by which p2pbench computes or files figures,
// said in one sentence (a clause of the test's convention), with the day
// p2pbench's builds began to follow it. A results file names the
// conventions of each test (TestInfo.Conventions) by their IDs; the words
// are this table's. A rule that changes gets a new ID and its own day: the
// old entry stays, for the files that name it.
type Convention struct {
	ID    string
	Since string // the day it took effect, as 2006-01-02
	Text  string
}

// replacedBy maps a rule no test follows any more to the one that took its
// place; files of earlier builds still name it.
var replacedBy = map[string]string{
	cvHostAllBoth: cvHostAllHeld,
}

// The conventions' IDs, each a catalogue entry's reference to a row of
// conventions.
const (
	cvGBps         = "gbps"
	cvRows         = "rows"
	cvRead         = "read"
	cvWrite        = "write"
	cvBothWays     = "both_ways"
	cvStaged       = "staged"
	cvHost         = "host"
	cvHostSM       = "host_sm"
	cvHostKernel   = "host_kernel"
	cvHostBoth     = "host_both_ways"
	cvHostAll      = "host_all"
	cvHostAllBoth  = "host_all_both_ways"
	cvHostAllHeld  = "host_all_both_ways_held"
	cvLocal        = "local"
	cvAtOnce       = "at_once"
	cvGroupDirs    = "group_directions"
	cvPushedByCE   = "pushed_by_ce"
	cvByCE         = "by_ce"
	cvByCEP2P      = "by_ce_peer"
	cvBySM         = "by_sm"
	cvSteady       = "steady"
	cvPlainWindow  = "plain_window"
	cvFewSamples   = "few_long_samples"
	cvOneIssuer    = "one_issuer_plain"
	cvInKernelReps = "in_kernel_reps"
	cvUnheldPulls  = "unheld_small_pulls"
	cvOwnShort     = "own_short_window"
	cvWindow       = "plain_samples"
	cvChase        = "chase"
	cvChaseStart   = "chase_first_written"
	cvHostChase    = "host_chase"
	cvCopyDevice   = "copy_device_time"
	cvCopyHost     = "copy_host_time"
	cvCopyB2B      = "copy_back_to_back"
	cvB2BUnheld    = "b2b_unheld"
	cvB2BTogether  = "b2b_queued_together"
	cvCopyRows     = "copy_rows"
	cvAtomic       = "atomic_throughput"
	cvAtomicLat    = "atomic_latency"
	cvPing         = "ping_pong"
	cvPingSample   = "ping_sample"
	cvPingSlots    = "ping_every_slot"
	cvIPC          = "ipc"
	cvIPCCE        = "ipc_ce"
	cvIPCPeerOpen  = "ipc_peer_open"
	cvIPCBothWays  = "ipc_both_ways"
	cvIPCChase     = "ipc_chase"
	cvIPCPing      = "ipc_ping_pong"
)

// conventions is every rule a test's convention is made of. The numbers of the timing method come
// from its constants (method.go), which package measure times by.
var conventions = []Convention{
	{cvGBps, "2026-11-22", "decimal GB/s (1e9 B/s) of one direction's bytes, but for a total, which counts every direction's and pair's bytes"},
	{cvRead, "2026-11-22", "read = pull: issued in the destination's context, reading the source's memory"},
	{cvWrite, "2026-11-22", "write = push: issued in the source's context, writing the destination's memory"},
	{cvRows, "2026-11-22", "row = source, column = destination"},
	{cvBothWays, "2026-11-22", "both directions at once on two streams, each timed with its own events: forward = source→destination, reverse = destination→source, total = both directions' bytes over the longer of the two times"},
	{cvStaged, "2026-11-22", "cuMemcpyPeerAsync with peer access disabled (the driver stages through host memory)"},
	{cvHost, "2026-11-22", "between device memory and pinned host memory by cuMemcpyAsync, -1 standing for the host"},
	{cvHostSM, "2026-11-23", "the SM copy kernel on the device loads from (sm_h2d) or stores to (sm_d2h) pinned, mapped host memory through its device address, -1 standing for the host"},
	{cvHostBoth, "2026-11-23", "host→device and device→host at once on two streams of the device, between its memory and two regions of pinned host memory, each timed with its own events: forward = host→device, reverse = device→host (both filed under src = -1, dst = the device), total = both directions' bytes over the longer of the two times"},
	{cvHostAll, "2026-11-23", "every selected device copying at once between its memory and its own region of pinned host memory, each copy timed with its own events: pair = one device's copy (-1 = host), total = all bytes over the longest copy's time (src = dst = -1)"},
	{cvHostAllBoth, "2026-11-23", "every selected device copying host→device and device→host at once, on two streams per device, between its memory and its own two regions of pinned host memory, each copy timed with its own events: forward = host→device, reverse = device→host (both filed under src = -1, dst = the device), total = all bytes over the longest copy's time (src = dst = -1)"},
	{cvHostAllHeld, "2026-11-29", "every selected device copying host→device and device→host at once, on two streams per device, between its memory and its own two regions of pinned host memory, each copy timed with its own events while every other still copies where two devices or more copy (each stream makes reps_per_sample untimed copies before its timed ones and held_reps_per_sample after them, and the next sample waits for them, as nvbandwidth's interference copies of twice the size run around its timed ones): forward = host→device under the load of every other copy, reverse = device→host likewise (both filed under src = -1, dst = the device), total = the sum of every copy's rate where held, else all bytes over the longest copy's time (src = dst = -1)"},
	{cvHostKernel, "2026-11-23", "on host memory the default register-path copy kernel runs, unless --variant names another"},
	{cvLocal, "2026-11-22", "bytes copied within one device's memory by cuMemcpyAsync, each byte read once and written once"},
	{cvAtOnce, "2026-11-22", "every listed pair copying at once, each pair timed with its own events: total = all bytes over the longest pair's time"},
	{cvGroupDirs, "2026-11-22", "write = push, issued by the source, and read = pull, issued by the destination"},
	{cvPushedByCE, "2026-11-22", "copy engine, pushed from the source"},
	{cvByCE, "2026-11-22", "copy engine (cuMemcpyAsync)"},
	{cvByCEP2P, "2026-11-22", "copy engine (cuMemcpyPeerAsync)"},
	{cvBySM, "2026-11-22", "SM copy kernels, one per copy, on the issuing device"},
	{cvSteady, "2026-11-23", "steady state: every round first times a short window of short_reps_per_sample copies, then each sample a window of reps_per_sample back-to-back copies (at least " +
		fmt.Sprint(MinSteadyReps) + "), both between two CUDA events behind the latch, and a sample is their difference over their difference in copies, one copy's time without a timed window's fixed start and end cost"},
	{cvPlainWindow, "2026-11-25", "where the window holds " + ms(PlainWindow) + " of copies or more (host copies of 512 MiB) no short window is timed and a sample is window / reps_per_sample, the window's start and end cost (microseconds) lost in it"},
	{cvFewSamples, "2026-11-23", "a figure whose samples' copies take " + ms(LongSample) + " or more (128 MiB and more between NVLink peers, 16 MiB and more to or from the host) takes 1/" +
		fmt.Sprint(FewSamplesDivisor) + " of the samples asked, at least one per round"},
	{cvOneIssuer, "2026-11-23", "copies issued on one device at once (host copies both ways, SM copies sharing a device's SMs, pulls into one device) take plain samples, one window of reps_per_sample copies each (elapsed / copies), as windows of several such copies moved from round to round on an H200"},
	{cvInKernelReps, "2026-11-25", "SM copies of " + FormatBytes(InKernelRepsFrom) +
		" and more (in_kernel_reps = true) time each window and warm-up as one launch of the copy kernel repeating the copy reps_per_sample (or warm-up) times, every thread going on to its share of the next copy when done with its share of the last, as nvbandwidth's copy kernel does, so a window ramps up and drains once where a launch per copy paid both for every copy (0.7% of a 512 MiB pull on a 2× H100), and smaller copies are a launch each, as an application issuing them makes them"},
	{cvUnheldPulls, "2026-11-25", "below " + FormatBytes(UnheldPullBelow) + " (queue=" + QueueUnheld + ") the windows are queued on a stream nothing holds, as an application queues pulls, unless the host queued one about as fast as the GPU ran it, as behind a latch every pull costs at least 13 µs on an H100 or H200"},
	{cvOwnShort, "2026-11-26", "every sample queued as issued is fitted against a short window of its own taken right after it, and a round's windows are queued together"},
	{cvWindow, "2026-11-23", "each sample is one window of reps_per_sample back-to-back copies between two CUDA events (elapsed / copies), after up to " +
		fmt.Sprint(MaxWarmup) + " untimed ones where a copy takes under " + ms(NoWarmupFrom) + ", and carries a window's fixed start and end cost divided by reps_per_sample"},
	{cvChase, "2026-11-22", "ns per dependent load: one thread following a random cyclic chain (128-byte stride, L1 bypassed), each sample one timed chunk of 512 loads (%globaltimer), row = source (memory holding the chain), column = destination (GPU running the thread), src = dst local memory"},
	{cvChaseStart, "2026-11-26", "the chase starts at the node the chain's build wrote first, so that beyond L2 it reads no line the build left in L2"},
	{cvHostChase, "2026-11-22", "ns per dependent load of one thread on the GPU following a random cyclic chain through 2 MiB of pinned, mapped host memory (128-byte stride, L1 bypassed): host-device latency, each sample one timed chunk of 512 loads (%globaltimer), src = -1 (host memory holding the chain), dst = the GPU running the thread"},
	{cvCopyDevice, "2026-11-22", "ns of device time for one cuMemcpyPeerAsync (latch-held stream, CUDA events around a single copy): what the GPU spends, launch excluded, with the events' own start and end cost, which differs from process to process on some GPUs"},
	{cvCopyHost, "2026-11-22", "ns end to end from the host: cuMemcpyPeerAsync enqueue plus cuStreamSynchronize, what an application waits for"},
	{cvCopyB2B, "2026-11-23", "ns per copy of cuMemcpyPeerAsync copies enqueued back to back between two CUDA events (elapsed time / copies, copies_per_sample of them): what each copy costs in a stream of copies, the figure CUDA's p2pBandwidthLatencyTest reports as P2P latency"},
	{cvB2BUnheld, "2026-11-25", "each sample is a window queued on a stream nothing holds, as an application queues copies, unless the host queued it about as fast as the GPU ran it, when it is the faster of that and a window queued behind a latch (queue=" + QueueUnheld + "; queue=" + QueueFaster + ": the faster of the two; no queue: behind a latch, where every small pull costs at least 13 µs on an H100 or H200)"},
	{cvB2BTogether, "2026-11-26", "a round's windows are queued together, each behind two untimed copies, as a small pull's time depends on how deep the queue stands when it runs"},
	{cvCopyRows, "2026-11-22", "row = source, column = destination, read = pull issued in the destination's context, write = push issued in the source's"},
	{cvAtomic, "2026-11-22", "Gop/s (1e9 atomic operations per second) of one launch: threads × operations per thread over the kernel's time (CUDA events), row = source (GPU issuing the atomics), column = destination (GPU whose memory holds the counters), src = dst local memory, scope .sys"},
	{cvAtomicLat, "2026-11-22", "ns per atomic in a dependent chain from one thread (each operand depends on the previous result), CUDA events over the whole chain, row = issuing GPU, column = GPU holding the counter, scope .sys"},
	{cvPing, "2026-11-22", "ns, one thread per GPU bouncing a flag through system-scope stores and loads (ordering release_acquire: st.release.sys / ld.acquire.sys; relaxed: relaxed system-scope, no fences), round_trip = one full exchange, one_way = half of it, row = initiator, column = responder"},
	{cvPingSample, "2026-11-22", "each sample is the mean of " + fmt.Sprint(PingRoundTrips) + " round trips (%globaltimer), timed after " + fmt.Sprint(PingRoundTrips) + " that warm the exchange up"},
	{cvPingSlots, "2026-11-29", "every round takes a sample at each of " + fmt.Sprint(PingFlagSlots) + " flag slots 1 KiB apart, in an order drawn afresh, so that every round's median is over the same places (a ping-pong takes the time of where its flags sit: 577-836 ns one way on an H200)"},
	{cvIPC, "2026-11-22", "across processes (CUDA IPC): one process per GPU, the peer's buffer exported with cuIpcGetMemHandle and mapped with cuIpcOpenMemHandle_v2 (lazy peer access), same_gpu=true: both processes on one device (the IPC path without a link)"},
	{cvIPCCE, "2026-11-22", "copy engine through cuMemcpyAsync on the mapped address (cuMemcpyPeerAsync would need the peer's context, which another process owns)"},
	{cvIPCPeerOpen, "2026-11-22", "with " + ParamIPCOpen + "=" + IPCOpenPeerDevice + ": through cuMemcpyPeerAsync between the issuing process's contexts on both devices, the peer's buffer opened a second time in the issuing process's primary context on the peer's device, with peer access enabled both ways"},
	{cvIPCBothWays, "2026-11-22", "one latch release starts both processes: the second process's stream waits on an IPC event the first records behind its latch"},
	{cvIPCChase, "2026-11-22", "the chain is written by the reading process through its own mapping, since addresses differ between processes"},
	{cvIPCPing, "2026-11-22", "each flag in its own process's memory, the peer's flag mapped through IPC"},
}

var conventionIndex = func() map[string]int {
	m := make(map[string]int, len(conventions))
	for i, c := range conventions {
		if _, dup := m[c.ID]; dup {
			panic("results: convention " + c.ID + " listed twice")
		}
		m[c.ID] = i
	}
	return m
}()

// LookupConvention returns the convention of an ID.
func LookupConvention(id string) (Convention, bool) {
	if i, ok := conventionIndex[id]; ok {
		return conventions[i], true
	}
	return Convention{}, false
}

// conventionWords says the conventions of ids in words: their sentences,
// one clause each, joined by "; " (a reader splits them there). An ID this
// build does not know (a newer build's) is named as such.
func conventionWords(ids []string) string {
	words := make([]string, 0, len(ids))
	for _, id := range ids {
		if c, ok := LookupConvention(id); ok {
			words = append(words, c.Text)
		} else {
			words = append(words, fmt.Sprintf("convention %s (not known to this build of p2pbench)", brief(id)))
		}
	}
	return strings.Join(words, "; ")
}

// refs is a test's list of conventions made of groups of them, in their
// order, each once.
func refs(groups ...[]string) []string {
	var out []string
	for _, g := range groups {
		for _, id := range g {
			if _, ok := conventionIndex[id]; !ok {
				panic("results: a test names convention " + id + ", which the table lacks")
			}
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}
