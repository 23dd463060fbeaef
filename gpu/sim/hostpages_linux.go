package sim

import (
	"math"
	"syscall"
)

// Pinned host memory is the simulator's own pages, outside the Go heap (as
// the real driver's are): a page costs nothing until touched, the pages go
// back to the system when the buffer is freed, and a request the system
// cannot map fails with OUT_OF_MEMORY instead of ending the process.

// allocPages maps n bytes of zeroed, page-aligned memory.
func allocPages(n uint64) ([]byte, error) {
	if n > math.MaxInt {
		return nil, syscall.ENOMEM
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err == nil && n >= 2<<20 {
		// Huge pages where the system lends them: the CPU touches a
		// transfer's bytes afresh after each release (releasePages), and in
		// 4 KiB pages that cost nvl72 39 million page faults.
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	}
	return b, err
}

// freePages unmaps memory from allocPages.
func freePages(b []byte) { _ = syscall.Munmap(b) }

// pageBytes is the unit releasePages gives back.
var pageBytes = syscall.Getpagesize()

// releasePages gives the pages of b (whole pages of allocPages memory) back
// to the system; they read as zeros when next touched.
func releasePages(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
