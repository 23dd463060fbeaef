package fakelib

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBuildsAreKeptByWhatMakesThem builds a library in a fresh cache
// directory: a second Set of the same source and flag (another test binary)
// finds the same file and does not build it again, where another flag or an
// edited source gets a build of its own.
func TestBuildsAreKeptByWhatMakesThem(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	src := filepath.Join(t.TempDir(), "fake.c")
	write := func(code string) {
		if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("int answer(void) { return VALUE; }\n")
	newSet := func() *Set { return &Set{Src: src, LibName: "libfake.so.1"} }

	first := newSet()
	t.Cleanup(first.Remove)
	a := first.Path(t, "VALUE=1")
	if filepath.Base(a) != "libfake.so.1" {
		t.Errorf("built %s, want a file named libfake.so.1", a)
	}
	if rel, err := filepath.Rel(cache, a); err != nil || !filepath.IsLocal(rel) {
		t.Errorf("built %s outside the cache directory %s", a, cache)
	}
	before, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}

	again := newSet()
	if b := again.Path(t, "VALUE=1"); b != a {
		t.Errorf("a second Set of the same source and flag got %s, want %s", b, a)
	}
	if after, err := os.Stat(a); err != nil || !os.SameFile(before, after) {
		t.Errorf("the cached build was built again (%v)", err)
	}
	other := again.Path(t, "VALUE=2")
	if other == a {
		t.Error("another flag got the same build")
	}

	write("int answer(void) { return VALUE + 1; }\n")
	if c := newSet().Path(t, "VALUE=1"); c == a || c == other {
		t.Errorf("an edited source got an earlier build %s", c)
	}
	leftovers, _ := filepath.Glob(filepath.Join(cache, "*", "*", "*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("partial builds left behind: %v", leftovers)
	}
}
