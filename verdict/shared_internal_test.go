package verdict

import (
	"os"
	"testing"

	"github.com/p2pbench/p2pbench/results/resultstest"
)

// The committed runs the tests judge and tabulate (testdata/reference, the
// hold-outs) are read by several tests: the latency table's and the
// expectation table's sources, the short outcomes' reference runs, the
// reference 2× H200 run of a dozen tests, and TestRealRunsAsDCGMJudges,
// which reads every one. resultstest.ReadShared reads a file once for the
// test binary and hands every test the same run, read-only: a test that
// judges it judges a shallow copy (judge writes the verdict into the run),
// a test that changes a figure reads its own. TestRealRunsAsDCGMJudges
// takes a run only where a test read it (resultstest.Shared), so the
// binary does not hold every committed run at once. The binary fails when
// a shared run changed.

func TestMain(m *testing.M) { os.Exit(resultstest.RunShared(m)) }
