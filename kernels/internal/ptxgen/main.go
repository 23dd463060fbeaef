// Command ptxgen writes the two PTX modules of kernels whose entry points are
// variations on one theme: copy.ptx (the SM copy variants) and atomic.ptx (the
// remote atomics). Writing them from one template keeps every variant's
// prologue, loop structure and tail identical, so that two variants differ
// only in what they are meant to test.
//
// Run it from the kernels directory (go generate does):
//
//	go run ./internal/ptxgen
//
// The test beside it fails when the files in kernels/ differ from what this
// program writes, so hand edits to the generated files cannot go unnoticed.
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	for name, text := range map[string]string{
		"copy.ptx":   CopyModule(),
		"atomic.ptx": AtomicModule(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println("wrote", filepath.Join(dir, name))
	}
}
