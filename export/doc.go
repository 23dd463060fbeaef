// Package export writes a judged run (a results.Run with its verdict) in
// the formats the tools infrastructure teams already run can read:
//
//   - JUnit XML (WriteJUnit), which CI systems (Jenkins, GitLab, GitHub
//     Actions' test reporters) show as test results: one test case per
//     check of the verdict and one per judged figure, a FAIL as a
//     failure, a WARN as a failure only when strict, a check with nothing
//     to judge by as skipped;
//   - the Prometheus text exposition format (WritePrometheus), for fleet
//     monitoring through node_exporter's textfile collector: the verdict,
//     each check's status, the run and its GPUs (serials, board, firmware)
//     and the headline figures, every metric named p2pbench_… and every
//     GPU labelled by its serial.
//
// It reads results and the headline figures of package report, and judges
// nothing itself: the run's verdict says what passed.
package export
