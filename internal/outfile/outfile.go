// Package outfile is how p2pbench writes every file a user names: results,
// reports, plots, comparisons. One policy for all of them:
//
//   - An output path must be absent or a regular file. A device, FIFO,
//     socket or directory is refused before any work is done, so `-o
//     /dev/null` as root never turns the system's /dev/null into a file.
//     So is a path in /proc (/dev/stdout, /dev/fd/1, /proc/self/fd/1): an
//     open descriptor, not a file a new one can be renamed over; and one in
//     /dev but /dev/shm, where devices live.
//   - A symbolic link is followed when the user running p2pbench or root
//     owns it: the file it points to is written (through a temporary file
//     beside that file) and the link stays a link. A link another user owns
//     is refused, so a link planted in a shared directory cannot redirect a
//     run's output. A link whose target is not a regular file is refused
//     like the target. A hard link is never written through: the new file
//     is renamed over the name, and the other names keep the old content.
//   - The lock file is created by the run itself, never through a link, and
//     nothing found at its name is written or truncated (see Lock).
//   - An output that is the same file as one of the command's inputs is
//     refused: writing it would destroy what is being read.
//   - Writes are atomic: the content goes to a temporary file created
//     exclusively in the target's directory, is synced, and is renamed over
//     the target, so an error, a full disk or Ctrl-C never leaves half a
//     file where a good one (or none) was.
//   - A run that writes its output now and then (Lock) holds a lock file
//     beside it for its whole duration, so a second run given the same path
//     fails at once instead of overwriting the first one's results. The lock
//     is the kernel's (flock): it ends with its process, however that ends.
//   - Writable checks as Check does but creates nothing: a measuring run
//     makes its directory when it takes the lock, so a run refused before
//     its work leaves nothing behind.
//
// It imports nothing of p2pbench but internal/infile, its twin for inputs.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/p2pbench/p2pbench/internal/infile"
)

// Error is a refused or failed output: Path is what the user gave.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("output %s: %v", e.Path, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Refusals; Check and Write return them wrapped in an *Error.
var (
	ErrNotRegular = infile.ErrNotRegular
	ErrSameAsIn   = errors.New("is also an input of this command")
	ErrLocked     = errors.New("another p2pbench run is writing it")
	ErrLockFile   = errors.New("its lock file cannot be used")
)

// Check makes sure path can be written before the work that produces it: the
// path names no directory, device, FIFO or socket (directly or through a
// symbolic link), is none of inputs, and its directory exists (it is created
// when missing) and accepts new files. An empty path is fine (no output).
func Check(path string, inputs ...string) error {
	if err := Writable(path, inputs...); err != nil || path == "" {
		return err
	}
	target, err := resolve(path)
	if err != nil {
		return &Error{path, err}
	}
	return mkdir(path, filepath.Dir(target))
}

// CheckApart is Check for an output that no argument names (a profile
// named in the environment): besides Check's refusals, it may not be any of
// paths (see CommandPaths), existing or not, which the command may read or
// write itself.
func CheckApart(path string, paths ...string) error {
	if err := Check(path, paths...); err != nil {
		return err
	}
	for _, p := range paths {
		if samePath(path, p) {
			return &Error{path, fmt.Errorf("%w (%s)", ErrSameAsIn, p)}
		}
	}
	return nil
}

// CommandPaths are the paths a command line may read or write: every
// argument and flag value, and a directory's results.json (all --dir).
func CommandPaths(args []string) []string {
	var out []string
	for _, a := range args {
		if i := strings.IndexByte(a, '='); strings.HasPrefix(a, "-") && i > 0 {
			a = a[i+1:]
		}
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		out = append(out, a)
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			out = append(out, filepath.Join(a, "results.json"))
		}
	}
	return out
}

// samePath reports whether a and b name the same file, existing or not:
// the same absolute path once their directories' links are resolved.
func samePath(a, b string) bool {
	abs := func(p string) string {
		p, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			return filepath.Join(dir, filepath.Base(p))
		}
		return p
	}
	return abs(a) == abs(b)
}

