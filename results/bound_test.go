package results_test

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// spacesGzip returns a valid one-member gzip file of head, n MiB of spaces
// and tail, about 1 KiB per MiB: deflate flushed after each MiB settles,
// from the third, on the same bytes (the window all spaces), so they are
// repeated instead of compressed n times, and the tail compressed after the
// third reads the same after the n-th.
func spacesGzip(t *testing.T, head []byte, mib int, tail []byte) []byte {
	t.Helper()
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	var part bytes.Buffer
	zw, err := flate.NewWriter(&part, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	var first []byte
	if len(head) > 0 {
		zw.Write(head)
		zw.Flush()
		first = bytes.Clone(part.Bytes())
		part.Reset()
	}
	var chunks [][]byte
	for range 3 {
		zw.Write(spaces)
		zw.Flush()
		chunks = append(chunks, bytes.Clone(part.Bytes()))
		part.Reset()
	}
	if !bytes.Equal(chunks[1], chunks[2]) {
		t.Fatal("deflate of spaces did not settle: build the test input another way")
	}
	zw.Write(tail)
	zw.Close()
	out := bytes.NewBuffer([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	out.Write(first)
	crc := crc32.Update(0, crc32.IEEETable, head)
	for i := range mib {
		out.Write(chunks[min(i, 2)])
		crc = crc32.Update(crc, crc32.IEEETable, spaces)
	}
	out.Write(part.Bytes()) // the tail and the final block
	crc = crc32.Update(crc, crc32.IEEETable, tail)
	out.Write(binary.LittleEndian.AppendUint32(nil, crc))
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(uint64(len(head))+uint64(mib)<<20+uint64(len(tail)))))
	return out.Bytes()
}

func TestReadRefusesGzipBomb(t *testing.T) {
	bomb := spacesGzip(t, nil, 2048, nil)
	if len(bomb) > 3<<20 {
		t.Fatalf("the bomb is %d bytes, want about 2 MB", len(bomb))
	}
	path := filepath.Join(t.TempDir(), "bomb.json.gz")
	if err := os.WriteFile(path, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := results.Read(path)
	runtime.ReadMemStats(&after)
	var tl *results.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("Read of a gzip bomb: %v, want a TooLargeError", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, path) || !strings.Contains(msg, "refused") {
		t.Errorf("message %q: want one line naming the file", msg)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("Read allocated %d MiB refusing the bomb, want a few", got>>20)
	}
}

// TestReadBound covers the bound where no size is known first: a stream,
// a gzip file of several members (its trailer states the last one's size),
// a plain file larger than the bound (refused unread).
func TestReadBound(t *testing.T) {
	const limit = 4 << 20
	one := spacesGzip(t, nil, 3, nil)
	cases := []struct {
		name string
		data []byte
		ok   bool
		want int // bytes of JSON kept: a long run of whitespace is one
	}{
		{"plain within", bytes.Repeat([]byte(" "), limit), true, 1},
		{"plain over", bytes.Repeat([]byte(" "), limit+1), false, 0},
		{"gzip within", one, true, 1},
		{"gzip members over", slices.Concat(one, one), false, 0},
	}
	for _, c := range cases {
		for _, asFile := range []bool{false, true} {
			var err error
			var data []byte
			if asFile {
				path := filepath.Join(t.TempDir(), "x.json")
				if err := os.WriteFile(path, c.data, 0o644); err != nil {
					t.Fatal(err)
				}
				f, ferr := os.Open(path)
				if ferr != nil {
					t.Fatal(ferr)
				}
				data, err = results.ReadBounded(path, f, limit)
				f.Close()
			} else {
				data, err = results.ReadBounded("", bytes.NewReader(c.data), limit)
			}
			var tl *results.TooLargeError
			switch {
			case c.ok && err != nil:
				t.Errorf("%s (file %v): %v", c.name, asFile, err)
			case c.ok && !bytes.Equal(bytes.TrimLeft(data, " "), nil):
				t.Errorf("%s (file %v): read other bytes than spaces", c.name, asFile)
			case c.ok && len(data) != c.want:
				t.Errorf("%s (file %v): read %d bytes", c.name, asFile, len(data))
			case !c.ok && !errors.As(err, &tl):
				t.Errorf("%s (file %v): %v, want a TooLargeError", c.name, asFile, err)
			}
		}
	}
	// A sparse file over MaxFileBytes is refused by its size, unread.
	path := filepath.Join(t.TempDir(), "huge.json")
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, results.MaxFileBytes+1); err != nil {
		t.Skip("no sparse files here:", err)
	}
	if _, err := results.Read(path); !errors.As(err, new(*results.TooLargeError)) {
		t.Errorf("Read of a file over the bound: %v, want a TooLargeError", err)
	}
}

// TestWhitespaceBombCostsItsContent: a valid run behind 250 MiB of spaces
// (gzip: about 250 KB) reads as the run, holding a few megabytes, where it
// used to hold three times the padding (audit D3: 896 MiB cost 2.78 GB and
// 20 s); whitespace in strings and short runs between tokens stay as they
// are.
func TestWhitespaceBombCostsItsContent(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Tests: []results.Test{results.CERead}})
	run.Notes = []string{"a note with " + strings.Repeat(" ", 1000) + "spaces kept"}
	var js bytes.Buffer
	if err := run.Encode(&js); err != nil {
		t.Fatal(err)
	}
	// The run's first byte, 250 MiB of spaces, a short run, the rest.
	gz := spacesGzip(t, js.Bytes()[:1], 250, append([]byte("\n\t  "), js.Bytes()[1:]...))
	path := filepath.Join(t.TempDir(), "bomb.json.gz")
	if err := os.WriteFile(path, gz, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := results.Read(path)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("Read allocated %d MiB, want a few", alloc>>20)
	}
	if len(got.Figures) != len(run.Figures) || got.Notes[0] != run.Notes[0] {
		t.Errorf("the run read back differs: %d figures, note %q", len(got.Figures), got.Notes[0][:20])
	}
	// Indentation (short runs) is kept, so messages' positions stay true.
	data, err := results.ReadBounded("", strings.NewReader("{\n    \"a\":  1,"+strings.Repeat(" ", 300)+"\"b\": \"x  "+strings.Repeat(" ", 300)+"y\"}"), 1<<20)
	if want := "{\n    \"a\":  1, \"b\": \"x  " + strings.Repeat(" ", 300) + "y\"}"; err != nil || string(data) != want {
		t.Errorf("squeezed %q, %v\nwant %q", data, err, want)
	}
}

