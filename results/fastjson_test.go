package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// legacyEncode is the reference encoding the fast encoder must reproduce.
func legacyEncode(t testing.TB, r *Run) []byte {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(compactNumberArrays(data), '\n')
}

// oddRun has the values whose encoding is easy to get wrong.
func oddRun() *Run {
	odd := []string{"<a & b>", "→ 5 µs", "tab\there", "quote \" and \\", "\x01\x1f", "bad \xff utf8", "\u2028\u2029", ""}
	r := &Run{Schema: SchemaVersion, Host: "h<o>st", Complete: true, Notes: odd}
	for i, s := range odd {
		f := Figure{Test: "t" + s, Engine: s, Direction: s, Part: s, Src: -1, Dst: i, Size: 1 << 62, Unit: "GB/s",
			Convention: s, Params: map[string]string{s: s, "z": "1", "a": s}, Samples: []float64{0, 1e-7, 1.5e-6, 123456789012345678901234.0, 5, 0.1},
			Verify: s, VerifyDetail: s, Error: s, ErrorName: s}
		f.Stats = &Stats{N: 6, Median: 2.5, Mean: 1e21, Stddev: 1e-300, CV: 0.25, Min: 0, Max: 1.2e23, P5: 1e-7, P95: 3, P99: float64(i)}
		r.Figures = append(r.Figures, f)
	}
	r.Figures = append(r.Figures,
		Figure{Test: "bare"},
		Figure{Test: "traffic", Traffic: &LinkTraffic{Src: LinkCounts{TxData: 1 << 40, TxRaw: 1<<40 + 7, RxRaw: 3}, Dst: LinkCounts{RxData: 1 << 40, TxRaw: 1 << 39}}},
		Figure{Test: "no traffic", Traffic: &LinkTraffic{}},
		Figure{Test: "empty", Params: map[string]string{}, Samples: []float64{}, Stats: &Stats{}},
	)
	return r
}

func encodeFast(t testing.TB, r *Run) []byte {
	var buf bytes.Buffer
	if err := r.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFastEncodeMatchesEncodingJSON(t *testing.T) {
	runs := map[string]*Run{"odd": oddRun(), "no figures": {Schema: 1}, "empty figures": {Schema: 1, Figures: []Figure{}}}
	for name, r := range runs {
		if got, want := encodeFast(t, r), legacyEncode(t, r); !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: encodings differ at byte %d:\nfast:   %q\nlegacy: %q", name, i, clip(got, i), clip(want, i))
		}
	}
}

func clip(b []byte, i int) []byte {
	lo, hi := max(0, i-60), min(len(b), i+60)
	return b[lo:hi]
}

func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	inputs := map[string][]byte{
		"odd":     legacyEncode(t, oddRun()),
		"compact": mustMarshal(t, oddRun()),
		// White space the quick paths do not expect.
		"wide":         []byte(strings.NewReplacer(", ", " ,  ", ": ", " :\t", "\n", " \r\n ").Replace(string(legacyEncode(t, oddRun())))),
		"nulls":        []byte(`{"schema": 1, "figures": [{"test": null, "params": null, "samples": null, "stats": null, "src": null}]}`),
		"unknown keys": []byte(`{"schema": 1, "later": [1, {"a": "b"}], "figures": [{"test": "x", "new_field": {"deep": [true, false, null, -1.5e3]}, "stats": {"n": 1, "extra": "y"}}]}`),
		"escapes":      []byte(`{"schema": 1, "figures": [{"test": "a\u00e9\n\"", "params": {"k\u0041": "v\\"}}]}`),
		"null figures": []byte(`{"schema": 1, "figures": null}`),
		"no figures":   []byte(`{"schema": 1}`),
	}
	for name, data := range inputs {
		fast, ok := decodeFast(data, ReadOptions{})
		if !ok {
			t.Errorf("%s: the fast path gave up", name)
			continue
		}
		var slow Run
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(*fast, slow) {
			t.Errorf("%s: fast and encoding/json decodings differ:\nfast: %+v\nslow: %+v", name, fast.Figures, slow.Figures)
		}
		checkOptions(t, name, data, &slow)
	}
}

// checkOptions checks that decoding data with read options accepts what
// decoding it in full accepts, want (nil when that fails), and gives the
// same run, but for the stats of figures with samples with SkipStats.
func checkOptions(t testing.TB, name string, data []byte, want *Run) {
	t.Helper()
	for o := 1; o < 8; o++ {
		opt := ReadOptions{SkipStats: o&1 != 0, ShareParams: o&2 != 0, Serial: o&4 != 0}
		got, ok := decodeFast(data, opt)
		if ok != (want != nil) {
			t.Fatalf("%s: with %+v the fast path accepts it: %v; in full: %v", name, opt, ok, want != nil)
		}
		if !ok {
			continue
		}
		stripped := *want
		if want.Figures != nil {
			stripped.Figures = slices.Clone(want.Figures)
		}
		for i := range stripped.Figures {
			if opt.SkipStats && len(stripped.Figures[i].Samples) > 0 {
				stripped.Figures[i].Stats = nil
			}
		}
		if !reflect.DeepEqual(*got, stripped) {
			t.Errorf("%s: decoding with %+v differs from decoding in full (stats of figures with samples left out with SkipStats)", name, opt)
		}
	}
}