// Writable is Check without creating anything: the directory of path, or
// the nearest of its parents that exists when it does not, must accept new
// files. A command that checks its output long before it writes it (a
// measuring run, which first opens the driver and reads its inputs) calls
// Writable, so that a run refused before its work leaves no empty directory
// behind; Lock creates the directory.
func Writable(path string, inputs ...string) error {
	if path == "" {
		return nil
	}
	if strings.HasSuffix(path, string(filepath.Separator)) {
		return &Error{path, fmt.Errorf("%w: it names a directory; give a file name", ErrNotRegular)}
	}
	target, err := resolve(path)
	if err != nil {
		return &Error{path, err}
	}
	for _, in := range inputs {
		if same(target, in) {
			return &Error{path, fmt.Errorf("%w (%s)", ErrSameAsIn, in)}
		}
	}
	dir := filepath.Dir(target)
	for {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			return &Error{path, fmt.Errorf("cannot create its directory: %s is not a directory", dir)}
		}
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return &Error{path, fmt.Errorf("cannot create its directory: %w", bare(err))}
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	f, err := os.CreateTemp(dir, ".p2pbench-check-*")
	if err != nil {
		return &Error{path, fmt.Errorf("cannot write in %s: %w", dir, bare(err))}
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// Dir makes dir, a directory of output files (plot's figures, a Markdown
// report's), under the same policy as a file: it must be absent or a
// directory; a symbolic link to one is followed only when the user running
// p2pbench or root owns it; a path in /proc, a new name in /dev, and a
// directory that is one of inputs are refused. It is created, with its
// parents, when absent, and its resolved path is returned: the directory
// the files go into.
func Dir(dir string, inputs ...string) (string, error) {
	return resolveDir(dir, true, inputs...)
}

// DirWritable is Dir without creating anything: for a command that checks
// its output directory (all's --dir, import's --dir) long before it writes
// into it. A directory of output files reached through another user's link
// is refused by both, so that nothing p2pbench writes, not even the
// temporary file Writable makes to see whether a directory accepts files,
// lands outside the directory the user named.
func DirWritable(dir string, inputs ...string) error {
	_, err := resolveDir(dir, false, inputs...)
	return err
}

// resolveDir follows links from dir to the directory it names under the
// output policy (see Dir), and makes it when create is set and it is absent.
func resolveDir(dir string, create bool, inputs ...string) (string, error) {
	target := dir
	for hops := 0; ; hops++ {
		if err := descriptor(target, false); err != nil {
			return "", &Error{dir, err}
		}
		fi, err := os.Lstat(target)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := descriptor(target, true); err != nil {
				return "", &Error{dir, err}
			}
			if create {
				if err := mkdir(dir, target); err != nil {
					return "", err
				}
			}
			return target, nil
		case err != nil:
			return "", &Error{dir, bare(err)}
		case fi.IsDir():
			for _, in := range inputs {
				if same(target, in) {
					return "", &Error{dir, fmt.Errorf("%w (%s)", ErrSameAsIn, in)}
				}
			}
			return target, nil
		case fi.Mode()&fs.ModeSymlink != 0:
			if hops == 40 {
				return "", &Error{dir, errors.New("too many symbolic links")}
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
				return "", &Error{dir, fmt.Errorf("%w: %s is a symbolic link owned by user %d, not by the user running p2pbench (%d) or root; p2pbench writes through no other user's link: give the directory's own path", ErrNotRegular, target, st.Uid, os.Geteuid())}
			}
			link, err := os.Readlink(target)
			if err != nil {
				return "", &Error{dir, bare(err)}
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(target), link)
			}
			target = link
		case fi.Mode().IsRegular():
			return "", &Error{dir, syscall.ENOTDIR}
		default:
			return "", &Error{dir, fmt.Errorf("%w: it is a %s, not a directory for the output files", ErrNotRegular, infile.Kind(fi.Mode()))}
		}
	}
}

// mkdir makes the directory of a file about to be written.
func mkdir(path, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &Error{path, fmt.Errorf("cannot create its directory: %w", bare(err))}
	}
	return nil
}

