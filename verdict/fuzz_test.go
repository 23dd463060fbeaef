package verdict_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/p2pbench/p2pbench/results"
	"github.com/p2pbench/p2pbench/verdict"
)

// FuzzParseSpec checks the reader of --expect files (issue 28): it never
// panics; it fails with a one-line *SpecError in JSON's and the spec's
// words (no Go type); what it accepts has, in every entry, a known test and
// one limit, finite and above 0. The shipped specs seed it.
func FuzzParseSpec(f *testing.F) {
	shipped, _ := filepath.Glob("../examples/expect/*.json")
	for _, p := range shipped {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{`[]`, `{"figures": [{"test": "ce_read", "min": "1"}]}`, `{"figures": [{"test": "lat_chase", "max": 1e400}]}`,
		`{"figures": [{"test": "ipc_ce_read", "min": 1}]}`, `{"figures": [{"test": "ce_read", "size": "1ZiB", "min": 1}]}`, `{"figures": null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := verdict.ParseSpec("contract", data)
		if err != nil {
			var se *verdict.SpecError
			if spec != nil || !errors.As(err, &se) {
				t.Fatalf("ParseSpec: %v (%T), spec %v", err, err, spec)
			}
			for _, internal := range []string{"verdict.", "results.", "map[", "struct {", "Go value", "Go struct", "json:", "\n"} {
				if strings.Contains(err.Error(), internal) {
					t.Fatalf("the error %q shows %q", err, internal)
				}
			}
			return
		}
		if len(spec.Figures) == 0 {
			t.Fatal("a spec of no entry accepted")
		}
		for i, e := range spec.Figures {
			if _, ok := results.Lookup(e.Test); !ok || (e.Min == nil) == (e.Max == nil) {
				t.Fatalf("entry %d accepted: %+v", i, e)
			}
			lim := e.Min
			if lim == nil {
				lim = e.Max
			}
			if !(*lim > 0) || math.IsInf(*lim, 0) {
				t.Fatalf("entry %d: limit %v accepted", i, *lim)
			}
		}
	})
}
