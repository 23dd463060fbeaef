package main

import (
	"bytes"
	"context"
	"io"

	"github.com/p2pbench/p2pbench/internal/interrupt"
	"github.com/p2pbench/p2pbench/internal/outfile"
)

// writeRendered renders an output into memory, where a signal can stop it
// at once, and then writes it to path atomically (see internal/outfile).
func writeRendered(ctx context.Context, path string, render func(io.Writer) error) error {
	content, err := interrupt.Wait(ctx, func() ([]byte, error) {
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