// Write writes path atomically with what write produces: to a temporary file
// in the target's directory, synced, then renamed over the target. The
// target must be absent or a regular file (a symbolic link is followed);
// nothing is left behind on error. Files are made readable by all (0644).
func Write(path string, write func(io.Writer) error) (err error) {
	target, err := resolve(path)
	if err != nil {
		return &Error{path, err}
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return &Error{path, bare(err)}
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == tmp.Name() {
			err = pe.Err // the temporary file's name would only confuse
		}
		return &Error{path, err}
	}
	for _, step := range []func() error{
		func() error { return tmp.Chmod(0o644) },
		tmp.Sync,
		tmp.Close,
		// The target may have changed since resolve: refuse to rename over
		// anything but a regular file even now.
		func() error { _, err := resolve(target); return err },
		func() error { return os.Rename(tmp.Name(), target) },
	} {
		if err = step(); err != nil {
			return &Error{path, bare(err)}
		}
	}
	// Sync the directory so that the rename itself survives a crash; some
	// file systems cannot, and the data is safe then anyway.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Lock takes the lock of an output that a run writes now and then: an
// advisory lock (flock) on a file named .<name>.lock beside the (resolved)
// target. The kernel drops the lock when its process ends, however it
// ends, so a lock file left behind by a killed run is taken over, and a
// live one is never mistaken for a stale one (a process id may be reused,
// or be 1 in every container). The file says which process holds it, for
// the message of a second run.
//
// The lock file is always one Lock created itself: it is created
// exclusively and never through a symbolic link (O_EXCL|O_NOFOLLOW), so a
// link or a hard link planted at its name can never make a run write, or
// truncate, another file or a device. A file left at the name is only
// inspected: a regular file with no other link that no live process locks
// is a stale lock, removed and replaced by a new one; a symbolic link, a
// hard link, a device, FIFO, socket or directory is refused, with what it
// is, and left as it is. On a file system that cannot lock (Lustre mounted
// without flock, NFS without a lock manager), a stale-looking file is
// replaced all the same and the run goes on, the file marking it, rather
// than refuse every run there. The returned function releases the lock and
// removes the file.
func Lock(path string) (unlock func(), err error) {
	target, err := resolve(path)
	if err != nil {
		return nil, &Error{path, err}
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	if err := mkdir(path, dir); err != nil {
		return nil, err
	}
	lock := filepath.Join(dir, "."+base+".lock")
	for try := 0; try < 10; try++ {
		f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if errors.Is(err, fs.ErrExist) {
			if err := takeStale(lock); err != nil {
				return nil, &Error{path, err}
			}
			continue
		}
		if err != nil {
			return nil, &Error{path, fmt.Errorf("cannot create the lock file %s: %w", lock, bare(err))}
		}
		// Between the create and the lock, a second run may have taken the
		// new, still empty file for a stale one and removed it: the lock
		// is ours only if the name still leads to the file locked.
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) && names(lock, f) {
			host, _ := os.Hostname()
			fmt.Fprintf(f, "process %d on host %s", os.Getpid(), host)
			return func() {
				if names(lock, f) {
					os.Remove(lock)
				}
				f.Close()
			}, nil
		}
		f.Close()
	}
	return nil, &Error{path, fmt.Errorf("%w (%s keeps being replaced)", ErrLocked, lock)}
}

// takeStale inspects the file found at a lock's name without following a
// link and without writing it: nil once a stale lock is removed (or the
// name is gone), ErrLocked naming the holder when a live process holds it,
// a refusal when the name is not a plain lock file.
func takeStale(lock string) error {
	fi, err := os.Lstat(lock)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot look at the lock file %s: %w", lock, bare(err))
	}
	if err := plainLockFile(lock, fi); err != nil {
		return err
	}
	// Read-only, non-blocking, no link followed: opening it can neither
	// change it nor wait on it, whatever replaced it since the Lstat.
	f, err := os.OpenFile(lock, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot open the lock file %s: %w", lock, bare(err))
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return fmt.Errorf("cannot look at the lock file %s: %w", lock, bare(err))
	}
	if err := plainLockFile(lock, fi); err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		who, _ := io.ReadAll(io.LimitReader(f, 200))
		holder := strings.TrimSpace(string(who))
		if holder == "" {
			holder = "another process"
		}
		return fmt.Errorf("%w: %s holds the lock on %s (it is released when that process ends)", ErrLocked, holder, lock)
	}
	// Stale: nobody holds it. Remove the name while holding the file, and
	// only if the name still leads to it.
	if names(lock, f) {
		if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot remove the stale lock file %s: %w", lock, bare(err))
		}
	}
	return nil
}

