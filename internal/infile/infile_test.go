package infile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/internal/infile"
)

// TestRefusesWhatIsNotARegularFile: a FIFO with no writer (which would
// block the open), a device that never ends and a directory are refused
// before any read; the call returns (a hang fails the test by its
// timeout).
func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "results.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	link := filepath.Join(dir, "link.json")
	os.Symlink(fifo, link)
	for path, want := range map[string]string{fifo: "named pipe (FIFO)", link: "named pipe (FIFO)", "/dev/zero": "character device", dir: "directory"} {
		_, err := infile.ReadFile(path, 1<<20)
		if !errors.Is(err, infile.ErrNotRegular) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadFile(%s) = %v, want ErrNotRegular naming a %s", path, err, want)
		}
		if f, err := infile.Open(path); err == nil {
			f.Close()
			t.Errorf("Open(%s) opened it", path)
		}
	}
	if err := infile.Check(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestReadFileBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "spec.json")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	if data, err := infile.ReadFile(p, 10); err != nil || string(data) != "0123456789" {
		t.Errorf("a file at the limit: %q, %v", data, err)
	}
	if _, err := infile.ReadFile(p, 9); !errors.Is(err, infile.ErrTooLarge) || !strings.Contains(err.Error(), "more than 9 bytes") {
		t.Errorf("a file over the limit: %v", err)
	}
}
