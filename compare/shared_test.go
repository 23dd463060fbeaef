package compare

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/p2pbench/p2pbench/results"
)

// The committed runs the tests compare (testdata/reference, the evidence)
// are read by many tests: the generated tables, the re-runs, the gates and
// the hold-outs read the same few hundred files, a file up to five times.
// readShared reads each once for the test binary and hands every test the
// same run, read-only: a test that changes a run changes a copy (variant,
// onlyFamily, gateCase.made), and TestMain fails the binary when a shared
// run changed (sharedUnchanged).

// sharedRun is one file read for the test binary, with its fingerprint as
// read.
type sharedRun struct {
	once sync.Once
	run  *results.Run
	err  error
	sum  uint64
}

// sharedRuns maps an absolute path to its *sharedRun.
var sharedRuns sync.Map

// readShared is results.Read of path, once for the test binary.
func readShared(t testing.TB, path string) *results.Run {
	t.Helper()
	key, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := sharedRuns.LoadOrStore(key, new(sharedRun))
	s := v.(*sharedRun)
	s.once.Do(func() {
		if s.run, s.err = results.Read(path); s.err == nil {
			s.sum = fingerprint(s.run)
		}
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.run
}

// fingerprint hashes what a test could change of a run and a comparison
// reads: its build, completeness and plan's figures — each figure's key,
// samples, rounds, summary and failure.
func fingerprint(r *results.Run) uint64 {
	h := fnv.New64a()
	var b [8]byte
	num := func(x uint64) {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	fmt.Fprintf(h, "%s|%v|%v|%d|%d\n", r.Tool.Version, r.Complete, r.Imported != nil, len(r.Catalogue), len(r.Figures))
	for i := range r.Figures {
		f := &r.Figures[i]
		fmt.Fprintf(h, "%s|%s|%s|%d\n", f.Key(), f.Error, f.ErrorName, len(f.Samples))
		for _, x := range f.Samples {
			num(math.Float64bits(x))
		}
		for _, n := range f.Rounds {
			num(uint64(n))
		}
		if f.Stats != nil {
			num(math.Float64bits(f.Stats.Median))
		}
	}
	return h.Sum64()
}

// sharedUnchanged says which shared runs a test changed (none: nil).
func sharedUnchanged() []string {
	var changed []string
	sharedRuns.Range(func(k, v any) bool {
		if s := v.(*sharedRun); s.err == nil && s.run != nil && fingerprint(s.run) != s.sum {
			changed = append(changed, k.(string))
		}
		return true
	})
	slices.Sort(changed)
	return changed
}

func TestMain(m *testing.M) {
	code := m.Run()
	if changed := sharedUnchanged(); len(changed) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: a test changed these shared runs (readShared): %q; change a copy\n", changed)
		code = 1
	}
	os.Exit(code)
}
