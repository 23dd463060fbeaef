package plot

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/internal/infile"
	"github.com/p2pbench/p2pbench/internal/outfile"
)

// manifestName is the file in a figures directory that lists the figures
// WriteAll last wrote there, so that the next WriteAll into it removes
// those it does not write again: a directory plotted twice, from runs with
// different figures, would otherwise hold a mix (the first run's
// heatmap_ipc_* beside the second's figures), nothing said.
const manifestName = ".p2pbench-figures"

// figureFile matches the names WriteAll writes (Chart.FileName): nothing
// else listed in a manifest is ever removed, whatever the file says.
var figureFile = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*\.(png|svg|pdf)$`)

// maxManifestBytes bounds what is read of a manifest: a 72-GPU run's
// figures are a few hundred names.
const maxManifestBytes = 1 << 20

// earlierFigures lists the figures the manifest in dir names: names of
// figure files only, no path.
func earlierFigures(dir string) []string {
	data, err := infile.ReadFile(filepath.Join(dir, manifestName), maxManifestBytes)
	if err != nil {
		return nil
	}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		if name := sc.Text(); figureFile.MatchString(name) && !strings.Contains(name, "..") {
			names = append(names, name)
		}
	}
	return names
}

// replaceFigures removes from dir the figures the earlier manifest names
// that written does not (regular files only: a link is left alone), then
// lists written as the manifest; it returns the names removed.
func replaceFigures(dir string, earlier, written []string) ([]string, error) {
	var removed []string
	for _, name := range earlier {
		if slices.Contains(written, name) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && os.Remove(p) == nil {
			removed = append(removed, name)
		}
	}
	err := outfile.Write(filepath.Join(dir, manifestName), func(w io.Writer) error {
		_, err := io.WriteString(w, strings.Join(written, "\n")+"\n")
		return err
	})
	return removed, err
}
