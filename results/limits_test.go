package results

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileLimits: every results input is read within the files' limits
// (MaxFileBytes, MaxObjects, MaxValues, MaxStringBytes), which the tests
// of the refusals lower (ReadWithin, DecodeWithin): Read, Decode and a
// SummaryReader hold their input to fileLimits, which holds the constants.
// Each refuses a string one byte longer than MaxStringBytes, naming the
// bound, and reads a string of MaxStringBytes (then refuses the file for
// what it is not); Read refuses one object more than MaxObjects and reads
// MaxObjects (4 MiB each: the one reader); a file larger than MaxFileBytes
// is TestReadBound's.
func TestFileLimits(t *testing.T) {
	want := readLimits{bytes: MaxFileBytes, values: valueBounds{objects: MaxObjects, values: MaxValues, str: MaxStringBytes}}
	if fileLimits != want || fileBounds != want.values {
		t.Errorf("the files' limits are %+v and %+v, want %+v", fileLimits, fileBounds, want)
	}
	str := func(n int) []byte { return []byte(`{"x":"` + strings.Repeat("a", n) + `"}`) }
	objects := func(n int) []byte { return []byte(`{"figures":[` + strings.Repeat(`{}`, n-1) + `]}`) }
	path := filepath.Join(t.TempDir(), "x.json")
	for _, c := range []struct {
		what    string
		data    []byte
		want    string // in the TooLargeError; "" for none
		oneOnly bool   // Read's alone
	}{
		{"a string past the bound", str(MaxStringBytes + 1), "a string of more than 1 MiB", false},
		{"a string of the bound", str(MaxStringBytes), "", false},
		{"objects past the bound", objects(MaxObjects + 1), "more than 2097152 JSON objects", true},
		{"objects of the bound", objects(MaxObjects), "", true},
	} {
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for name, read := range map[string]func() (*Run, error){
			"Read":          func() (*Run, error) { return Read(path) },
			"Decode":        func() (*Run, error) { return Decode(bytes.NewReader(c.data)) },
			"SummaryReader": func() (*Run, error) { return new(SummaryReader).Read(path) },
		} {
			if c.oneOnly && name != "Read" {
				continue
			}
			_, err := read()
			tooLarge := errors.As(err, new(*TooLargeError))
			switch {
			case c.want != "" && (!tooLarge || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s, %s: %v, want a TooLargeError saying %q", name, c.what, err, c.want)
			case c.want == "" && (err == nil || tooLarge):
				t.Errorf("%s, %s: %v, want it read (and refused for what it is not)", name, c.what, err)
			}
		}
	}
}
