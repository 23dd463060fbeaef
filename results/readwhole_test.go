package results_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// TestReadWholeIsSqueezed holds the quick way of reading a regular file
// to the squeezer's: for JSON as Encode writes it, JSON at and past each
// of the squeezer's bounds (whitespace runs, long strings, objects), and
// gzip files whole, of several members, cut off or whose trailer lies,
// readBounded of a file returns the bytes and the error that reading it
// through the squeezer alone does. plain says whether the quick way keeps
// the JSON (else the file is read through the squeezer).
//
// Both ways are held to bounds lower than the files' (2 Mi objects,
// strings of 1 MiB: a case at those was megabytes, read 18 times), the same
// code at other numbers: each case at or past a bound is still longer than
// the squeezer's reads of 64 KiB (a string, an escape or a run of
// whitespace goes on across reads) and readKept's first piece. The files'
// own bounds are read by TestValueBombsAreRefused and TestReadBound.
func TestReadWholeIsSqueezed(t *testing.T) {
	// Parallel: it measures no allocation, which the bomb tests (never
	// parallel) do.
	t.Parallel()
	run := resultstest.New(resultstest.Options{GPUs: 2, NoSweep: true, Tests: []results.Test{results.CERead}})
	var js bytes.Buffer
	if err := run.Encode(&js); err != nil {
		t.Fatal(err)
	}
	enc := js.Bytes()
	const objects, values, str = 1 << 14, 1 << 18, 1 << 17
	bounds := results.NewBounds(objects, values, str)
	at := func(b []byte, i int, insert string) []byte { return slices.Concat(b[:i], []byte(insert), b[i:]) }
	note := func(text string) []byte { return []byte(`{"notes":["` + text + `"]}`) }
	// list is a list of n small objects.
	list := func(n int) []byte { return []byte("[" + strings.Repeat(`{"":0},`, n-1) + `{"":0}]`) }
	cases := []struct {
		name  string
		data  []byte
		plain bool
	}{
		{"as Encode writes it", enc, true},
		{"256 spaces between tokens", at(enc, 1, strings.Repeat(" ", 256)), true},
		{"257 spaces between tokens", at(enc, 1, strings.Repeat(" ", 257)), false},
		{"a run of tabs, line ends and spaces", at(enc, 1, strings.Repeat("\t\r\n ", 100)), false},
		{"300 spaces at the end", append(bytes.Clone(enc), strings.Repeat(" ", 300)...), false},
		{"300 spaces in a string", note(strings.Repeat(" ", 300)), false},
		{"a string of the bound of escaped quotes", note(strings.Repeat(`a\"`, str/3+1)), false},
		{"a string just within the bound", note(strings.Repeat("a", str-2)), false},
		{"a string of backslashes", note(strings.Repeat(`\\`, str/2)), false},
		{"an unterminated string", []byte(`{"notes":["` + strings.Repeat("a", str+10)), false},
		{"strings of quotes escaped or not", note(strings.Repeat(`\\\" \\"`, str/8)), true},
		{"a bound's objects", list(objects), true},
		{"one object more", list(objects + 1), false},
		{"a list of half the string bound's bytes without a quote", []byte("[" + strings.Repeat("0,", str/4) + "0]"), false},
		{"one byte", []byte("{"), true},
	}
	dir := t.TempDir()
	check := func(name string, data []byte, limit int64) {
		t.Helper()
		path := filepath.Join(dir, "x.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		read := func(quick bool) ([]byte, string) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var got []byte
			if quick {
				got, err = results.ReadBoundedWithin(path, f, limit, bounds)
			} else {
				got, err = results.ReadSqueezedWithin(path, f, limit, bounds)
			}
			if err != nil {
				return got, err.Error()
			}
			return got, ""
		}
		quick, qerr := read(true)
		squeezed, serr := read(false)
		if qerr != serr || !bytes.Equal(quick, squeezed) {
			t.Errorf("%s: read whole: %d bytes, error %q; squeezed: %d bytes, error %q", name, len(quick), qerr, len(squeezed), serr)
		}
	}
	for _, c := range cases {
		if got := results.PlainWithin(c.data, bounds); got != c.plain {
			t.Errorf("%s: plain %v, want %v", c.name, got, c.plain)
		}
		check(c.name, c.data, results.MaxFileBytes)
		check(c.name+", over a bound of its size less one", c.data, int64(len(c.data))-1)
		// Compressed fast: what is read is the same at any level.
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
		zw.Write(c.data)
		zw.Close()
		z := gz.Bytes()
		check(c.name+", gzip", z, results.MaxFileBytes)
		check(c.name+", gzip over a bound of its size less one", z, int64(len(c.data))-1)
		check(c.name+", gzip of two members", slices.Concat(z, z), results.MaxFileBytes)
		check(c.name+", gzip cut off", z[:len(z)-5], results.MaxFileBytes)
		check(c.name+", gzip and more", append(slices.Clone(z), "more"...), results.MaxFileBytes)
		for _, lie := range []int{-1, 1} {
			lying := slices.Clone(z)
			binary.LittleEndian.PutUint32(lying[len(lying)-4:], uint32(len(c.data)+lie))
			check(c.name+", gzip whose trailer lies", lying, results.MaxFileBytes)
		}
	}
}

