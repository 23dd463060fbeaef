// Package infile is how p2pbench opens a file a user names as an input
// (results files, specs, the libraries it loads) before reading it: only a
// regular file is read. A named pipe (FIFO) would block the read, or the
// open itself, until some other process writes it; a device may never end;
// a directory is a mistake. Each is refused with one line naming what the
// path is, before any reading, and exit status 2 (usage) on the command
// line, as outfile refuses such outputs.
//
// It imports nothing of p2pbench.
package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is the refusal of a path that is not a regular file; outfile
// refuses outputs with the same error.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is the refusal of an input beyond the limit its reader sets.
var ErrTooLarge = errors.New("too large")

// Check reports whether path (a symbolic link is followed) is a regular
// file, without opening it: nil when it is, a *fs.PathError wrapping
// ErrNotRegular when it is not, the error of os.Stat when it cannot be
// looked at.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return regular(path, fi.Mode())
}

func regular(path string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	if m.IsDir() {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: it is a directory; give a file", ErrNotRegular)}
	}
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: it is a %s, which p2pbench does not read (a read could wait forever)", ErrNotRegular, Kind(m))}
}

// Open opens path for reading if it is a regular file. The open does not
// wait on a FIFO put in place after a check (it is opened non-blocking and
// refused on what the open file is), so Open never blocks on one.
func Open(path string) (*os.File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regular(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads a regular file of at most limit bytes; a larger one is
// refused (ErrTooLarge) after reading limit+1 bytes, never all of it.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes, the most p2pbench reads of such a file", ErrTooLarge, limit)}
	}
	return data, nil
}

// Kind names a file mode that is neither regular nor a directory: "named
// pipe (FIFO)", "character device", ...
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file (" + m.String() + ")"
}
