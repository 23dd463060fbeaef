package compare

import (
	"os"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// The committed runs the tests compare (testdata/reference, the evidence)
// are read by many tests: the generated tables, the re-runs, the gates and
// the hold-outs read the same few hundred files, a file up to five times.
// readShared reads each once for the test binary (resultstest.ReadShared):
// a test that changes a run changes a copy (variant, onlyFamily,
// gateCase.made), and the binary fails when a shared run changed.

// readShared is results.Read of path, once for the test binary.
func readShared(t testing.TB, path string) *results.Run {
	t.Helper()
	r, err := resultstest.ReadShared(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMain(m *testing.M) { os.Exit(resultstest.RunShared(m)) }
