//go:build linux

package results

import (
	"os"
	"syscall"
)

// mapFile maps f's contents read-only, or reports false when they cannot be
// mapped (an empty file, a pipe, a file system without mmap); the caller
// then reads the file. Mapping spares reading hundreds of megabytes into
// memory that must first be allocated and cleared, and keeps them out of
// the garbage-collected heap. MAP_POPULATE maps the file's pages (already
// cached when it was just written or read) in one call rather than on one
// fault each.
func mapFile(f *os.File) (data []byte, unmap func(), ok bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= 0 || fi.Size() != int64(int(fi.Size())) {
		return nil, nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, false
	}
	return data, func() { syscall.Munmap(data) }, true
}
