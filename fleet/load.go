package fleet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/p2pbench/p2pbench/internal/infile"
	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// Builder gathers nodes' runs for a Fleet. Add and AddError may be called
// from several goroutines at once.
type Builder struct {
	opt        Options
	mu         sync.Mutex
	files      int
	unreadable []FileError
	types      map[string]*Type
}

// NewBuilder starts a fleet; zero options take their defaults.
func NewBuilder(o Options) *Builder {
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	return &Builder{opt: o, types: map[string]*Type{}}
}

// Add adds the run of one node, read from source (its file, or any name
// that identifies it). Only the medians of its figures are kept.
//
// A run whose verdict another build gave by its expectation table is
// judged again by Options.Build from the whole file at source (judgeAgain);
// a file that cannot be read whole is added as unreadable.
func (b *Builder) Add(source string, run *results.Run) {
	was, err := judgeAgain(source, run, b.opt.Build)
	if err != nil {
		b.AddError(source, err)
		return
	}
	r := read(source, run, was)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files++
	n := r.node
	key := fmt.Sprint(n.Simulated) + "\x00" + r.gpus + "\x00" + r.topology
	t := b.types[key]
	if t == nil {
		t = &Type{GPUs: r.gpus, Links: r.links, Simulated: n.Simulated, topology: r.topology, classOf: map[kind]int32{}}
		b.types[key] = t
	}
	n.points = make([]point, len(r.figures))
	for i, f := range r.figures {
		c, ok := t.classOf[f.kind]
		if !ok {
			c = int32(len(t.Classes))
			t.classOf[f.kind] = c
			t.Classes = append(t.Classes, &Class{Test: f.kind.test, Engine: f.kind.engine,
				Direction: f.kind.direction, Part: f.kind.part, Size: f.kind.size, Params: f.kind.params,
				Link: f.kind.link, Unit: f.kind.unit, kind: f.kind})
		}
		// Device indices are below units.MaxDevices (1024), which
		// results.Validate holds them to.
		n.points[i] = point{class: c, src: int16(f.src), dst: int16(f.dst), se: float32(f.se), value: f.value}
	}
	t.nodes = append(t.nodes, n)
}

// AddError records an input that could not be read.
func (b *Builder) AddError(source string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files++
	b.unreadable = append(b.unreadable, FileError{Path: source, Error: err.Error()})
}

// Load reads the results files that paths name — files, directories (every
// *.json and *.json.gz file under them, but those of o.Exclude) and glob
// patterns — several at once, each as a summary (results.SummaryReader), and
// analyses them. Inputs that cannot be read are listed in the fleet's
// Unreadable, and the rest analysed; the error is for no paths at all.
func Load(paths []string, o Options) (*Fleet, error) {
	if len(paths) == 0 {
		return nil, errors.New("fleet: no results files given")
	}
	b := NewBuilder(o)
	files := expand(paths, excluded(o.Exclude), b)
	work := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(runtime.GOMAXPROCS(0), max(len(files), 1)) {
		wg.Go(func() {
			var r results.SummaryReader
			for path := range work {
				if run, err := r.Read(path); err != nil {
					b.AddError(path, err)
				} else {
					b.Add(path, run)
				}
				if o.Progress != nil {
					mu.Lock()
					done++
					o.Progress(done, len(files))
					mu.Unlock()
				}
			}
		})
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	return b.Fleet(), nil
}

// judgeAgain gives run (a summary of the file at path) the verdict build
// gives the whole file where its own is another build's by the
// expectation table, and returns the file's own; nil, with run as it was,
// where build is "" or the verdict is build's, a spec's or a baseline's,
// or the run records none. The whole file is read for it: a summary
// leaves out the rounds some checks read.
func judgeAgain(path string, run *results.Run, build string) (*results.Verdict, error) {
	v := run.Verdict
	if build == "" || v == nil || v.Build == build || v.Expectations.Kind != results.ExpectModel {
		return nil, nil
	}
	whole, err := results.Read(path)
	if err != nil {
		return nil, err
	}
	if err := verdict.Record(whole, nil, build); err != nil {
		return nil, fmt.Errorf("judging %s again: %w", path, err)
	}
	run.Verdict = whole.Verdict
	return v, nil
}

// excluded stats the paths that exist of those given, for leaving them out.
func excluded(paths []string) []os.FileInfo {
	var out []os.FileInfo
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			out = append(out, fi)
		}
	}
	return out
}

// expand lists the files that paths name, each once, in order, leaving
// out those of skip; a path that names nothing readable is recorded in b
// as unreadable.
func expand(paths []string, skip []os.FileInfo, b *Builder) []string {
	var files []string
	seen := map[string]bool{}
	add := func(path string) {
		if len(skip) > 0 {
			if fi, err := os.Stat(path); err == nil && slices.ContainsFunc(skip, func(s os.FileInfo) bool { return os.SameFile(s, fi) }) {
				return
			}
		}
		if clean := filepath.Clean(path); !seen[clean] {
			seen[clean] = true
			files = append(files, clean)
		}
	}
	for _, p := range paths {
		matches := []string{p}
		if strings.ContainsAny(p, "*?[") {
			m, err := filepath.Glob(p)
			switch {
			case err != nil:
				b.AddError(p, fmt.Errorf("bad pattern: %w", err))
			case len(m) == 0:
				b.AddError(p, errors.New("no file matches the pattern"))
			}
			matches = m
		}
		for _, m := range matches {
			fi, err := os.Stat(m)
			switch {
			case err != nil:
				b.AddError(m, err)
			case fi.IsDir():
				walk(m, add, b)
			case !fi.Mode().IsRegular():
				b.AddError(m, infile.Check(m))
			default:
				add(m)
			}
		}
	}
	return files
}

// resultsName reports whether a file's name is a results file's: *.json,
// or *.json.gz (gzip-compressed, see results.Run.EncodeFor).
func resultsName(path string) bool {
	name := strings.ToLower(path)
	return strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".json.gz")
}

// walk adds every *.json and *.json.gz file under dir, in lexical order.
func walk(dir string, add func(string), b *Builder) {
	var found []string
	// The function never fails the walk: an entry it cannot read is
	// recorded and the walk goes on.
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			b.AddError(path, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
		case !d.IsDir() && resultsName(path):
			// A FIFO (or device) named *.json would block the read forever:
			// it is listed as unreadable, never opened.
			if err := infile.Check(path); err != nil {
				b.AddError(path, err)
				return nil
			}
			found = append(found, path)
		}
		return nil
	})
	if len(found) == 0 {
		b.AddError(dir, errors.New("the directory has no .json or .json.gz files"))
	}
	slices.Sort(found)
	for _, f := range found {
		add(f)
	}
}
