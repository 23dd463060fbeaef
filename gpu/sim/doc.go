// Package sim is a simulated CUDA driver: whole multi-GPU machines behind
// the gpu.Driver interface, for the measuring packages' tests and for
// --simulate.
//
// New("h200x2") is the 2× H200 machine of hardware.md; "dgx-h100" eight
// H100s on NVSwitch, "dgx-h100-blocking" the same behind a switch plane that
// carries only two pairs' worth at once; "pcie-4gpu" four L40S on two PCIe switches with one
// pair (1↔2) without P2P; "nvl72" 72 GB200s, to test scale. The driver
// answers the queries (attributes, P2P attributes, atomic capabilities) and
// returns the errors of the real 580 driver (cuda-api.md, hardware.md),
// moves real data (symbolically, so gigabytes cost microseconds, content.go;
// in pinned host memory too, hostmem.go), runs the p2pbench kernels by their
// entry names (kernels.go), and times everything in virtual nanoseconds with
// a shared-resource bandwidth model (timing.go, bandwidth.go) calibrated to
// hardware.md. Jitter is seeded (WithSeed); faults are injected on request
// (WithFault). (*Driver).Monitor is the machine's gpu.Monitor: NVLinks,
// clocks, temperature and power from the model (monitor.go), and a healthy
// machine's health and processes, with link errors, downed links and other
// programs' processes injected on request (WithLinkErrors, WithLinkDown,
// WithProcess, ParseHealth; health.go).
//
// Every simulated call starts the same way (call.go): the driver locked,
// then the checks every call of its kind makes first (a closed driver, a bad
// ordinal, a poisoned context), with the call's name ready for its errors.
//
// sim imports cuda (handles, error codes), gpu (the interfaces), kernels
// (the entry points and their parameters) and results (the Monitor's
// shapes); the CLI and the measuring packages' tests import it.
//
// # Where the simulation differs from a real GPU
//
//   - Work runs when the host waits for it (a synchronising call, a blocking
//     copy, MemFree, EventElapsed), not when it is enqueued; results are as if
//     the GPU had run it. A latch reads its flag then: set, and it releases at
//     the host time of that call; still clear when the host waits on it, and
//     (after WithLatchGrace of real time for another goroutine to set it) it
//     runs into its timeout in virtual time, at once in real time.
//   - A failed kernel or copy (ILLEGAL_ADDRESS, MISALIGNED_ADDRESS, an
//     injected fault) is reported once, by the next synchronising call of
//     its context, and the context stays usable; a real GPU makes the error
//     sticky until the context is destroyed. WithStickyErrors restores that.
//   - cuEventElapsedTime of events recorded on two different devices returns
//     INVALID_HANDLE (GPU clocks do not compare); event times are not
//     quantised (real events resolve about 0.5 µs).
//   - Fresh allocations hold deterministic junk (a pattern of an unrelated
//     seed), not zeros, so code that reads memory it never wrote fails here.
//     Memory of a pointer chain (p2p_chase_build) reads back its pointers and
//     zeros between them, not what was there before.
//   - The CPU's accesses to pinned host memory are announced through
//     gpu.Context: HostRead before it reads a range, HostWritten after it
//     wrote every byte of one (the real driver needs neither). Copies, fills
//     and memsets into pinned memory are held symbolically until a HostRead of
//     their range (hostmem.go): a program that reads a pinned buffer without
//     it sees stale bytes (zeros, where the pages were released). A range
//     the CPU wrote is described (the verification pattern, one repeated
//     value, else a copy of the bytes, checked byte for byte) at its
//     HostWritten; a change the CPU makes later without HostWritten is not
//     seen by copies. Blocking copies (cuMemcpyHtoD, cuMemcpyDtoH) take and
//     leave the bytes at once, and kernels' word-sized accesses (a latch's
//     flag and status, atomics, a check's result, a chase's pointers) use
//     the buffer's bytes directly. The pages of whole chunks held
//     symbolically go back to the system, and of the ranges settled for the
//     CPU to read only the latest 1 GiB keep theirs. So a device holding a
//     host copy costs no memory, and a run holds far less pinned memory than
//     it allocates (all --simulate dgx-h100: 1.6 GB at most, against 8 GiB
//     of pinned regions).
//   - cuMemcpyPeerAsync goes over the link when the issuing context has peer
//     access to the other device, and through host memory (staged) otherwise.
//   - Kernels with a fixed duration (atomics, latency kernels, the latch) do
//     not take link or memory bandwidth from transfers running beside them.
//     Their times are the real machines' where the verdict's latency table
//     has them (machines.go, h200x2Model): the 2× H200's chases, flag
//     ping-pong, atomic round trips and atomic rates, and a Hopper GPU's own
//     chase and atomic round trip on every NVLink machine; a small copy's
//     device time (lat_copy_device) is not: 13 µs pulling and 1.1 pushing,
//     where the H200s took 15.9 and 5.1. Atomic rates do not depend on the
//     operation's width (but for contended atomics on the 2× H200's peer).
//   - Bandwidth is shared max-min fairly, recomputed whenever a transfer
//     starts or ends; with more than 64 transfers at once, at most once per
//     0.2 % of a transfer's time (an error of that order, for speed).
//   - A copy's fixed cost overlaps the op before it on the stream (the front
//     end prepares the next command), down to a floor: the link latency.
//   - A large copy (copy engine or SM copy kernel) drains after its last byte
//     moves: an event recorded after it completes 3 µs (copy engine) or 8 µs
//     (SM kernel) later, scaled down below 64 MiB, while the next copy on
//     the stream starts at once. So a window of one copy between two events
//     reads 0.2–0.6% low at 512 MiB on h200x2, as one did on the H200, and
//     back-to-back copies pay the drain once. Where a real copy's start and
//     end costs sit is not known; this is where the model puts them.
//   - An SM copy kernel's launch costs time that the launch before it on
//     the stream cannot hide (its grid's last wave draining, the next one
//     ramping up), learnt from the 2× H100 (launch.go): 10.1 µs at 512 MiB,
//     where pulls read 373.75 GB/s launched one per copy and 376.4 in
//     nvbandwidth's one launch of many, 5.9 µs at 64 MiB (364.3 launched
//     per copy), as the 0.26th power of the size between and beyond, scaled
//     down below 64 MiB so that small copies keep their setup's floor
//     alone. A launch that repeats its copy (kernels.CopyArgs.Reps) moves
//     Reps copies' bytes and pays its setup, that cost and its drain once;
//     it leaves what one copy leaves. The SM profiles of the NVLink machines
//     are the sustained rates: hardware.md's figures of a launch per copy
//     with that cost taken out. Whether an H200 pays the same was not
//     measured (its fit of 512 MiB and 2 GiB, 16 µs a launch, is near).
//   - Atomics on a link without native atomics (PCIe across switches) lose
//     updates when many threads hit one address (the read-modify-write races);
//     distinct addresses stay exact. The real behaviour is undefined.
//   - IPC works within one process and one driver instance: opening a handle
//     maps the same memory at a new address of the opening context (flags 0
//     or 1 accepted); opening memory that was freed is INVALID_HANDLE.
//   - VMM memory (vmm.go) is mapped and released only whole (no offset into
//     a handle); the granularity is 2 MiB; a file descriptor it exports is
//     real (an unlinked temporary file) but names memory of its own driver
//     instance only; fabric handles are NOT_SUPPORTED (no IMEX); access for
//     a device that cannot reach the memory is INVALID_DEVICE, a guess at
//     the real driver's answer.
//   - Launches are checked against the parameter sizes the PTX declares and
//     decoded with the kernels package; a kernel the simulator has no model
//     of fails with NOT_SUPPORTED. p2p_chase_build needs a power-of-two node
//     count and p2p_pingpong a non-zero chunk (INVALID_VALUE at launch).
//   - A copy (copy engine or SM kernel) takes a process-level offset on top
//     of its own jitter (noise.go): a few percent at small sizes, 0.04% at
//     512 MiB, the same for every copy with the same buffers at the same
//     places on the same stream, another for another allocation, offset,
//     stream or seed. Which state of a process causes the spread measured
//     between processes on hardware is not known; this is the simulator's
//     guess, which a run's renewals between rounds (measure.Renewal) change.
//   - Host-side timings (results.LatCopyHost) read HostClock, the virtual
//     host clock: fixed costs per call (timing.go), not an operating
//     system's scheduling, so they are repeatable where a real host's vary.
//   - What the 2× H100 shows (docs/methods.md) is
//     modelled on the NVLink machines: the first pull a device issues after
//     its peer access was enabled again following a copy through host
//     memory costs 0.165 ms more (WithColdPulls makes it last longer); a
//     pull of 64 KiB or less costs 6.5 µs queued as its stream runs and
//     13.3 µs queued behind a hold (a latch or an event wait), 4.5 µs less
//     and more in turn (a pull timed alone took 11-12 and 20 µs, turn
//     about, in the reference runs); each active
//     link's corrected-error counter (ECC-data) starts in the hundreds to
//     thousands and rises by 10–56 a second while its device works, and its
//     CRC-data counter holds a base of hundreds: a machine whose links have
//     settled. On the fresh VMs measured, H100 and H200 alike, CRC-data
//     rose during the first runs (hundreds a second per GPU while copies
//     ran, less run by run, none after some ten runs), which the simulator
//     does not model (inject it with link-errors). Whether a GB200 does the
//     same was not measured. Each GPU's NVLink error totals are its links'
//     sums, its data-link totals 0.
//   - The Monitor's clocks are constant; power follows the device's
//     utilisation over about a second of virtual time, temperature over
//     minutes (the real GPUs warmed by 1–3 °C over a run). The NVLink
//     throughput counters count every copy between devices when it ends
//     (not the latency and atomic kernels): payload, and raw bytes at the
//     engine's wire cost (a saturated direction counts 419 of its 450
//     GB/s, as the real counters counted 418–425); an IPC run's processes
//     count into one file's counters, mapped into each (WithSharedTraffic),
//     as the real counters are the device's. Copies across processes cost on the wire what the same
//     copies in one process cost: on the 2× H200 two arrangements both ways
//     cost 1.133 raw bytes per payload byte against 1.083 and ran 4–5%
//     slower, which is not modelled. An IPC child's machine does not model
//     the link's waking (AsIPCChild). An NVSwitch machine's links lead to
//     switches at made-up bus ids (ffff:ff:0s.0).
//   - Host memory is one resource shared fairly by every copy to or from
//     it (hostMemGBps), so every device copying both ways at once reads each
//     direction alike (about 55 GB/s on h200x2). Real 2× H200 share it
//     unevenly: with both devices copying both ways, host→device 29–30 GB/s
//     and device→host 49–51 (testdata/reference/h200x2/2026-11-29-held), and
//     one device both ways 50 and 51; a fair share cannot give two flows of
//     one bottleneck different rates, so this is not modelled, and the
//     simulated host_all_bidir says nothing of a machine's host.
//   - Injected health conditions change only what the Monitor reads: a
//     downed link, a rising error counter or another program's process do
//     not slow the model's transfers. Their times are virtual time since
//     the machine was built, which runs only while the GPUs work. The
//     Monitor lists this process on each GPU where it holds a context, but
//     not the processes of other simulated machines (an IPC run's children).
package sim