// FuzzLayouts holds each quick way of reading to the plain one: a file read
// whole to the squeezer's bytes and error, a run decoded line by line to
// the run decoded whole, a summary to the run decoded whole and
// summarised (the same run, or the same error; a file with a fault in the
// samples or rounds a summary drops, to that file without them). The seed is a run as
// Encode writes it, with everything a figure can carry and a verdict with
// figures (a lean one: 2 GPUs without the sweeps).
// methodCheckFault is a fault of a figure's method check, as the file's
// validation words it, with the separator that follows it.
var methodCheckFault = regexp.MustCompile(`figures\[\d+\] \([^)]*\): method_check has \d+ repetitions per sample and \d+ samples: want at least one of each(; )?`)

func FuzzLayouts(f *testing.F) {
	f.Add(summaryRun(f, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "x.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		read := func(quick bool) ([]byte, error) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if quick {
				return results.ReadBounded(path, f, results.MaxFileBytes)
			}
			return results.ReadSqueezed(path, f, results.MaxFileBytes)
		}
		quick, qerr := read(true)
		squeezed, serr := read(false)
		if (qerr == nil) != (serr == nil) || qerr != nil && qerr.Error() != serr.Error() || !bytes.Equal(quick, squeezed) {
			t.Fatalf("read whole: %q, %v; squeezed: %q, %v", quick, qerr, squeezed, serr)
		}
		whole, werr := results.DecodeWhole(bytes.Clone(data))
		same := func(what string, got *results.Run, err error) {
			t.Helper()
			if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
				t.Fatalf("%s: %v; decoded whole: %v", what, err, werr)
			}
			if err == nil && !reflect.DeepEqual(got, whole) {
				t.Fatalf("%s: the run differs from the one decoded whole", what)
			}
		}
		lines, err := results.Decode(bytes.NewReader(data))
		same("decoded by lines", lines, err)
		summary, err := results.DecodeSummary(bytes.Clone(data))
		if werr != nil && (err == nil || err.Error() != werr.Error()) {
			// A summary does not check what it drops (the samples' and
			// rounds' numbers): where those hold a fault, it reads the
			// file as the file without them would read, so it may read
			// one whose only fault is there, or refuse one for a fault
			// that decoding whole meets only after that one.
			var kept []byte
			for _, l := range bytes.Split(data, []byte("\n")) {
				kept = append(results.WithoutSamples(kept, l), '\n')
			}
			whole, werr = results.DecodeWhole(kept[:len(kept)-1])
			// Nor does it check the method check, which it drops unread:
			// with the samples gone, a check whose only samples were
			// those can fault where the summary reads the file; the
			// summary meets the file's other faults.
			if werr != nil && methodCheckFault.MatchString(werr.Error()) {
				want := strings.TrimSuffix(methodCheckFault.ReplaceAllString(werr.Error(), ""), "; ")
				if strings.HasSuffix(want, "invalid: ") {
					want = ""
				}
				if got := fmt.Sprint(err); want == "" && err != nil || want != "" && got != want {
					t.Fatalf("summary: %v; decoded whole, its method checks aside: %q", err, want)
				}
				return
			}
		}
		if whole != nil {
			whole.Summarize()
		}
		same("summary", summary, err)
	})
}
