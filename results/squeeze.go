package results

import (
	"errors"
	"io"
	"slices"
)

// maxSpaceRun is the longest run of whitespace between JSON's tokens that
// reading keeps as it is: indentation and line ends of a file written by
// hand or by jq stay where they are (and so do the positions that messages
// give), while a longer run, which no tool writes, becomes one byte.
const maxSpaceRun = 256

// squeezer reads JSON from r with every run of more than maxSpaceRun bytes
// of whitespace outside strings collapsed into one (a newline when the run
// holds one, so that the layout Encode writes, a figure per line, stays):
// what a results file's JSON means is unchanged, but a file that is mostly
// whitespace (a gzip bomb of spaces: 896 MiB in 917 KB) costs what its
// content costs, not what its padding does. It counts the bytes it read.
type squeezer struct {
	r                 io.Reader
	in                []byte
	out               []byte // squeezed bytes not yet returned
	off               int
	read              int64 // bytes read from r
	inString, escaped bool
	run               []byte // the current run of whitespace, up to maxSpaceRun bytes
	runLen            int64
	runNewline        bool
	err               error
	// objects and values count the objects ('{') and the values after the
	// first of each array or object (',') outside strings.
	objects, values int64
	// strLen is the length so far of the string being read; longString is
	// set once one is longer than bounds.str.
	strLen     int
	longString bool
	// bounds are the counts and the string length reading stops past.
	bounds valueBounds
}

// MaxStringBytes bounds a string of a results file's JSON as it is read:
// its longest texts are MaxTextBytes, and a longer string (in a field this
// build does not know, which decoding would skip at the cost of reading it
// three times) is refused before it is decoded.
const MaxStringBytes = 1 << 20

// Bounds of the JSON values a results file holds, which its size alone
// does not bound: a file of 256 MiB decodes into about as much memory
// again when its values are of the size real files' are (240-340 bytes an
// object, 18-27 bytes a value, measured on the reference runs), but into
// tens of gigabytes when they are the smallest JSON allows ("{}," is a
// 272-byte figure, "\"\"," a 16-byte note). Twice real files' density
// stays within the bounds; at most about a gigabyte goes with them.
const (
	MaxObjects = 2 << 20
	MaxValues  = 32 << 20
)

// valueBounds are the bounds reading holds a results input's JSON values
// to: MaxObjects objects, MaxValues values and strings of MaxStringBytes
// (fileBounds) for every input it reads. The tests of the quick way against
// the squeezer lower them (export_test.go), so that an input at or past
// each is some hundred kilobytes where the files' bounds make it megabytes.
type valueBounds struct {
	objects, values int64
	str             int
}

// fileBounds are the bounds of every results input read.
var fileBounds = valueBounds{objects: MaxObjects, values: MaxValues, str: MaxStringBytes}

// readLimits are what reading holds a results input to: its JSON's bytes
// and values. Every input read is held to fileLimits (MaxFileBytes and
// fileBounds); the tests of the refusals lower them (export_test.go), so
// that a bomb past them is megabytes where the files' are hundreds, and
// TestFileLimits holds fileLimits to the constants.
type readLimits struct {
	bytes  int64
	values valueBounds
}

var fileLimits = readLimits{bytes: MaxFileBytes, values: fileBounds}

// errTooMany stops reading at the first value over a bound (or the first
// string over MaxStringBytes).
var errTooMany = errors.New("too many JSON values")

func newSqueezer(r io.Reader, b valueBounds) *squeezer {
	return &squeezer{r: r, in: make([]byte, 64<<10), run: make([]byte, 0, maxSpaceRun), bounds: b}
}

