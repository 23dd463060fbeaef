package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreCurrent fails when copy.ptx or atomic.ptx in kernels/
// is not exactly what this generator writes (a hand edit, or a generator
// change without go generate).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for name, want := range map[string]string{
		"copy.ptx":   CopyModule(),
		"atomic.ptx": AtomicModule(),
	} {
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("kernels/%s is stale: run go generate ./kernels", name)
		}
	}
}
