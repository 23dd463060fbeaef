// Package outfile is how p2pbench writes every file a user names: results,
// reports, plots, comparisons. One policy for all of them:
//
//   - An output path must be absent or a regular file. A device, FIFO,
//     socket or directory is refused before any work is done, so `-o
//     /dev/null` as root never turns the system's /dev/null into a file.
//   - A symbolic link is followed: the file it points to is written (through
//     a temporary file beside that file) and the link stays a link. A link
//     whose target is not a regular file is refused like the target.
//   - An output that is the same file as one of the command's inputs is
//     refused: writing it would destroy what is being read.
//   - Writes are atomic: the content goes to a temporary file created
//     exclusively in the target's directory, is synced, and is renamed over
//     the target, so an error, a full disk or Ctrl-C never leaves half a
//     file where a good one (or none) was.
//   - A run that writes its output now and then (Lock) holds a lock file
//     beside it for its whole duration, so a second run given the same path
//     fails at once instead of overwriting the first one's results.
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
	"strconv"
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
)

// Check makes sure path can be written before the work that produces it: the
// path names no directory, device, FIFO or socket (directly or through a
// symbolic link), is none of inputs, and its directory exists (it is created
// when missing) and accepts new files. An empty path is fine (no output).
func Check(path string, inputs ...string) error {
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &Error{path, fmt.Errorf("cannot create its directory: %w", bare(err))}
	}
	f, err := os.CreateTemp(dir, ".p2pbench-check-*")
	if err != nil {
		return &Error{path, fmt.Errorf("cannot write in %s: %w", dir, bare(err))}
	}
	f.Close()
	os.Remove(f.Name())
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

// Lock takes the lock of an output that a run writes now and then: a file
// named .<name>.lock beside the (resolved) target, created exclusively and
// holding the process id. A lock left by a process that no longer runs is
// taken over. The returned function removes the lock.
func Lock(path string) (unlock func(), err error) {
	target, err := resolve(path)
	if err != nil {
		return nil, &Error{path, err}
	}
	dir, base := filepath.Split(target)
	lock := filepath.Join(dir, "."+base+".lock")
	for try := 0; try < 2; try++ {
		f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, &Error{path, fmt.Errorf("cannot create the lock file %s: %w", lock, bare(err))}
		}
		pid, alive := holder(lock)
		if alive {
			return nil, &Error{path, fmt.Errorf("%w (process %d holds %s)", ErrLocked, pid, lock)}
		}
		os.Remove(lock) // stale: its process is gone
	}
	return nil, &Error{path, fmt.Errorf("%w (%s keeps coming back)", ErrLocked, lock)}
}

// holder reads a lock file's process id and whether that process runs.
func holder(lock string) (int, bool) {
	data, err := os.ReadFile(lock)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	if pid == os.Getpid() {
		return pid, true
	}
	// Signal 0 checks that the process exists; EPERM means it does, but
	// belongs to someone else.
	err = syscall.Kill(pid, 0)
	return pid, err == nil || errors.Is(err, syscall.EPERM)
}

// resolve follows symbolic links from path to the file to write, which must
// be absent or a regular file. A dangling link resolves to where it points.
func resolve(path string) (string, error) {
	target := path
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
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
