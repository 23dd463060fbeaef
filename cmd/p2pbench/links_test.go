package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/internal/cpuprofile"
)

// TestNoWriteOutsideTheOutput plants links at every path a command writes
// (its outputs, their locks, its output directories and the files in them,
// the CPU profile) and runs it (issue 37): no file outside the output's own
// directory is created, truncated or written. A symbolic link another user
// owns (run as root, the links are given to user 4242) is refused, exit 2;
// a lock file that is a link is refused whoever owns it; a hard link at an
// output is never written through (the new file is renamed over the name).
func TestNoWriteOutsideTheOutput(t *testing.T) {
	in, _ := sampleRun(t)
	// The commands that draw read the lean run: what they draw is not what
	// this test is about, the paths they write are.
	drawn := leanRun(t)
	const nvb = "../../ingest/testdata/nvbandwidth-v0.8-h200x2.json"
	root := os.Geteuid() == 0
	// The figures a Markdown report of the lean run draws.
	scratch := t.TempDir()
	if _, stderr, status := p2pbench(t, "report", drawn, "-o", filepath.Join(scratch, "r.md")); status != exitOK {
		t.Fatal(stderr)
	}
	figs, _ := filepath.Glob(filepath.Join(scratch, "r_files", "*.png"))
	if len(figs) == 0 {
		t.Fatal("the lean run's report draws no figure")
	}
	reportFig := "r_files/" + filepath.Base(figs[0])
	bw := func(out string) []string {
		return append([]string{"bw", "--tests", "ce_read", "--sizes", "none", "-o", filepath.Join(out, "r.json")}, small...)
	}
	for _, c := range []struct {
		name  string
		args  func(out string) []string
		env   string   // P2PBENCH_CPUPROFILE's file in out, if any
		dirs  []string // output directories the command makes in out
		files []string // the paths it writes, in out
		locks []string // its lock files, in out
	}{
		{"bw", bw, "", nil, []string{"r.json"}, []string{".r.json.lock"}},
		{"all", func(out string) []string {
			return append([]string{"all", "--tests", "ce_read", "--sizes", "none", "--dir", filepath.Join(out, "d")}, small...)
		}, "", []string{"d"}, []string{"d/results.json"}, []string{"d/.results.json.lock"}},
		{"topo", func(out string) []string {
			return []string{"topo", "--simulate", "h200x2", "-o", filepath.Join(out, "t.json")}
		}, "", nil, []string{"t.json"}, nil},
		{"check", func(out string) []string { return []string{"check", in, "-o", filepath.Join(out, "c.json")} }, "", nil, []string{"c.json"}, nil},
		{"compare", func(out string) []string {
			return []string{"compare", drawn, drawn, "-o", filepath.Join(out, "c.txt"), "--plot", filepath.Join(out, "c.png")}
		}, "", nil, []string{"c.txt", "c.png"}, nil},
		{"report pdf", func(out string) []string { return []string{"report", drawn, "-o", filepath.Join(out, "r.pdf")} }, "", nil, []string{"r.pdf"}, nil},
		{"report md", func(out string) []string { return []string{"report", drawn, "-o", filepath.Join(out, "r.md")} },
			"", []string{"r_files"}, []string{"r.md", reportFig, "r_files/.p2pbench-figures"}, []string{".r.md.lock"}},
		{"plot", func(out string) []string { return []string{"plot", drawn, "-o", filepath.Join(out, "p")} },
			"", []string{"p"}, []string{"p/heatmap_ce_read.png", "p/.p2pbench-figures"}, []string{"p/.figures.lock"}},
		{"import -o", func(out string) []string { return []string{"import", nvb, "-o", filepath.Join(out, "i.json")} }, "", nil, []string{"i.json"}, nil},
		{"import --dir", func(out string) []string { return []string{"import", nvb, "--dir", filepath.Join(out, "idir")} },
			"", []string{"idir"}, []string{"idir/nvbandwidth-v0.8-h200x2.p2pbench.json"}, nil},
		{"fleet", func(out string) []string {
			return []string{"fleet", in, "-o", filepath.Join(out, "f.txt"), "--plot", filepath.Join(out, "fp"), "--report", filepath.Join(out, "fr.md")}
		}, "", []string{"fp", "fr_files"}, []string{"f.txt", "fr.md"}, []string{".fr.md.lock"}},
		{"profile", func(out string) []string { return []string{"show", in} }, "cpu.prof", nil, []string{"cpu.prof"}, nil},
	} {
		type plant struct {
			at     string
			kind   string // "symlink", "dirlink" or "hardlink"
			refuse bool   // the command must refuse it
		}
		var plants []plant
		for _, l := range c.locks {
			plants = append(plants, plant{l, "symlink", true}, plant{l, "hardlink", true})
		}
		for _, f := range c.files {
			plants = append(plants, plant{f, "hardlink", false})
			if root {
				plants = append(plants, plant{f, "symlink", true})
			}
		}
		if root {
			for _, d := range c.dirs {
				plants = append(plants, plant{d, "dirlink", true})
			}
		}
		if c.env != "" && root {
			plants = append(plants, plant{c.env, "symlink", true})
		}
		for _, p := range plants {
			what := c.name + ": a " + p.kind + " at " + p.at
			base := t.TempDir()
			out, outside := filepath.Join(base, "out"), filepath.Join(base, "outside")
			os.MkdirAll(out, 0o755)
			os.MkdirAll(outside, 0o755)
			victim := filepath.Join(outside, "victim")
			const precious = "precious data line\n"
			os.WriteFile(victim, []byte(precious), 0o644)
			at := filepath.Join(out, p.at)
			os.MkdirAll(filepath.Dir(at), 0o755)
			var err error
			switch p.kind {
			case "symlink":
				err = os.Symlink(victim, at)
			case "dirlink":
				err = os.Symlink(outside, at)
			case "hardlink":
				err = os.Link(victim, at)
			}
			if err != nil {
				t.Fatal(err)
			}
			if root && p.kind != "hardlink" {
				os.Lchown(at, 4242, 4242) // another user's link
			}
			if c.env != "" {
				t.Setenv("P2PBENCH_CPUPROFILE", filepath.Join(out, c.env))
				stop, perr := cpuprofile.Start(os.Getenv("P2PBENCH_CPUPROFILE"), c.args(out))
				if perr == nil {
					p2pbench(t, c.args(out)...)
					perr = stop()
				}
				if p.refuse != (perr != nil) {
					t.Errorf("%s: %v", what, perr)
				}
				os.Unsetenv("P2PBENCH_CPUPROFILE")
			} else {
				_, stderr, status := p2pbench(t, c.args(out)...)
				if p.refuse && status != exitUsage {
					t.Errorf("%s: exit status %d, want %d (refused); stderr: %s", what, status, exitUsage, stderr)
				}
				if !p.refuse && status != exitOK && status != exitFailed {
					t.Errorf("%s: exit status %d; stderr: %s", what, status, stderr)
				}
			}
			if got, _ := os.ReadFile(victim); !bytes.Equal(got, []byte(precious)) {
				t.Errorf("%s: the file outside the output now holds %q", what, got)
			}
			if left, _ := os.ReadDir(outside); len(left) != 1 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("%s: made files outside the output: %v", what, slices.DeleteFunc(names, func(n string) bool { return n == "victim" }))
			}
			if p.kind == "hardlink" && !p.refuse && !strings.HasSuffix(p.at, ".p2pbench-figures") {
				if fi, err := os.Stat(at); err != nil || fi.Size() == int64(len(precious)) {
					t.Errorf("%s: the output was not written anew (%v)", what, err)
				}
			}
		}
	}
}