func (s *squeezer) Read(p []byte) (int, error) {
	for s.off == len(s.out) {
		if s.err != nil {
			return 0, s.err
		}
		s.out, s.off = s.out[:0], 0
		n, err := s.r.Read(s.in)
		s.read += int64(n)
		if err == nil && len(p) > n+maxSpaceRun {
			// p has the room: squeezed into it at once, not copied there
			// from s.out (a run that ends with the input, on a later read).
			own := s.out
			s.out = p[:0:len(p)]
			s.squeeze(s.in[:n])
			k := len(s.out)
			s.out = own
			if s.tooMany() {
				s.out = slices.Grow(s.out, maxSpaceRun)
				s.out = s.out[:s.endRun(s.out[:cap(s.out)])]
				s.err = errTooMany
			}
			if k > 0 {
				return k, nil
			}
			continue
		}
		s.squeeze(s.in[:n])
		if s.tooMany() {
			err = errTooMany
		}
		if err != nil {
			s.out = slices.Grow(s.out, maxSpaceRun)
			s.out = s.out[:len(s.out)+s.endRun(s.out[len(s.out):cap(s.out)])]
			s.err = err
		}
	}
	n := copy(p, s.out[s.off:])
	s.off += n
	return n, nil
}

// tooMany reports whether what was read is over a bound.
func (s *squeezer) tooMany() bool {
	return s.objects > s.bounds.objects || s.values > s.bounds.values || s.longString
}

// squeeze appends b to s.out, its long runs of whitespace collapsed, in
// one pass over its bytes into room made once. The bytes between those it
// acts on (a string's quote or backslash; outside strings whitespace, a
// quote, '{' and ',') are found by table and copied at once: about a
// nanosecond a byte where every byte was handled alone, a third of that on
// real files.
func (s *squeezer) squeeze(b []byte) {
	s.out = slices.Grow(s.out, len(b)+maxSpaceRun+1)
	out := s.out[:cap(s.out)]
	n := len(s.out)
	for i := 0; i < len(b); {
		if s.inString {
			if s.escaped {
				out[n] = b[i]
				n, i, s.strLen, s.escaped = n+1, i+1, s.strLen+1, false
				continue
			}
			j := i
			for j < len(b) && !stringStops[b[j]] {
				out[n] = b[j]
				n, j = n+1, j+1
			}
			s.strLen += j - i
			if i = j; i == len(b) {
				break
			}
			c := b[i]
			out[n] = c
			n, i = n+1, i+1
			if c == '\\' {
				s.strLen++
				s.escaped = true
			} else {
				s.inString = false // its closing quote is not the string's
			}
			continue
		}
		c := b[i]
		if !outsideStops[c] {
			if s.runLen > 0 {
				n += s.endRun(out[n:])
			}
			for i < len(b) && !outsideStops[b[i]] {
				out[n] = b[i]
				n, i = n+1, i+1
			}
			continue
		}
		i++
		switch c {
		case ' ', '\t', '\n', '\r':
			if s.runLen < maxSpaceRun {
				s.run = append(s.run, c)
			}
			s.runLen++
			s.runNewline = s.runNewline || c == '\n'
			continue
		case '"':
			s.inString, s.strLen = true, 0
		case '{':
			s.objects++
		case ',':
			s.values++
		}
		if s.runLen > 0 {
			n += s.endRun(out[n:])
		}
		out[n] = c
		n++
	}
	s.out = out[:n]
	s.longString = s.longString || s.strLen > s.bounds.str
}

// stringStops and outsideStops mark the bytes squeeze acts on in a string and
// outside strings.
var stringStops, outsideStops = func() (in, out [256]bool) {
	in['"'], in['\\'] = true, true
	for _, c := range []byte(" \t\n\r\"{,") {
		out[c] = true
	}
	return in, out
}()

// endRun writes the run of whitespace that ends into out (which has room
// for it) as it was, or as one byte, and returns how many bytes it wrote.
func (s *squeezer) endRun(out []byte) int {
	n := 0
	switch {
	case s.runLen == 0:
	case s.runLen <= maxSpaceRun:
		n = copy(out, s.run)
	case s.runNewline:
		out[0], n = '\n', 1
	default:
		out[0], n = ' ', 1
	}
	s.run, s.runLen, s.runNewline = s.run[:0], 0, false
	return n
}
