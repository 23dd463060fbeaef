// Package termsafe keeps text read from files from controlling the
// terminal it is printed on. A results file is outside input: a host name,
// a params value or a note may hold escape sequences that, printed raw,
// move the cursor, rewrite lines (the verdict's included), set the window
// title or worse. Writer passes text through with every control character
// but newline and tab made visible: C0 controls and DEL in caret notation
// (ESC is "^["), the C1 controls (U+0080–U+009F, which some terminals obey
// as ESC sequences) as U+FFFD.
//
// p2pbench prints its own text through it (standard output and error, and
// the text files it writes: Markdown, text and CSV), never its binary
// outputs (PDF, PNG) and never its results files (encoding/json escapes
// control characters).
//
// It imports nothing of p2pbench.
package termsafe

import (
	"io"
	"os"
)

// Writer makes control characters visible on their way to W.
type Writer struct {
	W io.Writer
	// pendingC2 is a 0xC2 byte that ended the last write: the first byte
	// of a two-byte UTF-8 sequence, which may encode a C1 control.
	pendingC2 bool
}

// New wraps w; a *Writer is returned unwrapped.
func New(w io.Writer) io.Writer {
	if _, ok := w.(*Writer); ok {
		return w
	}
	return &Writer{W: w}
}

// File returns the *os.File that w writes to, if it writes to one: for
// callers that must know whether the output is a terminal (a progress
// bar), and draw on it themselves.
func File(w io.Writer) (*os.File, bool) {
	if s, ok := w.(*Writer); ok {
		w = s.W
	}
	f, ok := w.(*os.File)
	return f, ok
}

// Write writes p with its control characters made visible; it reports
// len(p) when all of it was written.
func (s *Writer) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p)+8)
	i := 0
	if s.pendingC2 && len(p) > 0 {
		s.pendingC2 = false
		if p[0] >= 0x80 && p[0] <= 0x9f {
			out = append(out, "\uFFFD"...)
			i = 1
		} else {
			out = append(out, 0xC2)
		}
	}
	for ; i < len(p); i++ {
		b := p[i]
		switch {
		case b == '\n' || b == '\t':
			out = append(out, b)
		case b < 0x20:
			out = append(out, '^', b+'@')
		case b == 0x7f:
			out = append(out, '^', '?')
		case b == 0xC2 && i+1 == len(p):
			s.pendingC2 = true
		case b == 0xC2 && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			out = append(out, "\uFFFD"...)
			i++
		default:
			out = append(out, b)
		}
	}
	if _, err := s.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
