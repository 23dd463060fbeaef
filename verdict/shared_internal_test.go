package verdict

import (
	"os"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// The committed runs the tests judge and tabulate (testdata/reference, the
// hold-outs) are read by several tests: the latency table's and the
// expectation table's sources, the short outcomes' reference runs, the
// reference 2× H200 run of a dozen tests, and TestRealRunsAsDCGMJudges,
// which reads every one. ReadShared reads a file once for the test binary
// (resultstest.ReadShared) and hands every test the same run, read-only: a
// test that judges it judges a shallow copy (judge writes the verdict into
// the run), a test that changes a figure reads its own. Shared
// (TestRealRunsAsDCGMJudges) takes a run only where a test read it, so the
// binary does not hold every committed run at once. The binary fails when
// a shared run changed.

// ReadShared is results.Read of path, once for the test binary.
func ReadShared(path string) (*results.Run, error) { return resultstest.ReadShared(path) }

// Shared is the run of path where a test read it with ReadShared; nil else.
func Shared(path string) *results.Run { return resultstest.Shared(path) }

func TestMain(m *testing.M) { os.Exit(resultstest.RunShared(m)) }
