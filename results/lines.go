package results

import (
	"bytes"
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
)

// Reading a results file is mostly decoding its figures (a 72-GPU run's
// 17 MB took 0.3 s of one CPU), and Encode writes each figure on a line of
// its own, after a first line with the run's other fields. So decodeLines
// decodes the figures of such a file on every CPU at once, each line with
// encoding/json as a whole file would be, and decode falls back to
// decoding the file whole wherever it is laid out otherwise (another
// program's or a reformatted file) or anything in it does not decode, so
// that what is read, and every error, is the same either way.

// figuresKey opens the figures on the line after the first, as Encode
// writes them.
const figuresKey = "\n\"figures\":["

// sentinel stands in for the figures while the rest of the file decodes:
// a file whose object names "figures" again (the last one counts, as in
// encoding/json) replaces it, and is decoded whole.
const sentinel = `[{"test":"\u0000figures on their own lines"}]`

// validHead reports whether head, the first line of a file laid out as
// Encode writes it, is a whole object once its last byte, a comma, is the
// object's end. The byte is changed in place and put back: a copy of a
// large first line would cost as much again as the line.
func validHead(head []byte) bool {
	last := len(head) - 1
	head[last] = '}'
	ok := json.Valid(head)
	head[last] = ','
	return ok
}

// decodeLines decodes data laid out as Encode writes it; ok is false, with
// nothing decoded, when it is not so laid out, does not decode, or is of
// another schema version.
func decodeLines(data []byte) (run Run, ok bool) {
	lines, rest, ok := splitLines(data)
	if !ok {
		return Run{}, false
	}
	if run, ok = decodeRest(rest); !ok {
		return Run{}, false
	}
	run.Figures = make([]Figure, len(lines))
	var failed atomic.Bool
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(lines) && !failed.Load(); i += workers {
				if json.Unmarshal(lines[i], &run.Figures[i]) != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return Run{}, false
	}
	return run, true
}

// splitLines splits data laid out as Encode writes it into its figures'
// lines (each without the comma between them) and the rest of the file,
// the figures replaced by the sentinel; ok is false when data is not so
// laid out.
func splitLines(data []byte) (lines [][]byte, rest []byte, ok bool) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data[nl:], []byte(figuresKey)) {
		return nil, nil, false
	}
	// The first line, its comma made the object's end, must be a whole
	// object: the figures' key is then one of the run's own.
	head := data[:nl]
	if !bytes.HasSuffix(head, []byte(",")) || !validHead(head) {
		return nil, nil, false
	}
	at := nl + len(figuresKey)
	for {
		if at >= len(data) || data[at] != '\n' {
			return nil, nil, false
		}
		at++
		end := bytes.IndexByte(data[at:], '\n')
		if end < 0 {
			return nil, nil, false
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
			return nil, nil, false
		}
		if !last {
			lines[i] = line[:len(line)-1]
		}
	}
	rest = make([]byte, 0, nl+len(figuresKey)+len(sentinel)+len(data)-at)
	rest = append(rest, data[:nl+len(figuresKey)-1]...)
	rest = append(rest, sentinel...)
	rest = append(rest, data[at+1:]...)
	return lines, rest, true
}

// decodeRest decodes what splitLines left of a file: the run but its
// figures; ok is false when it does not decode, is of another schema
// version or names its figures again.
func decodeRest(rest []byte) (run Run, ok bool) {
	if err := json.Unmarshal(rest, &run); err != nil || run.Schema != SchemaVersion ||
		len(run.Figures) != 1 || run.Figures[0].Test != "\x00figures on their own lines" {
		return Run{}, false
	}
	return run, true
}
