package main

import (
	"bytes"
	"context"
	"io"
	"os"

	"github.com/p2pbench/p2pbench/internal/outfile"
)

// writeRendered renders an output into memory, where a signal can stop it
// at once, and then writes it to path atomically (see internal/outfile).
func writeRendered(ctx context.Context, path string, render func(io.Writer) error) error {
	content, err := interruptible(ctx, func() ([]byte, error) {
		var b bytes.Buffer
		err := render(&b)
		return b.Bytes(), err
	})
	if err != nil {
		return err
	}
	return outfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(content)
		return err
	})
}

// pdfTempDir lets the PDF library make its font: it does that in a
// temporary directory of os.TempDir, so when TMPDIR names a directory that
// is missing or not writable, TMPDIR is pointed at dir (the output's
// directory, which outfile.Check found writable).
func pdfTempDir(dir string) {
	if d, err := os.MkdirTemp("", "p2pbench-"); err == nil {
		os.Remove(d)
		return
	}
	os.Setenv("TMPDIR", dir)
}
