package report

import (
	"context"
	"io"
	"path/filepath"
	"strings"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/internal/termsafe"
	"github.com/p2pbench/p2pbench/plot"
)

// FiguresDir is the directory of the figures of the Markdown report out:
// DIR_files beside it, for out DIR.md.
func FiguresDir(out string) string { return strings.TrimSuffix(out, filepath.Ext(out)) + "_files" }

// WriteMarkdownFiles writes the document as Markdown to out and its
// figures as PNG files into FiguresDir(out), linked relatively so that the
// two can be moved together (into a wiki, say). Every file is an output
// under the policy of internal/outfile, none of them one of inputs; ctx
// stops the figures between files (plot.WriteAll). Text from the results
// is written as internal/termsafe lets it through.
//
// The Markdown and its figures are several files: the lock of out is held
// while they are written, so that two reports to one file at once cannot
// mix one's text with the other's figures (the second fails at once).
func (d *Document) WriteMarkdownFiles(ctx context.Context, out string, inputs ...string) error {
	unlock, err := outfile.Lock(out)
	if err != nil {
		return err
	}
	defer unlock()
	figDir := FiguresDir(out)
	if _, err := plot.WriteAll(ctx, d.Figures(), figDir, []string{"png"}, inputs...); err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return outfile.Write(out, func(w io.Writer) error { return d.WriteMarkdown(termsafe.New(w), filepath.Base(figDir)) })
}
