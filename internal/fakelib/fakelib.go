// Package fakelib builds the C fakes of the NVIDIA libraries (fake libcuda,
// fake libnvidia-ml) with gcc for tests, once per test binary and one build
// per set of -D flags, so the purego bindings are tested against real C
// signatures and calling conventions without a GPU.
package fakelib

import (
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

	mu    sync.Mutex
	dir   string
	paths map[string]string // -D flag ("" for none) -> built library
	err   error
}

// Path returns the library built with -D flag (none for ""), building it on
// first use. Without gcc ($CC when set) the test is skipped, except when CI=true, where gcc
// must be there and the test fails.
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
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "fakelib"); err != nil {
			return "", err
		}
		s.paths = map[string]string{}
	}
	name, args := "default", []string{"-shared", "-fPIC"}
	if flag != "" {
		name, args = strings.ToLower(flag), append(args, "-D"+flag)
	}
	dir := filepath.Join(s.dir, name)
	lib := filepath.Join(dir, s.LibName)
	args = append(args, "-o", lib, src)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	s.paths[flag] = lib
	return lib, nil
}

// Remove deletes every build; call it from TestMain after the tests.
func (s *Set) Remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
