package results

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// TestReadMappedFileTruncated truncates a file while it is mapped, as
// another program could while p2pbench reads it: reading the pages it lost
// must give an error, not crash.
// Both a small file and one decoded in parallel pieces.
func TestReadMappedFileTruncated(t *testing.T) {
	for _, n := range []int{2000, 40000} {
		r := &Run{Schema: SchemaVersion}
		for i := 0; i < n; i++ {
			r.Figures = append(r.Figures, Figure{Test: "ce_read", Unit: "GB/s", Samples: []float64{1, 2, 3}, Verify: VerifyNA})
		}
		readTruncated(t, r)
	}
}

func readTruncated(t *testing.T, r *Run) {
	path := filepath.Join(t.TempDir(), "run.json")
	if err := Write(path, r); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); len(r.Figures) > 10000 && fi.Size() < parallelMin {
		t.Fatalf("%d bytes are too few to decode in parallel", fi.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap, ok := mapFile(f)
	if !ok {
		t.Skip("the file could not be mapped")
	}
	defer unmap()
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	_, err = decodeMapped(path, data, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("reading a file truncated while mapped: %v", err)
	}
}

// TestReadFIFO reads a file that cannot be mapped: a named pipe.
func TestReadFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	want := &Run{Schema: SchemaVersion, Figures: []Figure{{Test: "ce_read", Unit: "GB/s", Samples: []float64{1}, Verify: VerifyNA}}}
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		want.Encode(f)
		f.Close()
	}()
	got, err := Read(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Read of a named pipe: %v; equal: %v", err, err == nil && reflect.DeepEqual(got, want))
	}
}
