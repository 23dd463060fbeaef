package kernels

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// catalogEntry is one Kernel of the catalogs with an argument list of its
// Params() (zero values: only the types matter here).
type catalogEntry struct {
	name   string
	kernel Kernel
	params []any
}

func catalog() []catalogEntry {
	out := []catalogEntry{
		{"Latch", Latch, LatchArgs{}.Params()},
		{"Fill", Fill, FillArgs{}.Params()},
		{"Check", Check, CheckArgs{}.Params()},
		{"ChaseBuild", ChaseBuild, ChaseBuildArgs{}.Params()},
		{"Chase", Chase, ChaseArgs{}.Params()},
		{"PingPong", PingPong, PingPongArgs{}.Params()},
		{"PingPongRelaxed", PingPongRelaxed, PingPongArgs{}.Params()},
	}
	for _, c := range CopyKernels {
		out = append(out, catalogEntry{"copy " + c.Variant, c.Kernel, CopyArgs{}.Params()})
	}
	for _, o := range AtomicOps {
		out = append(out, catalogEntry{"atomic " + o.Name, o.Tput, AtomicArgs{}.Params()})
		if o.Chain.Entry != "" {
			out = append(out, catalogEntry{"atomic chain " + o.Name, o.Chain, ChainArgs{}.Params()})
		}
	}
	return out
}

// ptxType is the PTX parameter type of a Go launch argument.
func ptxType(v any) string {
	switch v.(type) {
	case uint64:
		return ".u64"
	case uint32:
		return ".u32"
	}
	return fmt.Sprintf("(Go %T)", v)
}

func TestCatalogEntriesMatchTheirPTX(t *testing.T) {
	for _, c := range catalog() {
		t.Run(c.name, func(t *testing.T) {
			if _, err := PTX(c.kernel.Module); err != nil {
				t.Fatalf("module: %v", err)
			}
			got, err := entryParams(c.kernel.Module, c.kernel.Entry)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(c.params))
			for i, p := range c.params {
				want[i] = ptxType(p)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s.%s declares (%s), Go passes (%s)", c.kernel.Module, c.kernel.Entry,
					strings.Join(got, ", "), strings.Join(want, ", "))
			}
		})
	}
}

func TestEveryEntryIsInACatalog(t *testing.T) {
	known := map[string]bool{}
	for _, c := range catalog() {
		known[c.kernel.Module+"."+c.kernel.Entry] = true
	}
	for _, m := range modules() {
		text, _ := PTX(m)
		entries, err := parseEntries(stripPTXComments(text))
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if len(entries) == 0 {
			t.Errorf("%s: no .entry", m)
		}
		for _, e := range entries {
			if !known[m+"."+e.Name] {
				t.Errorf("%s.%s is in no catalog (dead code, or a Go description is missing)", m, e.Name)
			}
		}
	}
}

var (
	versionLine = regexp.MustCompile(`(?m)^\.version\s+(\d+)\.(\d+)\s*$`)
	targetLine  = regexp.MustCompile(`(?m)^\.target\s+sm_(\d+)\s*$`)
	addrLine    = regexp.MustCompile(`(?m)^\.address_size\s+64\s*$`)
)

// TestModuleHeaders checks .version, .target and .address_size, and that every
// kernel's MinCC is its module's target.
func TestModuleHeaders(t *testing.T) {
	targets := map[string]int{}
	for _, m := range modules() {
		text, _ := PTX(m)
		text = stripPTXComments(text)
		v := versionLine.FindStringSubmatch(text)
		if v == nil || v[1] != "8" {
			t.Errorf("%s: want a .version 8.x line, got %q", m, v)
		}
		tg := targetLine.FindStringSubmatch(text)
		if tg == nil {
			t.Errorf("%s: no .target sm_XX line", m)
			continue
		}
		var sm int
		fmt.Sscan(tg[1], &sm)
		if sm != 80 && sm != 90 {
			t.Errorf("%s: .target sm_%d, want sm_80 (sm_90 for Hopper-only code)", m, sm)
		}
		targets[m] = sm
		if !addrLine.MatchString(text) {
			t.Errorf("%s: no .address_size 64", m)
		}
	}
	for _, c := range catalog() {
		if sm, ok := targets[c.kernel.Module]; ok && c.kernel.MinCC != sm {
			t.Errorf("%s: MinCC %d, module targets sm_%d", c.name, c.kernel.MinCC, sm)
		}
	}
}

