package resultstest

import (
	"slices"
	"testing"
)

// ReadShared reads a file once and hands out the same run; a change to it
// is seen by SharedChanged, and undone, no longer.
func TestReadShared(t *testing.T) {
	const path = "../../testdata/reference/h200x2/all.json"
	if Shared(path) != nil {
		t.Fatal("a run nobody read is shared")
	}
	a, err := ReadShared(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := ReadShared("../" + "../testdata/reference/h200x2/../h200x2/all.json"); b != a || Shared(path) != a {
		t.Fatal("the same file read twice")
	}
	if _, err := ReadShared("no-such-file.json"); err == nil {
		t.Error("a missing file read")
	}
	if len(SharedChanged()) != 0 {
		t.Fatalf("changed before any change: %q", SharedChanged())
	}
	f := &a.Figures[0]
	old := f.Samples[0]
	f.Samples[0]++
	changed := SharedChanged()
	f.Samples[0] = old
	if len(changed) != 1 || !slices.ContainsFunc(changed, func(p string) bool { return len(p) > 0 && p[0] == '/' }) {
		t.Errorf("a changed sample: SharedChanged %q, want the file's absolute path", changed)
	}
	if len(SharedChanged()) != 0 {
		t.Errorf("undone, still changed: %q", SharedChanged())
	}
}