func mustMarshal(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFastDecodeGivesUp lists inputs the fast path must leave to
// encoding/json: they are wrong, or right in ways it does not copy.
func TestFastDecodeGivesUp(t *testing.T) {
	for name, data := range map[string]string{
		"case-folded key":    `{"schema": 1, "figures": [{"Test": "x"}]}`,
		"kelvin key":         `{"schema": 1, "figures": [{"\u212aey": "x"}]}`,
		"duplicate key":      `{"schema": 1, "figures": [{"test": "x", "test": "y"}]}`,
		"Figures":            `{"schema": 1, "Figures": []}`,
		"int with fraction":  `{"schema": 1, "figures": [{"src": 1.0}]}`,
		"negative size":      `{"schema": 1, "figures": [{"size_bytes": -1}]}`,
		"huge float":         `{"schema": 1, "figures": [{"samples": [1e999]}]}`,
		"null sample":        `{"schema": 1, "figures": [{"samples": [null]}]}`,
		"bad number":         `{"schema": 1, "figures": [{"samples": [01]}]}`,
		"trailing comma":     `{"schema": 1, "figures": [{"test": "x"},]}`,
		"trailing garbage":   `{"schema": 1, "figures": []} x`,
		"control in string":  "{\"schema\": 1, \"figures\": [{\"test\": \"a\x01\"}]}",
		"no schema":          `{"figures": []}`,
		"truncated":          `{"schema": 1, "figures": [{"test": "x"`,
		"not an object":      `[1]`,
		"figures not array":  `{"schema": 1, "figures": {}}`,
		"duplicate figures":  `{"schema": 1, "figures": [], "figures": []}`,
		"schema wrong type":  `{"schema": "1", "figures": []}`,
		"bad escape skipped": `{"schema": 1, "x": "\q", "figures": []}`,
		"huge stat":          `{"schema": 1, "figures": [{"samples": [1], "stats": {"median": 1e999}}]}`,
		"stats n fraction":   `{"schema": 1, "figures": [{"samples": [1], "stats": {"n": 1.5}}]}`,
		"stats string":       `{"schema": 1, "figures": [{"samples": [1], "stats": {"mean": "1"}}]}`,
		"stats array":        `{"schema": 1, "figures": [{"samples": [1], "stats": [1]}]}`,
		"stats bad number":   `{"schema": 1, "figures": [{"samples": [1], "stats": {"max": 1.}}]}`,
		"stats folded key":   `{"schema": 1, "figures": [{"samples": [1], "stats": {"Max": 1}}]}`,
		"stats duplicate":    `{"schema": 1, "figures": [{"samples": [1], "stats": {"p5": 1, "p5": 2}}]}`,
		"stats twice":        `{"schema": 1, "figures": [{"samples": [1], "stats": {}, "stats": {}}]}`,
		"stats unclosed":     `{"schema": 1, "figures": [{"samples": [1], "stats": {"cv": 1,}}]}`,
		"huge integer stat":  `{"schema": 1, "figures": [{"samples": [1], "stats": {"max": 1` + strings.Repeat("0", 400) + `}}]}`,
		"huge n":             `{"schema": 1, "figures": [{"samples": [1], "stats": {"n": 1` + strings.Repeat("0", 30) + `}}]}`,
		"stats leading zero": `{"schema": 1, "figures": [{"samples": [1], "stats": {"min": 01.5}}]}`,
	} {
		for _, opt := range []ReadOptions{{}, {SkipStats: true}} {
			if _, ok := decodeFast([]byte(data), opt); ok {
				t.Errorf("%s: the fast path accepted %s with %+v", name, data, opt)
			}
		}
	}
}

// TestSerialGrowth decodes on one goroutine figures that the first ones
// misjudge: tiny ones before large ones, and tiny ones before much else.
func TestSerialGrowth(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"schema": 1, "figures": [`)
	for i := 0; i < 3000; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if i < 1000 {
			b.WriteString(`{}`)
		} else {
			fmt.Fprintf(&b, `{"test": "t%d", "convention": "%s", "samples": [1, 2, 3]}`, i, strings.Repeat("x", i%500))
		}
	}
	b.WriteString(`], "notes": ["` + strings.Repeat("n", 1<<20) + `"]}`)
	data := []byte(b.String())
	var want Run
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	got, ok := decodeFast(data, ReadOptions{Serial: true})
	if !ok || !reflect.DeepEqual(*got, want) {
		t.Fatalf("serial decoding: ok %v, equal %v", ok, ok && reflect.DeepEqual(*got, want))
	}
	if c := cap(got.Figures); c > 20000 {
		t.Errorf("%d figures took room for %d", len(got.Figures), c)
	}
}

func TestShareParams(t *testing.T) {
	data := []byte(`{"schema": 1, "figures": [{"params": {"a": "1", "b": "2"}}, {"params": {"a": "1", "b": "2"}}, {"params": {"a": "1"}}, {"params": {"a": "1", "b": "2"}}]}`)
	for _, share := range []bool{false, true} {
		run, ok := decodeFast(data, ReadOptions{ShareParams: share})
		if !ok {
			t.Fatal("the fast path gave up")
		}
		p := func(i int) uintptr { return uintptr(reflect.ValueOf(run.Figures[i].Params).UnsafePointer()) }
		if shared := p(0) == p(1) && p(1) == p(3); shared != share || p(2) == p(0) {
			t.Errorf("ShareParams %v: figures share maps: %v; the third one too: %v", share, shared, p(2) == p(0))
		}
	}
}

func TestSkipStats(t *testing.T) {
	for name, data := range map[string]string{
		"written stats":        `{"schema": 1, "figures": [{"samples": [1, 2], "stats": {"n": 2, "median": 1.5, "mean": 1.5, "stddev": 0.7071067811865476, "cv": 0.4714045207910317, "min": 1, "max": 2, "p5": 1.05, "p95": 1.95, "p99": 1.99}}]}`,
		"stats after samples":  `{"schema": 1, "figures": [{"samples": [1, 2], "stats": {"n": 2, "median": 1.5, "extra": [{}]}}]}`,
		"stats before samples": `{"schema": 1, "figures": [{"stats": {"n": 2, "median": 1.5, "p99": null}, "samples": [1, 2]}]}`,
		"no samples":           `{"schema": 1, "figures": [{"stats": {"n": 2, "median": 1.5}}]}`,
		"empty samples":        `{"schema": 1, "figures": [{"stats": {"n": 0}, "samples": []}]}`,
		"null samples":         `{"schema": 1, "figures": [{"samples": null, "stats": {"mean": 1e300}}]}`,
		"null stats":           `{"schema": 1, "figures": [{"samples": [3], "stats": null}]}`,
		"long numbers":         `{"schema": 1, "figures": [{"samples": [3], "stats": {"min": 1e-400, "max": 12345678901234567890123456789.5e-3}}]}`,
	} {
		var want Run
		if err := json.Unmarshal([]byte(data), &want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkOptions(t, name, []byte(data), &want)
	}
}

func TestParallelDecode(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor")
	}
	// Enough figures to pass parallelMin, with a tuning array of objects
	// after the figures that a split could land in.
	r := &Run{Schema: 1}
	for i := 0; len(r.Figures) < 12000; i++ {
		r.Figures = append(r.Figures, Figure{Test: "ce_read", Engine: "copy_engine", Src: i % 7, Dst: i % 5, Size: uint64(i),
			Unit: "GB/s", Convention: "a long convention string to make the figures weigh what real ones do, more or less",
			Samples: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, float64(i)},
			Stats:   &Stats{N: 20, Median: 10.5}, Verify: "passed"})
	}
	for i := 0; i < 500; i++ {
		r.Tuning = append(r.Tuning, Tuning{Src: i, Direction: "write"})
	}
	data := legacyEncode(t, r)
	if len(data) < parallelMin {
		t.Fatalf("test file of %d bytes is too small", len(data))
	}
	fast, ok := decodeFast(data, ReadOptions{})
	if !ok {
		t.Fatal("the fast path gave up")
	}
	var slow Run
	if err := json.Unmarshal(data, &slow); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*fast, slow) {
		t.Error("parallel decoding differs from encoding/json")
	}
	checkOptions(t, "parallel", data, &slow)
	// A file that is mostly tuning: splits land there and decoding falls
	// back to one piece, still right.
	r.Figures = r.Figures[:3]
	for i := 0; i < 60000; i++ {
		r.Tuning = append(r.Tuning, Tuning{Src: i, Direction: "write"})
	}
	data = legacyEncode(t, r)
	fast, ok = decodeFast(data, ReadOptions{})
	slow = Run{}
	json.Unmarshal(data, &slow)
	if !ok || !reflect.DeepEqual(*fast, slow) {
		t.Errorf("decoding with misplaced splits: ok %v, equal %v", ok, ok && reflect.DeepEqual(*fast, slow))
	}
}