// specialRegisters are the PTX special registers the modules may read.
var specialRegisters = map[string]bool{
	"tid": true, "ntid": true, "ctaid": true, "nctaid": true, "laneid": true,
	"warpid": true, "nwarpid": true, "smid": true, "nsmid": true, "gridid": true,
	"clock": true, "clock64": true, "globaltimer": true, "globaltimer_lo": true,
	"globaltimer_hi": true, "dynamic_smem_size": true,
}

var (
	regDecl    = regexp.MustCompile(`\.reg\s+\.[a-z0-9]+\s+([^;]+);`)
	regUse     = regexp.MustCompile(`%([A-Za-z_$][A-Za-z0-9_$]*)`)
	labelDef   = regexp.MustCompile(`(?m)^\s*([A-Za-z_$][A-Za-z0-9_$]*):`)
	branchUse  = regexp.MustCompile(`\bbra(?:\.uni)?\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*;`)
	paramLoad  = regexp.MustCompile(`ld\.param\.([a-z0-9]+)\s+%[A-Za-z0-9_$]+\s*,\s*\[([A-Za-z0-9_$]+)\]`)
	paramRange = regexp.MustCompile(`^([A-Za-z_$][A-Za-z0-9_$]*)<(\d+)>$`)
)

// TestPTXSanity is a best-effort lint of what ptxas would reject: unbalanced
// braces, registers used but not declared, branches to missing labels,
// parameters loaded with the wrong type or not declared.
func TestPTXSanity(t *testing.T) {
	for _, m := range modules() {
		text, _ := PTX(m)
		text = stripPTXComments(text)
		if o, c := strings.Count(text, "{"), strings.Count(text, "}"); o != c {
			t.Errorf("%s: %d '{' but %d '}'", m, o, c)
		}
		entries, err := parseEntries(text)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		for _, e := range entries {
			where := m + "." + e.Name
			declared := map[string]bool{}
			for _, d := range regDecl.FindAllStringSubmatch(e.Body, -1) {
				for _, name := range strings.Split(d[1], ",") {
					name = strings.TrimPrefix(strings.TrimSpace(name), "%")
					if r := paramRange.FindStringSubmatch(name); r != nil {
						var n int
						fmt.Sscan(r[2], &n)
						for i := 0; i < n; i++ {
							declared[fmt.Sprintf("%s%d", r[1], i)] = true
						}
						continue
					}
					if declared[name] {
						t.Errorf("%s: register %%%s declared twice", where, name)
					}
					declared[name] = true
				}
			}
			body := regDecl.ReplaceAllString(e.Body, "")
			for _, u := range regUse.FindAllStringSubmatch(body, -1) {
				if !declared[u[1]] && !specialRegisters[u[1]] {
					t.Errorf("%s: register %%%s is not declared", where, u[1])
				}
			}
			labels := map[string]bool{}
			for _, l := range labelDef.FindAllStringSubmatch(e.Body, -1) {
				if labels[l[1]] {
					t.Errorf("%s: label %s defined twice", where, l[1])
				}
				labels[l[1]] = true
			}
			for _, b := range branchUse.FindAllStringSubmatch(e.Body, -1) {
				if !labels[b[1]] {
					t.Errorf("%s: branch to undefined label %s", where, b[1])
				}
			}
			params := map[string]string{}
			for _, p := range e.Params {
				params[p.Name] = p.Type
			}
			for _, l := range paramLoad.FindAllStringSubmatch(e.Body, -1) {
				typ, ok := params[l[2]]
				if !ok {
					t.Errorf("%s: ld.param of undeclared parameter %s", where, l[2])
				} else if typ != "."+l[1] {
					t.Errorf("%s: parameter %s is %s, loaded as .%s", where, l[2], typ, l[1])
				}
			}
			if got, want := len(paramLoad.FindAllStringSubmatch(e.Body, -1)), len(e.Params); got != want {
				t.Errorf("%s: %d ld.param for %d parameters", where, got, want)
			}
		}
	}
}

