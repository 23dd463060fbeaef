// Package verdict answers the question a buyer runs p2pbench for: is this
// machine as good as it should be? It judges a results run against
// expectations and returns a results.Verdict (PASS, WARN or FAIL, with one
// line per check, every judged figure with its expected value and reason,
// and what to do next), which the run keeps in its file and the report
// opens with.
//
// The expectations come from one of three sources:
//
//   - Model(run): p2pbench's model of the machine, from what the run knows
//     of it (GPU model, NVLinks and their version per pair, PCIe generation
//     and width, peer access), with efficiency factors measured on the
//     2× H200 (model.go); parts of a machine the factors were not measured
//     on get lower floors, and the verdict says so;
//   - LoadSpec(path): a small JSON file of least (or, for times, most)
//     figures per test, link class and size, as a purchase contract states
//     them (spec.go; examples for the machines p2pbench knows in
//     examples/expect/);
//   - FromBaseline(base, ...): a known-good results file, judged with
//     compare's statistics and a noise floor (baseline.go).
//
// Judge adds to the figures the checks of the run itself, from report's
// automatic checks (report.Findings, which reads the run's health and
// hygiene): an NVLink error counter that rose or a link that went down,
// uncorrected memory errors, failed figures and slow pairs FAIL; another
// program on the GPUs, throttling and noisy figures WARN; behaviour that is
// known and explained (a pair without peer access, the IPC copy-engine
// arrangement the NVLink counters explain, a driver that differs from its
// documentation) is a NOTE and never a warning.
//
// verdict reads results only: it imports results, compare (statistics)
// and report (the automatic checks), never cuda, gpu, bench or ipc.
package verdict
