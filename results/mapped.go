package results

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"unsafe"
)

// A 72-GPU run's file is 17–20 MB. Read into memory, every page of it is
// memory the process touches for the first time, and on the 2-core VMs
// p2pbench is measured on a first touch costs about 20 µs a page: reading
// the 16 MB file took 140–350 ms, as long as decoding it. Mapped, its pages
// are the page cache's own: 4–12 ms (docs/performance.md). So a regular
// file is mapped (mapFile), privately (the first line's last byte is
// changed in place while it decodes: lines.go, on a copy of its page), and
// decoded where it lies; the mapping is released once the file is decoded:
// nothing decoded holds its bytes (encoding/json and jsonv1 copy the text
// they keep). Where it cannot be mapped, it is read as before.
//
// A file that shrinks while it is mapped (another program writing it in
// place, not through a rename) makes the bytes beyond its new end a fault
// (SIGBUS) rather than a short read. The goroutines that read a mapping
// turn such a fault into a panic (debug.SetPanicOnFault) and readGuarded
// turns it into an error that says so.

// readGuarded reads the JSON of r (named file; a path's open file or a
// stream) into bufs, as readBoundedInto does within lim, and decodes it
// with dec; a mapping is released once dec returns, and a fault on it, the
// file cut short while it was read, is an error.
func readGuarded(file string, r io.Reader, lim readLimits, bufs *readBuffers, dec func(data []byte) (*Run, error)) (run *Run, err error) {
	defer bufs.release()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if !bufs.faulted(p) {
				panic(p)
			}
			run, err = nil, fmt.Errorf("reading results: %s was cut short while it was read", subject(file))
		}
	}()
	data, err := readBoundedInto(file, r, lim.bytes, lim.values, bufs)
	if err != nil {
		return nil, err
	}
	return dec(data)
}

// mapped is the bytes of a file mapped into memory, or nil.
type mapped []byte

// faulted reports whether p, a panic's value, is a fault on the mapping
// bufs holds.
func (b *readBuffers) faulted(p any) bool {
	f, ok := p.(interface{ Addr() uintptr })
	if !ok || len(b.mapped) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b.mapped)))
	return f.Addr() >= lo && f.Addr() < lo+uintptr(len(b.mapped))
}

// release unmaps the file bufs holds mapped, if any.
func (b *readBuffers) release() {
	if b.mapped != nil {
		unmap(b.mapped)
		b.mapped = nil
	}
}

// mapWhole maps the size bytes of f from start (a regular file), into
// bufs.mapped, and returns them; nil where the file cannot be mapped or
// its size has changed since it was read.
func mapWhole(f *os.File, start, size int64, bufs *readBuffers) []byte {
	bufs.release()
	m := mapFile(f, start+size)
	if m == nil {
		return nil
	}
	bufs.mapped = m
	if fi, err := f.Stat(); err != nil || fi.Size() != start+size {
		bufs.release()
		return nil
	}
	return m[start:]
}