func TestEntryParamsErrors(t *testing.T) {
	if _, err := entryParams("no_such_module", "x"); err == nil {
		t.Error("entryParams of a missing module: no error")
	}
	if _, err := entryParams("copy", "no_such_entry"); err == nil {
		t.Error("entryParams of a missing entry: no error")
	}
}

func TestParseEntries(t *testing.T) {
	const text = `
.visible .entry a(
	.param .u64 a_p0, // a comment, then
	.param .u32 a_p1  /* another */
)
{ { } }
.entry b() .maxntid 32, 1, 1 { ret; }`
	entries, err := parseEntries(stripPTXComments(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Name != "a" || entries[1].Name != "b" {
		t.Fatalf("entries %+v", entries)
	}
	if got := fmt.Sprint(entries[0].Params); got != "[{.u64 a_p0} {.u32 a_p1}]" {
		t.Errorf("params of a: %s", got)
	}
	if len(entries[1].Params) != 0 || strings.TrimSpace(entries[1].Body) != "ret;" {
		t.Errorf("b: %+v", entries[1])
	}
}

// ---------------------------------------------------------------------------

func TestPatternProperties(t *testing.T) {
	// For a fixed high half and seed, the map from the low half is a bijection
	// (xor with constants, xor-shifts and odd multiplications are), so a
	// window of indices never repeats a word.
	seen := make(map[uint32]uint64, 1<<16)
	for i := uint64(0); i < 1<<16; i++ {
		p := Pattern(7, i)
		if j, dup := seen[p]; dup {
			t.Fatalf("Pattern(7, %d) == Pattern(7, %d)", i, j)
		}
		seen[p] = i
		if p == Pattern(7, i+1) {
			t.Fatalf("neighbours %d and %d give the same word", i, i+1)
		}
	}
	for _, i := range []uint64{0, 1, 12345, 1<<32 - 1} {
		if Pattern(1, i) == Pattern(1, i+1<<32) {
			t.Errorf("index %d and %d (high half differs) give the same word", i, i+1<<32)
		}
		if Pattern(1, i) == Pattern(2, i) {
			t.Errorf("seeds 1 and 2 give the same word at %d", i)
		}
	}
	// Pinned values: the PTX computes exactly this function, so it must not
	// change by accident.
	pinned := []struct {
		seed uint32
		i    uint64
		want uint32
	}{
		{0, 0, 0x00000000}, // seed 0 leaves word 0 zero: bench should use non-zero seeds
		{0, 1, 0x688990c0},
		{0x12345678, 0, 0xf5e71c96},
		{0x12345678, 1000, 0xad775d6a},
		{0xdeadbeef, 1<<32 + 5, 0x9a5d0b61},
		{1, 1<<40 - 1, 0xd76909d3},
	}
	for _, p := range pinned {
		if got := Pattern(p.seed, p.i); got != p.want {
			t.Errorf("Pattern(%#x, %d) = %#x, want %#x", p.seed, p.i, got, p.want)
		}
	}
}

func TestChasePermIsOneCycle(t *testing.T) {
	for _, bits := range []uint{1, 2, 3, 4, 7, 10, 13, 16} {
		for _, seed := range []uint32{0, 1, 0xC0FFEE, 0xFFFFFFFF} {
			t.Run(fmt.Sprintf("bits%d_seed%#x", bits, seed), func(t *testing.T) {
				n := uint64(1) << bits
				perm := make([]uint64, n)
				hit := make([]bool, n)
				for k := uint64(0); k < n; k++ {
					p := ChasePerm(k, bits, seed)
					if p >= n {
						t.Fatalf("ChasePerm(%d) = %d, out of range", k, p)
					}
					if hit[p] {
						t.Fatalf("ChasePerm is not a bijection: %d reached twice", p)
					}
					hit[p] = true
					perm[k] = p
				}
				// The chain p2p_chase_build writes: next[P(k)] = P(k+1 mod n).
				next := make([]uint64, n)
				for k := uint64(0); k < n; k++ {
					next[perm[k]] = perm[(k+1)&(n-1)]
				}
				node, steps := perm[0], uint64(0)
				visited := make([]bool, n)
				for !visited[node] {
					visited[node] = true
					node = next[node]
					steps++
				}
				if steps != n || node != perm[0] {
					t.Fatalf("the chase visits %d of %d nodes before repeating", steps, n)
				}
			})
		}
	}
}

func TestChasePermPinned(t *testing.T) {
	for _, c := range []struct {
		k    uint64
		bits uint
		seed uint32
		want uint64
	}{
		{0, 10, 1, 846},
		{1, 10, 1, 81},
		{12345, 40, 7, 313021722336},
	} {
		if got := ChasePerm(c.k, c.bits, c.seed); got != c.want {
			t.Errorf("ChasePerm(%d, %d, %d) = %d, want %d", c.k, c.bits, c.seed, got, c.want)
		}
	}
}

func TestChasePermLarge(t *testing.T) {
	// bits 40: spot-check the range and that a sample has no collisions.
	const bits = 40
	seen := map[uint64]uint64{}
	for k := uint64(0); k < 1<<14; k++ {
		for _, kk := range []uint64{k, 1<<bits - 1 - k} {
			p := ChasePerm(kk, bits, 99)
			if p >= 1<<bits {
				t.Fatalf("ChasePerm(%d) = %d, out of range", kk, p)
			}
			if j, dup := seen[p]; dup && j != kk {
				t.Fatalf("ChasePerm(%d) == ChasePerm(%d)", kk, j)
			}
			seen[p] = kk
		}
	}
	// Not the identity, not a shift: neighbours land far apart.
	far := 0
	for k := uint64(0); k < 1000; k++ {
		d := int64(ChasePerm(k+1, bits, 99)) - int64(ChasePerm(k, bits, 99))
		if d > 1<<20 || d < -(1<<20) {
			far++
		}
	}
	if far < 900 {
		t.Errorf("only %d of 1000 neighbours land more than 2^20 apart", far)
	}
}

// ---------------------------------------------------------------------------

func TestCopyCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range CopyKernels {
		if seen[k.Variant] {
			t.Errorf("variant %s twice", k.Variant)
		}
		seen[k.Variant] = true
		if k.Entry != "p2p_copy_"+k.Variant {
			t.Errorf("variant %s: entry %s, want p2p_copy_%s", k.Variant, k.Entry, k.Variant)
		}
		if k.Unroll < 1 || k.Describe == "" || k.SharedBytes == nil {
			t.Errorf("variant %s: incomplete %+v", k.Variant, k)
			continue
		}
		sb := k.SharedBytes(256)
		switch {
		case k.Variant == "bulk" && (sb != bulkChunk*bulkStages || k.MinCC != 90):
			t.Errorf("bulk: %d bytes of shared memory, MinCC %d", sb, k.MinCC)
		case k.Variant != "bulk" && sb != 0:
			t.Errorf("variant %s asks for shared memory", k.Variant)
		}
		if sb > 227<<10 {
			t.Errorf("variant %s: %d bytes of dynamic shared memory, more than an SM has", k.Variant, sb)
		}
		got, ok := CopyKernelByVariant(k.Variant)
		if !ok || got.Entry != k.Entry {
			t.Errorf("CopyKernelByVariant(%q) = %v, %v", k.Variant, got.Kernel, ok)
		}
	}
	if _, ok := CopyKernelByVariant(DefaultCopyVariant); !ok {
		t.Errorf("DefaultCopyVariant %q is not in CopyKernels", DefaultCopyVariant)
	}
	if got := CopyVariantFor(90); got != "bulk" {
		t.Errorf("CopyVariantFor(90) = %q, want bulk", got)
	}
	if got := CopyVariantFor(80); got != DefaultCopyVariant {
		t.Errorf("CopyVariantFor(80) = %q, want %q", got, DefaultCopyVariant)
	}
	if k, _ := CopyKernelByVariant(DefaultCopyVariant); k.MinCC > 80 {
		t.Errorf("DefaultCopyVariant %q needs cc %d: it must run everywhere", DefaultCopyVariant, k.MinCC)
	}
	if _, ok := CopyKernelByVariant("no_such_variant"); ok {
		t.Error("CopyKernelByVariant found a variant that does not exist")
	}
}

// TestBulkShapeMatchesPTX keeps copy.go's bulk constants and copy_bulk.ptx in step.
func TestBulkShapeMatchesPTX(t *testing.T) {
	text, _ := PTX("copy_bulk")
	for want, n := range map[string]int{
		fmt.Sprintf(".shared .align 8 .b64 p2p_bulk_full[%d];", bulkStages): 1,
		fmt.Sprintf("%%stage, %d;               // NSTAGE", bulkStages):     3,
		fmt.Sprintf("mov.u32         %%prev, %d;", bulkStages-1):            1,
		fmt.Sprintf("%%ctaid_x, %d;", bulkChunk):                            1,
		fmt.Sprintf("%%nctaid_x, %d;", bulkChunk):                           1,
		fmt.Sprintf("setp.lt.u64     %%p_short, %%left, %d;", bulkChunk):    3,
		fmt.Sprintf("@!%%p_short mov.u32 %%size, %d;", bulkChunk):           3,
		fmt.Sprintf(", %d, %%stage_base;", bulkChunk):                       3,
	} {
		if got := strings.Count(text, want); got != n {
			t.Errorf("copy_bulk.ptx has %d of %q, want %d", got, want, n)
		}
	}
}

func TestAtomicCatalog(t *testing.T) {
	wantDriver := map[string]int32{
		"add_u32": 0, "red_add_u32": 0, "add_u64": 0, "red_add_u64": 0,
		"cas_u64": 9, "exch_u32": 8, "min_u32": 1, "add_f32": 10,
	}
	var names []string
	for _, o := range AtomicOps {
		names = append(names, o.Name)
		if d, ok := wantDriver[o.Name]; !ok || d != o.DriverOp {
			t.Errorf("%s: DriverOp %d", o.Name, o.DriverOp)
		}
		if o.Tput.Entry != "p2p_atomic_"+o.Name {
			t.Errorf("%s: throughput entry %s", o.Name, o.Tput.Entry)
		}
		isRed := strings.HasPrefix(o.Name, "red_")
		if isRed != (o.Chain.Entry == "") {
			t.Errorf("%s: chain entry %q (red ops have none, others must)", o.Name, o.Chain.Entry)
		}
		if !strings.Contains(o.PTXOp, ".sys.global.") {
			t.Errorf("%s: %s is not a system-scope global operation", o.Name, o.PTXOp)
		}
		text, _ := PTX(o.Tput.Module)
		if !strings.Contains(text, "\t"+o.PTXOp+" ") {
			t.Errorf("%s: module %s never issues %s", o.Name, o.Tput.Module, o.PTXOp)
		}
		if got, ok := AtomicOpByName(o.Name); !ok || got.PTXOp != o.PTXOp {
			t.Errorf("AtomicOpByName(%q) = %v, %v", o.Name, got, ok)
		}
	}
	sort.Strings(names)
	if len(names) != len(wantDriver) {
		t.Errorf("operations %v, want the %d of the contract", names, len(wantDriver))
	}
	if _, ok := AtomicOpByName("no_such_op"); ok {
		t.Error("AtomicOpByName found an operation that does not exist")
	}
}

func TestAtomicExpected(t *testing.T) {
	f32 := func(f float32) uint64 { return uint64(math.Float32bits(f)) }
	cases := []struct {
		op        string
		threads   uint64
		iters     uint64
		contended bool
		want      uint64
	}{
		{"add_u32", 1024, 100, false, 100},
		{"add_u32", 1024, 100, true, 102400},
		{"add_u32", 1 << 20, 1 << 13, true, 0}, // 2^33 wraps to 0
		{"red_add_u32", 64, 7, true, 448},
		{"add_u64", 1 << 20, 1 << 13, true, 1 << 33},
		{"red_add_u64", 3, 5, false, 5},
		{"cas_u64", 256, 10, true, 2560},
		{"cas_u64", 256, 10, false, 10},
		{"exch_u32", 256, 10, true, 10},
		{"exch_u32", 1, 1, false, 1},
		{"min_u32", 256, 10, true, 1},
		{"min_u32", 1, 0, false, 0xFFFFFFFF},
		{"add_f32", 1000, 1000, true, f32(1e6)},
		{"add_f32", 1 << 12, 1 << 13, true, f32(1 << 24)}, // 2^25 adds stop at 2^24
		{"add_f32", 1, 3, false, f32(3)},
	}
	for _, c := range cases {
		o, ok := AtomicOpByName(c.op)
		if !ok {
			t.Fatalf("no op %s", c.op)
		}
		if got := o.Expected(c.threads, c.iters, c.contended); got != c.want {
			t.Errorf("%s.Expected(%d, %d, %v) = %#x, want %#x", c.op, c.threads, c.iters, c.contended, got, c.want)
		}
	}
}

// TestAtomicExpectedBySimulation replays the operations the kernels do, in
// one interleaving, and checks Expected against the result.
func TestAtomicExpectedBySimulation(t *testing.T) {
	for _, o := range AtomicOps {
		for _, contended := range []bool{false, true} {
			const threads, iters = 5, 9
			elems := make([]uint64, threads)
			for i := range elems {
				elems[i] = o.Init
			}
			for i := uint64(0); i < iters; i++ {
				for th := uint64(0); th < threads; th++ {
					e := &elems[th]
					if contended {
						e = &elems[0]
					}
					switch {
					case o.Float:
						*e = uint64(math.Float32bits(math.Float32frombits(uint32(*e)) + 1))
					case strings.Contains(o.Name, "add"), o.Name == "cas_u64":
						*e++
					case o.Name == "exch_u32":
						*e = i + 1
					case o.Name == "min_u32":
						*e = min(*e, iters-i)
					default:
						t.Fatalf("no model for %s", o.Name)
					}
				}
			}
			if got, want := elems[0], o.Expected(threads, iters, contended); got != want {
				t.Errorf("%s contended=%v: simulated %#x, Expected %#x", o.Name, contended, got, want)
			}
		}
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	pp := PingPongArgs{MyFlag: 1, PeerFlag: 2, Iters: 3, Chunk: 4, Role: 1, Times: 6, TimeoutNs: 7, Status: 8}
	if got, err := DecodePingPongArgs(pp.Params()); err != nil || got != pp {
		t.Errorf("DecodePingPongArgs: %+v, %v", got, err)
	}
	ca := CopyArgs{Dst: 1, Src: 2, Bytes: 3, Reps: 4}
	if got, err := DecodeCopyArgs(ca.Params()); err != nil || got != ca {
		t.Errorf("DecodeCopyArgs: %+v, %v", got, err)
	}
	if _, err := DecodeAtomicArgs([]any{uint64(1), uint64(2), uint32(3)}); err == nil {
		t.Error("DecodeAtomicArgs accepted a uint64 for a .u32 parameter")
	}
}

// modules lists the embedded module names.
func modules() []string {
	ents, _ := ptxFiles.ReadDir(".")
	var out []string
	for _, e := range ents {
		n := e.Name()
		out = append(out, n[:len(n)-len(".ptx")])
	}
	return out
}

// entryParams returns the PTX types of an entry point's parameters, in order,
// read from the embedded module text.
func entryParams(module, entry string) ([]string, error) {
	text, err := PTX(module)
	if err != nil {
		return nil, err
	}
	m, err := ParsePTX(text)
	if err != nil {
		return nil, fmt.Errorf("kernels: module %q: %w", module, err)
	}
	for _, e := range m.Entries {
		if e.Name == entry {
			types := make([]string, len(e.Params))
			for i, p := range e.Params {
				types[i] = p.Type
			}
			return types, nil
		}
	}
	return nil, fmt.Errorf("kernels: module %q has no entry %q", module, entry)
}

func TestParsePTXHeader(t *testing.T) {
	m, err := ParsePTX("// c\n.version 8.4\n.target sm_90a\n.address_size 64\n.entry k(.param .u64 p, .param .u32 q) { ret; }\x00")
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 84 || m.Target != 90 || m.TargetSuffix != "a" || len(m.Entries) != 1 {
		t.Fatalf("module %+v", m)
	}
	if p := m.Entries[0].Params; p[0].Size() != 8 || p[1].Size() != 4 {
		t.Errorf("sizes %d %d, want 8 4", p[0].Size(), p[1].Size())
	}
	if _, err := ParsePTX(".entry k() { ret; }"); !errors.Is(err, ErrNotPTX) {
		t.Errorf("text without .version: %v, want ErrNotPTX", err)
	}
}
