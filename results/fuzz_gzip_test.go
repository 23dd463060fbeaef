package results

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeGzip checks the gzip-compressed path of Decode (issue 28): a
// compressed input decodes exactly as the same bytes uncompressed (the
// same run, or an error both ways), and raw bytes behind gzip's magic
// number (a truncated or corrupt stream) fail with one line in the file's
// terms, never a panic.
func FuzzDecodeGzip(f *testing.F) {
	f.Add([]byte(`{"schema": 2, "figures": []}`), false)
	f.Add([]byte(`{"schema": 2, "catalogue": {"x": {"unit": "ns", "convention": "c"}}, "figures": [{"test": "x", "unit": "ns", "src": 0, "dst": 0, "samples": [1]}]}`), false)
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"), true) // a header and nothing
	f.Add([]byte(`[1]`), false)
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		if raw {
			run, err := Decode(bytes.NewReader(append([]byte{0x1f, 0x8b}, data...)))
			if err == nil {
				checkRoundTrip(t, run)
				return
			}
			oneLineError(t, err)
			return
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(data)
		zw.Close()
		plain, perr := Decode(bytes.NewReader(data))
		packed, gerr := Decode(&gz)
		if (perr == nil) != (gerr == nil) {
			t.Fatalf("plain: %v; gzip-compressed: %v", perr, gerr)
		}
		if gerr != nil {
			oneLineError(t, gerr)
			return
		}
		equateEmpty(reflect.ValueOf(plain))
		equateEmpty(reflect.ValueOf(packed))
		if !reflect.DeepEqual(plain, packed) {
			t.Fatalf("the run differs compressed:\n%+v\n%+v", plain, packed)
		}
		checkRoundTrip(t, packed)
	})
}

// oneLineError fails unless err is one line in the file's terms.
func oneLineError(t *testing.T, err error) {
	t.Helper()
	for _, internal := range []string{"results.", "map[", "struct {", "Go value", "Go struct", "json.", "UnmarshalJSON", "\n"} {
		if strings.Contains(err.Error(), internal) {
			t.Fatalf("the error %q shows %q", err, internal)
		}
	}
}

// checkRoundTrip fails unless run encodes (compressed) and decodes again.
func checkRoundTrip(t *testing.T, run *Run) {
	t.Helper()
	var buf bytes.Buffer
	if err := run.EncodeFor("x.json.gz")(&buf); err != nil {
		t.Fatalf("a decoded run does not encode: %v", err)
	}
	if _, err := Decode(&buf); err != nil {
		t.Fatalf("a decoded run, encoded compressed, does not decode: %v", err)
	}
}
