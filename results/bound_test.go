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

// TestReadRefusesGzipBomb: a gzip file of 2 KiB a MiB that decompresses to
// eight times the bound is refused, holding a few MiB where the bound is
// 256. The bound is lowered to 16 MiB (TestFileLimits holds Read to
// MaxFileBytes), the bomb 128 MiB of spaces, and what reading may allocate
// as the bound is: an eighth of it, 2 MiB.
func TestReadRefusesGzipBomb(t *testing.T) {
	const limit = 16 << 20
	bomb := spacesGzip(t, nil, 8*limit>>20, nil)
	if len(bomb) > 3*limit>>7 {
		t.Fatalf("the bomb is %d bytes, want about %d KB", len(bomb), 8*limit>>20)
	}
	path := filepath.Join(t.TempDir(), "bomb.json.gz")
	if err := os.WriteFile(path, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := results.ReadWithin(path, limit, fileBounds)
	runtime.ReadMemStats(&after)
	var tl *results.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("Read of a gzip bomb: %v, want a TooLargeError", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, path) || !strings.Contains(msg, "refused") {
		t.Errorf("message %q: want one line naming the file", msg)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > limit/8 {
		t.Errorf("Read allocated %d KiB refusing the bomb, want at most %d", got>>10, limit/8>>10)
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

// TestWhitespaceBombCostsItsContent: a valid run behind 65 MiB of spaces
// (gzip: about 65 KB) reads as the run, holding a few megabytes, where it
// used to hold three times the padding (audit D3: 896 MiB cost 2.78 GB and
// 20 s); whitespace in strings and short runs between tokens stay as they
// are. 65 MiB is more than any file's size that sizes a buffer before it
// is read (MaxHint; a file within it is read whole, then squeezed), and
// what reading may allocate is a quarter of the padding.
func TestWhitespaceBombCostsItsContent(t *testing.T) {
	const padding = results.MaxHint + 1<<20
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Tests: []results.Test{results.CERead}})
	run.Notes = []string{"a note with " + strings.Repeat(" ", 1000) + "spaces kept"}
	var js bytes.Buffer
	if err := run.Encode(&js); err != nil {
		t.Fatal(err)
	}
	// The run's first byte, the spaces, a short run, the rest.
	gz := spacesGzip(t, js.Bytes()[:1], padding>>20, append([]byte("\n\t  "), js.Bytes()[1:]...))
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
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > padding/4 {
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
// MiB list of empty notes decoded into 4.9 GB). The bounds are lowered
// (bombBounds), so that each input is megabytes where the files' bounds
// make it a hundred (TestFileLimits holds Read and Decode to those), and
// what reading may allocate with them: four times the input and 1 MiB
// (the files' 64 MiB, scaled as the input is), where decoding the notes or
// the zeros allocates more than ten times the input.
func TestValueBombsAreRefused(t *testing.T) {
	b := bombBounds
	cases := map[string]struct {
		head, unit, tail string
		n                int
		want             string
	}{
		"notes":   {`{"notes":[`, `"",`, `""]}`, bombValues + 1, "JSON values"},
		"zeros":   {`{"x":[`, `0,`, `0]}`, bombValues + 1, "JSON values"},
		"objects": {`{"figures":[`, `{}`, `]}`, bombObjects + 1, "JSON objects"},
		"string":  {`{"x":"`, `a`, `"}`, bombString + 1, "a string of more than " + results.FormatBytes(bombString)},
	}
	for name, c := range cases {
		input := []byte(c.head + strings.Repeat(c.unit, c.n) + c.tail)
		length := len(input)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := results.DecodeWithin(bytes.NewReader(input), results.MaxFileBytes, b)
		runtime.ReadMemStats(&after)
		var tl *results.TooLargeError
		if !errors.As(err, &tl) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a TooLargeError saying %q", name, err, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(length)+1<<20 {
			t.Errorf("%s: %d KiB allocated reading %d KiB", name, alloc>>10, length>>10)
		}
	}
}

// The bounds of the refusal tests: a sixty-fourth of the files' (MaxValues,
// MaxObjects) and a quarter of their string's.
const (
	bombObjects = results.MaxObjects / 64
	bombValues  = results.MaxValues / 64
	bombString  = results.MaxStringBytes / 4
)

var (
	bombBounds = results.NewBounds(bombObjects, bombValues, bombString)
	fileBounds = results.NewBounds(results.MaxObjects, results.MaxValues, results.MaxStringBytes)
)

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
