// Package mem helps with the memory of large results: hundreds of
// megabytes of figures, rows and text for a 72-GPU run.
package mem

import "unsafe"

// Populate maps the pages of s's elements, fresh memory about to be
// written, in one system call instead of one page fault each: about half
// the cost of faulting them in on a virtual machine. It also keeps a
// garbage collection that scans the memory before it is written from
// mapping it to the shared zero page, which makes every first write fault
// again and flush the TLB of every processor. It is a hint: it changes no
// contents, and does nothing where the system cannot do it.
func Populate[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var t T
	populate(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(t)))
}
