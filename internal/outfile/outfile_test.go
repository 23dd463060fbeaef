package outfile_test

import (
	"bufio"
	"errors"
	"fmt"
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
	// Writable creates nothing (a run refused later leaves no empty
	// directory); Lock makes the directory.
	deeper := filepath.Join(dir, "newer", "deeper", "out.json")
	if err := outfile.Writable(deeper, in); err != nil {
		t.Errorf("Writable of a file in new directories: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "newer")); err == nil {
		t.Error("Writable created the output's directory")
	}
	unlock, err := outfile.Lock(deeper)
	if err != nil {
		t.Fatalf("Lock in a new directory: %v", err)
	}
	unlock()
	// Under a file, no directory can be made: Writable says so.
	if err := outfile.Writable(filepath.Join(in, "x", "out.json")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("an output under a file: %v", err)
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
	// A lock file left by a killed run is taken over, whatever process it
	// names: a live one (this test's, or process 1, which every container
	// has) included; only a held lock refuses.
	for _, stale := range []string{strconv.Itoa(os.Getpid()), "1", "junk"} {
		os.WriteFile(filepath.Join(dir, ".run.json.lock"), []byte(stale+"\n"), 0o644)
		unlock, err = outfile.Lock(p)
		if err != nil {
			t.Fatalf("a stale lock naming %q was not taken over: %v", stale, err)
		}
		_, err := outfile.Lock(p)
		if host, _ := os.Hostname(); !errors.Is(err, outfile.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("process %d on host %s holds the lock", os.Getpid(), host)) {
			t.Errorf("a second Lock = %v, want ErrLocked naming this process", err)
		}
		unlock()
	}
}

// TestLockEndsWithItsProcess: a process killed while it holds a lock leaves
// the lock file behind, and the next Lock takes it over.
func TestLockEndsWithItsProcess(t *testing.T) {
	if p := os.Getenv("OUTFILE_HOLD"); p != "" {
		// The child: take the lock, say so, and wait to be killed.
		if _, err := outfile.Lock(p); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		io.ReadAll(os.Stdin)
		os.Exit(0)
	}
	p := filepath.Join(t.TempDir(), "run.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockEndsWithItsProcess$")
	cmd.Env = append(os.Environ(), "OUTFILE_HOLD="+p)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child: %q", line)
	}
	if _, err := outfile.Lock(p); !errors.Is(err, outfile.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("process %d ", cmd.Process.Pid)) {
		t.Errorf("Lock while the child holds it: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), ".run.json.lock")); err != nil {
		t.Fatalf("the killed child left no lock file: %v", err)
	}
	unlock, err := outfile.Lock(p)
	if err != nil {
		t.Fatalf("the lock of a killed process was not taken over: %v", err)
	}
	unlock()
}
