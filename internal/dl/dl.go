// Package dl loads a shared library at run time and binds its C entry points
// to Go function variables, without cgo.
//
// It is the whole dynamic-loading layer of package cuda and package
// cuda/nvml: everything above it sees typed Go functions.
package dl

import (
	"errors"
	"strings"
)

// Library is a shared library opened with Open. It is never closed: driver
// libraries start threads of their own and are not safe to unload.
type Library struct {
	path   string
	handle uintptr
}

// Path returns the name the library was opened under.
func (l *Library) Path() string { return l.path }

// Open loads the library at path (a file name searched on the loader path,
// or a path with a slash) with RTLD_NOW|RTLD_GLOBAL. The error text is the
// loader's own message, on one line.
func Open(path string) (*Library, error) {
	h, err := open(path)
	if err != nil {
		msg := strings.Join(strings.Fields(err.Error()), " ")
		if msg == "" {
			msg = "unknown loader error"
		}
		return nil, errors.New(msg)
	}
	return &Library{path: path, handle: h}, nil
}

// Bind points *fptr, a pointer to a variable of func type, at the first of
// names the library exports, and returns that name. It returns "" and
// leaves *fptr untouched when the library exports none of them.
//
// The func type describes the C signature; see
// github.com/ebitengine/purego.RegisterFunc for the mapping. Go struct
// arguments are passed by value as the platform's C ABI passes the struct
// of the same layout; they are supported where StructArgs is true.
func (l *Library) Bind(fptr any, names ...string) string {
	for _, name := range names {
		if addr := lookup(l.handle, name); addr != 0 {
			register(fptr, addr)
			return name
		}
	}
	return ""
}
