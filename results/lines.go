package results

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Reading a results file is mostly decoding its figures (a 72-GPU run's
// 17 MB took 0.4 s of one CPU with encoding/json), and Encode writes each
// figure on a line of its own, after a first line with the run's other
// fields. So decodeLines decodes the figures of such a file on every CPU
// at once, and decode falls back to decoding the file whole with
// encoding/json wherever it is laid out otherwise (another program's or a
// reformatted file) or anything in it does not decode, so that what is
// read, and every error, is the same either way.
//
// The lines, and the fields around them, are decoded with the v1
// semantics of github.com/go-json-experiment/json (jsonv1): the mirror of
// encoding/json/v2 that implements encoding/json's own behaviour, field
// for field (names matched without case, the last of a name twice kept,
// invalid UTF-8 replaced, unknown fields ignored), and that Go 1.27's
// encoding/json is built on. It decodes the lines in half encoding/json's
// time and the first line (2.3 MB at 72 GPUs: topology and catalogue) in a
// third; its errors are never shown: anything it refuses is decoded whole
// by encoding/json, whose message is the one the reader sees.

// figuresKey opens the figures on the line after the first, as Encode
// writes them.
const figuresKey = "\n\"figures\":["

// sentinel stands in for the figures while the rest of the file decodes:
// a file whose object names "figures" again (the last one counts, as in
// encoding/json) replaces it, and is decoded whole.
const sentinel = "\x00figures on their own lines"

// decodeLines decodes data laid out as Encode writes it; ok is false, with
// nothing decoded, when it is not so laid out, does not decode, or is of
// another schema version.
func decodeLines(data []byte) (run Run, ok bool) {
	head, lines, tail, ok := splitLines(data, nil)
	if !ok {
		return Run{}, false
	}
	if run, _, ok = decodeRest(head, tail, nil, false); !ok {
		return Run{}, false
	}
	run.Figures = make([]Figure, len(lines))
	var failed atomic.Bool
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			// A fault reading a mapped file (cut short meanwhile: mapped.go)
			// fails the lines; decoding the file whole then meets it again
			// where readGuarded reports it.
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			defer func() {
				if p := recover(); p != nil {
					if _, fault := p.(interface{ Addr() uintptr }); !fault {
						panic(p)
					}
					failed.Store(true)
				}
			}()
			var slab slabs
			for i := w; i < len(lines) && !failed.Load(); i += workers {
				f := &run.Figures[i]
				slab.lend(f)
				if jsonv1.Unmarshal(lines[i], f) != nil {
					failed.Store(true)
				}
				slab.keep(f)
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return Run{}, false
	}
	return run, true
}

// splitLines splits data laid out as Encode writes it into its first line
// (the run's fields before its figures, with the comma after them), its
// figures' lines (each without the comma between them, appended to lines)
// and what follows the figures' closing bracket; ok is false when data is
// not so laid out.
func splitLines(data []byte, lines [][]byte) (head []byte, figures [][]byte, tail []byte, ok bool) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data[nl:], []byte(figuresKey)) {
		return nil, nil, nil, false
	}
	head = data[:nl]
	if !bytes.HasSuffix(head, []byte(",")) {
		return nil, nil, nil, false
	}
	at := nl + len(figuresKey)
	for {
		if at >= len(data) || data[at] != '\n' {
			return nil, nil, nil, false
		}
		at++
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			return nil, nil, nil, false
		}
		line := data[at : at+end]
		if bytes.HasPrefix(line, []byte("]")) {
			break
		}
		lines = append(lines, line)
		at += end
	}
	// Every figure but the last ends in the comma between them.
	for i, line := range lines {
		last := i == len(lines)-1
		if bytes.HasSuffix(line, []byte(",")) == last {
			return nil, nil, nil, false
		}
		if !last {
			lines[i] = line[:len(line)-1]
		}
	}
	return head, lines, data[at+1:], true
}

