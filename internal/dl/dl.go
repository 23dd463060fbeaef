// Package dl loads a shared library at run time and binds a table of its C
// entry points to Go function variables, without cgo.
//
// It is the whole dynamic-loading layer of package cuda and package nvml:
// each describes its library (Library) and its entry points (Entry), and
// Load opens the one and binds the other, with one-line errors that say
// what is missing and what to do. Everything above sees typed Go functions.
// ThreadID, the OS thread's id, lets package cuda check that its calls run
// on each context's own thread. dl imports nothing of p2pbench but
// internal/infile (a library path must name a regular file).
package dl

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/p2pbench/p2pbench/internal/infile"
)

// Library says which shared library Load opens and how its errors speak of it.
type Library struct {
	// Name is the file searched on the loader path ("libcuda.so.1").
	Name string
	// Env names the environment variable whose value, when set, is loaded
	// instead of Name (a path with a slash, or another file name).
	Env string
	// About says what the library is, in messages: "the NVIDIA driver library".
	About string
	// NoLibrary is matched by the error of a library that cannot be loaded
	// at all; Missing by the error of one that lacks a required entry point.
	NoLibrary, Missing error
}

// Entry is one entry point to bind.
type Entry struct {
	// Fn points to a variable of func type, which describes the C
	// signature; see github.com/ebitengine/purego.RegisterFunc for the
	// mapping.
	Fn any
	// Name is the documented name of the entry point; errors speak of it.
	Name string
	// Symbols are tried in order; the first the library exports is bound.
	// Empty means Name itself.
	Symbols []string
	// Optional leaves *Fn nil when the library exports none of Symbols,
	// instead of failing Load.
	Optional bool
	// ByValue marks an entry point that takes a C struct by value. Where
	// StructArgs is false it is left unbound (*Fn nil) for the caller to
	// report when it is called.
	ByValue bool
	// Raw, when set, receives the entry point's address instead of a typed
	// function in Fn (which may be nil), for Call: the entry points a
	// sample enqueues hundreds of times, whose arguments are all integers
	// and handles. A typed function costs about 400 ns a call in reflection
	// and 8 allocations; Call about 100 ns.
	Raw *uintptr
}

func (e Entry) symbols() []string {
	if len(e.Symbols) == 0 {
		return []string{e.Name}
	}
	return e.Symbols
}

// Bound is a loaded library with its entry points bound. The library is
// never closed: driver libraries start threads of their own and are not
// safe to unload.
type Bound struct {
	// Path is the name the library was loaded under.
	Path string
	// symbols maps each bound entry's Name to the symbol it was bound to.
	symbols map[string]string
}

// Symbol returns the symbol the entry point name was bound to
// (cuMemAlloc → cuMemAlloc_v2), for error messages; name itself when it
// was not bound.
func (b *Bound) Symbol(name string) string {
	if s, ok := b.symbols[name]; ok {
		return s
	}
	return name
}

// Load opens lib (the file named by its Env variable when that is set) with
// RTLD_NOW|RTLD_GLOBAL and binds every entry.
//
// When the library cannot be loaded, the error is one line, with the
// loader's own reason, and matches lib.NoLibrary. When it lacks required
// entry points, the error names each (its symbols joined by "or") and
// matches lib.Missing.
func Load(lib Library, entries []Entry) (*Bound, error) {
	path := lib.Name
	if v := os.Getenv(lib.Env); lib.Env != "" && v != "" {
		path = v
	}
	// dlopen blocks on a FIFO until something writes it, and reads a
	// device forever: a path (one with a slash; a bare name is searched
	// on the loader path) is held to be a regular file first.
	if strings.Contains(path, "/") {
		if err := infile.Check(path); errors.Is(err, infile.ErrNotRegular) {
			return nil, &loadError{lib: lib, path: path, reason: oneLine(errors.Unwrap(err).Error())}
		}
	}
	h, err := open(path)
	if err != nil {
		return nil, &loadError{lib: lib, path: path, reason: oneLine(err.Error())}
	}
	b := &Bound{Path: path, symbols: make(map[string]string)}
	var missing []string
	for _, e := range entries {
		if e.ByValue && !StructArgs {
			continue
		}
		sym, ok := bind(h, e)
		switch {
		case ok:
			b.symbols[e.Name] = sym
		case !e.Optional:
			missing = append(missing, strings.Join(e.symbols(), " or "))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s lacks %s, which p2pbench needs (is the driver too old?): %w",
			path, strings.Join(missing, ", "), lib.Missing)
	}
	return b, nil
}

// bind points *e.Fn at the first of e's symbols the library exports.
func bind(handle uintptr, e Entry) (string, bool) {
	for _, name := range e.symbols() {
		if addr := lookup(handle, name); addr != 0 {
			if e.Raw != nil {
				*e.Raw = addr
			} else {
				register(e.Fn, addr)
			}
			return name, true
		}
	}
	return "", false
}

func oneLine(msg string) string {
	if msg = strings.Join(strings.Fields(msg), " "); msg == "" {
		return "unknown loader error"
	}
	return msg
}

// loadError is the failure to load a library at all. Its text is one line
// that says what to do; it matches the library's NoLibrary.
type loadError struct {
	lib    Library
	path   string
	reason string // the loader's message
}

func (e *loadError) Error() string {
	return fmt.Sprintf("cannot load %s (%s): %s; install the NVIDIA driver or set %s to its path",
		e.path, e.lib.About, e.reason, e.lib.Env)
}

func (e *loadError) Unwrap() error { return e.lib.NoLibrary }
