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

// TestLockNeverWritesWhatItFinds: a link, a hard link, a FIFO or a device
// planted at the lock's name is refused and left as it was; the file it
// leads to is never truncated or written.
func TestLockNeverWritesWhatItFinds(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.json")
	lock := filepath.Join(dir, ".x.json.lock")
	victim := filepath.Join(dir, "victim.txt")
	const precious = "precious data line\n"
	plant := map[string]func() error{
		"a symbolic link to a file":      func() error { return os.Symlink(victim, lock) },
		"a dangling symbolic link":       func() error { return os.Symlink(filepath.Join(dir, "new-victim"), lock) },
		"a symbolic link to /dev/null":   func() error { return os.Symlink("/dev/null", lock) },
		"a hard link to a file":          func() error { return os.Link(victim, lock) },
		"a FIFO":                         func() error { return syscall.Mkfifo(lock, 0o644) },
		"a directory":                    func() error { return os.Mkdir(lock, 0o755) },
		"a symbolic link to the target":  func() error { return os.Symlink(out, lock) },
		"a symbolic link to a directory": func() error { return os.Symlink(dir, lock) },
	}
	for name, put := range plant {
		os.RemoveAll(lock)
		os.Remove(out)
		os.Remove(filepath.Join(dir, "new-victim"))
		if err := os.WriteFile(victim, []byte(precious), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := put(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		before, _ := os.Lstat(lock)
		unlock, err := outfile.Lock(out)
		if err == nil {
			unlock()
			t.Errorf("%s at the lock's name: Lock took it", name)
		} else if !errors.Is(err, outfile.ErrLockFile) || !strings.Contains(err.Error(), lock) {
			t.Errorf("%s at the lock's name: %v, want a refusal naming %s", name, err, lock)
		}
		if got, _ := os.ReadFile(victim); string(got) != precious {
			t.Errorf("%s at the lock's name: the victim now holds %q", name, got)
		}
		if _, err := os.Lstat(filepath.Join(dir, "new-victim")); err == nil {
			t.Errorf("%s at the lock's name: a file was created where the link points", name)
		}
		if after, err := os.Lstat(lock); err != nil || !os.SameFile(before, after) {
			t.Errorf("%s at the lock's name: it was removed or replaced (%v)", name, err)
		}
	}
	// The victim's link count back to one, and the lock's name free: Lock works.
	os.RemoveAll(lock)
	unlock, err := outfile.Lock(out)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

// TestLockCreatesItsOwnFile: a stale lock file is replaced by a new file,
// not truncated and reused, so a file another process still has open keeps
// what it held.
func TestLockCreatesItsOwnFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.json")
	lock := filepath.Join(dir, ".x.json.lock")
	if err := os.WriteFile(lock, []byte("process 1 on host gone"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale, err := os.Open(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	unlock, err := outfile.Lock(out)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if got, _ := io.ReadAll(stale); string(got) != "process 1 on host gone" {
		t.Errorf("the stale lock file was rewritten: %q", got)
	}
	now, err := os.Lstat(lock)
	if was, _ := stale.Stat(); err != nil || os.SameFile(was, now) {
		t.Errorf("the lock's name still leads to the stale file (%v)", err)
	}
}

// TestRefusesAnotherUsersLink: as root, a link another user planted at an
// output's name is refused by Check, Write and Lock, and nothing is written
// where it points. (The rule itself is also tested without root, in
// TestResolveForAnotherUser.)
func TestRefusesAnotherUsersLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a link to another user")
	}
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim.txt")
	os.WriteFile(victim, []byte("keep"), 0o600)
	link := filepath.Join(dir, "results.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"Check": func() error { return outfile.Check(link) },
		"Write": func() error { return outfile.Write(link, writeString("clobbered")) },
		"Lock": func() error {
			unlock, err := outfile.Lock(link)
			if err == nil {
				unlock()
			}
			return err
		},
	} {
		if err := call(); !errors.Is(err, outfile.ErrNotRegular) || !strings.Contains(err.Error(), "owned by user 4242") {
			t.Errorf("%s through another user's link: %v", name, err)
		}
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Errorf("the victim holds %q", got)
	}
}

// TestRefusesDescriptors: /dev/stdout, /dev/fd/N and /proc/self/fd/N name a
// process's open file, whose link reads "NAME (deleted)" once a rename
// replaces it: every output call refuses them, leaving the file behind the
// descriptor as it was (audit N2).
func TestRefusesDescriptors(t *testing.T) {
	dir := t.TempDir()
	behind := filepath.Join(dir, "out.json")
	f, err := os.Create(behind)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("old")
	fd := strconv.Itoa(int(f.Fd()))
	for _, p := range []string{"/dev/stdout", "/dev/stderr", "/dev/fd/" + fd, "/proc/self/fd/" + fd, "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + fd} {
		for name, call := range map[string]func() error{
			"Check":    func() error { return outfile.Check(p) },
			"Writable": func() error { return outfile.Writable(p) },
			"Write":    func() error { return outfile.Write(p, writeString("new")) },
			"Lock":     func() error { _, err := outfile.Lock(p); return err },
		} {
			if err := call(); !errors.Is(err, outfile.ErrNotRegular) || !strings.Contains(err.Error(), "in /proc") {
				t.Errorf("%s(%s): %v, want a refusal", name, p, err)
			}
		}
	}
	if got, _ := os.ReadFile(behind); string(got) != "old" {
		t.Errorf("the file behind the descriptor holds %q", got)
	}
	if e := entries(t, dir); len(e) != 1 {
		t.Errorf("files left: %v", e)
	}
}
