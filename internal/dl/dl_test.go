//go:build linux

package dl_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/internal/dl"
)

var (
	errNoLibrary = errors.New("no library")
	errMissing   = errors.New("missing")
)

// libc is a library every Linux test machine has.
var libc = dl.Library{Name: "libc.so.6", Env: "DL_TEST_LIBRARY", About: "the C library",
	NoLibrary: errNoLibrary, Missing: errMissing}

func TestLoadBindsTheFirstSymbolFound(t *testing.T) {
	var getpid, absent func() int32
	lib, err := dl.Load(libc, []dl.Entry{
		{Fn: &getpid, Name: "getpid", Symbols: []string{"no_such_getpid", "getpid"}},
		{Fn: &absent, Name: "no_such_function", Optional: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := getpid(); int(got) != os.Getpid() {
		t.Errorf("getpid() = %d, want %d", got, os.Getpid())
	}
	if absent != nil {
		t.Error("an optional entry the library lacks was bound")
	}
	if lib.Path != "libc.so.6" || lib.Symbol("getpid") != "getpid" || lib.Symbol("no_such_function") != "no_such_function" {
		t.Errorf("Path %q, Symbol(getpid) %q, Symbol(no_such_function) %q", lib.Path, lib.Symbol("getpid"), lib.Symbol("no_such_function"))
	}
}

func TestLoadNamesEveryMissingEntry(t *testing.T) {
	var f, g func()
	_, err := dl.Load(libc, []dl.Entry{
		{Fn: &f, Name: "f", Symbols: []string{"no_such_f_v2", "no_such_f"}},
		{Fn: &g, Name: "no_such_g"},
	})
	want := "libc.so.6 lacks no_such_f_v2 or no_such_f, no_such_g, which p2pbench needs (is the driver too old?): missing"
	if !errors.Is(err, errMissing) || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

func TestLoadWithoutTheLibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libnothing.so")
	t.Setenv(libc.Env, path)
	_, err := dl.Load(libc, nil)
	if !errors.Is(err, errNoLibrary) {
		t.Fatalf("error = %v, want one matching NoLibrary", err)
	}
	msg := err.Error()
	prefix := "cannot load " + path + " (the C library): "
	suffix := "; install the NVIDIA driver or set DL_TEST_LIBRARY to its path"
	if !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, suffix) || strings.Contains(msg, "\n") {
		t.Errorf("message = %q\nwant one line %q<loader's reason>%q", msg, prefix, suffix)
	}
}

// TestLoadRefusesAFIFO: a library path naming a FIFO is refused before
// dlopen, which would block on it until something wrote it.
func TestLoadRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	t.Setenv(libc.Env, path)
	_, err := dl.Load(libc, nil)
	if !errors.Is(err, errNoLibrary) || !strings.Contains(err.Error(), "named pipe (FIFO)") {
		t.Errorf("error = %v, want NoLibrary naming a FIFO", err)
	}
}

// TestLoaderReasonIsKept: the loader's reason is read on the thread that
// called dlopen; on another thread it would be empty ("unknown loader
// error"). Many loads at once, on goroutines the scheduler moves, keep it.
func TestLoaderReasonIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libnothing.so")
	t.Setenv(libc.Env, path)
	var wg sync.WaitGroup
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	errs := make(chan error, 2000)
	for range 2000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.Gosched()
			_, err := dl.Load(libc, nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err == nil || strings.Contains(err.Error(), "unknown loader error") || !strings.Contains(err.Error(), "libnothing.so") {
			t.Fatalf("a load lost the loader's reason: %v", err)
		}
	}
}
