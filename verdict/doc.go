// Package verdict answers the question a buyer runs p2pbench for: is this
// machine as good as it should be? It is the one judge: every rule of the
// answer is here, and the order is results → verdict → report. Judge
// returns a results.Verdict (PASS, WARN, FAIL or NOT JUDGED, one line per
// check, every judged figure with its expected value and reason, and what
// to do next), which the run keeps in its file; package report renders it
// and judges nothing.
//
// The figures in one process are held to one of three sources:
//
//   - Model(run): the expectation table (table.go; EXPECTATIONS.md prints
//     it with its sources): what each kind of large copy reaches on each
//     kind of path (NVLink version and link count, PCIe generation and
//     width, GPU model), from several machines' reference runs and
//     published results, with margins the sources' spread justifies; where
//     no source measured a path, the vendor's figure with a wide margin;
//     and its latency part (latency.go, latency_table.go): each kind of
//     latency and atomic figure per GPU model and path, as two machines or
//     more measured it the way the run's build does. No figure judges the
//     machine it came from: a source's GPUs are left out;
//   - LoadSpec(path): a small JSON file of least (or, for times, most)
//     figures per test, link class and size, as a purchase contract states
//     them (spec.go; examples in examples/expect/);
//   - FromBaseline(base, ...): a known-good results file, judged with
//     compare's statistics and a noise floor (baseline.go).
//
// The checks of the run (each a line of the verdict):
//
//   - links (health.go, links.go): NVML's NVLink error counters judged as
//     DCGM's health watch polled at the end of the run would judge them
//     (any replay or recovery error fails; CRC errors fail at 100 a second
//     per GPU over its minute and warn at any rise; errors the link
//     corrected are a note), with what DCGM's other rules would say beside
//     it; links down or slowed fail;
//   - memory: uncorrected ECC errors and failed row remapping fail;
//   - processes, clocks (state.go): another program beside the run, clocks
//     held down or moved warn;
//   - measurements (measurements.go): figures that failed or moved data
//     that did not verify fail (a failure the machine explains is a note);
//   - pairs (pairs.go): each pair held to the others of its link class,
//     false alarms held to 1% over every comparison (Holm);
//   - noise (noise.go): noisy figures given the cause the readings
//     support, one line per cause; noise with no cause is a note;
//   - ipc (ipc.go): figures across processes held to the same run's
//     figures in one process; a shortfall warns naming the arrangement and
//     fails only where the figure in one process fails too;
//   - driver: behaviour that differs from the documentation, a note.
//
// A check with nothing to judge by is not judged, never PASS.
//
// verdict reads results only: it imports results and compare
// (statistics), never report, cuda, gpu, bench or ipc.
package verdict
