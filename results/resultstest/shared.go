package resultstest

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

// The committed runs (testdata/reference, the evidence, the hold-outs) are
// read by many tests of a package: ReadShared reads a file once for the test
// binary and hands every test the same run, read-only. A test that changes
// a run changes a copy (a test that judges one judges a shallow copy, as
// judging writes the verdict into the run); RunShared fails the binary when
// a shared run changed.

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

func sharedKey(path string) string {
	if key, err := filepath.Abs(path); err == nil {
		return key
	}
	return path
}

// ReadShared is results.Read of path, once for the test binary.
func ReadShared(path string) (*results.Run, error) {
	v, _ := sharedRuns.LoadOrStore(sharedKey(path), new(sharedRun))
	s := v.(*sharedRun)
	s.once.Do(func() {
		if s.run, s.err = results.Read(path); s.err == nil {
			s.sum = fingerprint(s.run)
		}
	})
	return s.run, s.err
}

// Shared is the run of path where a test read it with ReadShared, nil
// else: a test that reads every committed run takes the ones others read
// without making the binary hold every one at once.
func Shared(path string) *results.Run {
	v, ok := sharedRuns.Load(sharedKey(path))
	if !ok {
		return nil
	}
	s := v.(*sharedRun)
	s.once.Do(func() {}) // wait for a read under way
	return s.run
}

// fingerprint hashes what a test could change of a run that comparing,
// judging or tabulating it reads: its identity and verdict, its devices
// (their PCIe links), its topology's pairs and NVLinks, its health
// readings' counts, and each figure (its key, samples, rounds, summary,
// failure, verification).
func fingerprint(r *results.Run) uint64 {
	h := fnv.New64a()
	var b [8]byte
	num := func(x uint64) {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	str := func(s string) {
		num(uint64(len(s)))
		h.Write([]byte(s))
	}
	str(r.Tool.Version)
	str(r.Host)
	e := &r.Environment
	for _, x := range []bool{r.Complete, r.Simulated, r.Imported != nil, r.Verdict != nil, r.Topology != nil} {
		var bit uint64
		if x {
			bit = 1
		}
		num(bit)
	}
	for _, n := range []int{len(r.Catalogue), len(r.Figures), len(e.Devices), len(e.HealthBefore), len(e.HealthAfter), len(e.DuringRun)} {
		num(uint64(n))
	}
	for _, d := range e.Devices {
		num(uint64(d.Index))
		str(d.UUID)
		if d.PCIe != nil {
			str(fmt.Sprintf("%+v", *d.PCIe))
		}
	}
	if t := r.Topology; t != nil {
		num(uint64(len(t.Pairs)))
		for _, dl := range t.Links {
			str(fmt.Sprintf("%+v", dl))
		}
	}
	for i := range r.Figures {
		f := &r.Figures[i]
		str(f.Key())
		str(f.Error)
		str(f.ErrorName)
		str(string(f.Verify))
		num(uint64(len(f.Samples)))
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

// SharedChanged lists the shared runs a test changed.
func SharedChanged() []string {
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

// RunShared runs the tests of m and fails the binary where a test changed
// a shared run: a package's TestMain is os.Exit(resultstest.RunShared(m)).
func RunShared(m *testing.M) int {
	code := m.Run()
	if changed := SharedChanged(); len(changed) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: a test changed these shared runs (resultstest.ReadShared): %q; change a copy\n", changed)
		code = 1
	}
	return code
}
