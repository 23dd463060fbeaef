package sim

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// mapCounters maps the first size bytes of f (made that long when shorter)
// shared, as uint64 words, and returns them and what unmaps them.
func mapCounters(f *os.File, size int) ([]uint64, func(), error) {
	if size <= 0 {
		return nil, nil, errors.New("no counters")
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() < int64(size) {
		// Every process of a run makes it the same length: a second
		// truncation changes nothing, and never cuts what was counted.
		if err := f.Truncate(int64(size)); err != nil {
			return nil, nil, err
		}
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	words := unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), size/8)
	return words, func() { _ = syscall.Munmap(b) }, nil
}
