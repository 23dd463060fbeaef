package fakelib

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBuildsAreKept builds a library in a fresh cache directory: a second
// Set of the same source and flag (another test binary) finds the same file
// and does not build it again, and no partial build is left.
func TestBuildsAreKept(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	src := filepath.Join(t.TempDir(), "fake.c")
	if err := os.WriteFile(src, []byte("int answer(void) { return VALUE; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
	if b := newSet().Path(t, "VALUE=1"); b != a {
		t.Errorf("a second Set of the same source and flag got %s, want %s", b, a)
	}
	if after, err := os.Stat(a); err != nil || !os.SameFile(before, after) {
		t.Errorf("the cached build was built again (%v)", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(cache, "*", "*", "*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("partial builds left behind: %v", leftovers)
	}
}

// TestKeyNamesWhatMakesABuild: the key of a build (its directory) changes
// with each thing that makes it, the compiler's path and version, a flag
// and the source, and with nothing else.
func TestKeyNamesWhatMakesABuild(t *testing.T) {
	base := func() (string, string, []string, []byte) {
		return "/usr/bin/gcc", "gcc 12.2.0\n", []string{"-shared", "-fPIC", "-DVALUE=1"}, []byte("int answer(void) { return VALUE; }\n")
	}
	want := key(base())
	if got := key(base()); got != want {
		t.Errorf("the same build got keys %s and %s", want, got)
	}
	for name, change := range map[string]func(gcc, version *string, args *[]string, code *[]byte){
		"another compiler": func(gcc, _ *string, _ *[]string, _ *[]byte) { *gcc = "/usr/bin/aarch64-linux-gnu-gcc" },
		"another version":  func(_, version *string, _ *[]string, _ *[]byte) { *version = "gcc 13.1.0\n" },
		"another flag":     func(_, _ *string, args *[]string, _ *[]byte) { (*args)[2] = "-DVALUE=2" },
		"no flag":          func(_, _ *string, args *[]string, _ *[]byte) { *args = (*args)[:2] },
		"an edited source": func(_, _ *string, _ *[]string, code *[]byte) { *code = append(*code, '\n') },
		// The parts' bounds count: a flag moved into the version is another build.
		"parts run together": func(_, version *string, args *[]string, _ *[]byte) {
			*version += (*args)[0]
			*args = (*args)[1:]
		},
	} {
		gcc, version, args, code := base()
		change(&gcc, &version, &args, &code)
		if key(gcc, version, args, code) == want {
			t.Errorf("%s: the same key", name)
		}
	}
}