// plainLockFile refuses what a lock file Lock made can never be: anything
// but a regular file with one name.
func plainLockFile(lock string, fi fs.FileInfo) error {
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symbolic link, which p2pbench never follows; remove it", ErrLockFile, lock)
	case mode.IsDir():
		return fmt.Errorf("%w: %s is a directory; remove it", ErrLockFile, lock)
	case !mode.IsRegular():
		return fmt.Errorf("%w: %s is a %s, which p2pbench does not replace; remove it", ErrLockFile, lock, infile.Kind(mode))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fmt.Errorf("%w: %s has %d names (a hard link to another file), which p2pbench does not replace; remove it", ErrLockFile, lock, st.Nlink)
	}
	return nil
}

// names reports whether the name lock still leads to the open file f.
func names(lock string, f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(lock)
	return err == nil && os.SameFile(fi, now)
}

// resolve follows symbolic links from path to the file to write, which must
// be absent or a regular file. A dangling link resolves to where it points.
func resolve(path string) (string, error) {
	return resolveFor(path, os.Geteuid())
}

// resolveFor is resolve for the user uid. A link is followed only when that
// user or root owns it: in a directory others can write (a shared results
// volume, /tmp), a link planted by another user at an output's name would
// otherwise make the run, root's above all, replace whatever file the link
// names. It is the rule the kernel applies to links in sticky directories
// (fs.protected_symlinks), applied everywhere because a results directory
// need not be sticky.
func resolveFor(path string, uid int) (string, error) {
	target := path
	for hops := 0; ; hops++ {
		if err := descriptor(target, false); err != nil {
			return "", err
		}
		fi, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			if err := descriptor(target, true); err != nil {
				return "", err
			}
			return target, nil
		}
		if err != nil {
			return "", bare(err)
		}
		switch mode := fi.Mode(); {
		case mode.IsRegular():
			return target, nil
		case mode&fs.ModeSymlink != 0:
			if hops == 40 {
				return "", errors.New("too many symbolic links")
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != uid {
				return "", fmt.Errorf("%w: %s is a symbolic link owned by user %d, not by the user running p2pbench (%d) or root; p2pbench writes through no other user's link: give the file's own path", ErrNotRegular, target, st.Uid, uid)
			}
			link, err := os.Readlink(target)
			if err != nil {
				return "", bare(err)
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(target), link)
			}
			target = link
		case mode.IsDir():
			return "", fmt.Errorf("%w: it is a directory; give a file name", ErrNotRegular)
		default:
			return "", fmt.Errorf("%w: it is a %s, which p2pbench does not replace", ErrNotRegular, infile.Kind(mode))
		}
	}
}

// descriptor refuses a path in /proc, reached directly or through links
// (/dev/stdout, /dev/fd/1, /proc/self/fd/1): it names an open descriptor,
// whose link reads as the file behind it only until a rename replaces that
// file ("out.json (deleted)" after the first save), and is never a file to
// replace. The output would go astray: the results into a file of a made-up
// name, the printed tables into an unlinked inode. A new file in /dev (but
// /dev/shm) is refused too: /dev holds devices, and a name there that is not
// one yet (a loop device to come) would become a plain file.
func descriptor(path string, absent bool) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	dir := filepath.Dir(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	full := filepath.Join(dir, filepath.Base(abs))
	switch {
	case full == "/proc" || strings.HasPrefix(full, "/proc/"):
		return fmt.Errorf("%w: %s is in /proc (a process's open file, such as /dev/stdout), not a file p2pbench can replace by renaming a new one over it; give a file name (the tables go to stdout as they are)", ErrNotRegular, path)
	case absent && (dir == "/dev" || strings.HasPrefix(dir, "/dev/")) && dir != "/dev/shm" && !strings.HasPrefix(dir, "/dev/shm/"):
		return fmt.Errorf("%w: %s is in /dev, where devices live, not files; give a file name elsewhere (/dev/shm is fine)", ErrNotRegular, path)
	}
	return nil
}

// same reports whether target and in are the same existing file.
func same(target, in string) bool {
	a, err := os.Stat(target)
	if err != nil {
		return false
	}
	b, err := os.Stat(in)
	return err == nil && os.SameFile(a, b)
}

// bare drops the operation and path of a *PathError: messages name the path
// the user gave, not a temporary file.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
