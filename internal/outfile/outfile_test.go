package outfile_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := outfile.Write(p, writeString("new")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "new" || fi.Mode().Perm() != 0o644 {
		t.Errorf("got %q mode %v, want \"new\" 0644", got, fi.Mode().Perm())
	}
	// A failing writer leaves the old file and no temporary file.
	if err := outfile.Write(p, func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("boom") }); err == nil {
		t.Fatal("a failing writer returned no error")
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Errorf("after a failed write the file holds %q", got)
	}
	if e := entries(t, dir); len(e) != 1 {
		t.Errorf("files left: %v", e)
	}
	// A full disk is said without the temporary file's name.
	full := func(w io.Writer) error {
		return &os.PathError{Op: "write", Path: w.(*os.File).Name(), Err: syscall.ENOSPC}
	}
	if err := outfile.Write(p, full); err == nil || err.Error() != "output "+p+": no space left on device" {
		t.Errorf("a full disk: %v", err)
	}
}

func TestRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	link := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link, "/dev/null", dir, dir + "/"} {
		for name, call := range map[string]func() error{
			"Check": func() error { return outfile.Check(p) },
			"Write": func() error { return outfile.Write(p, writeString("x")) },
		} {
			err := call()
			var oe *outfile.Error
			if !errors.As(err, &oe) || oe.Path != p {
				t.Errorf("%s(%s) = %v, want an *outfile.Error naming the path", name, p, err)
			}
		}
	}
	if fi, err := os.Lstat("/dev/null"); err == nil && fi.Mode().IsRegular() {
		t.Fatal("/dev/null became a regular file")
	}
	fi, _ := os.Lstat(fifo)
	if fi.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the FIFO was replaced")
	}
	if err := outfile.Check(fifo); !errors.Is(err, outfile.ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("Check(fifo) = %v, want ErrNotRegular naming a named pipe", err)
	}
}

func TestFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "real")
	os.Mkdir(sub, 0o755)
	target := filepath.Join(sub, "results.json")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "latest.json")
	if err := os.Symlink("real/results.json", link); err != nil {
		t.Fatal(err)
	}
	if err := outfile.Write(link, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("the link's target holds %q", got)
	}
	// A dangling link: the file it names is created.
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink("real/new.json", dangling)
	if err := outfile.Write(dangling, writeString("fresh")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(sub, "new.json")); string(got) != "fresh" {
		t.Errorf("the dangling link's target holds %q", got)
	}
}

func TestCheckRefusesAnInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	os.WriteFile(in, []byte("{}"), 0o644)
	link := filepath.Join(dir, "alias.json")
	os.Symlink(in, link)
	for _, out := range []string{in, link, filepath.Join(dir, ".", "in.json")} {
		if err := outfile.Check(out, "other.json", in); !errors.Is(err, outfile.ErrSameAsIn) {
			t.Errorf("Check(%s) with input %s = %v, want ErrSameAsIn", out, in, err)
		}
	}
	if err := outfile.Check(filepath.Join(dir, "new", "out.json"), in); err != nil {
		t.Errorf("a new file in a new directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err != nil {
		t.Error("Check did not create the output's directory")
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.json")
	unlock, err := outfile.Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := outfile.Lock(p); !errors.Is(err, outfile.ErrLocked) {
		t.Errorf("a second Lock = %v, want ErrLocked", err)
	}
	unlock()
	if e := entries(t, dir); len(e) != 0 {
		t.Errorf("unlock left %v", e)
	}
	// A lock whose process is gone is taken over.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	os.WriteFile(filepath.Join(dir, ".run.json.lock"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	unlock, err = outfile.Lock(p)
	if err != nil {
		t.Fatalf("a stale lock was not taken over: %v", err)
	}
	unlock()
}
