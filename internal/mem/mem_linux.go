package mem

import "syscall"

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which package
// syscall does not name. Older kernels refuse it, harmlessly.
const madvPopulateWrite = 23

func populate(b []byte) {
	syscall.Madvise(b, madvPopulateWrite)
}