// decodeRest decodes the run but its figures from what splitLines found:
// its first line, the comma that ends it made the object's end, then what
// follows the figures as an object of its own, into the same run, as
// encoding/json decodes one object holding both with the figures between
// them: the same fields into the same run in the same order, each part
// checked whole before it is decoded. ok is false where that object would
// not decode, is of another schema version or names its figures in
// either part.
// With summary, the lines of the verdict's figures are left out
// (figureVerdicts). The object of what follows the figures is written
// into buf, which is returned for the next file.
func decodeRest(head, tail []byte, buf []byte, summary bool) (run Run, _ []byte, ok bool) {
	// The byte is changed in place and put back: a copy of a large first
	// line would cost as much again as the line.
	last := len(head) - 1
	head[last] = '}'
	err := jsonv1.Unmarshal(head, &run)
	head[last] = ','
	// Figures named in the first line as well would be merged into by the
	// lines' (encoding/json decodes a list into the elements it holds):
	// such a file is decoded whole.
	if err != nil || run.Figures != nil {
		return Run{}, buf, false
	}
	// What follows the figures is the object's end, or more of its
	// fields after a comma (a key, not the end: a comma before the end
	// does not decode).
	t := bytes.TrimLeft(tail, jsonSpaces)
	buf = append(buf[:0], '{')
	switch {
	case len(t) > 0 && t[0] == '}':
		buf = append(buf, t...)
	case len(t) > 0 && t[0] == ',' && bytes.HasPrefix(bytes.TrimLeft(t[1:], jsonSpaces), []byte(`"`)):
		if from, to, ok := figureVerdicts(t); summary && ok {
			buf = append(append(buf, t[1:from]...), t[to:]...)
		} else {
			buf = append(buf, t[1:]...)
		}
	default:
		return Run{}, buf, false
	}
	run.Figures = []Figure{{Test: sentinel}}
	if err := jsonv1.Unmarshal(buf, &run); err != nil || run.Schema != SchemaVersion ||
		len(run.Figures) != 1 || run.Figures[0].Test != sentinel {
		return Run{}, buf, false
	}
	return run, buf, true
}

// jsonSpaces are the bytes of whitespace between JSON's tokens.
const jsonSpaces = " \t\n\r"

// slabs lend the figures one worker decodes the room for their samples
// and rounds: a figure's lists are decoded into the rest of a slab, which
// encoding/json's semantics allow (a list is decoded into the slice the
// field holds, from its start, growing it only past its capacity), rather
// than into slices grown one element at a time (16 samples took five
// allocations and copies, five rounds four: a 72-GPU run's 19,281 figures
// made 164,000). What a figure keeps of a slab is cut to its length, so
// that appending to it never writes into another figure's.
type slabs struct {
	samples []float64
	rounds  []int
}

// slabLen is the room a slab holds: the samples of some hundred figures.
const slabLen = 4096

// lend points f's samples and rounds at the free rest of the slabs,
// empty (a slab with less room than a figure usually needs starts anew).
func (s *slabs) lend(f *Figure) {
	if cap(s.samples) < 64 {
		s.samples = make([]float64, 0, slabLen)
	}
	if cap(s.rounds) < 16 {
		s.rounds = make([]int, 0, slabLen/4)
	}
	f.Samples, f.Rounds = s.samples, s.rounds
}

// keep takes what f decoded into the slabs out of their free room. A list
// the file does not hold is left as lent, empty: nil again, as decoding
// into a new figure leaves it. One decoded empty or null, or grown past
// the slab, is the decoder's own.
func (s *slabs) keep(f *Figure) {
	f.Samples, s.samples = keepOf(f.Samples, s.samples)
	f.Rounds, s.rounds = keepOf(f.Rounds, s.rounds)
}

// keepOf returns what a figure keeps of the list v it decoded into lent
// (the slab's free room), cut to its length, and the room left.
func keepOf[T any](v, lent []T) (kept, rest []T) {
	if cap(v) == 0 || cap(lent) == 0 || &v[:1][0] != &lent[:1][0] {
		return v, lent // the decoder's own slice (or nil)
	}
	if len(v) == 0 {
		return nil, lent
	}
	return v[:len(v):len(v)], lent[len(v):len(v)]
}
