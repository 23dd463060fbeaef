//go:build unix

package results

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first n bytes of f privately, readable and writable (a
// write goes to a copy of its page, never to the file); nil where it
// cannot.
func mapFile(f *os.File, n int64) mapped {
	if n <= 0 || int64(int(n)) != n {
		return nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return m
}

func unmap(m mapped) { _ = unix.Munmap(m) }
