package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/p2pbench/p2pbench/internal/outfile"
)

// bwTo is a quick bw run writing its results to path.
func bwTo(path string) []string {
	return append([]string{"bw", "--tests", "ce_read", "--sizes", "none", "-o", path}, small...)
}

// An output that is not a regular file (a device, a FIFO, a directory) is
// refused before anything is measured or drawn, and left as it was (issue
// 19, #1 and #16); a symbolic link is followed.
func TestOutputsThatAreNotFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, _ := sampleRun(t)
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	specials := map[string]string{pipe: "named pipe (FIFO)", dir: "directory"}
	if os.Geteuid() == 0 {
		null := filepath.Join(dir, "mynull")
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Fatal(err)
		}
		specials[null] = "character device"
	}
	// plot refuses a figure's path before it draws any.
	plots := filepath.Join(dir, "plots")
	os.Mkdir(plots, 0o755)
	if err := syscall.Mkfifo(filepath.Join(plots, "heatmap_ce_read.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, kind := range specials {
		for _, args := range [][]string{
			bwTo(path),
			{"topo", "--simulate", "h200x2", "-o", path},
			{"compare", in, in, "-o", path},
			{"report", in, "-o", path, "--format", "pdf"},
		} {
			stdout, stderr, status := p2pbench(t, args...)
			if status != exitUsage || !strings.Contains(stderr, "not a regular file") || !strings.Contains(stderr, kind) {
				t.Errorf("%s -o %s: exit status %d, stderr %q; want %d refusing a %s", args[0], path, status, stderr, exitUsage, kind)
			}
			if strings.Contains(stdout, "GB/s") || strings.Contains(stdout, "written") {
				t.Errorf("%s: worked before refusing its output:\n%s", args[0], stdout)
			}
		}
	}
	if os.Geteuid() == 0 {
		if fi, err := os.Lstat(filepath.Join(dir, "mynull")); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("the device is no longer a device: %v %v", fi.Mode(), err)
		}
	}
	if fi, err := os.Lstat(pipe); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is no longer a FIFO: %v", err)
	}
	_, stderr, status := p2pbench(t, "plot", in, "-o", plots)
	if status != exitUsage || !strings.Contains(stderr, "heatmap_ce_read.png: not a regular file") {
		t.Errorf("plot into a FIFO: exit status %d, stderr %q", status, stderr)
	}
	if entries, _ := os.ReadDir(plots); len(entries) != 1 {
		t.Errorf("plot drew before refusing a figure's path: %v", entries)
	}

	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if _, stderr, status := p2pbench(t, bwTo(link)...); status != exitOK {
		t.Fatalf("-o a link: exit status %d: %s", status, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	readResults(t, target)
}

// An output that is also an input of the command is refused, however it is
// named (issue 19, #6).
func TestOutputThatIsAnInput(t *testing.T) {
	t.Parallel()
	path, _ := sampleRun(t)
	dir := t.TempDir()
	in := copyOf(t, path, dir, "in.json")
	other := copyOf(t, path, dir, "b.json")
	alias, png := filepath.Join(dir, "alias.json"), filepath.Join(dir, "alias.png")
	for _, link := range []string{alias, png} {
		if err := os.Symlink(in, link); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadFile(in)
	for _, args := range [][]string{
		{"compare", in, other, "-o", in},
		{"compare", other, in, "--plot", png},
		{"report", in, "--format", "md", "-o", in},
		{"report", alias, "--format", "pdf", "-o", in},
		{"ipc", "--simulate", "h200x2", "--reference", other + "," + in, "-o", alias},
		append(bwTo(in), "--tuning", in),
	} {
		_, stderr, status := p2pbench(t, args...)
		if status != exitUsage || !strings.Contains(stderr, "is also an input of this command") {
			t.Errorf("%s: exit status %d, stderr %q; want %d refusing to write an input", strings.Join(args, " "), status, stderr, exitUsage)
		}
	}
	if after, _ := os.ReadFile(in); string(after) != string(before) {
		t.Error("the input was changed")
	}
}

// Two runs writing one results file: the second fails at once (issue 19,
// #10).
func TestOneRunPerResultsFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.json")
	unlock, err := outfile.Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	stdout, stderr, status := p2pbench(t, bwTo(path)...)
	if status != exitError || !strings.Contains(stderr, "another p2pbench run is writing it") {
		t.Errorf("exit status %d, stderr %q; want %d and the lock's holder", status, stderr, exitError)
	}
	if stdout != "" {
		t.Errorf("measured although the file is taken:\n%s", stdout)
	}
}

// An output that cannot be written is found out before anything is
// measured; a missing directory is made.
func TestOutputCheckedBeforeMeasuring(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ := sampleRun(t)
	for _, args := range [][]string{
		bwTo(filepath.Join(file, "x.json")),
		{"ipc", "--simulate", "h200x2", "-o", filepath.Join(file, "x.json")},
		{"all", "--simulate", "h200x2", "--dir", file},
		{"topo", "--simulate", "h200x2", "-o", filepath.Join(file, "x.json")},
		{"report", in, "-o", filepath.Join(file, "r.pdf")},
		{"compare", in, in, "--plot", filepath.Join(file, "c.png")},
	} {
		stdout, stderr, status := p2pbench(t, args...)
		if status != exitError || !strings.Contains(stderr, "plain/") || !strings.Contains(stderr, ": not a directory") {
			t.Errorf("%s: exit status %d, stderr %q; want %d", strings.Join(args, " "), status, stderr, exitError)
		}
		if stdout != "" {
			t.Errorf("%s: worked before refusing the output:\n%s", args[0], stdout)
		}
	}
	nested := filepath.Join(dir, "a", "b", "x.json")
	if _, stderr, status := p2pbench(t, bwTo(nested)...); status != exitOK {
		t.Fatalf("-o in a missing directory: exit status %d: %s", status, stderr)
	}
	readResults(t, nested)
	if left := leftovers(t, filepath.Dir(nested)); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestOutputToADescriptorIsRefused: -o /dev/stdout with stdout redirected
// to a file (here /proc/self/fd/N of a file the test holds open) is refused
// before anything is measured, the file behind it left as it was, where
// the run used to leave a 0-figure snapshot in it and its results in a file
// named "NAME (deleted)" (audit N2).
func TestOutputToADescriptorIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	behind := filepath.Join(dir, "out.json")
	f, err := os.Create(behind)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, _ := sampleRun(t)
	for _, p := range []string{"/proc/self/fd/" + strconv.Itoa(int(f.Fd())), "/dev/fd/" + strconv.Itoa(int(f.Fd()))} {
		for _, args := range [][]string{
			append([]string{"bw", "--tests", "ce_read,ce_write", "-o", p}, small...),
			{"check", in, "-o", p},
		} {
			stdout, stderr, status := p2pbench(t, args...)
			oneLine(t, args[0]+" -o "+p, stderr, status, exitUsage, "is in /proc")
			if strings.Contains(stdout, "GB/s") {
				t.Errorf("%s -o %s: worked before refusing its output", args[0], p)
			}
		}
	}
	if fi, _ := f.Stat(); fi.Size() != 0 {
		t.Errorf("the file behind the descriptor was written: %d bytes", fi.Size())
	}
	if e, _ := filepath.Glob(filepath.Join(dir, "*")); len(e) != 1 {
		t.Errorf("files in the directory: %v", e)
	}
}

// plot -o DIR holds DIR's figures for one run (audit N11): a second plot
// into it leaves only its own figures (those of the earlier plot it has not
// are removed, and said), a plot while another holds the directory fails at
// once, and DIR is an output under the one policy (another user's link to
// a directory is refused).
func TestPlotDirectoryIsOneRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Two figures (the lean run's) and then one: what they show is not
	// what this test is about.
	many := leanRun(t)
	few := filepath.Join(dir, "few.json")
	if _, stderr, status := p2pbench(t, append([]string{"bw", "--tests", "ce_read", "--sizes", "none", "-o", few}, small...)...); status != exitOK {
		t.Fatal(stderr)
	}
	out := filepath.Join(dir, "plots")
	p2pbench(t, "plot", many, "-o", out)
	before, _ := filepath.Glob(filepath.Join(out, "*.png"))
	stdout, stderr, status := p2pbench(t, "plot", few, "-o", out)
	after, _ := filepath.Glob(filepath.Join(out, "*.png"))
	drawn := strings.Fields(stdout)
	if status != exitOK || len(after) != len(drawn) || len(before) <= len(after) {
		t.Errorf("after plotting %d figures over %d: %d in the directory; status %d, %s", len(drawn), len(before), len(after), status, stderr)
	}
	if !strings.Contains(stderr, "removed ") || !strings.Contains(stderr, " of an earlier plot into "+out) {
		t.Errorf("the removal is not said: %q", stderr)
	}
	// A user's own file in the directory is no figure of an earlier plot.
	mine := filepath.Join(out, "mine.png")
	os.WriteFile(mine, []byte("mine"), 0o644)
	p2pbench(t, "plot", many, "-o", out)
	p2pbench(t, "plot", few, "-o", out)
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a file plot never wrote was removed: %v", err)
	}
	unlock, err := outfile.Lock(filepath.Join(out, "figures"))
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, status = p2pbench(t, "plot", few, "-o", out)
	unlock()
	oneLine(t, "a plot into a directory another plot holds", stderr, status, exitError, "another p2pbench run is writing it")
	if os.Geteuid() == 0 {
		link := filepath.Join(dir, "others")
		os.Symlink(filepath.Join(dir, "elsewhere"), link)
		os.Lchown(link, 4242, 4242)
		_, stderr, status = p2pbench(t, "plot", few, "-o", link)
		oneLine(t, "another user's link as the plot directory", stderr, status, exitUsage, "symbolic link owned by user 4242")
		if _, err := os.Lstat(filepath.Join(dir, "elsewhere")); err == nil {
			t.Error("the directory the link names was made")
		}
	}
}
