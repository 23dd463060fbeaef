// Package measure is the measuring core that the in-process tests (bench)
// and the tests across processes (ipc) share:
//
//   - one device's resources (Device: context, bandwidth buffers, loaded
//     modules, streams, events, the latch, scratch memory) and the kernel
//     operations both sides launch on it (SM copies, pointer chase,
//     ping-pong);
//   - latch-and-events timing (Transfer, Timing, Timer): every stream held
//     by a latch kernel while the work is enqueued, released at once, timed
//     by CUDA events; bandwidth samples in steady state (SteadyTimingFor: a
//     fit of back-to-back copies against one copy alone, so a timed
//     window's start and end cost cancels);
//   - verification of the data that moved (Fill, Poison, Check, Mismatch);
//   - peer-access bookkeeping (Peers);
//   - the traffic window (Meter): NVLink counters read around a figure;
//   - the watch (Watch): other programs on the GPUs and throttle reasons,
//     read before measuring and after every test;
//   - rounds (rounds.go): what a device renews between two rounds of a run
//     (Renewal, Device.Renew) and the Collector that adds each round's
//     samples to its figure;
//   - the settings both kinds of run share (Settings, SMConfig, TuneKey)
//     and the figure arithmetic (GBps, TotalGBps, Fail, Finish).
//
// It imports cuda, gpu, kernels and results; bench and ipc import it, and
// nothing here knows which of them is measuring.
package measure
