// Package fakelib builds the C fakes of the NVIDIA libraries (fake libcuda,
// fake libnvidia-ml) with gcc for tests, one build per set of -D flags, so
// the purego bindings are tested against real C signatures and calling
// conventions without a GPU.
//
// The builds are kept in the user's cache directory (os.UserCacheDir, under
// p2pbench-fakelib), each under a key of what makes it: the source's
// content, the compiler's command line and its version. Every test binary
// that loads a fake (cuda, nvml, gpu, cmd/p2pbench) compiled and linked it
// afresh before, most of those packages' CPU time; an edit of the source, a
// flag or another compiler makes a new key, so a build is never one of other
// code. Test binaries running at once may build the same key together: each
// builds into a file of its own and renames it into place, so none loads a
// half-written library. Without a cache directory the builds go to a
// temporary directory of the test binary, removed by Remove.
package fakelib

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Set is one fake library: its C source and the file name it is loaded as.
type Set struct {
	Src     string // C source, relative to the test's package directory
	LibName string // e.g. libcuda.so.1

	mu      sync.Mutex
	tmp     string            // the temporary directory when there is no cache
	version string            // the compiler's "--version", once asked
	paths   map[string]string // -D flag ("" for none) -> built library
	err     error
}

// Path returns the library built with -D flag (none for ""), building it on
// first use unless the cache holds it. Without gcc ($CC when set) the test is
// skipped, except when CI=true, where gcc must be there and the test fails.
func (s *Set) Path(t testing.TB, flag string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.paths[flag]; ok {
		return p
	}
	if s.err == nil {
		var p string
		if p, s.err = s.build(flag); s.err == nil {
			return p
		}
	}
	if errors.Is(s.err, exec.ErrNotFound) && os.Getenv("CI") != "true" {
		t.Skipf("no gcc to build the fake %s: %v", s.LibName, s.err)
	}
	t.Fatalf("building the fake %s: %v", s.LibName, s.err)
	return ""
}

func (s *Set) build(flag string) (string, error) {
	// $CC names another compiler: a cross gcc when the tests are built for
	// another architecture and run under emulation (scripts/test-arm64.sh).
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	gcc, err := exec.LookPath(cc)
	if err != nil {
		return "", err
	}
	src, err := filepath.Abs(s.Src)
	if err != nil {
		return "", err
	}
	code, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	if s.version == "" {
		out, err := exec.Command(gcc, "--version").Output()
		if err != nil {
			return "", fmt.Errorf("%s --version: %v", cc, err)
		}
		s.version = string(out)
	}
	if s.paths == nil {
		s.paths = map[string]string{}
	}
	args := []string{"-shared", "-fPIC"}
	if flag != "" {
		args = append(args, "-D"+flag)
	}
	dir, err := s.dir(key(gcc, s.version, args, code))
	if err != nil {
		return "", err
	}
	lib := filepath.Join(dir, s.LibName)
	if _, err := os.Stat(lib); err == nil {
		s.paths[flag] = lib
		return lib, nil
	}
	// Built under a name of its own, then renamed into place: a test binary
	// that finds lib finds it whole.
	f, err := os.CreateTemp(dir, s.LibName+".*.tmp")
	if err != nil {
		return "", err
	}
	f.Close()
	part := f.Name()
	args = append(args, "-o", part, src)
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		os.Remove(part)
		return "", fmt.Errorf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	if err := os.Rename(part, lib); err != nil {
		os.Remove(part)
		return "", err
	}
	s.paths[flag] = lib
	return lib, nil
}

// key names a build by what makes it: the compiler's path and version, its
// arguments (the output's and the source's paths aside) and the source.
func key(gcc, version string, args []string, code []byte) string {
	h := sha256.New()
	for _, part := range append([]string{gcc, version}, args...) {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	h.Write(code)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// dir returns the directory of the build named key, made if missing: in the
// user's cache directory, else in the Set's temporary directory.
func (s *Set) dir(key string) (string, error) {
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "p2pbench-fakelib", key)
		if err := os.MkdirAll(dir, 0o755); err == nil {
			return dir, nil
		}
	}
	if s.tmp == "" {
		tmp, err := os.MkdirTemp("", "fakelib")
		if err != nil {
			return "", err
		}
		s.tmp = tmp
	}
	dir := filepath.Join(s.tmp, key)
	return dir, os.MkdirAll(dir, 0o755)
}

// Remove deletes the builds made outside the cache; call it from TestMain
// after the tests.
func (s *Set) Remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}
