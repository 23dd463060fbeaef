package report_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/report"
	"github.com/p2pbench/p2pbench/results/resultstest"
)

// A Markdown report is its file and the PNG figures it links in
// FiguresDir beside it; a figure's file that is an input is refused before
// anything is written, and the lock is gone after.
func TestWriteMarkdownFiles(t *testing.T) {
	dir := t.TempDir()
	doc := report.Report(resultstest.New(resultstest.Options{GPUs: 4}))
	out := filepath.Join(dir, "r.md")
	if report.FiguresDir(out) != filepath.Join(dir, "r_files") {
		t.Fatalf("figures of %s in %s", out, report.FiguresDir(out))
	}
	heatmap := filepath.Join(dir, "r_files", "heatmap_ce_read.png")
	if err := os.Mkdir(filepath.Dir(heatmap), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(heatmap, []byte("an input"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := doc.WriteMarkdownFiles(context.Background(), out, heatmap); !errors.Is(err, outfile.ErrSameAsIn) {
		t.Errorf("a figure over an input: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused report wrote %s: %v", out, err)
	}
	if err := os.Remove(heatmap); err != nil {
		t.Fatal(err)
	}
	if err := doc.WriteMarkdownFiles(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(md), "](r_files/heatmap_ce_read.png)") && !strings.Contains(string(md), `](r_files/heatmap\_ce\_read.png)`) {
		t.Errorf("the Markdown links no heatmap (%v)", err)
	}
	if _, err := os.Stat(heatmap); err != nil {
		t.Errorf("the figure linked: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*lock*")); len(left) > 0 {
		t.Errorf("the lock is left behind: %v", left)
	}
}
