// Package termsafe keeps text read from files from controlling the
// terminal it is printed on. A results file is outside input: a host name,
// a params value or a note may hold escape sequences that, printed raw,
// move the cursor, rewrite lines (the verdict's included), set the window
// title or worse. Writer passes text through with every control character
// but newline and tab made visible: C0 controls and DEL in caret notation
// (ESC is "^["), the C1 controls (U+0080–U+009F, which some terminals obey
// as ESC sequences) and the bidirectional controls that reorder a line
// (U+202A–U+202E, U+2066–U+2069) as U+FFFD.
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
	// pending is the start of a UTF-8 sequence that ended the last write
	// (0xC2, or 0xE2 and what followed it), which may encode a C1 control
	// or a bidirectional control: it is judged with the next write.
	pending []byte
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

// bidi reports whether the three bytes b encode a bidirectional control
// that reorders what follows it on a line (Unicode's explicit embeddings,
// overrides and isolates, U+202A–U+202E and U+2066–U+2069, as "Trojan
// Source", CVE-2021-42574, uses them): a host "ホスト\u202Eevil" would
// print as another name.
func bidi(b0, b1, b2 byte) bool {
	return b0 == 0xE2 && (b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE || b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9)
}

// Write writes p with its control characters made visible; it reports
// len(p) when all of it was written.
func (s *Writer) Write(p []byte) (int, error) {
	n := len(p)
	if len(s.pending) > 0 {
		p = append(s.pending, p...)
		s.pending = nil
	}
	out := make([]byte, 0, len(p)+8)
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch {
		case b == '\n' || b == '\t':
			out = append(out, b)
		case b < 0x20:
			out = append(out, '^', b+'@')
		case b == 0x7f:
			out = append(out, '^', '?')
		case b == 0xC2 && i+1 == len(p), b == 0xE2 && i+2 >= len(p):
			s.pending = append([]byte(nil), p[i:]...) // judged with the next write
			i = len(p)
		case b == 0xC2 && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			out = append(out, "\uFFFD"...)
			i++
		case b == 0xE2 && bidi(b, p[i+1], p[i+2]):
			out = append(out, "\uFFFD"...)
			i += 2
		default:
			out = append(out, b)
		}
	}
	if _, err := s.W.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}