// TestValueBombsAreRefused: JSON within the size bound whose values are
// the smallest JSON allows (empty notes, a list of zeros, empty objects)
// or a string far longer than any text of a results file is refused as it
// is read, holding a fraction of what decoding it would (audit D3: a 250
// MiB list of empty notes decoded into 4.9 GB).
func TestValueBombsAreRefused(t *testing.T) {
	cases := map[string]struct {
		head, unit, tail string
		n                int
		want             string
	}{
		"notes":   {`{"notes":[`, `"",`, `""]}`, results.MaxValues + 1, "JSON values"},
		"zeros":   {`{"x":[`, `0,`, `0]}`, results.MaxValues + 1, "JSON values"},
		"objects": {`{"figures":[`, `{}`, `]}`, results.MaxObjects + 1, "JSON objects"},
		"string":  {`{"x":"`, `a`, `"}`, results.MaxStringBytes + 1, "a string of more than 1 MiB"},
	}
	// Each input made in one piece (100 MB of notes: made and copied again
	// into a growing buffer, its making cost more than reading it), every
	// one in the same buffer: the pages of a fresh 100 MB cost more to
	// touch than the input to write.
	size := 0
	for _, c := range cases {
		size = max(size, len(c.head)+len(c.unit)*c.n+len(c.tail))
	}
	buf := make([]byte, 0, size)
	for name, c := range cases {
		input := append(buf[:0], c.head...)
		for range c.n {
			input = append(input, c.unit...)
		}
		input = append(input, c.tail...)
		data := bytes.NewBuffer(input)
		length := len(input)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := results.Decode(data)
		runtime.ReadMemStats(&after)
		var tl *results.TooLargeError
		if !errors.As(err, &tl) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a TooLargeError saying %q", name, err, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(length)+64<<20 {
			t.Errorf("%s: %d MiB allocated reading %d MiB", name, alloc>>20, length>>20)
		}
	}
}

// TestAbsentVerifyIsReadFromTheFigures: a file without the run's "verify"
// (another program's) is not taken for a run made with --no-verify when
// its figures say their data was checked (audit D7); figures that skipped
// the check make it false, and a file that says false stays false.
func TestAbsentVerifyIsReadFromTheFigures(t *testing.T) {
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Tests: []results.Test{results.CERead}})
	var js bytes.Buffer
	if err := run.Encode(&js); err != nil {
		t.Fatal(err)
	}
	absent := bytes.Replace(js.Bytes(), []byte(`"verify":true,`), nil, 1)
	if bytes.Equal(absent, js.Bytes()) {
		t.Fatal(`the encoded run has no "verify":true, to remove`)
	}
	for name, c := range map[string]struct {
		data []byte
		want bool
	}{
		"absent, checked":       {absent, true},
		"absent, checked, flat": {bytes.ReplaceAll(absent, []byte("\n"), []byte(" ")), true},
		"absent, skipped":       {bytes.ReplaceAll(absent, []byte(`"verify":"passed"`), []byte(`"verify":"skipped"`)), false},
		"false, checked":        {bytes.Replace(js.Bytes(), []byte(`"verify":true`), []byte(`"verify":false`), 1), false},
	} {
		got, err := results.Decode(bytes.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Verify != c.want {
			t.Errorf("%s: verify %v, want %v", name, got.Verify, c.want)
		}
	}
}
